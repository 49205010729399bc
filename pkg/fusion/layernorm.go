package fusion

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/mir"
)

// FuseAddLayerNorm turns s = add(a, b); y = layernorm(s) into one kernel
// that reads a and b once and writes y (and s, when something else uses the
// sum: the residual stream of a pre-norm transformer).
func FuseAddLayerNorm(g *mir.Graph) (string, error) {
	fused := 0
	for _, ln := range append([]*mir.Node(nil), g.Nodes...) {
		if ln.Op != mir.OpLayerNorm || ln.Attrs.Bool("rms") || ln.Args[0].Type.DType.String() != "f32" {
			continue
		}
		s := ln.Args[0]
		add := s.Def
		if add == nil || add.Op != "add" || !sameShape(add.Args[0].Type.Shape, s.Type.Shape) || !sameShape(add.Args[1].Type.Shape, s.Type.Shape) {
			continue
		}
		attrs := mir.Attrs{}
		for k, v := range ln.Attrs {
			attrs[k] = v
		}
		n := &mir.Node{Op: mir.OpAddLayerNorm, Args: append([]*mir.Value{add.Args[0], add.Args[1]}, ln.Args[1:]...), Attrs: attrs, Src: ln.Src}
		y := ln.Results[0]
		y.Def, s.Def = n, n
		n.Results = []*mir.Value{y, s}
		var nodes []*mir.Node
		for _, m := range g.Nodes {
			switch m {
			case add:
			case ln:
				nodes = append(nodes, n)
			default:
				nodes = append(nodes, m)
			}
		}
		g.Nodes = nodes
		fused++
	}
	if fused == 0 {
		return "", nil
	}
	return fmt.Sprintf("fused %d residual adds into layernorm", fused), nil
}
