package kernelgen

import (
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// foldBatch rewrites a batched matmul whose B is one matrix for every
// batch (B has no batch dims, or only dims of 1) as one product over the
// batch's stacked rows: A [b..., M, K] is [b·M, K] in memory, and the
// output [b..., M, N] is [b·M, N], so the kernel reads B once per tile of
// rows instead of once per batch. ONNX exports of sequence-first layers
// multiply [seq, 1, K] by [K, N]: seq products of one row each, every one
// streaming all of B. The epilogue is unchanged: its bias goes by column
// and its residual has the output's layout.
func foldBatch(op *lir.MatMul) *lir.MatMul {
	ra, rb := len(op.AShape), len(op.BShape)
	if ra <= 2 || rb < 2 {
		return op
	}
	for _, d := range op.BShape[:rb-2] {
		if d != 1 {
			return op
		}
	}
	f := *op
	f.AShape = []int64{tensor.NumElements(op.AShape[:ra-2]) * op.AShape[ra-2], op.AShape[ra-1]}
	f.BShape = op.BShape[rb-2:]
	return &f
}
