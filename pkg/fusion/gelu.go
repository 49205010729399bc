package fusion

import (
	"fmt"
	"math"
	"strings"

	"github.com/rlx-project/rlx/pkg/mir"
)

// FuseGelu recognizes GELU written out, in both of its forms, and replaces
// it with one gelu or gelu_tanh node, which the epilogue pass can then fold
// into a matmul:
//
//	erf form (PyTorch's nn.GELU()):
//	  x * (erf(x / sqrt(2)) + 1) * 0.5, x/sqrt(2) also as x * (1/sqrt(2))
//	tanh form (nn.GELU(approximate='tanh'), GPT-2's hand-written one):
//	  0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//	  with x^3 as x*x*x (how PowConst rewrites pow(x, 3)), in either order
//
// Products and sums may come in either order, the 0.5 may multiply x or
// the product, constants must be within 1e-6 (relative) of the formula's,
// and every intermediate must have no other use.
func FuseGelu(g *mir.Graph) (string, error) {
	erfs, tanhs := 0, 0
	for _, n := range append([]*mir.Node(nil), g.Nodes...) {
		if (n.Op != "erf" && n.Op != "tanh") || n.Args[0].Type.DType.String() != "f32" {
			continue
		}
		var m *geluMatch
		switch n.Op {
		case "erf":
			m = matchGeluErf(g, n)
		case "tanh":
			m = matchGeluTanh(g, n)
		}
		if m == nil || !matchGeluOuter(g, n, m) {
			continue
		}
		replaceWithGelu(g, m)
		if m.op == "gelu" {
			erfs++
		} else {
			tanhs++
		}
	}
	var did []string
	if erfs > 0 {
		did = append(did, fmt.Sprintf("%d erf-form", erfs))
	}
	if tanhs > 0 {
		did = append(did, fmt.Sprintf("%d tanh-form", tanhs))
	}
	if did == nil {
		return "", nil
	}
	return "fused " + strings.Join(did, " and ") + " GELUs", nil
}

type geluMatch struct {
	op   mir.Op // gelu or gelu_tanh
	x    *mir.Value
	dead []*mir.Node
	last *mir.Node
}

func near(v *mir.Value, want float64) bool {
	c, ok := scalarOf(v)
	return ok && math.Abs(c-want) <= 1e-6*math.Abs(want)
}

// otherArg returns the operand of a binary node that is not v.
func otherArg(n *mir.Node, v *mir.Value) (*mir.Value, bool) {
	switch {
	case n.Args[0] == v:
		return n.Args[1], true
	case n.Args[1] == v:
		return n.Args[0], true
	}
	return nil, false
}

// byConst reports n as a mul of a scalar constant near c by another
// operand (either order), and returns that operand.
func byConst(n *mir.Node, c float64) (*mir.Value, bool) {
	if n == nil || n.Op != "mul" {
		return nil, false
	}
	for i := range 2 {
		if near(n.Args[i], c) {
			return n.Args[1-i], true
		}
	}
	return nil, false
}

// matchGeluErf matches the argument of erf: x / sqrt(2) or x * (1/sqrt(2)).
func matchGeluErf(g *mir.Graph, erf *mir.Node) *geluMatch {
	uses := g.Uses()
	in := erf.Args[0]
	d := in.Def
	if d == nil || uses[in] != 1 {
		return nil
	}
	var x *mir.Value
	if d.Op == "div" && near(d.Args[1], math.Sqrt2) {
		x = d.Args[0]
	} else if v, ok := byConst(d, 1/math.Sqrt2); ok {
		x = v
	} else {
		return nil
	}
	return &geluMatch{op: "gelu", x: x, dead: []*mir.Node{d, erf}}
}

// matchGeluTanh matches the argument of tanh:
// sqrt(2/pi) * (x + 0.044715 * x*x*x).
func matchGeluTanh(g *mir.Graph, tanh *mir.Node) *geluMatch {
	uses := g.Uses()
	once := func(v *mir.Value) *mir.Node {
		if v == nil || uses[v] != 1 {
			return nil
		}
		return v.Def
	}
	scale := once(tanh.Args[0])
	u, ok := byConst(scale, math.Sqrt(2/math.Pi))
	sum := once(u)
	if !ok || sum == nil || sum.Op != "add" {
		return nil
	}
	for i := range 2 {
		x, w := sum.Args[i], sum.Args[1-i]
		coef := once(w)
		cube, ok := byConst(coef, 0.044715)
		if !ok {
			continue
		}
		c := once(cube)
		if c == nil || c.Op != "mul" {
			continue
		}
		sq, ok := otherArg(c, x)
		s := once(sq)
		if !ok || s == nil || s.Op != "mul" || s.Args[0] != x || s.Args[1] != x {
			continue
		}
		if !sameShape(x.Type.Shape, tanh.Results[0].Type.Shape) {
			return nil
		}
		return &geluMatch{op: "gelu_tanh", x: x, dead: []*mir.Node{s, c, coef, sum, scale, tanh}}
	}
	return nil
}

// matchGeluOuter matches what follows erf or tanh (f):
// x * (f + 1) * 0.5, in any order of the products and the sum.
func matchGeluOuter(g *mir.Graph, f *mir.Node, m *geluMatch) bool {
	uses := g.Uses()
	x := m.x
	e := f.Results[0]
	add := consumer(g, e)
	if add == nil || add.Op != "add" || uses[e] != 1 {
		return false
	}
	if one, ok := otherArg(add, e); !ok || !near(one, 1) {
		return false
	}
	m.dead = append(m.dead, add)
	s := add.Results[0]
	if uses[s] != 1 {
		return false
	}
	mul := consumer(g, s)
	if mul == nil || mul.Op != "mul" {
		return false
	}
	other, _ := otherArg(mul, s)
	half := func(n *mir.Node, v *mir.Value) bool {
		o, ok := otherArg(n, v)
		return ok && near(o, 0.5)
	}
	switch {
	case other == x:
		// (x * (f+1)) * 0.5
		r := mul.Results[0]
		last := consumer(g, r)
		if uses[r] != 1 || last == nil || last.Op != "mul" || !half(last, r) {
			return false
		}
		m.dead = append(m.dead, mul)
		m.last = last
	case other.Def != nil && other.Def.Op == "mul" && uses[other] == 1 && half(other.Def, x):
		// (x * 0.5) * (f+1)
		m.dead = append(m.dead, other.Def)
		m.last = mul
	default:
		return false
	}
	return sameShape(m.last.Results[0].Type.Shape, x.Type.Shape)
}

func replaceWithGelu(g *mir.Graph, m *geluMatch) {
	dead := map[*mir.Node]bool{}
	for _, d := range m.dead {
		dead[d] = true
	}
	res := m.last.Results[0]
	n := &mir.Node{Op: m.op, Args: []*mir.Value{m.x}, Results: []*mir.Value{res}, Attrs: mir.Attrs{}, Src: m.last.Src}
	res.Def = n
	var nodes []*mir.Node
	for _, o := range g.Nodes {
		switch {
		case o == m.last:
			nodes = append(nodes, n)
		case dead[o]:
		default:
			nodes = append(nodes, o)
		}
	}
	g.Nodes = nodes
}
