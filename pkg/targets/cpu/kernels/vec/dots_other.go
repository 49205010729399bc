//go:build !amd64 || purego

package vec

// Dots sets s[j] to the dot product of q with row j of k, the rows ldk
// elements apart (ldk >= len(q)).
func Dots(s, q, k []float32, ldk int) {
	dotsCheck(s, q, k, ldk)
	dotsGo(s, q, k, ldk)
}
