package fusion

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// maxFoldBytes caps a folded constant that is larger than its operands:
// folding an expand of a scalar into a huge tensor would bloat the
// artifact for no speed.
const maxFoldBytes = 64 << 20

// FoldConstants evaluates, at build time, every node whose operands are all
// constants (weights included): a transpose or concat of params, batchnorm's
// per-channel scale and shift, a causal mask built from constants. The
// result is stored in the artifact as a constant.
func FoldConstants(g *mir.Graph) (string, error) {
	folded := 0
	outputs := map[*mir.Value]bool{}
	for _, o := range g.Outputs {
		outputs[o] = true
	}
	var kept []*mir.Node
	for _, n := range g.Nodes {
		if !foldable(n) || outputs[n.Results[0]] {
			kept = append(kept, n)
			continue
		}
		outs, err := foldNode(n)
		if err != nil {
			return "", fmt.Errorf("%s: folding %s: %v", n.Src, n.Op, err)
		}
		for i, r := range n.Results {
			c := g.NewConst(r.Name, outs[i])
			c.Name = r.Name
			replaceUses(g, r, c)
		}
		folded++
	}
	g.Nodes = kept
	if folded == 0 {
		return "", nil
	}
	return fmt.Sprintf("computed %d nodes at build time", folded), nil
}

// foldNode computes the results of n, whose operands are constants. A
// transpose moves its operand's bytes (tensor.Transpose): a large weight's
// through the reference interpreter would be converted to float64 and
// back, three times its bytes held at once (AlexNet's 151 MB Gemm weight:
// 0.35 GB more peak memory). Everything else runs in the interpreter.
func foldNode(n *mir.Node) ([]*tensor.Tensor, error) {
	if perm := n.Attrs.Ints("perm"); n.Op == mir.OpTranspose && len(n.Args) == 1 && len(n.Results) == 1 && len(perm) == len(n.Args[0].Const.Shape) {
		t, err := tensor.Transpose(n.Args[0].Const, perm)
		if err != nil {
			return nil, err
		}
		return []*tensor.Tensor{t}, nil
	}
	sub := &mir.Graph{Name: "fold", Nodes: []*mir.Node{n}, Outputs: n.Results}
	return eval.Run(sub, nil, nil)
}

// foldable reports a node whose operands are all constants and whose
// results are static and at most maxFoldBytes each, or no larger than its
// largest operand: a transpose, reshape or slice of a weight reorders it
// and bloats nothing, and left to run time it would move the whole weight
// on every run (AlexNet's first classifier layer, a 151 MB Gemm weight
// with transB, was transposed per run).
func foldable(n *mir.Node) bool {
	if n.Op == mir.OpCopy {
		return false // copies exist to give outputs their own buffer
	}
	largest := int64(0)
	for _, a := range n.Args {
		if !a.IsConst() {
			return false
		}
		largest = max(largest, int64(len(a.Const.Data)))
	}
	for _, r := range n.Results {
		if !r.Type.IsStatic() {
			return false
		}
		size := int64(r.Type.DType.Size())
		for _, d := range r.Type.Shape {
			v, _ := d.Const()
			size *= v
		}
		if size > maxFoldBytes && size > largest {
			return false
		}
	}
	return true
}
