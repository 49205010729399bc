//go:build amd64 && !purego

package vec

import "math"

//go:noescape
func expSub32AVX2(x *float32, n int, m, scale float32) float64

//go:noescape
func expSub32AVX512(x *float32, n int, m, scale float32) float64

//go:noescape
func max32AVX2(x *float32, n int, lanes *[8]float32) bool

// ExpSub32 sets x[i] = e^((x[i]-m)·scale) (expf32) and returns the sum of
// the results in float64; eight lanes at a time where the CPU has AVX2 and
// FMA, sixteen with AVX-512 (the same results and sum).
func ExpSub32(x []float32, m, scale float32) float64 {
	n8 := len(x) &^ 7
	switch {
	case !AVX2FMA || n8 == 0:
		return expSub32Go(x, m, scale)
	case AVX512F:
		return expSub32Tail(x[n8:], m, scale, expSub32AVX512(&x[0], n8, m, scale))
	}
	return expSub32Tail(x[n8:], m, scale, expSub32AVX2(&x[0], n8, m, scale))
}

// MaxNaN32 is the largest element of x (-Inf when empty), NaN when any is
// NaN.
func MaxNaN32(x []float32) float32 {
	n8 := len(x) &^ 7
	if !AVX2FMA || n8 == 0 {
		return maxNaN32Go(x)
	}
	var lanes [8]float32
	if max32AVX2(&x[0], n8, &lanes) {
		return float32(math.NaN())
	}
	m := maxNaN32Go(x[n8:])
	for _, v := range lanes {
		m = max(m, v)
	}
	return m
}
