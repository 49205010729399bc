package specialize

import (
	"math"
	"slices"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Integer products.
//
// The ONNX importer runs quantized products in f32 with the integer
// arithmetic spelled out (docs/onnx.md): cast(x) − zero of 8-bit x times
// an integer weight. int8Products finds those products and rewrites each
// into one mir.OpMatMulI8 over x itself, for a backend whose kernels sum
// 8-bit integers (Caps.Int8Products): a matmul
//   - whose A is cast(x, f32), or cast(x, f32) − z with z an integer in
//     x's range, for x of u8 or i8 (a fused region of exactly those, or
//     the cast alone);
//   - whose B is a constant [K, N] of integers in [−128, 127] (an int8
//     weight with its zero point folded in, or a uint8 one whose zero
//     point is 128), K at most lir.QMatMulMaxK;
//   - with no epilogue (a quantized product's requantization follows as
//     an elementwise region).
//
// The f32 product sums the same integers exactly while they stay below
// 2^24; the integer product is exact throughout, as ONNX Runtime's integer
// kernels are, and reads a quarter of the bytes. A's producer is dropped
// when the product was its only user. The rewrite works on a copy of g
// (g.Clone) and returns g itself when nothing matches.
func int8Products(g *mir.Graph) *mir.Graph {
	defs := producers(g)
	if !slices.ContainsFunc(g.Nodes, func(n *mir.Node) bool { _, _, _, ok := int8Product(n, defs); return ok }) {
		return g
	}
	c := g.Clone()
	defs = producers(c)
	dropped := map[*mir.Node]bool{}
	for _, n := range c.Nodes {
		x, zero, w, ok := int8Product(n, defs)
		if !ok {
			continue
		}
		dropped[defs[n.Args[0]]] = true
		n.Op = mir.OpMatMulI8
		n.Args = []*mir.Value{x, c.NewConst(n.Args[1].Name, w)}
		n.Attrs = mir.Attrs{"zero": zero}
	}
	uses := c.Uses()
	c.Nodes = slices.DeleteFunc(c.Nodes, func(n *mir.Node) bool { return dropped[n] && uses[n.Results[0]] == 0 })
	return c
}

// producers maps each result of g's nodes to its node (a fused region's
// result is defined by its last member, Value.Def, not by the region).
func producers(g *mir.Graph) map[*mir.Value]*mir.Node {
	defs := map[*mir.Value]*mir.Node{}
	for _, n := range g.Nodes {
		for _, r := range n.Results {
			defs[r] = n
		}
	}
	return defs
}

// int8Product matches a matmul int8Products rewrites: its 8-bit operand
// x, x's zero point and the weight as an i8 tensor.
func int8Product(n *mir.Node, defs map[*mir.Value]*mir.Node) (x *mir.Value, zero int64, w *tensor.Tensor, ok bool) {
	if n.Op != mir.OpMatMul || len(n.Args) != 2 || len(n.Results) != 1 || n.Results[0].Type.DType != tensor.F32 {
		return nil, 0, nil, false
	}
	if act := n.Attrs.String("act"); act != "" && act != "none" {
		return nil, 0, nil, false
	}
	b := n.Args[1]
	if !b.IsConst() || b.Const.DType != tensor.F32 || len(b.Const.Shape) != 2 || b.Const.Shape[0] > lir.QMatMulMaxK {
		return nil, 0, nil, false
	}
	if x, zero, ok = quantized(n.Args[0], defs[n.Args[0]]); !ok || len(x.Type.Shape) < 2 {
		return nil, 0, nil, false
	}
	if w, ok = int8Weight(b.Const); !ok {
		return nil, 0, nil, false
	}
	return x, zero, w, true
}

// quantized matches a = cast(x, f32) [− zero] for 8-bit x, computed by d.
func quantized(a *mir.Value, d *mir.Node) (x *mir.Value, zero int64, ok bool) {
	if d == nil || len(d.Results) != 1 {
		return nil, 0, false
	}
	nodes := []*mir.Node{d}
	if d.Op == mir.OpFused {
		nodes = d.Region.Nodes
	}
	if len(nodes) > 2 || nodes[0].Op != "cast" || len(nodes[0].Args) != 1 {
		return nil, 0, false
	}
	x = nodes[0].Args[0]
	lo, hi := int64(0), int64(255)
	switch x.Type.DType {
	case tensor.U8:
	case tensor.I8:
		lo, hi = -128, 127
	default:
		return nil, 0, false
	}
	if len(nodes) == 2 {
		s := nodes[1]
		if s.Op != "sub" || len(s.Args) != 2 || s.Args[0] != nodes[0].Results[0] || !s.Args[1].IsConst() {
			return nil, 0, false
		}
		z := s.Args[1].Const
		if z.DType != tensor.F32 || z.Len() != 1 {
			return nil, 0, false
		}
		v := float64(z.F32()[0])
		if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
			return nil, 0, false
		}
		zero = int64(v)
	}
	if a.Type.DType != tensor.F32 || !slices.EqualFunc(a.Type.Shape, x.Type.Shape, dim.Equal) {
		return nil, 0, false
	}
	return x, zero, true
}

// int8Weight is b as int8 where every element of it is an integer in
// [−128, 127].
func int8Weight(b *tensor.Tensor) (*tensor.Tensor, bool) {
	vs := b.F32()
	w := tensor.New(tensor.I8, b.Shape...)
	for i, v := range vs {
		if v != float32(math.Trunc(float64(v))) || v < -128 || v > 127 {
			return nil, false
		}
		w.Data[i] = byte(int8(v))
	}
	return w, true
}
