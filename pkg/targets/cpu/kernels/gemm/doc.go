// Package gemm is the CPU kernels' matrix multiply: a packed-panel GEMM
// (the BLIS loop nest) whose mr×nr micro-kernel is a value chosen once per
// process (on amd64 AVX-512F 12×16 tiles where the CPU and OS run them,
// else AVX2+FMA 6×16; NEON 8×8 on arm64; the portable 4×2
// elsewhere and under purego), with the fused Epilogue (bias, activation,
// residual), B packed ahead of time (PackBLayout, GemmPacked,
// Conv1x1Packed) and BatchMatMul. Run, Args, BSource and Epi are the
// driver's interface for the kernels built on it (package conv's implicit
// GEMM, package attention).
package gemm
