//go:build !amd64 || purego

package vec

// ExpSub sets x[i] = e^(x[i]-m) and returns the sum of the results.
func ExpSub(x []float32, m float64) float64 {
	var sum float64
	for i, v := range x {
		e := ExpNaN(float64(v) - m)
		x[i] = float32(e)
		sum += e
	}
	return sum
}
