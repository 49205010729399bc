//go:build amd64 && !purego

package vec

//go:noescape
func axpyAVX2(dst, src *float32, n int, a float32)

// Axpy computes dst[i] += a*src[i] over len(dst) elements (src at least as
// long).
func Axpy(dst, src []float32, a float32) {
	if len(dst) == 0 {
		return
	}
	if !AVX2FMA {
		axpyGo(dst, src, a)
		return
	}
	_ = src[len(dst)-1]
	axpyAVX2(&dst[0], &src[0], len(dst), a)
}

//go:noescape
func axpy4AVX2(dst, s0, s1, s2, s3 *float32, n int, a *[4]float32)

// Axpy4 computes dst[i] += a[0]*s[0][i] + ... + a[3]*s[3][i].
func Axpy4(dst []float32, s0, s1, s2, s3 []float32, a *[4]float32) {
	if len(dst) == 0 {
		return
	}
	if !AVX2FMA {
		axpy4Go(dst, s0, s1, s2, s3, a)
		return
	}
	n := len(dst)
	_, _, _, _ = s0[n-1], s1[n-1], s2[n-1], s3[n-1]
	axpy4AVX2(&dst[0], &s0[0], &s1[0], &s2[0], &s3[0], n, a)
}
