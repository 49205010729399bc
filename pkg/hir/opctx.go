package hir

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/irtype"
)

// attrKind is the type an attribute value must have.
type attrKind uint8

const (
	aInt    attrKind = iota // 1, -1
	aFloat                  // 1e-5 (an integer is accepted)
	aBool                   // true
	aString                 // "constant"
	aDType                  // f16
	aInts                   // [0, 2, 1, 3]
	aDim                    // seq, 64, seq/2
	aDims                   // [batch, seq, 4, 64]
)

var attrKindText = [...]string{
	aInt:    "an integer",
	aFloat:  "a number",
	aBool:   "true or false",
	aString: "a string",
	aDType:  "a dtype",
	aInts:   "a list of integers",
	aDim:    "a dim (an integer or a dim expression)",
	aDims:   "a list of dims",
}

// attrSpec describes one attribute of an operation. def is the value used
// when it is not written (nil: the attribute is optional with no value).
type attrSpec struct {
	name     string
	kind     attrKind
	def      any
	required bool
}

// AttrValues holds an operation's checked attributes: every attribute the
// op takes that was written or has a default, with values of Go types
// int64, float64, bool, string, DType, []int64, dim.Expr or []dim.Expr.
// Axis attributes are normalized to non-negative axes. It is defined in
// pkg/irtype (as Attrs), which MIR shares without importing the front end.
type AttrValues = irtype.Attrs

// opCtx is what an inference function sees: the statement, its operand
// types and its checked attributes, with helpers that report errors in the
// house style ("op: what was expected, what was found").
type opCtx struct {
	c     *checker
	s     *Stmt
	spec  *opSpec
	args  []Type
	names []string // operand names as written, for messages
	attrs AttrValues
	nres  int
}

func (x *opCtx) errorf(format string, args ...any) {
	x.c.errorf(x.s.OpPos, "%s: %s", x.s.Op, fmt.Sprintf(format, args...))
}

func (x *opCtx) argErrorf(i int, format string, args ...any) {
	pos := x.s.OpPos
	if i < len(x.s.Args) {
		pos = PosOf(x.s.Args[i])
	}
	x.c.errorf(pos, "%s: %s", x.s.Op, fmt.Sprintf(format, args...))
}

func (x *opCtx) attrErrorf(name string, format string, args ...any) {
	x.c.errorf(x.attrPos(name), "%s: %s", x.s.Op, fmt.Sprintf(format, args...))
}

func (x *opCtx) attrPos(name string) Pos {
	for _, a := range x.s.Attrs {
		if a.Name == name {
			return a.Pos
		}
	}
	return x.s.OpPos
}

// argName names operand i for messages: its value name, and its role where
// the role says more than "the operand" ("m (scale)", "t (idx)").
func (x *opCtx) argName(i int) string {
	if i < len(x.spec.argNames) {
		switch role := x.spec.argNames[i]; role {
		case "x", "a", "b", x.names[i]:
		default:
			return fmt.Sprintf("%s (%s)", x.names[i], role)
		}
	}
	return x.names[i]
}

func (x *opCtx) checkArity() bool {
	n, sp := len(x.args), x.spec
	if n >= sp.minArgs && (sp.maxArgs < 0 || n <= sp.maxArgs) {
		return true
	}
	want := fmt.Sprintf("%d", sp.minArgs)
	switch {
	case sp.maxArgs < 0:
		want = fmt.Sprintf("at least %d", sp.minArgs)
	case sp.maxArgs != sp.minArgs:
		want = fmt.Sprintf("%d to %d", sp.minArgs, sp.maxArgs)
	}
	usage := ""
	if len(sp.argNames) > 0 {
		usage = fmt.Sprintf(" (%s(%s))", sp.name, strings.Join(sp.argNames, ", "))
	}
	x.errorf("takes %s operand%s%s, found %d", want, plural(max(sp.minArgs, sp.maxArgs)), usage, n)
	return false
}

// parseAttrs checks written attributes against the op's specs and fills in
// defaults. Every problem is reported; the result is false after any.
func (x *opCtx) parseAttrs() bool {
	x.attrs = AttrValues{}
	x.s.Attr = x.attrs
	ok := true
	seen := map[string]bool{}
	for _, a := range x.s.Attrs {
		sp := x.spec.attr(a.Name)
		if sp == nil {
			takes := "no attributes"
			if len(x.spec.attrs) > 0 {
				names := make([]string, len(x.spec.attrs))
				for i, s := range x.spec.attrs {
					names[i] = s.name
				}
				takes = "attributes " + strings.Join(names, ", ")
			}
			x.c.errorf(a.Pos, "%s has no attribute %q (it takes %s)", x.s.Op, a.Name, takes)
			ok = false
			continue
		}
		if seen[a.Name] {
			x.c.errorf(a.Pos, "%s: attribute %s given twice", x.s.Op, a.Name)
			ok = false
			continue
		}
		seen[a.Name] = true
		v, good := x.attrValue(sp, a.Value)
		if !good {
			ok = false
			continue
		}
		x.attrs[a.Name] = v
	}
	for _, sp := range x.spec.attrs {
		if seen[sp.name] {
			continue
		}
		if sp.required {
			x.errorf("needs attribute %s=, %s", sp.name, attrKindText[sp.kind])
			ok = false
		} else if sp.def != nil {
			x.attrs[sp.name] = sp.def
		}
	}
	return ok
}

func (x *opCtx) attrValue(sp *attrSpec, v Expr) (any, bool) {
	bad := func() (any, bool) {
		x.c.errorf(PosOf(v), "%s: attribute %s wants %s, found %s", x.s.Op, sp.name, attrKindText[sp.kind], describe(v))
		return nil, false
	}
	switch sp.kind {
	case aInt:
		if l, ok := v.(*IntLit); ok {
			return l.Value, true
		}
	case aFloat:
		switch l := v.(type) {
		case *IntLit:
			return float64(l.Value), true
		case *FloatLit:
			return l.Value, true
		}
	case aBool:
		if l, ok := v.(*BoolLit); ok {
			return l.Value, true
		}
	case aString:
		if l, ok := v.(*StringLit); ok {
			return l.Value, true
		}
	case aDType:
		if l, ok := v.(*DTypeLit); ok {
			return l.DType, true
		}
	case aInts:
		l, ok := v.(*ListLit)
		if !ok {
			return bad()
		}
		out := make([]int64, len(l.Elems))
		for i, e := range l.Elems {
			n, ok := e.(*IntLit)
			if !ok {
				x.c.errorf(PosOf(e), "%s: attribute %s wants %s, found %s in the list", x.s.Op, sp.name, attrKindText[sp.kind], describe(e))
				return nil, false
			}
			out[i] = n.Value
		}
		return out, true
	case aDim:
		if isDimSyntax(v) {
			d, ok := x.c.dimOf(v, "attribute "+sp.name)
			return d, ok
		}
	case aDims:
		l, ok := v.(*ListLit)
		if !ok {
			return bad()
		}
		out := make([]dim.Expr, len(l.Elems))
		good := true
		for i, e := range l.Elems {
			if !isDimSyntax(e) {
				x.c.errorf(PosOf(e), "%s: attribute %s wants %s, found %s in the list", x.s.Op, sp.name, attrKindText[sp.kind], describe(e))
				return nil, false
			}
			d, ok := x.c.dimOf(e, "attribute "+sp.name)
			good = good && ok
			out[i] = d
		}
		return out, good
	}
	return bad()
}

func isDimSyntax(x Expr) bool {
	switch x.(type) {
	case *IntLit, *Ident, *BinaryExpr, *UnaryExpr:
		return true
	}
	return false
}

// axis normalizes an axis for a tensor of the given rank (negative axes
// count from the end) and reports it when out of range.
func (x *opCtx) axis(attr string, a int64, rank int) (int, bool) {
	if a < -int64(rank) || a >= int64(rank) {
		if rank == 0 {
			x.attrErrorf(attr, "axis %d is out of range for a scalar (it has no axes)", a)
		} else {
			x.attrErrorf(attr, "axis %d is out of range for rank %d (want -%d to %d)", a, rank, rank, rank-1)
		}
		return 0, false
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a), true
}

// axes normalizes a list of distinct axes, sorted.
func (x *opCtx) axes(attr string, list []int64, rank int) ([]int, bool) {
	out := make([]int, 0, len(list))
	seen := map[int]bool{}
	for _, a := range list {
		ax, ok := x.axis(attr, a, rank)
		if !ok {
			return nil, false
		}
		if seen[ax] {
			x.attrErrorf(attr, "%s lists axis %d twice", attr, ax)
			return nil, false
		}
		seen[ax] = true
		out = append(out, ax)
	}
	sort.Ints(out)
	return out, true
}

// same decides a == b: true when they are equal or may be (the check is then
// recorded for specialization), false when they never are.
func (x *opCtx) same(a, b dim.Expr, why string) bool {
	switch dim.EqualUnder(a, b, x.c.m.Bounds) {
	case dim.Always:
		return true
	case dim.Never:
		return false
	}
	x.c.constrain(x.s.OpPos, MustEqual, a, b, x.s.Op+": "+why)
	return true
}

// atLeast decides a >= b the same way.
func (x *opCtx) atLeast(a, b dim.Expr, why string) bool {
	switch dim.GreaterEqualUnder(a, b, x.c.m.Bounds) {
	case dim.Always:
		return true
	case dim.Never:
		return false
	}
	x.c.constrain(x.s.OpPos, MustBeAtLeast, a, b, x.s.Op+": "+why)
	return true
}

// arith runs one dim operation, reporting overflow or complexity errors.
func (x *opCtx) arith(f func(a, b dim.Expr) (dim.Expr, error), a, b dim.Expr) (dim.Expr, bool) {
	r, err := f(a, b)
	if err != nil {
		x.errorf("%v", err)
		return r, false
	}
	return r, true
}

// product multiplies dims.
func (x *opCtx) product(ds []dim.Expr) (dim.Expr, bool) {
	p := dim.Const(1)
	for _, d := range ds {
		var ok bool
		if p, ok = x.arith(dim.Mul, p, d); !ok {
			return p, false
		}
	}
	return p, true
}

// broadcast applies NumPy broadcasting to the operands listed in idx.
func (x *opCtx) broadcast(idx ...int) ([]dim.Expr, bool) {
	shapes := make([][]dim.Expr, len(idx))
	names := make([]string, len(idx))
	for k, i := range idx {
		shapes[k], names[k] = x.args[i].Shape, x.names[i]
	}
	return x.broadcastShapes(shapes, names)
}

// broadcastShapes applies NumPy broadcasting to shapes. A dim broadcasts
// when it is the literal 1; two symbolic dims must be equal (a symbolic dim
// is never assumed to be 1).
func (x *opCtx) broadcastShapes(shapes [][]dim.Expr, names []string) ([]dim.Expr, bool) {
	rank := 0
	for _, sh := range shapes {
		rank = max(rank, len(sh))
	}
	out := make([]dim.Expr, rank)
	from := make([]int, rank) // which shape set out[k]; -1 for none yet
	for k := range from {
		from[k] = -1
	}
	for i, sh := range shapes {
		off := rank - len(sh)
		for j, d := range sh {
			k := off + j
			switch {
			case from[k] < 0 || isOne(out[k]) && !isOne(d):
				out[k], from[k] = d, i
			case isOne(d):
			case !x.same(out[k], d, fmt.Sprintf("broadcast of %s and %s (axis %d)", names[from[k]], names[i], k)):
				parts := make([]string, len(shapes))
				for n, sh := range shapes {
					parts[n] = names[n] + " " + ShapeString(sh)
				}
				x.errorf("shapes do not broadcast: %s (axis %d: %s vs %s)", joinNames(parts), k, out[k], d)
				return nil, false
			}
		}
	}
	return out, true
}

func isOne(d dim.Expr) bool {
	v, ok := d.Const()
	return ok && v == 1
}

// sameDType requires the listed operands to share one dtype.
func (x *opCtx) sameDType(idx ...int) bool {
	first := idx[0]
	for _, i := range idx[1:] {
		if x.args[i].DType != x.args[first].DType {
			x.argErrorf(i, "%s is %s but %s is %s (operands must have one dtype: use cast)",
				x.argName(first), x.args[first].DType, x.argName(i), x.args[i].DType)
			return false
		}
	}
	return true
}

// dtypeIn requires operand i to have a dtype that passes pred.
func (x *opCtx) dtypeIn(i int, pred func(DType) bool, want string) bool {
	if !pred(x.args[i].DType) {
		x.argErrorf(i, "%s must be %s, found %s", x.argName(i), want, x.args[i].DType)
		return false
	}
	return true
}

// rankAtLeast requires operand i to have at least n dims.
func (x *opCtx) rankAtLeast(i, n int, shape string) bool {
	if x.args[i].Rank() < n {
		x.argErrorf(i, "%s must have rank >= %d (%s), found %s", x.argName(i), n, shape, x.args[i])
		return false
	}
	return true
}

// rankIs requires operand i to have exactly n dims.
func (x *opCtx) rankIs(i, n int, shape string) bool {
	if x.args[i].Rank() != n {
		x.argErrorf(i, "%s must have rank %d (%s), found %s", x.argName(i), n, shape, x.args[i])
		return false
	}
	return true
}

func one(t Type) ([]Type, bool) { return []Type{t}, true }

func isBool(d DType) bool { return d == Bool }
