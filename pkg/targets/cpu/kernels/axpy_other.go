//go:build !amd64 || purego

package kernels

// axpy computes dst[i] += a*src[i] over len(dst) elements.
func axpy(dst, src []float32, a float32) { axpyGo(dst, src, a) }

// axpy4 computes dst[i] += a[0]*s[0][i] + ... + a[3]*s[3][i].
func axpy4(dst []float32, s0, s1, s2, s3 []float32, a *[4]float32) {
	axpy4Go(dst, s0, s1, s2, s3, a)
}
