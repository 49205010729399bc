//go:build amd64 && !purego

package conv

import (
	"unsafe"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// dot9 computes dst[i] = clamp(bias + Σ_t w[t]*src[t][i], lo, hi) over
// len(dst) elements; every src[t] has at least len(dst) elements. It is
// the multi-row kernel run for one row.
func dot9(dst []float32, src *[9][]float32, w *[9]float32, bias, lo, hi float32) {
	if !dot9Rows(dst, 0, src, 0, 1, len(dst), w, bias, lo, hi) {
		dot9Go(dst, src, w, bias, lo, hi)
	}
}

//go:noescape
func deinterleave2AVX2(even, odd, src *float32, pairs, rows, dstStep, srcStep int)

// deinterleave2 splits src into its even and odd elements; even has
// ceil(len(src)/2) elements and odd floor(len(src)/2).
func deinterleave2(even, odd, src []float32) {
	deinterleaveRows(even, odd, 0, src, 0, 1, len(src))
}

// deinterleaveRows runs deinterleave2 on rows rows of n elements: row r
// reads src[r*srcStride:][:n] and writes even[r*dstStride:] and
// odd[r*dstStride:], in one call.
func deinterleaveRows(even, odd []float32, dstStride int, src []float32, srcStride, rows, n int) {
	if rows <= 0 || n <= 0 {
		return
	}
	pairs := n / 2
	last := (rows - 1) * dstStride
	_, _ = even[last+(n+1)/2-1], src[(rows-1)*srcStride+n-1]
	if vec.AVX2FMA && pairs > 0 {
		_ = odd[last+pairs-1]
		deinterleave2AVX2(&even[0], &odd[0], &src[0], pairs, rows, dstStride, srcStride)
	} else {
		for r := 0; r < rows; r++ {
			deinterleave2Go(even[r*dstStride:r*dstStride+pairs], odd[r*dstStride:r*dstStride+pairs], src[r*srcStride:r*srcStride+2*pairs])
		}
	}
	if n%2 == 1 {
		for r := 0; r < rows; r++ {
			even[r*dstStride+pairs] = src[r*srcStride+n-1]
		}
	}
}

//go:noescape
func dot9RowsAVX2(dst *float32, dstStep int, src *[9]uintptr, srcStep int, rows int, n int, w *[9]float32, bias, lo, hi float32)

// dot9Rows runs dot9 on rows consecutive output rows of n elements: output
// row r is dst[r*dstStride:], and tap t reads src[t][r*srcStride:]. It
// reports false (doing nothing) where there is no vector path; the caller
// then goes row by row.
func dot9Rows(dst []float32, dstStride int, src *[9][]float32, srcStride, rows, n int, w *[9]float32, bias, lo, hi float32) bool {
	if !vec.AVX2FMA || n < 1 || rows <= 0 {
		return false
	}
	_ = dst[(rows-1)*dstStride+n-1]
	var ptrs [9]uintptr
	for t := range src {
		s := src[t][:(rows-1)*srcStride+n]
		ptrs[t] = uintptr(unsafe.Pointer(&s[0]))
	}
	dot9RowsAVX2(&dst[0], 4*dstStride, &ptrs, 4*srcStride, rows, n, w, bias, lo, hi)
	keepAlive9(src)
	return true
}
