package fusion

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// FuseAttention finds attention written out as primitive ops, the way
// PyTorch exports nn.MultiheadAttention and hand-written attention:
//
//	s = matmul(q', kT)     where q' is q, q*c or q/c and kT a transpose of k
//	s' = s, s*c or s/c     (a scalar scale, before or after the matmul)
//	s'' = s', s' + mask    (an additive mask that broadcasts to the scores)
//	      or where(c, -inf, s') (a bool mask; masks.go has what is taken)
//	p = softmax(s'', axis=-1)
//	o = matmul(p, v)
//
// and replaces it with one attention node, whose kernel never writes the
// Sq x Sk scores to memory. Every intermediate must have no other use.
func FuseAttention(g *mir.Graph) (string, error) {
	fused, causal, made := 0, 0, 0
	for _, sm := range append([]*mir.Node(nil), g.Nodes...) {
		if sm.Op != mir.OpSoftmax || sm.Attrs.Bool("log") || sm.Args[0].Type.DType.String() != "f32" {
			continue
		}
		if ax := sm.Attrs.Int("axis"); ax != int64(sm.Args[0].Type.Rank()-1) {
			continue
		}
		if m := match(g, sm); m != nil {
			m.rewrite(g)
			fused++
			if m.causal {
				causal++
			}
			if m.whereMask != nil {
				made++
			}
		}
	}
	if fused == 0 {
		return "", nil
	}
	did := fmt.Sprintf("fused %d attention patterns into attention kernels", fused)
	if causal > 0 {
		did += fmt.Sprintf(", %d causal masks into causal=true", causal)
	}
	if made > 0 {
		did += fmt.Sprintf(", %d bool masks into additive ones", made)
	}
	return did, nil
}

type attnMatch struct {
	q, v, mask *mir.Value
	whereMask  *whereMask // a bool mask to make additive, or nil
	causal     bool
	scale      float64
	kPerm      []int64    // transpose to apply to kSrc to get k, or nil
	kSrc       *mir.Value // what kT transposes
	dead       []*mir.Node
	out        *mir.Node // the final matmul
}

// whereMask is where(cond, fill, scores), or where(cond, scores, fill)
// when not fillFirst: its additive mask is where(cond, fill, 0), or
// where(cond, 0, fill).
type whereMask struct {
	cond      *mir.Value
	fill      float64
	fillFirst bool
}

// scalarOf returns the value of a one-element f32 constant.
func scalarOf(v *mir.Value) (float64, bool) {
	if !v.IsConst() || v.Const.Len() != 1 || v.Const.DType.String() != "f32" {
		return 0, false
	}
	return float64(v.Const.F32()[0]), true
}

// scaled peels a mul or div by a scalar constant off v (single use).
func scaled(g *mir.Graph, uses map[*mir.Value]int, v *mir.Value) (*mir.Value, float64, *mir.Node) {
	d := v.Def
	if d == nil || uses[v] != 1 || (d.Op != "mul" && d.Op != "div") {
		return v, 1, nil
	}
	if c, ok := scalarOf(d.Args[1]); ok && c != 0 && sameShape(d.Args[0].Type.Shape, v.Type.Shape) {
		if d.Op == "div" {
			return d.Args[0], 1 / c, d
		}
		return d.Args[0], c, d
	}
	if c, ok := scalarOf(d.Args[0]); ok && d.Op == "mul" && sameShape(d.Args[1].Type.Shape, v.Type.Shape) {
		return d.Args[1], c, d
	}
	return v, 1, nil
}

func match(g *mir.Graph, sm *mir.Node) *attnMatch {
	uses := g.Uses()
	p := sm.Results[0]
	if uses[p] != 1 {
		return nil
	}
	out := consumer(g, p)
	if out == nil || out.Op != mir.OpMatMul || out.Args[0] != p || len(out.Args) != 2 || len(out.Attrs) > 0 && (out.Attrs.Bool("bias") || out.Attrs.Bool("residual") || out.Attrs.String("act") != "") {
		return nil
	}
	m := &attnMatch{v: out.Args[1], out: out, scale: 1, dead: []*mir.Node{sm}}
	s := sm.Args[0]
	if uses[s] != 1 || s.Def == nil {
		return nil
	}
	// Optional mask: an additive one, or a bool one applied with where
	// (masks.go). A causal one becomes causal=true.
	sq, sk := s.Type.Shape[s.Type.Rank()-2], s.Type.Shape[s.Type.Rank()-1]
	scores := func(sc *mir.Value) bool {
		inner, _, _ := scaled(g, uses, sc)
		return inner.Def != nil && inner.Def.Op == mir.OpMatMul && sameShape(sc.Type.Shape, s.Type.Shape) && uses[sc] == 1
	}
	switch d := s.Def; d.Op {
	case "add":
		found := false
		for i := 0; i < 2; i++ {
			sc, mask := d.Args[i], d.Args[1-i]
			if scores(sc) && mask.Type.Rank() <= s.Type.Rank() && mask.Type.DType == s.Type.DType {
				if causalAdditive(mask, sq, sk) {
					m.causal = true
				} else if other, wm, ok := causalWith(mask, sq, sk); ok {
					m.causal, m.mask, m.whereMask = true, other, wm
				} else {
					m.mask = mask
				}
				m.dead = append(m.dead, d)
				s = sc
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	case "where":
		c, a, b := d.Args[0], d.Args[1], d.Args[2]
		fillFirst := isMaskFill(a)
		sc, fill := b, a
		if !fillFirst {
			sc, fill = a, b
		}
		if !isMaskFill(fill) || !scores(sc) || c.Type.DType != tensor.Bool || c.Type.Rank() > s.Type.Rank() {
			return nil
		}
		if keep, ok := causalBool(c, sq, sk); ok && keep != fillFirst {
			m.causal = true
		} else if other, ok := causalWithBool(c, sq, sk, fillFirst); ok {
			f, _ := maskFill(fill)
			m.causal, m.whereMask = true, &whereMask{cond: other, fill: f, fillFirst: fillFirst}
		} else {
			f, _ := maskFill(fill)
			m.whereMask = &whereMask{cond: c, fill: f, fillFirst: fillFirst}
		}
		m.dead = append(m.dead, d)
		s = sc
	}
	// Optional scale after the matmul.
	s, c, d := scaled(g, uses, s)
	if d != nil {
		m.scale *= c
		m.dead = append(m.dead, d)
	}
	mm := s.Def
	if mm == nil || mm.Op != mir.OpMatMul || uses[s] != 1 || len(mm.Args) != 2 || mm.Attrs.Bool("bias") || mm.Attrs.Bool("residual") || mm.Attrs.String("act") != "" {
		return nil
	}
	m.dead = append(m.dead, mm)
	q, c, d := scaled(g, uses, mm.Args[0])
	if d != nil {
		m.scale *= c
		m.dead = append(m.dead, d)
	}
	m.q = q
	kT := mm.Args[1]
	if q.Type.Rank() < 2 || kT.Type.Rank() < 2 || m.v.Type.Rank() < 2 {
		return nil
	}
	// k is kT with its last two axes swapped: compose with kT's transpose
	// when there is one, so the transpose is done once.
	r := kT.Type.Rank()
	swap := make([]int64, r)
	for i := range swap {
		swap[i] = int64(i)
	}
	swap[r-1], swap[r-2] = swap[r-2], swap[r-1]
	if t := kT.Def; t != nil && t.Op == mir.OpTranspose && uses[kT] == 1 {
		perm := t.Attrs.Ints("perm")
		m.kPerm = make([]int64, r)
		for i := range m.kPerm {
			m.kPerm[i] = perm[swap[i]]
		}
		m.kSrc = t.Args[0]
		m.dead = append(m.dead, t)
	} else {
		m.kPerm, m.kSrc = swap, kT
	}
	if math.IsInf(m.scale, 0) || math.IsNaN(m.scale) {
		return nil
	}
	return m
}

// rewrite replaces the matched nodes with a transpose of k (when k is not
// already laid out [..., Sk, D]) and an attention node at the final
// matmul's place.
func (m *attnMatch) rewrite(g *mir.Graph) {
	dead := map[*mir.Node]bool{}
	for _, d := range m.dead {
		dead[d] = true
	}
	var added []*mir.Node
	k := m.kSrc
	identity := true
	for i, p := range m.kPerm {
		identity = identity && p == int64(i)
	}
	if !identity {
		shape := make([]dim.Expr, len(m.kPerm))
		for i, p := range m.kPerm {
			shape[i] = m.kSrc.Type.Shape[p]
		}
		t := &mir.Node{Op: mir.OpTranspose, Args: []*mir.Value{m.kSrc}, Attrs: mir.Attrs{"perm": m.kPerm}, Src: m.out.Src}
		kv := g.NewValue(m.kSrc.Name+"_k", mir.Type{DType: m.kSrc.Type.DType, Shape: shape})
		kv.Def = t
		t.Results = []*mir.Value{kv}
		added = append(added, t)
		k = kv
	}
	args := []*mir.Value{m.q, k, m.v}
	if w := m.whereMask; w != nil {
		f := g.NewConst("mask_fill", tensor.FromF32(nil, []float32{float32(w.fill)}))
		z := g.NewConst("mask_zero", tensor.FromF32(nil, []float32{0}))
		wargs := []*mir.Value{w.cond, f, z}
		if !w.fillFirst {
			wargs = []*mir.Value{w.cond, z, f}
		}
		n := newNode(g, "where", wargs, nil, m.out.Src, mir.Type{DType: m.q.Type.DType, Shape: w.cond.Type.Shape})
		added = append([]*mir.Node{n}, added...)
		m.mask = n.Results[0]
	}
	if m.mask != nil {
		args = append(args, m.mask)
	}
	res := m.out.Results[0]
	att := &mir.Node{Op: mir.OpAttention, Args: args, Results: []*mir.Value{res}, Attrs: mir.Attrs{"causal": m.causal, "scale": m.scale}, Src: m.out.Src}
	res.Def = att
	added = append(added, att)
	var nodes []*mir.Node
	for _, n := range g.Nodes {
		switch {
		case n == m.out:
			nodes = append(nodes, added...)
		case dead[n]:
		default:
			nodes = append(nodes, n)
		}
	}
	g.Nodes = nodes
}
