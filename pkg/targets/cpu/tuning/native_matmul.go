package tuning

// Native small products: which MatMul steps the cpu target compiles to C
// (pkg/targets/cpu/cgen, smallmatmul.go) instead of running the
// runtime's GEMM (pkg/targets/cpu/kernels/gemm).

// NativeSmallMatMul reports a batched product of small matrices, [...,
// M, K] · [..., K, N] over batches > 1 of both operands, that generated
// code runs: one loop nest per matrix with the shapes as constants, a
// row of the output in registers. The runtime's GEMM packs each
// matrix's operands into its micro-kernel's panels and runs whole
// register tiles (12x32 at AVX-512): a DLRM's interaction products (256
// batches of 9x64 · 64x9) ran at 7 GFLOP/s there. BenchmarkSmallMatMul
// (Zen 4, one thread), runtime against generated: 256 of 9x64·64x9 381
// -> 102-111 us, 64 of 16x64·64x16 97 -> 45, 16 of 8x1024·1024x8 326 ->
// 139, 48 of 16x64·64x64 126 -> 74; 64 of 32x64·64x32 (2^17 terms a
// matrix) 130 -> 114-125, about even; past that the GEMM wins (32 of
// 32x256·256x32 220 -> 282-299, 8 of 16x4096·4096x16 472 -> 585). So:
// rows of up to 64, up to 1024 outputs and 2^17 multiply-adds a matrix.
func NativeSmallMatMul(m, n, k, batch int64) bool {
	return batch > 1 && m >= 1 && n >= 1 && k >= 1 && n <= 64 && m*n <= 1024 && m*n*k <= 1<<17
}

// NativeSmallMatMulFlops is the least work of one call of a small
// product's function, the grain of its batches: NativeConvChunkFlops.
const NativeSmallMatMulFlops = NativeConvChunkFlops
