//go:build amd64 && !purego

package vec

//go:noescape
func transpose8x8AVX(dst *float32, ldd int, src *float32, lds int)

// transpose8x8 transposes the 8×8 block at src (rows lds apart) into dst
// (rows ldd apart); the caller has checked the extents.
func transpose8x8(dst []float32, ldd int, src []float32, lds int) {
	if !AVX2FMA {
		transposeGo(dst, ldd, src, lds, 8, 8)
		return
	}
	transpose8x8AVX(&dst[0], ldd, &src[0], lds)
}
