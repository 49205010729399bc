//go:build arm64 && !purego

package gemm

import (
	"unsafe"

	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// The arm64 NEON micro-kernel (gemm_arm64.s): an 8×8 tile in sixteen
// 4-lane accumulators. Every arm64 CPU has NEON (Advanced SIMD is part of
// ARMv8-A), so it needs no run-time feature check. Its epilogue is applied
// by the Go code around it (no tile form yet); packing is the portable one.

//go:noescape
func sgemm8x8NEON(kc int, a, b, c *float32, ldc int, acc int)

func asmKernel() (gemmKernel, bool) {
	return gemmKernel{name: "neon", mr: 8, nr: 8, kc: tuning.GemmNEONKC, mc: tuning.GemmNEONMC, nc: tuning.GemmNEONNC, fn: kernel8x8}, true
}

// kernel8x8 checks the operands' extents and runs sgemm8x8NEON: the 8×8
// tile sum over p < kc of a[p*8+i]·b[p*8+j] (packed panels) stored at
// c[i*ldc+j], or added there when accumulate is set.
func kernel8x8(kc int, a, b, c []float32, ldc int, accumulate bool) {
	if kc > 0 {
		_ = a[kc*8-1]
		_ = b[kc*8-1]
	}
	_ = c[7*ldc+7]
	acc := 0
	if accumulate {
		acc = 1
	}
	sgemm8x8NEON(kc, unsafe.SliceData(a), unsafe.SliceData(b), &c[0], ldc, acc)
}

func packA6(dst, a []float32, lda, kb int) { packA6Go(dst, a, lda, kb) }

func packB16s(dst, b []float32, ldb, kb, np int) { packB16Go(dst, b, ldb, kb, np) }

// otherKernels: no assembly kernel besides asmKernel's.
func otherKernels() []gemmKernel { return nil }
