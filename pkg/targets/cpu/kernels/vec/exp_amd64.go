//go:build amd64 && !purego

package vec

//go:noescape
func expSubAVX2(x *float32, n int, m float64, sum *float64)

// ExpSub sets x[i] = e^(x[i]-m) and returns the sum of the results, as
// float64; four lanes at a time where the CPU has AVX2 and FMA.
func ExpSub(x []float32, m float64) float64 {
	n := len(x) &^ 3
	var sum float64
	if AVX2FMA && n > 0 {
		expSubAVX2(&x[0], n, m, &sum)
	} else {
		n = 0
	}
	for i := n; i < len(x); i++ {
		e := ExpNaN(float64(x[i]) - m)
		x[i] = float32(e)
		sum += e
	}
	return sum
}
