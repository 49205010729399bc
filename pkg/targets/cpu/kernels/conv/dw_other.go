//go:build !amd64 || purego

package conv

// dot9 computes dst[i] = clamp(bias + Σ_t w[t]*src[t][i], lo, hi).
func dot9(dst []float32, src *[9][]float32, w *[9]float32, bias, lo, hi float32) {
	dot9Go(dst, src, w, bias, lo, hi)
}

// deinterleave2 splits src into its even and odd elements.
func deinterleave2(even, odd, src []float32) {
	deinterleaveRows(even, odd, 0, src, 0, 1, len(src))
}

// deinterleaveRows runs deinterleave2 on rows rows of n elements, src rows
// srcStride apart, even and odd rows dstStride apart.
func deinterleaveRows(even, odd []float32, dstStride int, src []float32, srcStride, rows, n int) {
	pairs := n / 2
	for r := 0; r < rows; r++ {
		e, o, s := even[r*dstStride:], odd[r*dstStride:], src[r*srcStride:r*srcStride+n]
		deinterleave2Go(e[:pairs], o[:pairs], s[:2*pairs])
		if n%2 == 1 {
			e[pairs] = s[n-1]
		}
	}
}

// dot9Rows has no portable fast path: the caller goes row by row.
func dot9Rows(dst []float32, dstStride int, src *[9][]float32, srcStride, rows, n int, w *[9]float32, bias, lo, hi float32) bool {
	return false
}
