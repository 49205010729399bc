//go:build !amd64 || purego

package vec

// Axpy computes dst[i] += a*src[i] over len(dst) elements.
func Axpy(dst, src []float32, a float32) { axpyGo(dst, src, a) }

// Axpy4 computes dst[i] += a[0]*s[0][i] + ... + a[3]*s[3][i].
func Axpy4(dst []float32, s0, s1, s2, s3 []float32, a *[4]float32) {
	axpy4Go(dst, s0, s1, s2, s3, a)
}
