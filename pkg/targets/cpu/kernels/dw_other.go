//go:build !amd64 || purego

package kernels

// dot9 computes dst[i] = clamp(bias + Σ_t w[t]*src[t][i], lo, hi).
func dot9(dst []float32, src *[9][]float32, w *[9]float32, bias, lo, hi float32) {
	dot9Go(dst, src, w, bias, lo, hi)
}

// deinterleave2 splits src into its even and odd elements.
func deinterleave2(even, odd, src []float32) {
	pairs := len(src) / 2
	deinterleave2Go(even[:pairs], odd[:pairs], src[:2*pairs])
	if len(src)%2 == 1 {
		even[pairs] = src[len(src)-1]
	}
}

// dot9Rows has no portable fast path: the caller goes row by row.
func dot9Rows(dst []float32, dstStride int, src *[9][]float32, srcStride, rows, n int, w *[9]float32, bias, lo, hi float32) bool {
	return false
}
