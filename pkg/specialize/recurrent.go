package specialize

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// MaxRecurrentSteps bounds the steps one recurrent node (lstm, gru)
// unrolls to at a binding: its sequence length times its directions.
const MaxRecurrentSteps = 4096

// expandRecurrent unrolls every recurrent node of g (mir.OpRecurrent) for
// binding b, which makes its sequence length concrete, into primitive
// nodes every backend runs: per direction one matrix product for the
// inputs of all steps (x·Wᵀ + the input bias), then per step the
// recurrent product h·Rᵀ with that step's row of it as a residual, slices
// of the gate blocks and the gates' elementwise arithmetic, which
// elementwise fusion then fuses; the outputs are concatenations of the
// steps' hidden states. It works on a copy (g.Clone) and returns g itself
// when g has no recurrent node: the variants of a build specialize
// concurrently from one template.
func expandRecurrent(g *mir.Graph, b Binding) (*mir.Graph, error) {
	has := false
	for _, n := range g.Nodes {
		has = has || n.Op == mir.OpRecurrent
	}
	if !has {
		return g, nil
	}
	c := g.Clone()
	nodes := c.Nodes
	c.Nodes = nil
	for _, n := range nodes {
		if n.Op != mir.OpRecurrent {
			c.Nodes = append(c.Nodes, n)
			continue
		}
		if err := unroll(c, n, b); err != nil {
			return nil, fmt.Errorf("%s: %v", n.Src, err)
		}
	}
	// The unrolled nodes slice the weights (a GRU's recurrent weights by
	// gate block, the biases): computed now, as the template's constant
	// folding computed the transposes, they are weights the matrix
	// products read packed, not copies of a weight's columns made on
	// every run (a GRU of 256 copied 512 KB a run and ran its gates'
	// product unpacked).
	if _, err := fusion.FoldConstants(c); err != nil {
		return nil, err
	}
	if _, err := fusion.DeadCode(c); err != nil {
		return nil, err
	}
	if _, err := fusion.FuseElementwise(c); err != nil {
		return nil, err
	}
	return c, nil
}

// unroller emits the nodes of one recurrent node into g.
type unroller struct {
	g   *mir.Graph
	src string
	dt  tensor.DType
}

func (u *unroller) add(op mir.Op, args []*mir.Value, attrs mir.Attrs, shape ...dim.Expr) *mir.Value {
	return u.g.Add(op, args, attrs, u.src, mir.Type{DType: u.dt, Shape: shape}).Results[0]
}

// slice takes [start, end) of axis.
func (u *unroller) slice(v *mir.Value, axis int, start, end int64) *mir.Value {
	shape := append([]dim.Expr(nil), v.Type.Shape...)
	shape[axis] = dim.Const(end - start)
	return u.add(mir.OpSlice, []*mir.Value{v}, mir.Attrs{"starts": []dim.Expr{dim.Const(start)}, "ends": []dim.Expr{dim.Const(end)},
		"axes": []int64{int64(axis)}, "steps": []int64{1}}, shape...)
}

func (u *unroller) reshape(v *mir.Value, shape ...dim.Expr) *mir.Value {
	return u.add(mir.OpReshape, []*mir.Value{v}, nil, shape...)
}

// ew applies an elementwise op; the result has a's shape (b is a's shape
// or broadcasts to it).
func (u *unroller) ew(op mir.Op, a *mir.Value, b ...*mir.Value) *mir.Value {
	return u.add(op, append([]*mir.Value{a}, b...), nil, a.Type.Shape...)
}

// matmul is a·b (+ bias per column) (+ residual), as one matmul with its
// epilogue.
func (u *unroller) matmul(a, b, bias, residual *mir.Value, shape ...dim.Expr) *mir.Value {
	args, attrs := []*mir.Value{a, b}, mir.Attrs{}
	if bias != nil {
		args, attrs["bias"] = append(args, bias), true
	}
	if residual != nil {
		args, attrs["residual"] = append(args, residual), true
	}
	return u.add(mir.OpMatMul, args, attrs, shape...)
}

func (u *unroller) concat(axis int, vs []*mir.Value) *mir.Value {
	if len(vs) == 1 {
		return vs[0]
	}
	shape := append([]dim.Expr(nil), vs[0].Type.Shape...)
	total := int64(0)
	for _, v := range vs {
		k, _ := v.Type.Shape[axis].Const() // the axes concatenated here are static
		total += k
	}
	shape[axis] = dim.Const(total)
	return u.add(mir.OpConcat, vs, mir.Attrs{"axis": int64(axis)}, shape...)
}

// become makes v's node compute result instead (one of the recurrent
// node's results, which later nodes and the graph's outputs use). A v
// that is no node's result, or that stands for an earlier result, gets a
// copy.
func (u *unroller) become(v, result *mir.Value, taken map[*mir.Value]bool) {
	if v.Def == nil || taken[v] || v.Def.Results[0] != v {
		v = u.g.Add(mir.OpCopy, []*mir.Value{v}, nil, u.src, v.Type).Results[0]
	}
	taken[v] = true
	v.Def.Results[0] = result
	result.Def = v.Def
}

// unroll appends to g the nodes that compute recurrent node n at binding b.
func unroll(g *mir.Graph, n *mir.Node, b Binding) error {
	rc, err := mir.DecodeRecurrent(n)
	if err != nil {
		return err
	}
	xs := rc.X.Type.Shape
	if len(xs) != 3 {
		return fmt.Errorf("%s: x is %s, want [seq, batch, in]", rc.Cell, rc.X.Type)
	}
	seq, err := xs[0].Eval(b)
	if err != nil {
		return fmt.Errorf("%s: the sequence length: %v", rc.Cell, err)
	}
	if seq < 1 {
		return fmt.Errorf("%s: the sequence length %s is %d; a recurrent layer runs at least one step", rc.Cell, xs[0], seq)
	}
	if seq > MaxRecurrentSteps || seq*int64(rc.Dirs) > MaxRecurrentSteps {
		return fmt.Errorf("%s: %d steps in %d direction(s) unroll to %d steps, more than %d (bind a shorter sequence than %s=%d)",
			rc.Cell, seq, rc.Dirs, seq*int64(rc.Dirs), MaxRecurrentSteps, xs[0], seq)
	}
	u := &unroller{g: g, src: n.Src, dt: rc.X.Type.DType}
	batch := xs[1]
	H := rc.Hidden
	h, gh := dim.Const(H), dim.Const(rc.Gates*H)
	one := dim.Const(1)
	zero := g.NewConst(n.Results[0].Name+".zero", tensor.New(u.dt))
	// state is direction d of an initial state [dirs, batch, H], or zeros.
	state := func(v *mir.Value, d int) *mir.Value {
		if v == nil {
			return u.add(mir.OpExpand, []*mir.Value{zero}, nil, batch, h)
		}
		if rc.Dirs > 1 {
			v = u.slice(v, 0, int64(d), int64(d)+1)
		}
		return u.reshape(v, batch, h)
	}
	var ys, hs, cs []*mir.Value
	for d := 0; d < rc.Dirs; d++ {
		w, r, bias := rc.W[d], rc.R[d], rc.B[d]
		G := rc.Gates * H
		wb, rb := u.slice(bias, 0, 0, G), u.slice(bias, 0, G, 2*G)
		// The input bias, added once for all steps: the LSTM's and RNN's
		// Wb + Rb; the GRU's Wb (its Rb is the recurrent products' bias,
		// where the h gate needs it).
		xb := wb
		if rc.Cell != "gru" {
			xb = u.ew("add", wb, rb)
		}
		p := u.matmul(rc.X, w, xb, nil, dim.Const(seq), batch, gh)
		var rzr, rh, rbzr, rbh *mir.Value
		if rc.Cell == "gru" {
			rbh = u.slice(rb, 0, 2*H, 3*H)
			if !rc.LinearBeforeReset {
				rzr, rh = u.slice(r, 1, 0, 2*H), u.slice(r, 1, 2*H, 3*H)
				rbzr = u.slice(rb, 0, 0, 2*H)
			}
		}
		hp, cp := state(rc.H0, d), state(rc.C0, d)
		steps := make([]*mir.Value, seq)
		for s := int64(0); s < seq; s++ {
			t := s
			if rc.Reversed(d) {
				t = seq - 1 - s
			}
			pt := u.reshape(u.slice(p, 0, t, t+1), batch, gh)
			switch rc.Cell {
			case "rnn":
				// tanh, relu and sigmoid are MIR's elementwise ops of those names.
				hp = u.ew(mir.Op(rc.Activation), u.matmul(hp, r, nil, pt, batch, gh))
			case "lstm":
				gates := u.matmul(hp, r, nil, pt, batch, gh)
				gate := func(k int64) *mir.Value { return u.slice(gates, 1, k*H, (k+1)*H) }
				i, o, f := u.ew("sigmoid", gate(0)), u.ew("sigmoid", gate(1)), u.ew("sigmoid", gate(2))
				cc := u.ew("tanh", gate(3))
				cp = u.ew("add", u.ew("mul", f, cp), u.ew("mul", i, cc))
				hp = u.ew("mul", o, u.ew("tanh", cp))
			default:
				var z, rg, nn *mir.Value
				xz, xr, xn := u.slice(pt, 1, 0, H), u.slice(pt, 1, H, 2*H), u.slice(pt, 1, 2*H, 3*H)
				if rc.LinearBeforeReset {
					hr := u.matmul(hp, r, rb, nil, batch, gh)
					z = u.ew("sigmoid", u.ew("add", xz, u.slice(hr, 1, 0, H)))
					rg = u.ew("sigmoid", u.ew("add", xr, u.slice(hr, 1, H, 2*H)))
					nn = u.ew("tanh", u.ew("add", xn, u.ew("mul", rg, u.slice(hr, 1, 2*H, 3*H))))
				} else {
					hzr := u.matmul(hp, rzr, rbzr, nil, batch, dim.Const(2*H))
					z = u.ew("sigmoid", u.ew("add", xz, u.slice(hzr, 1, 0, H)))
					rg = u.ew("sigmoid", u.ew("add", xr, u.slice(hzr, 1, H, 2*H)))
					nn = u.ew("tanh", u.matmul(u.ew("mul", rg, hp), rh, rbh, xn, batch, h))
				}
				// h' = (1 - z)⊙n + z⊙h = n + z⊙(h - n)
				hp = u.ew("add", nn, u.ew("mul", z, u.ew("sub", hp, nn)))
			}
			steps[t] = u.reshape(hp, one, one, batch, h)
		}
		ys = append(ys, u.concat(0, steps))
		hs = append(hs, u.reshape(hp, one, batch, h))
		cs = append(cs, u.reshape(cp, one, batch, h))
	}
	taken := map[*mir.Value]bool{}
	u.become(u.concat(1, ys), n.Results[0], taken)
	u.become(u.concat(0, hs), n.Results[1], taken)
	if len(n.Results) > 2 {
		u.become(u.concat(0, cs), n.Results[2], taken)
	}
	return nil
}
