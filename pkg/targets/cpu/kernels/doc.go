// Package kernels is the root of the CPU runtime's kernel library; the
// kernels themselves are in its subpackages, one per family (README.md
// maps every kernel to its file, assembly twin and test):
//
//   - vec: SIMD row primitives and cpu_amd64.go, the CPU-feature flag
//   - parallel: the worker Pool
//   - gemm: the packed-panel GEMM, its epilogue, GemmPacked, BatchMatMul
//   - conv: Conv2D (implicit GEMM, direct, depthwise), channels-last paths
//   - attention: fused scaled dot-product attention
//   - norm: Softmax, LayerNorm, AddLayerNorm, RMSNorm
//   - reduce: Reduce, ArgReduce, TopK, 2-D pools
//   - data: Copy, Gather, Scatter
//
// The kernels are plain functions over float32 slices (and data movement
// over any element type) with explicit shapes, called by the runtime
// interpreter. Hot loops have AVX2+FMA assembly twins chosen at run time
// (vec.AVX2FMA) and the GEMM a NEON micro-kernel on arm64; the pure-Go
// forms run everywhere else and under the purego build tag, and tests run
// both. Thresholds and block sizes are in pkg/targets/cpu/tuning.
//
// Conventions (every kernel package):
//   - Tensors are row-major and contiguous unless strides are given.
//   - Work splits across a *parallel.Pool (nil or one thread runs inline).
//     Results do not depend on the pool's thread count: every output
//     element is computed in the same order either way.
//   - Sizes and slice lengths are the caller's contract (the compiler checked
//     the shapes); a violation panics with a message naming the kernel
//     ("kernels: Name: ..."; contract_test.go checks them). Errors that
//     depend on data (Gather's indices) are returned.
//   - Outputs may not overlap inputs unless a kernel's comment says so
//     (elementwise-like kernels such as Softmax and LayerNorm allow out == x).
package kernels
