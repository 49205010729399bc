// Package kernels is the CPU runtime's kernel library: plain functions over
// float32 slices (and generic data movement over any element type) with
// explicit shapes, called by the runtime interpreter. Hot loops (the GEMM
// micro-kernel and packing, axpy, depthwise rows) have AVX2+FMA assembly
// twins chosen at run time (golang.org/x/sys/cpu); the pure-Go forms run
// everywhere else and under the purego build tag, and tests run both. It
// holds no mutable package state beyond the feature flags read at start-up.
//
// Conventions:
//   - Tensors are row-major and contiguous unless strides are given.
//   - Work splits across a *Pool (nil or one thread runs inline). Results do
//     not depend on the pool's thread count: every output element is computed
//     in the same order either way.
//   - Sizes and slice lengths are the caller's contract (the compiler checked
//     the shapes); a violation panics with a message naming the kernel.
//     Errors that depend on data (Gather's indices) are returned.
//   - Outputs may not overlap inputs unless a kernel's comment says so
//     (elementwise-like kernels such as Softmax and LayerNorm allow out == x).
//
// Gemm is a packed-panel design whose mr×nr micro-kernel is a value
// (gemmKernel); the pure-Go kernel here is replaced by assembly per
// architecture without changing the blocking. Conv2D (implicit GEMM) and
// Attention reuse it through the bSource packing interface.
package kernels
