//go:build amd64 && !purego

package conv

import (
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

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
	if !vec.AVX2FMA {
		copyRows16Go(dst, dstStride, src, n)
		return
	}
	copyRows16AVX(&dst[0], dstStride, &src[0], n)
}

//go:noescape
func copyRowsAVX(dst *float32, dstStride int, src *float32, srcStride, rows, n int)

// copyRows copies rows rows of n floats, src[r*srcStride:] to
// dst[r*dstStride:], in one call: a copy per row is a memmove call each,
// which for the 7- and 14-float rows of small planes costs more than the
// copying.
func copyRows(dst []float32, dstStride int, src []float32, srcStride, rows, n int) {
	if rows <= 0 || n <= 0 {
		return
	}
	_ = src[(rows-1)*srcStride+n-1]
	_ = dst[(rows-1)*dstStride+n-1]
	if !vec.AVX2FMA {
		copyRowsGo(dst, dstStride, src, srcStride, rows, n)
		return
	}
	copyRowsAVX(&dst[0], dstStride, &src[0], srcStride, rows, n)
}
