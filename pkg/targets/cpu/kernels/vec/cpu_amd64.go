//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// The instruction-set paths the kernels take, read once at start-up. This
// is the one place the CPU kernels ask the CPU what it has.
//
//   - amd64: AVX2FMA turns on every *_amd64.s kernel (AVX2 with FMA3);
//     without it each kernel runs its pure-Go twin. x/sys/cpu also checks
//     that the OS saves the ymm registers. AVX512F (with AVX2FMA)
//     makes the GEMM's AVX-512 micro-kernel available; x/sys/cpu's
//     HasAVX512F also checks that the OS saves the zmm and opmask
//     registers (XCR0 bits 5-7).
//   - arm64: NEON is part of ARMv8-A, so the *_arm64.s kernels need no
//     run-time check (no file of this kind on arm64).
//   - other architectures, and any build with the purego tag: the pure-Go
//     twins only.
var AVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// AVX512F reports AVX-512 Foundation beside AVX2FMA, with the OS saving
// the zmm and opmask state.
var AVX512F = AVX2FMA && cpu.X86.HasAVX512F
