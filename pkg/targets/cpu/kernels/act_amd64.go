//go:build amd64 && !purego

package kernels

//go:noescape
func geluAVX2(x *float32, n int)

// geluVec applies Gelu32 in place, four lanes at a time (in float64) where
// the CPU has AVX2 and FMA; the rest, and every element elsewhere, in Go.
func geluVec(x []float32) {
	n := len(x) &^ 3
	if hasAVX2FMA && n > 0 {
		geluAVX2(&x[0], n)
	} else {
		n = 0
	}
	for i := n; i < len(x); i++ {
		x[i] = Gelu32(x[i])
	}
}
