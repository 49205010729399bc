//go:build amd64 && !purego

package vec

//go:noescape
func geluAVX2(x *float32, n int)

// geluVec applies GELU in place, eight float32 lanes at a time where the
// CPU has AVX2 and FMA (see geluAVX2: within a few ulp, flushing results
// below the normal range to 0), a last partial vector through a padded
// copy, so that every element's result is the same wherever it sits (an
// epilogue applied in chunks gives the same bits on any thread count).
// Elsewhere Gelu32, in Go.
func geluVec(x []float32) {
	if !AVX2FMA {
		for i, v := range x {
			x[i] = gelu32(v)
		}
		return
	}
	n := len(x) &^ 7
	if n > 0 {
		geluAVX2(&x[0], n)
	}
	if n < len(x) {
		var tail [8]float32
		copy(tail[:], x[n:])
		geluAVX2(&tail[0], 8)
		copy(x[n:], tail[:])
	}
}
