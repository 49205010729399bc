package fusion

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/mir"
)

// DropIdentities removes nodes whose result is their operand unchanged,
// which exporters write: a pad of all-zero pads (torchvision's DenseNet
// pads before each transition's average pool), a concat of one operand
// (the first layer of a dense block). Each would run as a copy, and the
// pad as a fill and a copy. A node whose result is a graph output stays:
// the output needs bytes of its own where its operand is an input.
func DropIdentities(g *mir.Graph) (string, error) {
	outputs := map[*mir.Value]bool{}
	for _, o := range g.Outputs {
		outputs[o] = true
	}
	dropped := 0
	for _, n := range g.Nodes {
		if len(n.Results) != 1 || outputs[n.Results[0]] || !isIdentity(n) {
			continue
		}
		x, r := n.Args[0], n.Results[0]
		if x.Type.DType != r.Type.DType || !sameShape(x.Type.Shape, r.Type.Shape) {
			continue
		}
		replaceUses(g, r, x)
		dropped++
	}
	if dropped == 0 {
		return "", nil
	}
	return fmt.Sprintf("dropped %s", plural(dropped, "identity node")), nil
}

// isIdentity reports a node that returns its first operand as it is.
func isIdentity(n *mir.Node) bool {
	switch n.Op {
	case mir.OpConcat:
		return len(n.Args) == 1
	case mir.OpPad:
		for _, p := range n.Attrs.Dims("pads") {
			if v, ok := p.Const(); !ok || v != 0 {
				return false
			}
		}
		return len(n.Args) == 1
	}
	return false
}
