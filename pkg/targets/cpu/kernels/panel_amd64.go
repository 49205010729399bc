//go:build amd64 && !purego

package kernels

//go:noescape
func copyRows16AVX(dst *float32, dstStride int, src *float32, n int)

// copyRows16 copies n runs of 16 floats, src[i*16:] to dst[i*dstStride:]
// (Go's own 64-byte array copy goes through a memmove call each).
func copyRows16(dst []float32, dstStride int, src []float32, n int) {
	if n <= 0 {
		return
	}
	_ = src[n*16-1]
	_ = dst[(n-1)*dstStride+15]
	if !hasAVX2FMA {
		copyRows16Go(dst, dstStride, src, n)
		return
	}
	copyRows16AVX(&dst[0], dstStride, &src[0], n)
}
