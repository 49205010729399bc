//go:build !amd64 || purego

package kernels

// axpy computes dst[i] += a*src[i] over len(dst) elements.
func axpy(dst, src []float32, a float32) { axpyGo(dst, src, a) }
