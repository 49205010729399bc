package fusion

import (
	"math"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Attention masks as exporters spell them. FuseAttention folds a mask into
// the attention node when it can prove, at build time and for every
// binding, what the mask is:
//
//   - a causal mask, query i seeing keys j <= i, becomes causal=true. It
//     is a bool (where(mask, -inf, s) or where(keep, s, -inf)) or an
//     additive 0/-inf tensor (s + mask), computed from iota comparisons
//     (what ONNX Trilu imports as, or arange(S)[None, :] > arange(S)[:, None])
//     or read from a constant buffer sliced to [:S, :S] (GPT-2's tril
//     buffer), which must be triangular in all of its N x N entries;
//   - any other bool mask applied with where and a -inf (or f32 lowest)
//     fill becomes the additive mask operand where(mask, fill, 0), of the
//     mask's own (broadcasting) shape, [B, 1, 1, S] for a padding mask;
//   - a causal mask combined with another one becomes causal=true and the
//     other one (causalWith, causalWithBool): additive, causal + other or
//     where(other, fill, causal) (Hugging Face's causal mask filled at the
//     padded keys); bool, or(causal masked, other masked) applied with
//     where(m, fill, s), and(causal keep, other keep) with where(m, s, fill).
//     A causal mask expanded over leading axes (to the batch) is still one.
//
// Both rewrites are exact for scores s of magnitude below 2^103: s + -inf
// is -inf and s + 0 is s; s + lowest rounds to lowest, and a -inf or a
// lowest score contributes an exp of 0 to a row with a visible key.

// maskFill reports v as a value every element of which is f, a scalar
// constant or an expand of one.
func maskFill(v *mir.Value) (float64, bool) {
	if d := v.Def; d != nil && d.Op == mir.OpExpand {
		v = d.Args[0]
	}
	if !v.IsConst() || v.Const.Len() != 1 || !isFloat(v) {
		return 0, false
	}
	return v.Const.Float64s()[0], true
}

// lowestF32 is -math.MaxFloat32, torch.finfo(torch.float32).min, the fill
// Hugging Face models use.
const lowestF32 = -math.MaxFloat32

// isMaskFill reports the fills a masked score may take: -inf, or the f32
// lowest for an f32 value.
func isMaskFill(v *mir.Value) bool {
	f, ok := maskFill(v)
	return ok && (math.IsInf(f, -1) || f == lowestF32 && v.Type.DType == tensor.F32)
}

func isZeroFill(v *mir.Value) bool {
	f, ok := maskFill(v)
	return ok && f == 0
}

// tail2 reports whether v's shape is [1, ..., 1, sq, sk].
func tail2(v *mir.Value, sq, sk dim.Expr) bool {
	s := v.Type.Shape
	if len(s) < 2 || !dim.Equal(s[len(s)-2], sq) || !dim.Equal(s[len(s)-1], sk) {
		return false
	}
	for _, d := range s[:len(s)-2] {
		if !isOne(d) {
			return false
		}
	}
	return true
}

// causalBool reports a bool value that is, for every binding, the causal
// pattern over [sq, sk] (sq and sk equal): keep is true when v[i, j] is
// j <= i (the keys a query sees), false when v[i, j] is j > i (the keys
// masked out).
func causalBool(v *mir.Value, sq, sk dim.Expr) (keep, ok bool) {
	if v.Type.DType != tensor.Bool || !dim.Equal(sq, sk) {
		return false, false
	}
	v = leadingExpand(v, sq, sk)
	if d := v.Def; d != nil {
		switch d.Op {
		case "not":
			keep, ok := causalBool(d.Args[0], sq, sk)
			return !keep, ok
		case "cast":
			if a := d.Args[0]; a.Type.DType != tensor.Bool {
				return triangular(a, sq, sk, func(x float64) bool { return x != 0 })
			}
			return causalBool(d.Args[0], sq, sk)
		case "ge", "gt", "le", "lt":
			if !tail2(v, sq, sk) {
				return false, false
			}
			return causalCompare(d)
		case "eq", "ne":
			// buffer == 0 or buffer != 0 of a (sliced) constant buffer.
			for i := range 2 {
				if z := d.Args[1-i]; z.IsConst() && z.Const.Len() == 1 && z.Const.Float64s()[0] == 0 {
					if keep, ok := triangular(d.Args[i], sq, sk, func(x float64) bool { return x != 0 }); ok {
						return keep == (d.Op == "ne"), true
					}
				}
			}
			return false, false
		}
	}
	return triangular(v, sq, sk, func(x float64) bool { return x != 0 })
}

// causalAdditive reports an f32 value that is, for every binding, the
// additive causal mask over [sq, sk]: 0 where j <= i and -inf where j > i.
func causalAdditive(v *mir.Value, sq, sk dim.Expr) bool {
	if !dim.Equal(sq, sk) {
		return false
	}
	v = leadingExpand(v, sq, sk)
	if d := v.Def; d != nil && d.Op == "where" {
		c, a, b := d.Args[0], d.Args[1], d.Args[2]
		keep, ok := causalBool(c, sq, sk)
		if !ok || !tail2(v, sq, sk) {
			return false
		}
		if keep {
			a, b = b, a
		}
		f, okA := maskFill(a)
		return okA && math.IsInf(f, -1) && isZeroFill(b)
	}
	var bad bool
	keep, ok := triangular(v, sq, sk, func(x float64) bool {
		bad = bad || (x != 0 && !math.IsInf(x, -1))
		return x == 0
	})
	return ok && keep && !bad
}

// leadingExpand returns the operand of an expand that broadcasts only
// leading axes of a value whose last two are [sq, sk] ([1, 1, S, S] to
// [B, 1, S, S]): every [..., i, j] of it is the operand's [i, j], so the
// operand is causal when the expand is. Anything else is v itself.
func leadingExpand(v *mir.Value, sq, sk dim.Expr) *mir.Value {
	for v.Def != nil && v.Def.Op == mir.OpExpand {
		a := v.Def.Args[0]
		r := a.Type.Rank()
		if r < 2 || !dim.Equal(a.Type.Shape[r-2], sq) || !dim.Equal(a.Type.Shape[r-1], sk) {
			break
		}
		v = a
	}
	return v
}

// causalWith reports an additive mask that is a causal one combined with
// another, and that other: add(causal, other) (either order) gives other;
// where(c, fill, causal) gives where-mask {c, fill, fillFirst} and
// where(c, causal, fill) {c, fill, !fillFirst}, fill a mask fill (-inf or
// the f32 lowest). With causal=true, the kernel's -inf at j > i absorbs
// whatever the other mask adds there, and elsewhere the causal part is 0.
func causalWith(v *mir.Value, sq, sk dim.Expr) (other *mir.Value, wm *whereMask, ok bool) {
	d := v.Def
	if d == nil || !dim.Equal(sq, sk) {
		return nil, nil, false
	}
	switch d.Op {
	case "add":
		for i := range 2 {
			if causalAdditive(d.Args[i], sq, sk) && d.Args[1-i].Type.DType == v.Type.DType {
				return d.Args[1-i], nil, true
			}
		}
	case "where":
		c, a, b := d.Args[0], d.Args[1], d.Args[2]
		if c.Type.DType != tensor.Bool {
			return nil, nil, false
		}
		for _, fillFirst := range []bool{true, false} {
			fill, causal := a, b
			if !fillFirst {
				fill, causal = b, a
			}
			if f, okF := maskFill(fill); okF && isMaskFill(fill) && causalAdditive(causal, sq, sk) {
				return nil, &whereMask{cond: c, fill: f, fillFirst: fillFirst}, true
			}
		}
	}
	return nil, nil, false
}

// causalWithBool reports a bool mask m, applied as where(m, fill, s)
// (masked: m true hides a key) or where(m, s, fill) (!masked: m true shows
// it), that is a causal mask combined with another, and that other:
// or(causal, other) of masks, and(causal, other) of keeps.
func causalWithBool(m *mir.Value, sq, sk dim.Expr, masked bool) (*mir.Value, bool) {
	d := m.Def
	op := mir.Op("and")
	if masked {
		op = "or"
	}
	if d == nil || d.Op != op {
		return nil, false
	}
	for i := range 2 {
		if keep, ok := causalBool(d.Args[i], sq, sk); ok && keep != masked && d.Args[1-i].Type.DType == tensor.Bool {
			return d.Args[1-i], true
		}
	}
	return nil, false
}

// triangular reports a constant, or a prefix ([:a, :b]) slice of one on
// its last two axes, whose shape is [1, ..., 1, sq, sk] and whose N x M
// buffer, through pred, is j <= i everywhere (keep) or j > i everywhere.
// Every prefix of a buffer triangular throughout is, whatever the binding.
func triangular(v *mir.Value, sq, sk dim.Expr, pred func(float64) bool) (keep, ok bool) {
	if !tail2(v, sq, sk) {
		return false, false
	}
	for v.Def != nil && v.Def.Op == mir.OpSlice && prefixSlice(v.Def) {
		v = v.Def.Args[0]
	}
	if !v.IsConst() {
		return false, false
	}
	s := v.Const.Shape
	for _, d := range s[:len(s)-2] {
		if d != 1 {
			return false, false
		}
	}
	n, m := s[len(s)-2], s[len(s)-1]
	x := v.Const.Float64s()
	lower, upper := true, true
	for i := range n {
		for j := range m {
			p := pred(x[i*m+j])
			lower = lower && p == (j <= i)
			upper = upper && p == (j > i)
		}
	}
	switch {
	case lower && upper: // an empty buffer
		return false, false
	case lower:
		return true, true
	case upper:
		return false, true
	}
	return false, false
}

// prefixSlice reports a slice that starts at 0 with step 1 on each axis it
// slices, and slices only the last two.
func prefixSlice(n *mir.Node) bool {
	r := int64(n.Args[0].Type.Rank())
	starts, axes, steps := n.Attrs.Dims("starts"), n.Attrs.Ints("axes"), n.Attrs.Ints("steps")
	for k, st := range starts {
		ax := int64(k)
		if n.Attrs.Has("axes") {
			if k >= len(axes) {
				return false
			}
			ax = axes[k]
		}
		if ax < 0 {
			ax += r
		}
		if c, ok := st.Const(); !ok || c != 0 || ax < r-2 || ax >= r {
			return false
		}
		if n.Attrs.Has("steps") && (k >= len(steps) || steps[k] != 1) {
			return false
		}
	}
	return true
}

// affineIJ is an integer tensor over [..., sq, sk] whose element at
// [..., i, j] is ci*i + cj*j + c.
type affineIJ struct{ ci, cj, c int64 }

// indexAffine finds what an integer value computes from iota: its element
// at an index as an affine function of the index's last two coordinates.
// It follows iota, scalar constants, reshapes that only add or drop unit
// axes, expand, integer casts, add and sub.
func indexAffine(v *mir.Value) (affineIJ, bool) {
	if !isInt(v.Type.DType) {
		return affineIJ{}, false
	}
	if v.IsConst() {
		if v.Const.Len() != 1 {
			return affineIJ{}, false
		}
		return affineIJ{c: int64(v.Const.Float64s()[0])}, true
	}
	d := v.Def
	if d == nil {
		return affineIJ{}, false
	}
	r := v.Type.Rank()
	terms := func(a affineIJ, of *mir.Value) bool { return aligned(a, of, v) }
	switch d.Op {
	case mir.OpIota:
		if r != 1 || isOne(v.Type.Shape[0]) {
			return affineIJ{}, false
		}
		return affineIJ{cj: 1}, true
	case "cast":
		a, ok := indexAffine(d.Args[0])
		return a, ok
	case mir.OpExpand:
		a, ok := indexAffine(d.Args[0])
		return a, ok && terms(a, d.Args[0])
	case "add", "sub":
		a, okA := indexAffine(d.Args[0])
		b, okB := indexAffine(d.Args[1])
		if !okA || !okB || !terms(a, d.Args[0]) || !terms(b, d.Args[1]) {
			return affineIJ{}, false
		}
		if d.Op == "sub" {
			b = affineIJ{-b.ci, -b.cj, -b.c}
		}
		return affineIJ{a.ci + b.ci, a.cj + b.cj, a.c + b.c}, true
	case mir.OpReshape:
		a, ok := indexAffine(d.Args[0])
		if !ok {
			return affineIJ{}, false
		}
		// The non-unit axes, from the end, of the operand and the result.
		from, to := nonUnit(d.Args[0].Type.Shape), nonUnit(v.Type.Shape)
		if len(from) != len(to) {
			return affineIJ{}, false
		}
		out := affineIJ{c: a.c}
		for k := range from {
			if !dim.Equal(d.Args[0].Type.Shape[d.Args[0].Type.Rank()-1-from[k]], v.Type.Shape[r-1-to[k]]) {
				return affineIJ{}, false
			}
			var c int64
			switch from[k] {
			case 0:
				c = a.cj
			case 1:
				c = a.ci
			}
			if c == 0 {
				continue
			}
			switch to[k] {
			case 0:
				out.cj = c
			case 1:
				out.ci = c
			default:
				return affineIJ{}, false
			}
		}
		// Terms on unit axes of the operand would be lost.
		if (a.cj != 0 && !contains(from, 0)) || (a.ci != 0 && !contains(from, 1)) {
			return affineIJ{}, false
		}
		return out, true
	}
	return affineIJ{}, false
}

// aligned reports that the terms of a, an operand of a broadcasting op,
// sit on axes of the same size as the result's, not on unit axes that
// broadcast (where index and value would disagree).
func aligned(a affineIJ, of, res *mir.Value) bool {
	s, rv, t, r := of.Type.Shape, of.Type.Rank(), res.Type.Shape, res.Type.Rank()
	if a.cj != 0 && (rv < 1 || r < 1 || !dim.Equal(s[rv-1], t[r-1])) {
		return false
	}
	if a.ci != 0 && (rv < 2 || r < 2 || !dim.Equal(s[rv-2], t[r-2])) {
		return false
	}
	return true
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// nonUnit lists the axes of a shape that are not the constant 1, counted
// from the end (0 is the last), last first.
func nonUnit(s []dim.Expr) []int {
	var out []int
	for p := 0; p < len(s); p++ {
		if !isOne(s[len(s)-1-p]) {
			out = append(out, p)
		}
	}
	return out
}

func isInt(t tensor.DType) bool {
	return t == tensor.I64 || t == tensor.I32
}

// causalCompare reports a comparison of two index expressions that is
// j <= i (keep) or j > i for every i and j.
func causalCompare(d *mir.Node) (keep, ok bool) {
	a, okA := indexAffine(d.Args[0])
	b, okB := indexAffine(d.Args[1])
	if !okA || !okB || !aligned(a, d.Args[0], d.Results[0]) || !aligned(b, d.Args[1], d.Results[0]) {
		return false, false
	}
	// Each as e >= 0 over the integers.
	var e affineIJ
	switch d.Op {
	case "ge":
		e = affineIJ{a.ci - b.ci, a.cj - b.cj, a.c - b.c}
	case "gt":
		e = affineIJ{a.ci - b.ci, a.cj - b.cj, a.c - b.c - 1}
	case "le":
		e = affineIJ{b.ci - a.ci, b.cj - a.cj, b.c - a.c}
	case "lt":
		e = affineIJ{b.ci - a.ci, b.cj - a.cj, b.c - a.c - 1}
	}
	switch e {
	case affineIJ{1, -1, 0}: // i - j >= 0
		return true, true
	case affineIJ{-1, 1, -1}: // j - i - 1 >= 0
		return false, true
	}
	return false, false
}
