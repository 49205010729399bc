package fusion

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/mir"
)

// FuseGelu recognizes GELU written out with erf, as PyTorch exports
// nn.GELU(): x * (erf(x / sqrt(2)) + 1) * 0.5 (in either multiplication
// order, with x/sqrt(2) also as x * (1/sqrt(2))), and replaces it with one
// gelu node, which the epilogue pass can then fold into a matmul.
func FuseGelu(g *mir.Graph) (string, error) {
	fused := 0
	for _, erf := range append([]*mir.Node(nil), g.Nodes...) {
		if erf.Op != "erf" || erf.Args[0].Type.DType.String() != "f32" {
			continue
		}
		if m := matchGelu(g, erf); m != nil {
			replaceWithGelu(g, m)
			fused++
		}
	}
	if fused == 0 {
		return "", nil
	}
	return fmt.Sprintf("fused %d erf-form GELUs", fused), nil
}

type geluMatch struct {
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

func matchGelu(g *mir.Graph, erf *mir.Node) *geluMatch {
	uses := g.Uses()
	in := erf.Args[0]
	d := in.Def
	if d == nil || uses[in] != 1 {
		return nil
	}
	var x *mir.Value
	switch {
	case d.Op == "div" && near(d.Args[1], math.Sqrt2):
		x = d.Args[0]
	case d.Op == "mul" && near(d.Args[1], 1/math.Sqrt2):
		x = d.Args[0]
	case d.Op == "mul" && near(d.Args[0], 1/math.Sqrt2):
		x = d.Args[1]
	default:
		return nil
	}
	m := &geluMatch{x: x, dead: []*mir.Node{d, erf}}
	e := erf.Results[0]
	add := consumer(g, e)
	if add == nil || add.Op != "add" || uses[e] != 1 {
		return nil
	}
	if one, ok := otherArg(add, e); !ok || !near(one, 1) {
		return nil
	}
	m.dead = append(m.dead, add)
	s := add.Results[0]
	if uses[s] != 1 {
		return nil
	}
	mul := consumer(g, s)
	if mul == nil || mul.Op != "mul" {
		return nil
	}
	other, _ := otherArg(mul, s)
	half := func(n *mir.Node, v *mir.Value) bool {
		o, ok := otherArg(n, v)
		return ok && near(o, 0.5)
	}
	switch {
	case other == x:
		// (x * (erf+1)) * 0.5
		r := mul.Results[0]
		last := consumer(g, r)
		if uses[r] != 1 || last == nil || last.Op != "mul" || !half(last, r) {
			return nil
		}
		m.dead = append(m.dead, mul)
		m.last = last
	case other.Def != nil && other.Def.Op == "mul" && uses[other] == 1 && half(other.Def, x):
		// (x * 0.5) * (erf+1)
		m.dead = append(m.dead, other.Def)
		m.last = mul
	default:
		return nil
	}
	if !sameShape(m.last.Results[0].Type.Shape, x.Type.Shape) {
		return nil
	}
	return m
}

func replaceWithGelu(g *mir.Graph, m *geluMatch) {
	dead := map[*mir.Node]bool{}
	for _, d := range m.dead {
		dead[d] = true
	}
	res := m.last.Results[0]
	n := &mir.Node{Op: "gelu", Args: []*mir.Value{m.x}, Results: []*mir.Value{res}, Attrs: mir.Attrs{}, Src: m.last.Src}
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
