package fusion

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Canonicalization: exporters spell known computations op by op (ONNX
// before opset 17 has no LayerNormalization; PyTorch writes RMSNorm and
// SiLU by hand). These passes turn the spellings back into the one node
// rlx has a kernel for, so a model runs the same code whichever exporter
// wrote it. Each pass matches only what it can prove equal: constants
// must be the values the formula needs, intermediate results used once.

// newNode makes a node with one fresh result, not yet in g.Nodes.
func newNode(g *mir.Graph, op mir.Op, args []*mir.Value, attrs mir.Attrs, src string, t mir.Type) *mir.Node {
	if attrs == nil {
		attrs = mir.Attrs{}
	}
	n := &mir.Node{Op: op, Args: args, Attrs: attrs, Src: src}
	v := g.NewValue("", t)
	v.Def = n
	n.Results = []*mir.Value{v}
	return n
}

// splice puts nodes where root is and makes the last of them compute
// root's result; the nodes root's result depended on are left for
// DeadCode. nodes may use only values defined before root.
func splice(g *mir.Graph, root *mir.Node, nodes ...*mir.Node) {
	last := nodes[len(nodes)-1]
	res := root.Results[0]
	res.Def = last
	last.Results = []*mir.Value{res}
	var out []*mir.Node
	for _, n := range g.Nodes {
		if n == root {
			out = append(out, nodes...)
			continue
		}
		out = append(out, n)
	}
	g.Nodes = out
}

// isFloat reports an f32 or f64 value: the dtypes the float identities
// below hold for.
func isFloat(v *mir.Value) bool {
	s := v.Type.DType.String()
	return s == "f32" || s == "f64"
}

// PowConst rewrites pow(x, c) for a constant c that is a small integer or
// half-integer into multiplies, sqrt, rsqrt and recip: exact for 1, 2,
// 0.5, -0.5 and -1 (one rounding either way), within an ulp per extra
// multiply otherwise, and an order of magnitude cheaper than exp(c*log x)
// (PyTorch exports x**2 of a variance and x**3 of tanh-GELU this way).
func PowConst(g *mir.Graph) (string, error) {
	rewritten := 0
	for _, n := range append([]*mir.Node(nil), g.Nodes...) {
		if n.Op != "pow" || !isFloat(n.Args[0]) {
			continue
		}
		x, res := n.Args[0], n.Results[0]
		c, ok := scalarOf(n.Args[1])
		if !ok || !sameShape(x.Type.Shape, res.Type.Shape) {
			continue
		}
		t := res.Type
		un := func(op mir.Op, a *mir.Value) *mir.Node { return newNode(g, op, []*mir.Value{a}, nil, n.Src, t) }
		bin := func(op mir.Op, a, b *mir.Value) *mir.Node { return newNode(g, op, []*mir.Value{a, b}, nil, n.Src, t) }
		var nodes []*mir.Node
		switch c {
		case 2:
			nodes = []*mir.Node{bin("mul", x, x)}
		case 3:
			sq := bin("mul", x, x)
			nodes = []*mir.Node{sq, bin("mul", sq.Results[0], x)}
		case 4:
			sq := bin("mul", x, x)
			nodes = []*mir.Node{sq, bin("mul", sq.Results[0], sq.Results[0])}
		case 0.5:
			nodes = []*mir.Node{un("sqrt", x)}
		case -0.5:
			nodes = []*mir.Node{un("rsqrt", x)}
		case -1:
			nodes = []*mir.Node{un("recip", x)}
		case -2:
			sq := bin("mul", x, x)
			nodes = []*mir.Node{sq, un("recip", sq.Results[0])}
		case 1.5:
			s := un("sqrt", x)
			nodes = []*mir.Node{s, bin("mul", x, s.Results[0])}
		default:
			continue
		}
		splice(g, n, nodes...)
		rewritten++
	}
	if rewritten == 0 {
		return "", nil
	}
	return fmt.Sprintf("rewrote %d pow by a constant", rewritten), nil
}

// FuseSilu turns x * sigmoid(x) (either order; the sigmoid used only
// there) into silu(x), which the epilogue pass can fold into a conv or
// matmul.
func FuseSilu(g *mir.Graph) (string, error) {
	fused := 0
	uses := g.Uses()
	for _, n := range append([]*mir.Node(nil), g.Nodes...) {
		if n.Op != "mul" || !isFloat(n.Args[0]) {
			continue
		}
		for i := range 2 {
			s, x := n.Args[i], n.Args[1-i]
			if s.Def == nil || s.Def.Op != "sigmoid" || s.Def.Args[0] != x || uses[s] != 1 ||
				!sameShape(x.Type.Shape, n.Results[0].Type.Shape) {
				continue
			}
			splice(g, n, newNode(g, "silu", []*mir.Value{x}, nil, n.Src, n.Results[0].Type))
			fused++
			break
		}
	}
	if fused == 0 {
		return "", nil
	}
	if _, err := DeadCode(g); err != nil {
		return "", err
	}
	return fmt.Sprintf("fused %d x*sigmoid(x) into silu", fused), nil
}

// clampOf reports v as clamp(t, min=lo, max=hi) used only once, and
// returns t.
func clampOf(uses map[*mir.Value]int, v *mir.Value, lo, hi float64) (*mir.Value, bool) {
	c := v.Def
	if c == nil || c.Op != "clamp" || uses[v] != 1 || !c.Attrs.Has("min") || !c.Attrs.Has("max") ||
		c.Attrs.Float("min") != lo || c.Attrs.Float("max") != hi {
		return nil, false
	}
	return c.Args[0], true
}

// onceDef returns the node defining v when v has that one use.
func onceDef(uses map[*mir.Value]int, v *mir.Value, op mir.Op) *mir.Node {
	if v == nil || v.Def == nil || v.Def.Op != op || uses[v] != 1 {
		return nil
	}
	return v.Def
}

// plusConst reports n as an add of v and a scalar constant near c (either
// order).
func plusConst(n *mir.Node, v *mir.Value, c float64) bool {
	o, ok := otherArg(n, v)
	return n != nil && n.Op == "add" && ok && near(o, c)
}

// divBy reports v as x/c or x*(1/c) (either order), used once, and
// returns x.
func divBy(uses map[*mir.Value]int, v *mir.Value, c float64) (*mir.Value, bool) {
	if d := onceDef(uses, v, "div"); d != nil && near(d.Args[1], c) {
		return d.Args[0], true
	}
	return byConst(onceDef(uses, v, "mul"), 1/c)
}

// FuseHardSwish turns HardSwish written out into hardswish(x), in the two
// spellings PyTorch code and the ONNX importer's HardSigmoid give:
//
//	x * clamp(x/6 + 0.5, 0, 1)    (x * hardsigmoid(x); x/6 also as x * (1/6))
//	x * clamp(x + 3, 0, 6) / 6    (x * relu6(x + 3) / 6, the / 6 on either product)
//
// with products and sums in either order, each intermediate used once.
func FuseHardSwish(g *mir.Graph) (string, error) {
	fused := 0
	// The use counts change only where a match is spliced in: counting
	// them again for every node made the pass quadratic in the graph.
	uses := g.Uses()
	for _, n := range append([]*mir.Node(nil), g.Nodes...) {
		if !isFloat(n.Results[0]) || len(n.Args) != 2 {
			continue
		}
		if x := matchHardSwish(uses, n); x != nil && sameShape(x.Type.Shape, n.Results[0].Type.Shape) {
			splice(g, n, newNode(g, "hardswish", []*mir.Value{x}, nil, n.Src, n.Results[0].Type))
			fused++
			uses = g.Uses()
		}
	}
	if fused == 0 {
		return "", nil
	}
	if _, err := DeadCode(g); err != nil {
		return "", err
	}
	return fmt.Sprintf("fused %d x*clamp(x/6+1/2, 0, 1) into hardswish", fused), nil
}

func matchHardSwish(uses map[*mir.Value]int, n *mir.Node) *mir.Value {
	// relu6(x + 3): x when r is clamp(x + 3, 0, 6).
	relu6 := func(r, x *mir.Value) bool {
		t, ok := clampOf(uses, r, 0, 6)
		a := onceDef(uses, t, "add")
		return ok && a != nil && plusConst(a, x, 3)
	}
	if n.Op == "mul" {
		for i := range 2 {
			x, h := n.Args[1-i], n.Args[i]
			// x * clamp(x/6 + 0.5, 0, 1)
			if t, ok := clampOf(uses, h, 0, 1); ok {
				if a := onceDef(uses, t, "add"); a != nil {
					for j := range 2 {
						if u, c := a.Args[j], a.Args[1-j]; near(c, 0.5) {
							if v, ok := divBy(uses, u, 6); ok && v == x {
								return x
							}
						}
					}
				}
			}
			// x * (relu6(x + 3) / 6)
			if r, ok := divBy(uses, h, 6); ok && relu6(r, x) {
				return x
			}
		}
	}
	// (x * relu6(x + 3)) / 6
	var p *mir.Value
	if n.Op == "div" && near(n.Args[1], 6) {
		p = n.Args[0]
	} else if v, ok := byConst(n, 1.0/6); ok {
		p = v
	}
	if m := onceDef(uses, p, "mul"); m != nil {
		for i := range 2 {
			if x := m.Args[1-i]; relu6(m.Args[i], x) {
				return x
			}
		}
	}
	return nil
}

// FuseMish turns x * tanh(log(exp(x) + 1)) (softplus written out; products
// and the sum in either order, each intermediate used once) into mish(x).
func FuseMish(g *mir.Graph) (string, error) {
	fused := 0
	uses := g.Uses() // counted again only after a splice, as in FuseHardSwish
	for _, n := range append([]*mir.Node(nil), g.Nodes...) {
		if n.Op != "mul" || !isFloat(n.Results[0]) {
			continue
		}
		for i := range 2 {
			x, t := n.Args[1-i], n.Args[i]
			th := onceDef(uses, t, "tanh")
			if th == nil {
				continue
			}
			l := onceDef(uses, th.Args[0], "log")
			if l == nil {
				continue
			}
			a := onceDef(uses, l.Args[0], "add")
			if a == nil {
				continue
			}
			matched := false
			for j := range 2 {
				if e := onceDef(uses, a.Args[j], "exp"); e != nil && e.Args[0] == x && near(a.Args[1-j], 1) {
					matched = true
				}
			}
			if !matched || !sameShape(x.Type.Shape, n.Results[0].Type.Shape) {
				continue
			}
			splice(g, n, newNode(g, "mish", []*mir.Value{x}, nil, n.Src, n.Results[0].Type))
			fused++
			uses = g.Uses()
			break
		}
	}
	if fused == 0 {
		return "", nil
	}
	if _, err := DeadCode(g); err != nil {
		return "", err
	}
	return fmt.Sprintf("fused %d x*tanh(log(1+exp(x))) into mish", fused), nil
}

// FuseNorms recognizes LayerNorm and RMSNorm written out with reductions,
// as ONNX exports them before opset 17 and as RMSNorm is written by hand:
//
//	layernorm: d = x - mean(x); y = d / sqrt(mean(d*d) + eps)   [* g] [+ b]
//	rmsnorm:   y = x / sqrt(mean(x*x) + eps)                     [* g]
//
// over the trailing axes, with the division also spelled d * rsqrt(v)
// or d * recip(sqrt(v)) (the recip also as 1 / sqrt(v)), and products in
// either order. It runs after
// PowConst, which turns pow(d, 2) into d*d.
func FuseNorms(g *mir.Graph) (string, error) {
	var ln, rms int
	for {
		m := findNorm(g)
		if m == nil {
			break
		}
		args := []*mir.Value{m.x}
		if m.scale != nil {
			args = append(args, m.scale)
		}
		if m.bias != nil {
			args = append(args, m.bias)
		}
		attrs := mir.Attrs{"axis": m.axis, "eps": m.eps, "rms": m.rms, "scale": m.scale != nil, "bias": m.bias != nil}
		splice(g, m.root, newNode(g, mir.OpLayerNorm, args, attrs, m.root.Src, m.root.Results[0].Type))
		if _, err := DeadCode(g); err != nil {
			return "", err
		}
		if m.rms {
			rms++
		} else {
			ln++
		}
	}
	var did []string
	if ln > 0 {
		did = append(did, plural(ln, "layernorm"))
	}
	if rms > 0 {
		did = append(did, plural(rms, "rmsnorm"))
	}
	if did == nil {
		return "", nil
	}
	return "recognized " + strings.Join(did, " and "), nil
}

type normMatch struct {
	x, scale, bias *mir.Value
	axis           int64
	eps            float64
	rms            bool
	root           *mir.Node
}

// findNorm finds one spelled-out norm, from the mean of squares outwards.
func findNorm(g *mir.Graph) *normMatch {
	uses := g.Uses()
	for _, v := range g.Nodes {
		// v = mean(sq), sq = d*d: the variance (layernorm) or the mean
		// square (rmsnorm).
		if v.Op != mir.OpReduce || v.Attrs.String("kind") != "mean" || !v.Attrs.Bool("keepdims") || !isFloat(v.Args[0]) {
			continue
		}
		sq := v.Args[0].Def
		if sq == nil || sq.Op != "mul" || sq.Args[0] != sq.Args[1] || uses[v.Args[0]] != 1 {
			continue
		}
		d := sq.Args[0]
		axis, ok := trailingAxes(v.Attrs.Ints("axes"), d.Type.Rank())
		if !ok {
			continue
		}
		m := &normMatch{x: d, axis: axis, rms: true}
		// d = x - mean(x) over the same axes, used only by d*d (twice)
		// and the normalization, makes it a layernorm.
		if s := d.Def; s != nil && s.Op == "sub" && uses[d] == 3 {
			if mu := s.Args[1].Def; mu != nil && mu.Op == mir.OpReduce && mu.Attrs.String("kind") == "mean" &&
				mu.Attrs.Bool("keepdims") && mu.Args[0] == s.Args[0] && uses[s.Args[1]] == 1 {
				if a, ok := trailingAxes(mu.Attrs.Ints("axes"), d.Type.Rank()); ok && a == axis {
					m.x, m.rms = s.Args[0], false
				}
			}
		}
		// ve = v + eps
		ve := v.Results[0]
		add := consumer(g, ve)
		if add == nil || add.Op != "add" || uses[ve] != 1 {
			continue
		}
		epsV, _ := otherArg(add, ve)
		eps, ok := scalarOf(epsV)
		if !ok || eps < 0 {
			continue
		}
		m.eps = eps
		y := normalized(g, uses, add.Results[0], d)
		if y == nil || !sameShape(y.Results[0].Type.Shape, d.Type.Shape) {
			continue
		}
		m.root = y
		// Optional per-feature scale, then (layernorm) shift.
		if n, c := affine(g, uses, m.root, "mul", d.Type.Shape[axis:]); n != nil {
			m.root, m.scale = n, c
			if !m.rms {
				if n, c := affine(g, uses, m.root, "add", d.Type.Shape[axis:]); n != nil {
					m.root, m.bias = n, c
				}
			}
		}
		return m
	}
	return nil
}

// trailingAxes reports whether axes are the last k axes of a rank-r
// value, in order, and returns the first of them.
func trailingAxes(axes []int64, r int) (int64, bool) {
	if len(axes) == 0 || len(axes) > r {
		return 0, false
	}
	first := int64(r - len(axes))
	for i, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		if a != first+int64(i) {
			return 0, false
		}
	}
	return first, true
}

// normalized finds the node computing d / sqrt(ve), d * rsqrt(ve) or
// d * recip(sqrt(ve)), each intermediate used once.
func normalized(g *mir.Graph, uses map[*mir.Value]int, ve, d *mir.Value) *mir.Node {
	if uses[ve] != 1 {
		return nil
	}
	f := consumer(g, ve)
	if f == nil {
		return nil
	}
	r := f.Results[0]
	switch f.Op {
	case "rsqrt":
	case "sqrt":
		next := consumer(g, r)
		if next == nil || uses[r] != 1 {
			return nil
		}
		if next.Op == "div" && next.Args[0] == d && next.Args[1] == r {
			return next
		}
		// recip(sqrt(ve)), or 1 / sqrt(ve) as LLaMA's exports spell it
		if next.Op != "recip" && !(next.Op == "div" && next.Args[1] == r && near(next.Args[0], 1)) {
			return nil
		}
		r = next.Results[0]
	default:
		return nil
	}
	mul := consumer(g, r)
	if mul == nil || mul.Op != "mul" || uses[r] != 1 {
		return nil
	}
	if o, ok := otherArg(mul, r); !ok || o != d {
		return nil
	}
	return mul
}

// affine finds root's result op'ed (mul or add, either order) with a
// constant of the normalized shape, the result used only there. A
// constant with leading 1s is reshaped to the normalized shape.
func affine(g *mir.Graph, uses map[*mir.Value]int, root *mir.Node, op mir.Op, shape []dim.Expr) (*mir.Node, *mir.Value) {
	y := root.Results[0]
	n := consumer(g, y)
	if n == nil || n.Op != op || uses[y] != 1 || !sameShape(n.Results[0].Type.Shape, y.Type.Shape) {
		return nil, nil
	}
	c, _ := otherArg(n, y)
	if c == nil || !c.IsConst() || c.Type.DType != y.Type.DType {
		return nil, nil
	}
	cs := c.Type.Shape
	for len(cs) > len(shape) {
		if v, ok := cs[0].Const(); !ok || v != 1 {
			return nil, nil
		}
		cs = cs[1:]
	}
	if !sameShape(cs, shape) {
		return nil, nil
	}
	if len(cs) != len(c.Type.Shape) {
		t := *c.Const
		t.Shape = t.Shape[len(t.Shape)-len(cs):]
		c = g.NewConst(c.Name, &t)
	}
	return n, c
}

// FoldConvAffine folds a per-output-channel multiply and add that follow
// a convolution (what eval-mode BatchNorm lowers to, once FoldConstants
// has computed its scale and shift) into the convolution's weights and
// bias: conv(x, w, b) * a + c = conv(x, w*a, b*a + c).
func FoldConvAffine(g *mir.Graph) (string, error) {
	folded := 0
	for {
		uses := g.Uses()
		did := false
		for _, conv := range g.Nodes {
			if conv.Op != mir.OpConv2D || conv.Args[0].Type.DType != tensor.F32 || !conv.Args[1].IsConst() {
				continue
			}
			if conv.Attrs.Bool("bias") && !conv.Args[2].IsConst() {
				continue
			}
			if rewriteConvAffine(g, uses, conv) {
				folded++
				did = true
				break
			}
		}
		if !did {
			break
		}
	}
	if folded == 0 {
		return "", nil
	}
	if _, err := DeadCode(g); err != nil {
		return "", err
	}
	return fmt.Sprintf("folded %d per-channel scales and shifts into conv weights", folded), nil
}

// channelConst returns the O per-channel values of c when c is an f32
// constant shaped [O, 1, 1] or [1, O, 1, 1] (broadcasting over NCHW
// along the channel axis), or a scalar (the same for every channel).
func channelConst(c *mir.Value, o int64) ([]float32, bool) {
	if c == nil || !c.IsConst() || c.Const.DType != tensor.F32 {
		return nil, false
	}
	v := c.Const.F32()
	if len(v) == 1 {
		out := make([]float32, o)
		for i := range out {
			out[i] = v[0]
		}
		return out, true
	}
	s := c.Const.Shape
	if int64(len(v)) != o || len(s) < 3 || len(s) > 4 || s[len(s)-1] != 1 || s[len(s)-2] != 1 || s[len(s)-3] != o {
		return nil, false
	}
	return v, true
}

func rewriteConvAffine(g *mir.Graph, uses map[*mir.Value]int, conv *mir.Node) bool {
	y := conv.Results[0]
	o, ok := y.Type.Shape[1].Const()
	if !ok || uses[y] != 1 {
		return false
	}
	next := consumer(g, y)
	if next == nil || (next.Op != "mul" && next.Op != "add") || !sameShape(next.Results[0].Type.Shape, y.Type.Shape) {
		return false
	}
	other, _ := otherArg(next, y)
	k, ok := channelConst(other, o)
	if !ok {
		return false
	}
	w := conv.Args[1].Const
	bias := make([]float32, o)
	if conv.Attrs.Bool("bias") {
		copy(bias, conv.Args[2].Const.F32())
	}
	nw := w
	if next.Op == "mul" {
		nw = tensor.New(tensor.F32, w.Shape...)
		per := int64(len(w.F32())) / o
		for c := range o {
			for i := c * per; i < (c+1)*per; i++ {
				nw.F32()[i] = w.F32()[i] * k[c]
			}
			bias[c] *= k[c]
		}
	} else {
		for c := range o {
			bias[c] += k[c]
		}
	}
	attrs := mir.Attrs{}
	for key, v := range conv.Attrs {
		attrs[key] = v
	}
	attrs["bias"] = true
	wv := g.NewConst(conv.Args[1].Name, nw)
	bv := g.NewConst("bias", tensor.FromF32([]int64{o}, bias))
	args := []*mir.Value{conv.Args[0], wv, bv}
	n := newNode(g, mir.OpConv2D, args, attrs, conv.Src, y.Type)
	splice(g, next, n)
	return true
}

// plural counts things in a report: "1 layernorm", "2 layernorms".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
