package mir

import (
	"slices"

	"github.com/rlx-project/rlx/pkg/lir"
)

// OpClass groups MIR operations by the kind of kernel that runs them.
type OpClass uint8

// The classes.
const (
	ClassElementwise OpClass = iota + 1 // element to element with broadcasting; fusable
	ClassLinalg                         // matmul, conv2d, attention: products, with epilogues
	ClassNorm                           // softmax, layernorm, add_layernorm: row-wise normalizations
	ClassReduce                         // reductions and pools
	ClassMovement                       // data movement: views and copies
	ClassCreate                         // values made from nothing but attributes
	ClassRegion                         // a fused elementwise region (Node.Region)
	ClassRecurrent                      // an LSTM or GRU over a sequence, expanded at specialization
)

// OpInfo is one row of the op table: what an operation takes.
type OpInfo struct {
	Op      Op
	Class   OpClass
	MinArgs int
	MaxArgs int      // -1: any number
	Attrs   []string // every attribute a node of it may carry
	// Ew is an elementwise op's bytecode instruction (lir.EwInvalid for
	// clamp, which compiles to max and min).
	Ew lir.EwOp
}

// epilogueAttrs are what fusion.FuseEpilogues adds to a matmul or conv.
var epilogueAttrs = []string{"bias", "residual", "act", "alpha", "min", "max", "act_last"}

// opTable is the one list of MIR operations. Elementwise rows come from
// lir.EwOps, so an elementwise op is added there (see DEVELOPERS.md);
// every other row is written here. Built once, never written.
var opTable = buildOpTable()

func buildOpTable() map[Op]OpInfo {
	t := map[Op]OpInfo{}
	for ew := lir.EwOp(1); ew < lir.NumEwOps; ew++ {
		info := ew.Info()
		if info.Bytecode {
			continue
		}
		row := OpInfo{Op: Op(info.Name), Class: ClassElementwise, MinArgs: info.Arity, MaxArgs: info.Arity, Ew: ew}
		switch ew {
		case lir.EwLeakyRelu:
			row.Attrs = []string{"alpha"}
		case lir.EwCast:
			row.Attrs = []string{"to"}
		}
		t[row.Op] = row
	}
	t["clamp"] = OpInfo{Op: "clamp", Class: ClassElementwise, MinArgs: 1, MaxArgs: 1, Attrs: []string{"min", "max"}}
	for _, row := range []OpInfo{
		{Op: OpMatMul, Class: ClassLinalg, MinArgs: 2, MaxArgs: 4, Attrs: epilogueAttrs},
		{Op: OpMatMulI8, Class: ClassLinalg, MinArgs: 2, MaxArgs: 3, Attrs: []string{"zero"}},
		{Op: OpConv2DI8, Class: ClassLinalg, MinArgs: 2, MaxArgs: 3, Attrs: []string{"stride", "pad", "dilation", "groups", "zero", "bias"}},
		{Op: OpConv2D, Class: ClassLinalg, MinArgs: 2, MaxArgs: 4, Attrs: append([]string{"stride", "pad", "dilation", "groups"}, epilogueAttrs...)},
		{Op: OpAttention, Class: ClassLinalg, MinArgs: 3, MaxArgs: 4, Attrs: []string{"causal", "scale"}},
		{Op: OpSoftmax, Class: ClassNorm, MinArgs: 1, MaxArgs: 1, Attrs: []string{"axis", "log"}},
		{Op: OpLayerNorm, Class: ClassNorm, MinArgs: 1, MaxArgs: 3, Attrs: []string{"axis", "eps", "rms", "scale", "bias"}},
		{Op: OpAddLayerNorm, Class: ClassNorm, MinArgs: 2, MaxArgs: 4, Attrs: []string{"axis", "eps", "rms", "scale", "bias"}},
		{Op: OpReduce, Class: ClassReduce, MinArgs: 1, MaxArgs: 1, Attrs: []string{"kind", "axes", "keepdims"}},
		{Op: OpArgReduce, Class: ClassReduce, MinArgs: 1, MaxArgs: 1, Attrs: []string{"max", "axis", "keepdims"}},
		{Op: OpTopK, Class: ClassReduce, MinArgs: 1, MaxArgs: 1, Attrs: []string{"k", "axis", "largest"}},
		{Op: OpMaxPool2D, Class: ClassReduce, MinArgs: 1, MaxArgs: 1, Attrs: []string{"kernel", "stride", "pad", "dilation", "ceil_mode"}},
		{Op: OpAvgPool2D, Class: ClassReduce, MinArgs: 1, MaxArgs: 1, Attrs: []string{"kernel", "stride", "pad", "dilation", "ceil_mode", "count_include_pad"}},
		{Op: OpReshape, Class: ClassMovement, MinArgs: 1, MaxArgs: 1},
		{Op: OpTranspose, Class: ClassMovement, MinArgs: 1, MaxArgs: 1, Attrs: []string{"perm"}},
		{Op: OpSlice, Class: ClassMovement, MinArgs: 1, MaxArgs: 1, Attrs: []string{"starts", "ends", "axes", "steps"}},
		{Op: OpConcat, Class: ClassMovement, MinArgs: 1, MaxArgs: -1, Attrs: []string{"axis"}},
		{Op: OpPad, Class: ClassMovement, MinArgs: 1, MaxArgs: 1, Attrs: []string{"pads", "value"}},
		{Op: OpExpand, Class: ClassMovement, MinArgs: 1, MaxArgs: 1},
		{Op: OpGather, Class: ClassMovement, MinArgs: 2, MaxArgs: 2, Attrs: []string{"axis"}},
		{Op: OpScatter, Class: ClassMovement, MinArgs: 3, MaxArgs: 3},
		{Op: OpCopy, Class: ClassMovement, MinArgs: 1, MaxArgs: 1},
		{Op: OpIota, Class: ClassCreate, MinArgs: 0, MaxArgs: 0, Attrs: []string{"n"}},
		{Op: OpFused, Class: ClassRegion, MinArgs: 0, MaxArgs: -1},
		{Op: OpRecurrent, Class: ClassRecurrent, MinArgs: 4, MaxArgs: 9, Attrs: RecurrentAttrs},
	} {
		t[row.Op] = row
	}
	return t
}

// Info returns op's row of the table.
func Info(op Op) (OpInfo, bool) {
	info, ok := opTable[op]
	return info, ok
}

// Ops lists every MIR operation, sorted by name.
func Ops() []OpInfo {
	out := make([]OpInfo, 0, len(opTable))
	for _, info := range opTable {
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b OpInfo) int {
		switch {
		case a.Op < b.Op:
			return -1
		case a.Op > b.Op:
			return 1
		}
		return 0
	})
	return out
}

// IsElementwise reports an elementwise operation: one that maps element to
// element with broadcasting (a fused region is not one).
func IsElementwise(op Op) bool { return opTable[op].Class == ClassElementwise }

// CheckNode checks a node against its op's row: a known op, an argument
// count in range and only attributes the row lists.
func CheckNode(n *Node) error {
	info, ok := Info(n.Op)
	if !ok {
		return errorf("unknown MIR operation %q", n.Op)
	}
	if len(n.Args) < info.MinArgs || info.MaxArgs >= 0 && len(n.Args) > info.MaxArgs {
		return errorf("%s takes %d to %d arguments, has %d", n.Op, info.MinArgs, info.MaxArgs, len(n.Args))
	}
	for k := range n.Attrs {
		if !slices.Contains(info.Attrs, k) {
			return errorf("%s has attribute %q, which its row in the op table does not list", n.Op, k)
		}
	}
	return nil
}
