package fusion

import (
	"fmt"
	"slices"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
)

// SinkViews moves a view (reshape, squeeze, unsqueeze: OpReshape) of a
// matmul's or conv2d's result below the elementwise ops that follow it,
// so that the epilogue fusion sees them. A 1-D convolution is a conv2d
// between an unsqueeze and a squeeze (pkg/onnx), and its ReLU, bias or
// residual add follows the squeeze: before this pass each ran as a
// separate pass over memory. The op is rewritten to the view's input
// shape and the view applied to its result; its other operands are
// mapped to that shape: a constant reshaped, another value through a new
// view. That takes a view which only inserts or drops axes of size 1
// (any operand broadcasting to the result maps, its axes kept in place),
// or any view when every other operand has the result's full shape or is
// one constant element. Views cost nothing (the same bytes, another
// shape), so moving one never adds work.
//
// Where an op adds two such views (a WaveNet's sum of skip connections,
// c0 + c1 + c2 + ...), the view of the later product goes below it: the
// product computed last takes the sum so far as its residual, and the
// next one takes that sum in turn. (The earlier product's view would sink
// down the whole chain, blocking every other one.)
func SinkViews(g *mir.Graph) (string, error) {
	moved := 0
	uses := g.Uses()
	pos := map[*mir.Node]int{}
	for i, n := range g.Nodes {
		pos[n] = i
	}
	// product returns the matmul or conv2d that view v's node views.
	product := func(v *mir.Value) *mir.Node {
		r := v.Def
		if r == nil || r.Op != mir.OpReshape || r.Args[0].Def == nil {
			return nil
		}
		if p := r.Args[0].Def; p.Op == mir.OpMatMul || p.Op == mir.OpConv2D {
			return p
		}
		return nil
	}
	for _, r := range slices.Clone(g.Nodes) {
		p := product(r.Results[0])
		if p == nil {
			continue
		}
		later := func(e *mir.Node) bool {
			for _, a := range e.Args {
				if q := product(a); q != nil && q != p && uses[a] == 1 && uses[q.Results[0]] == 1 && pos[q] > pos[p] {
					return true
				}
			}
			return false
		}
		for sinkView(g, uses, r, later) {
			moved++
		}
	}
	if moved == 0 {
		return "", nil
	}
	return fmt.Sprintf("moved views below %s", plural(moved, "elementwise op")), nil
}

// sinkView moves view r below its result's one user when that is an
// elementwise op it can be moved below and skip does not refuse, and
// reports whether it did.
func sinkView(g *mir.Graph, uses map[*mir.Value]int, r *mir.Node, skip func(e *mir.Node) bool) bool {
	v, x := r.Results[0], r.Args[0]
	if uses[v] != 1 {
		return false
	}
	e := consumer(g, v)
	if e == nil || !mir.IsElementwise(e.Op) || len(e.Results) != 1 || !sameShape(e.Results[0].Type.Shape, v.Type.Shape) || skip(e) {
		return false
	}
	axes, unit := unitAxes(x.Type.Shape, v.Type.Shape)
	shapes := make([][]dim.Expr, len(e.Args))
	for i, a := range e.Args {
		switch {
		case a == v:
			shapes[i] = x.Type.Shape
		case unit && a.Type.Rank() <= v.Type.Rank():
			// a broadcasts to v's shape: aligned to its rank from the
			// right, then each of x's axes takes the dim of the axis of
			// v it is (1 where x has an axis v lacks).
			aligned := slices.Repeat([]dim.Expr{dim.Const(1)}, v.Type.Rank()-a.Type.Rank())
			aligned = append(aligned, a.Type.Shape...)
			s := make([]dim.Expr, len(axes))
			for k, j := range axes {
				s[k] = dim.Const(1)
				if j >= 0 {
					s[k] = aligned[j]
				}
			}
			shapes[i] = s
		case sameShape(a.Type.Shape, v.Type.Shape):
			shapes[i] = x.Type.Shape
		case a.IsConst() && a.Const.Len() == 1 && a.Type.Rank() <= x.Type.Rank():
			shapes[i] = a.Type.Shape
		default:
			return false
		}
	}
	var views []*mir.Node
	for i, a := range e.Args {
		switch {
		case a == v:
			e.Args[i] = x
		case sameShape(a.Type.Shape, shapes[i]):
		case a.IsConst():
			t := *a.Const
			t.Shape = make([]int64, len(shapes[i]))
			for k, d := range shapes[i] {
				t.Shape[k], _ = d.Const()
			}
			uses[a]--
			e.Args[i] = g.NewConst(a.Name, &t)
			uses[e.Args[i]]++
		default:
			n := newNode(g, mir.OpReshape, []*mir.Value{a}, nil, e.Src, mir.Type{DType: a.Type.DType, Shape: shapes[i]})
			views = append(views, n)
			e.Args[i] = n.Results[0]
			uses[e.Args[i]]++
		}
	}
	// e computes in x's shape; r views e's result as the value e made.
	res := e.Results[0]
	ne := g.NewValue("", mir.Type{DType: res.Type.DType, Shape: x.Type.Shape})
	ne.Def = e
	e.Results = []*mir.Value{ne}
	r.Args = []*mir.Value{ne}
	r.Results = []*mir.Value{res}
	res.Def = r
	delete(uses, v)
	uses[ne] = 1
	var nodes []*mir.Node
	for _, n := range g.Nodes {
		switch n {
		case r:
		case e:
			nodes = append(nodes, views...)
			nodes = append(nodes, e, r)
		default:
			nodes = append(nodes, n)
		}
	}
	g.Nodes = nodes
	return true
}

// unitAxes matches the axes of x to those of v when the two differ only
// by axes of size 1: the index in v of each axis of x, -1 for an axis of
// size 1 that v lacks. ok is false for any other reshape.
func unitAxes(x, v []dim.Expr) (axes []int, ok bool) {
	axes = make([]int, len(x))
	j := 0
	for i := 0; i < len(x); {
		switch {
		case j < len(v) && dim.Equal(x[i], v[j]):
			axes[i] = j
			i++
			j++
		case isOne(x[i]):
			axes[i] = -1
			i++
		case j < len(v) && isOne(v[j]):
			j++
		default:
			return nil, false
		}
	}
	for ; j < len(v); j++ {
		if !isOne(v[j]) {
			return nil, false
		}
	}
	return axes, true
}
