package specialize

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Folding under the binding.
//
// The template folds what is constant in every binding (fusion's
// FoldConstants); what depends on the dims alone stays computed at run
// time there. An ONNX Resize to a size read from the input's shape (a
// segmentation head's upsampling back to the image) is such a
// computation: its source indices and interpolation weights are an iota
// over the output's width, scaled, floored and cast, which ran as eight
// small kernels per axis and left the gathers reading indices from the
// arena, so that the native gather (which embeds constant indices) did
// not take them. Under one binding they are constants: each variant
// folds them, and the kernels that read them see constants.

// maxBoundFoldElements bounds a value folded under a binding: each variant
// stores its own copy of it in the artifact, and the index and weight
// vectors this is for have one element per output row or column. The same
// bound as the importer's folding (onnx.FoldMax).
const maxBoundFoldElements = 1 << 16

// foldBound evaluates every node whose operands are all constants and
// whose results have at most maxBoundFoldElements elements each under b,
// in order (a folded result makes its users' operands constant), and
// replaces its results with constants. It works on a copy (g.Clone) and
// returns g itself when nothing folds.
func foldBound(g *mir.Graph, b Binding) (*mir.Graph, error) {
	var c *mir.Graph
	outputs := map[*mir.Value]bool{}
	for _, o := range g.Outputs {
		outputs[o] = true
	}
	folded := map[*mir.Value]*mir.Value{} // a result of g's, by its constant
	for i, n := range g.Nodes {
		if !boundFoldable(n, b, outputs, folded) {
			continue
		}
		sub := &mir.Graph{Name: "fold", Nodes: []*mir.Node{withArgs(n, folded)}, Outputs: n.Results}
		outs, err := eval.Run(sub, b, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: folding %s under %s: %v", n.Src, n.Op, b, err)
		}
		if c == nil {
			c = g.Clone()
		}
		for j, r := range n.Results {
			cr := c.Nodes[i].Results[j]
			k := c.NewConst(cr.Name, outs[j])
			folded[r] = k
			for _, m := range c.Nodes[i+1:] {
				for a, v := range m.Args {
					if v == cr {
						m.Args[a] = k
					}
				}
			}
		}
	}
	if c == nil {
		return g, nil
	}
	if _, err := fusion.DeadCode(c); err != nil {
		return nil, err
	}
	return c, nil
}

// boundFoldable reports a node whose operands are constants (folded ones
// included) and whose results are small under b and no graph output.
func boundFoldable(n *mir.Node, b Binding, outputs map[*mir.Value]bool, folded map[*mir.Value]*mir.Value) bool {
	if n.Op == mir.OpCopy || len(n.Results) == 0 {
		return false // copies exist to give outputs their own buffer
	}
	for _, a := range n.Args {
		if !a.IsConst() && folded[a] == nil {
			return false
		}
	}
	for _, r := range n.Results {
		s, err := Concrete(r.Type.Shape, b)
		if err != nil || outputs[r] || tensor.NumElements(s) > maxBoundFoldElements {
			return false
		}
	}
	return true
}

// withArgs is n with its folded operands replaced by their constants,
// for evaluating it alone.
func withArgs(n *mir.Node, folded map[*mir.Value]*mir.Value) *mir.Node {
	m := *n
	m.Args = make([]*mir.Value, len(n.Args))
	for i, a := range n.Args {
		if k := folded[a]; k != nil {
			a = k
		}
		m.Args[i] = a
	}
	return &m
}
