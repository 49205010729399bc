package tuning

// Native small products: which MatMul steps the cpu target compiles to C
// (pkg/targets/cpu/cgen, smallmatmul.go) instead of running the
// runtime's GEMM (pkg/targets/cpu/kernels/gemm).

// NativeSmallMatMul reports a batched product of small matrices, [...,
// M, K] · [..., K, N] over batches > 1 of both operands, that generated
// code runs: one loop nest per matrix with the shapes as constants, a
// row of the output in registers. The runtime's GEMM packs each
// matrix's operands into its micro-kernel's panels and runs whole
// register tiles (12x32 at AVX-512), which many tiny matrices (a DLRM's
// interaction products, 256 batches of 9x64 · 64x9) never fill.
// BenchmarkSmallMatMul ran the generated loops faster up to about 2^17
// multiply-adds a matrix and the GEMM faster past it (docs/perf/ops.md,
// "Large planes, tiny batched products, GridSample"). So: rows of up
// to 64, up to 1024 outputs and 2^17 multiply-adds a matrix.
func NativeSmallMatMul(m, n, k, batch int64) bool {
	return batch > 1 && m >= 1 && n >= 1 && k >= 1 && n <= 64 && m*n <= 1024 && m*n*k <= 1<<17
}

// NativeSmallMatMulFlops is the least work of one call of a small
// product's function, the grain of its batches: NativeConvChunkFlops.
const NativeSmallMatMulFlops = NativeConvChunkFlops
