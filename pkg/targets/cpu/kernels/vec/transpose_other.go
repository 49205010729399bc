//go:build !amd64 || purego

package vec

func transpose8x8(dst []float32, ldd int, src []float32, lds int) {
	transposeGo(dst, ldd, src, lds, 8, 8)
}
