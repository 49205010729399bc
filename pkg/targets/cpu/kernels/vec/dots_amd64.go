//go:build amd64 && !purego

package vec

//go:noescape
func dotsAVX2(s, q, k *float32, n, d, ldk int)

// Dots sets s[j] to the dot product of q with row j of k, the rows ldk
// elements apart (ldk >= len(q)): attention's scores for a few query rows,
// where a matrix product's packing of k costs more than the products.
func Dots(s, q, k []float32, ldk int) {
	dotsCheck(s, q, k, ldk)
	if len(s) == 0 {
		return
	}
	if !AVX2FMA || len(q) == 0 {
		dotsGo(s, q, k, ldk)
		return
	}
	dotsAVX2(&s[0], &q[0], &k[0], len(s), len(q), ldk)
}
