package specialize

import (
	"math"
	"slices"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Integer products.
//
// The ONNX importer runs quantized products in f32 with the integer
// arithmetic spelled out (docs/onnx.md): cast(x) − zero of 8-bit x times
// an integer weight. int8Products finds those products and rewrites each
// into one mir.OpMatMulI8 or mir.OpConv2DI8 over x itself, for a backend
// whose kernels sum 8-bit integers (Caps.Int8Products): a matmul, or a
// convolution of one group,
//   - whose operand is cast(x, f32), or cast(x, f32) − z with z an
//     integer in x's range, for x of u8 or i8 (a fused region of exactly
//     those, or the cast alone); a matmul's z may also be a run-time
//     scalar of x's dtype cast to f32 (dynamic quantization's, from
//     DynamicQuantizeLinear);
//   - whose weight is a constant of integers in [−128, 127] (an int8
//     weight with its zero point folded in, or a uint8 one whose zero
//     point is 128): [K, N] for a matmul, [O, C, KH, KW] for a
//     convolution, with sums of at most lir.QMatMulMaxK terms;
//   - with no epilogue but a bias, a constant of integers in int32's
//     range (a QLinearConv's, a QGemm's; a quantized product's
//     requantization follows as an elementwise region).
//
// The f32 product sums the same integers exactly while they stay below
// 2^24; the integer product is exact throughout, as ONNX Runtime's integer
// kernels are, and reads a quarter of the bytes. The operand's producer
// is dropped when the product was its only user. The rewrite works on a
// copy of g (g.Clone) and returns g itself when nothing matches. Products
// whose sums have fewer than minK terms are left as they are.
func int8Products(g *mir.Graph, minK int64) *mir.Graph {
	defs := producers(g)
	int8Weights := func(n *mir.Node) (int8Rewrite, bool) { return int8WeightsOf(n, minK) }
	int8Product := func(n *mir.Node, defs map[*mir.Value]*mir.Node) (int8Rewrite, bool) {
		return int8ProductOf(n, defs, minK)
	}
	match := func(n *mir.Node) bool {
		if _, ok := int8Product(n, defs); ok {
			return true
		}
		_, ok := int8Weights(n)
		return ok && (byteCastTail(defs[n.Args[0]]) >= 0)
	}
	if !slices.ContainsFunc(g.Nodes, match) {
		return g
	}
	c := g.Clone()
	// Regions that quantize and dequantize in one (DynamicQuantizeLinear
	// fused with the cast back to f32 before a product) are split at the
	// 8-bit value, which the integer product then reads.
	defs = producers(c)
	for _, n := range slices.Clone(c.Nodes) {
		if _, ok := int8Weights(n); !ok {
			continue
		}
		if d := defs[n.Args[0]]; splitByteCast(c, d) {
			defs = producers(c)
			// its zero point, a scalar quantized and cast back the same way
			if s := defs[n.Args[0]]; s != nil && s.Op == mir.OpFused {
				for _, a := range s.Args {
					if z := defs[a]; scalar(a) && splitByteCast(c, z) {
						defs = producers(c)
					}
				}
			}
		}
	}
	defs = producers(c)
	dropped := map[*mir.Node]bool{}
	for _, n := range c.Nodes {
		r, ok := int8Product(n, defs)
		if !ok {
			continue
		}
		a := defs[n.Args[0]]
		dropped[a] = true
		args := []*mir.Value{r.x, c.NewConst(n.Args[1].Name, converted(r.w, tensor.I8))}
		if n.Op == mir.OpMatMul {
			attrs := mir.Attrs{"zero": r.zero}
			if r.bias != nil {
				// a per-column integer bias (QGemm's), added to the sums
				args = append(args, c.NewConst(n.Args[2].Name, converted(r.bias, tensor.I32)))
				attrs["bias"] = true
			}
			if r.zeroAt != nil {
				// the run-time zero point's cast to f32, where the
				// region was its only user
				dropped[defs[a.Args[len(a.Args)-1]]] = true
				args = append(args, r.zeroAt)
			}
			n.Op, n.Args, n.Attrs = mir.OpMatMulI8, args, attrs
			continue
		}
		attrs := mir.Attrs{"stride": n.Attrs.Ints("stride"), "pad": n.Attrs.Ints("pad"), "dilation": n.Attrs.Ints("dilation"), "groups": int64(1), "zero": r.zero}
		if r.bias != nil {
			args = append(args, c.NewConst(n.Args[2].Name, converted(r.bias, tensor.I32)))
			attrs["bias"] = true
		}
		n.Op, n.Args, n.Attrs = mir.OpConv2DI8, args, attrs
	}
	// Drop the producers nothing reads any more (a run-time zero point's
	// cast is read by the f32 operand's region until that goes).
	for {
		uses := c.Uses()
		before := len(c.Nodes)
		c.Nodes = slices.DeleteFunc(c.Nodes, func(n *mir.Node) bool { return dropped[n] && uses[n.Results[0]] == 0 })
		if len(c.Nodes) == before {
			return c
		}
	}
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

// int8Rewrite is what a matched product becomes: its 8-bit operand x,
// x's zero point (a constant, or a matmul's run-time scalar), the weight
// and a convolution's bias (nil: none), converted to i8 and i32 only when
// the rewrite is made (matching allocates nothing).
type int8Rewrite struct {
	x       *mir.Value
	zero    int64
	zeroAt  *mir.Value     // a run-time zero point (a matmul's), else nil
	w, bias *tensor.Tensor // f32 constants, integers in int8's and int32's ranges
}

// int8ProductOf matches a product int8Products rewrites.
func int8ProductOf(n *mir.Node, defs map[*mir.Value]*mir.Node, minK int64) (r int8Rewrite, ok bool) {
	if r, ok = int8WeightsOf(n, minK); !ok {
		return r, false
	}
	if r.x, r.zero, r.zeroAt, ok = quantized(n.Args[0], defs[n.Args[0]], defs); !ok || len(r.x.Type.Shape) < 2 || r.zeroAt != nil && n.Op != mir.OpMatMul {
		return r, false
	}
	return r, true
}

// int8WeightsOf matches the rest of a product int8Products rewrites (all
// but its 8-bit operand): its weight as i8, its bias as i32, summing at
// least minK terms.
func int8WeightsOf(n *mir.Node, minK int64) (r int8Rewrite, ok bool) {
	if n.Op != mir.OpMatMul && n.Op != mir.OpConv2D || len(n.Args) < 2 || len(n.Results) != 1 || n.Results[0].Type.DType != tensor.F32 {
		return r, false
	}
	if act := n.Attrs.String("act"); act != "" && act != "none" || n.Attrs.Bool("residual") {
		return r, false
	}
	b := n.Args[1]
	if !b.IsConst() || b.Const.DType != tensor.F32 {
		return r, false
	}
	s := b.Const.Shape
	switch n.Op {
	case mir.OpMatMul:
		if len(s) != 2 || s[0] > lir.QMatMulMaxK || s[0] < minK {
			return r, false
		}
	case mir.OpConv2D:
		if len(s) != 4 || n.Attrs.Int("groups") != 1 || s[2]*s[3]*((s[1]+3)&^3) > lir.QMatMulMaxK || s[1]*s[2]*s[3] < minK {
			return r, false
		}
	}
	if n.Attrs.Bool("bias") {
		if len(n.Args) != 3 || !n.Args[2].IsConst() {
			return r, false
		}
		if r.bias = n.Args[2].Const; !integersIn(r.bias, -(1 << 31), 1<<31-1) {
			return r, false
		}
	} else if len(n.Args) != 2 {
		return r, false
	}
	if r.w = b.Const; !integersIn(r.w, -128, 127) {
		return r, false
	}
	return r, true
}

// converted is the f32 constant t (every element an integer in dt's
// range: integersIn) as dt.
func converted(t *tensor.Tensor, dt tensor.DType) *tensor.Tensor {
	out := tensor.New(dt, t.Shape...)
	for i, v := range t.F32() {
		switch dt {
		case tensor.I8:
			out.Data[i] = byte(int8(v))
		case tensor.I32:
			out.I32()[i] = int32(v)
		}
	}
	return out
}

// byteCastTail is the index in fused region d of a cast to f32 of the
// 8-bit value the member before it computes (a cast to u8 or i8), where
// the members from it on read nothing else the members before it
// compute, so that d splits there into two regions (or nodes) whose
// results are that value and d's; -1 where there is none.
func byteCastTail(d *mir.Node) int {
	if d == nil || d.Op != mir.OpFused {
		return -1
	}
	ms := d.Region.Nodes
	at := map[*mir.Value]int{} // the member computing each value
	for i, m := range ms {
		at[m.Results[0]] = i
	}
	for ci := len(ms) - 1; ci > 0; ci-- {
		m := ms[ci]
		if m.Op != "cast" || len(m.Args) != 1 || m.Results[0].Type.DType != tensor.F32 {
			continue
		}
		q := m.Args[0]
		if qi, in := at[q]; !in || qi != ci-1 || ms[qi].Op != "cast" || q.Type.DType != tensor.U8 && q.Type.DType != tensor.I8 {
			continue
		}
		ok := true
		for _, s := range ms[ci:] {
			for _, a := range s.Args {
				if i, in := at[a]; in && i < ci && a != q {
					ok = false
				}
			}
		}
		if ok {
			return ci
		}
	}
	return -1
}

// splitByteCast splits fused region d of c at byteCastTail into the
// members that compute the 8-bit value, and the rest, which read it:
// each a region again, or its one node. It reports whether it split.
func splitByteCast(c *mir.Graph, d *mir.Node) bool {
	ci := byteCastTail(d)
	if ci < 0 {
		return false
	}
	ms := d.Region.Nodes
	head, tail := regionOf(ms[:ci]), regionOf(ms[ci:])
	i := slices.Index(c.Nodes, d)
	c.Nodes = slices.Replace(c.Nodes, i, i+1, head, tail)
	return true
}

// regionOf is members as one node: the member itself when there is one,
// else a fused region (fusion.Region).
func regionOf(members []*mir.Node) *mir.Node {
	if len(members) == 1 {
		return members[0]
	}
	return fusion.Region(members)
}

// quantized matches a = cast(x, f32) [− zero] for 8-bit x, computed by
// d: the zero point a constant integer in x's range, or (zeroAt) a
// run-time scalar of x's dtype cast to f32 (DynamicQuantizeLinear's).
func quantized(a *mir.Value, d *mir.Node, defs map[*mir.Value]*mir.Node) (x *mir.Value, zero int64, zeroAt *mir.Value, ok bool) {
	if d == nil || len(d.Results) != 1 {
		return nil, 0, nil, false
	}
	nodes := []*mir.Node{d}
	if d.Op == mir.OpFused {
		nodes = d.Region.Nodes
	}
	if len(nodes) > 2 || nodes[0].Op != "cast" || len(nodes[0].Args) != 1 {
		return nil, 0, nil, false
	}
	x = nodes[0].Args[0]
	lo, hi := int64(0), int64(255)
	switch x.Type.DType {
	case tensor.U8:
	case tensor.I8:
		lo, hi = -128, 127
	default:
		return nil, 0, nil, false
	}
	if len(nodes) == 2 {
		s := nodes[1]
		if s.Op != "sub" || len(s.Args) != 2 || s.Args[0] != nodes[0].Results[0] {
			return nil, 0, nil, false
		}
		switch z := s.Args[1]; {
		case z.IsConst():
			if z.Const.DType != tensor.F32 || z.Const.Len() != 1 {
				return nil, 0, nil, false
			}
			v := float64(z.Const.F32()[0])
			if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
				return nil, 0, nil, false
			}
			zero = int64(v)
		default:
			c := defs[z]
			if c == nil || c.Op != "cast" || len(c.Args) != 1 || c.Args[0].Type.DType != x.Type.DType || !scalar(z) {
				return nil, 0, nil, false
			}
			zeroAt = c.Args[0]
		}
	}
	if a.Type.DType != tensor.F32 || !slices.EqualFunc(a.Type.Shape, x.Type.Shape, dim.Equal) {
		return nil, 0, nil, false
	}
	return x, zero, zeroAt, true
}

// scalar reports a value of one element.
func scalar(v *mir.Value) bool {
	for _, d := range v.Type.Shape {
		if c, ok := d.Const(); !ok || c != 1 {
			return false
		}
	}
	return true
}

// Int8ConvPlan is the scratch of an integer convolution (lir.QConv2D): one
// image relaid channels last with its padding, and its result channels
// last (nil where the result is stored so), live for the node alone.
type Int8ConvPlan struct {
	XPad, OutT *Store
}

// int8Scratch asks the arena planner for each integer product's and
// convolution's scratch.
func int8Scratch(p *Plan) {
	for i, n := range p.Graph.Nodes {
		if n.Op == mir.OpMatMulI8 {
			as, ws := p.Shapes[n.Args[0]], p.Shapes[n.Args[1]]
			if len(as) < 2 || len(ws) != 2 {
				continue // Schedule reports it
			}
			s := &Store{Kind: StoreArena, Root: n.Args[0], Bytes: lir.QMatMulScratch(tensor.NumElements(as[:len(as)-1]), ws[0])}
			p.addScratch(s, i)
			p.Int8MatMul[n] = s
			continue
		}
		if n.Op != mir.OpConv2DI8 {
			continue
		}
		xs, ws, os := p.Shapes[n.Args[0]], p.Shapes[n.Args[1]], p.Shapes[n.Results[0]]
		if len(xs) != 4 || len(ws) != 4 || len(os) != 4 {
			continue // Schedule reports it
		}
		xpad, outT := lir.QConvScratch(ConvGeom(n, xs, ws, os))
		sp := Int8ConvPlan{XPad: &Store{Kind: StoreArena, Root: n.Args[0], Bytes: xpad}}
		p.addScratch(sp.XPad, i)
		if !p.ChannelsLast[n.Results[0]] {
			// an NCHW result is transposed from its channels-last rows
			sp.OutT = &Store{Kind: StoreArena, Root: n.Results[0], Bytes: outT}
			p.addScratch(sp.OutT, i)
		}
		p.Int8Conv[n] = sp
	}
}
