//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// hasAVX2FMA is read once; x/sys/cpu also checks that the OS saves the ymm
// registers.
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func axpyAVX2(dst, src *float32, n int, a float32)

// axpy computes dst[i] += a*src[i] over len(dst) elements (src at least as
// long).
func axpy(dst, src []float32, a float32) {
	if len(dst) == 0 {
		return
	}
	if !hasAVX2FMA {
		axpyGo(dst, src, a)
		return
	}
	_ = src[len(dst)-1]
	axpyAVX2(&dst[0], &src[0], len(dst), a)
}
