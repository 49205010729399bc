package specialize

import (
	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
)

// subsampleStrided rewrites every 1x1 convolution with a stride above 1
// and no padding into a slice that takes every stride-th row and column
// of its input, then the same convolution with stride 1: a plain product
// over a quarter of the positions (at stride 2), which the products'
// kernels run at their full rate, where the strided form read its input
// through gathers. The copy moves C·H·W/4 elements for C·O·H·W/4
// multiply-adds. It works on a copy of g (g.Clone), as expandRecurrent
// does, and returns g itself when nothing matches.
func subsampleStrided(g *mir.Graph) *mir.Graph {
	match := func(n *mir.Node) bool {
		if n.Op != mir.OpConv2D || len(n.Args) < 2 || len(n.Results) != 1 {
			return false
		}
		ws, xs := n.Args[1].Type.Shape, n.Args[0].Type.Shape
		if len(ws) != 4 || len(xs) != 4 || len(n.Results[0].Type.Shape) != 4 {
			return false
		}
		kh, ok1 := ws[2].Const()
		kw, ok2 := ws[3].Const()
		st, pad := n.Attrs.Ints("stride"), n.Attrs.Ints("pad")
		if !ok1 || !ok2 || kh != 1 || kw != 1 || len(st) != 2 || len(pad) != 4 || st[0] == 1 && st[1] == 1 {
			return false
		}
		for _, p := range pad {
			if p != 0 {
				return false
			}
		}
		return true
	}
	found := false
	for _, n := range g.Nodes {
		found = found || match(n)
	}
	if !found {
		return g
	}
	c := g.Clone()
	nodes := c.Nodes
	c.Nodes = nil
	for _, n := range nodes {
		if match(n) {
			x, out := n.Args[0], n.Results[0]
			st := n.Attrs.Ints("stride")
			shape := []dim.Expr{x.Type.Shape[0], x.Type.Shape[1], out.Type.Shape[2], out.Type.Shape[3]}
			sub := c.Add(mir.OpSlice, []*mir.Value{x}, mir.Attrs{
				"starts": []dim.Expr{dim.Const(0), dim.Const(0)},
				"ends":   []dim.Expr{x.Type.Shape[2], x.Type.Shape[3]},
				"axes":   []int64{2, 3}, "steps": []int64{st[0], st[1]},
			}, n.Src, mir.Type{DType: x.Type.DType, Shape: shape}).Results[0]
			n.Args = append([]*mir.Value{sub}, n.Args[1:]...)
			n.Attrs["stride"] = []int64{1, 1}
		}
		c.Nodes = append(c.Nodes, n)
	}
	return c
}
