package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// smallMatMul generates a batched product of small matrices
// (tuning.NativeSmallMatMul): Out[b] = A[b]·B[b] for each batch b, both
// operands with the same batches (no broadcasting) and no epilogue. Each
// batch is one item; each row of its output is summed in an array of N
// floats that clang keeps in registers, over k in order (as the
// runtime's GEMM sums a row's terms), each term a·b added with one
// rounding (clang contracts the multiply and add into an FMA, as the
// GEMM's micro-kernels do).
func smallMatMul(prog *lir.Program, op *lir.MatMul) (function, bool) {
	ra, rb := len(op.AShape), len(op.BShape)
	if ra < 3 || ra != rb {
		return function{}, false
	}
	for i := range ra - 2 {
		if op.AShape[i] != op.BShape[i] {
			return function{}, false
		}
	}
	m, k, n := op.AShape[ra-2], op.AShape[ra-1], op.BShape[rb-1]
	batch, ok := product(op.AShape[:ra-2])
	ep := op.Epilogue
	if !ok || op.BShape[rb-2] != k || !tuning.NativeSmallMatMul(m, n, k, batch) || batch > 1<<31 ||
		ep.Bias != lir.NoBuf || ep.Residual != lir.NoBuf || ep.Act != lir.ActNone ||
		sameBytes(prog, op.Out, op.A) || sameBytes(prog, op.Out, op.B) {
		return function{}, false
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("{\n\t/* matmul: %d batches of [%d x %d] x [%d x %d] */\n", batch, m, k, k, n)
	w("\tconst float *restrict a = (const float *)args[0];\n")
	w("\tconst float *restrict b = (const float *)args[1];\n")
	w("\tfloat *restrict y = (float *)args[2];\n")
	w("\tfor (int64_t t = lo; t < hi; t++) {\n")
	w("\t\tconst float *ab = a + t * %d, *bb = b + t * %d;\n", m*k, k*n)
	w("\t\tfloat *yb = y + t * %d;\n", m*n)
	w("\t\tfor (int64_t i = 0; i < %d; i++) {\n", m)
	w("\t\t\tfloat acc[%d] = {0};\n", n)
	w("\t\t\tfor (int64_t p = 0; p < %d; p++) {\n", k)
	w("\t\t\t\tconst float av = ab[i * %d + p];\n", k)
	w("\t\t\t\tconst float *br = bb + p * %d;\n", n)
	w("\t\t\t\tfor (int64_t j = 0; j < %d; j++) acc[j] += av * br[j];\n", n)
	w("\t\t\t}\n")
	w("\t\t\tfor (int64_t j = 0; j < %d; j++) yb[i * %d + j] = acc[j];\n", n, n)
	w("\t\t}\n")
	w("\t}\n")
	w("}\n")
	f := function{body: b.String(), in: []lir.Buf{op.A, op.B}, out: []lir.Buf{op.Out}}
	f.fn = lir.NativeFunc{N: batch, Grain: max(1, tuning.NativeSmallMatMulFlops/(2*m*n*k)),
		In: []int64{batch * m * k * 4, batch * k * n * 4}, Out: []int64{batch * m * n * 4}}
	return f, true
}
