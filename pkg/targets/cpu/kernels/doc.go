// Package kernels is the CPU runtime's GEMM family: the packed-panel GEMM
// (the driver, GemmPacked over weights packed ahead of time, the fused
// Epilogue, BatchMatMul) and the kernels that reuse its packing interface
// (bSource): Conv2D as implicit GEMM with its direct and depthwise paths
// (NCHW and channels last), and Attention. Plain functions over float32
// slices with explicit shapes, called by the runtime interpreter. Hot loops
// (the GEMM micro-kernel and packing, depthwise rows, panel copies) have
// AVX2+FMA assembly twins chosen at run time (vec.AVX2FMA) and a NEON GEMM
// micro-kernel on arm64; the pure-Go forms run everywhere else and under
// the purego build tag, and tests run both. The families with no GEMM in
// them live in the subpackages (see README.md): vec (SIMD primitives and
// the CPU-feature flag), parallel (the worker Pool), data, norm, reduce.
// Thresholds and block sizes are in pkg/targets/cpu/tuning.
//
// Conventions (all kernel packages):
//   - Tensors are row-major and contiguous unless strides are given.
//   - Work splits across a *parallel.Pool (nil or one thread runs inline).
//     Results do not depend on the pool's thread count: every output
//     element is computed in the same order either way.
//   - Sizes and slice lengths are the caller's contract (the compiler checked
//     the shapes); a violation panics with a message naming the kernel
//     ("kernels: Name: ..."). Errors that depend on data (Gather's indices)
//     are returned.
//   - Outputs may not overlap inputs unless a kernel's comment says so
//     (elementwise-like kernels such as Softmax and LayerNorm allow out == x).
//
// Gemm is a packed-panel design whose mr×nr micro-kernel is a value
// (gemmKernel); the pure-Go kernel here is replaced by assembly per
// architecture without changing the blocking. Conv2D (implicit GEMM) and
// Attention reuse it through the bSource packing interface.
package kernels
