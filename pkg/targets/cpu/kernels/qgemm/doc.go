// Package qgemm is the CPU kernels' integer matrix product: Out[M, N] =
// (A[M, K] − zero)·B[K, N] for 8-bit A (uint8, or int8) and an int8
// weight B packed at build time, summed exactly in int32 and stored as
// float32. It runs quantized models' products (ONNX QLinearMatMul,
// MatMulInteger) at the integer rate of the CPU: on amd64 with AVX-512
// VNNI one vpdpbusd does 64 multiply-adds where an f32 FMA does 16; with
// AVX2 alone, operands widened to 16 bits, one vpmaddwd does 16 where an
// f32 FMA does 8; elsewhere a pure-Go twin computes the same sums.
//
// The packed layout (Pack) is the same on every CPU: B in panels of 16
// columns, each panel K rounded up to groups of 4 rows with a column's
// four bytes adjacent (the operand order of vpdpbusd: 64 bytes a group),
// zeros past K and N, then the column sums of B as int32, which turn the
// product of raw A into the product of A − zero.
package qgemm
