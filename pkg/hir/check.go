package hir

import (
	"fmt"
	"math"
	"strings"

	"github.com/rlx-project/rlx/internal/suggest"
	"github.com/rlx-project/rlx/pkg/dim"
)

// Constraint is a relation between dims that Check could not decide before
// binding (`a == b` for two different symbols, say). Specialization
// evaluates it under the binding and fails with Why if it does not hold.
type Constraint struct {
	File string
	Pos  Pos
	Kind ConstraintKind
	A, B dim.Expr
	Why  string // what needs the relation, e.g. "add: broadcast of x and y"
}

// ConstraintKind is the relation a Constraint asserts.
type ConstraintKind uint8

// The relations a Constraint can assert.
const (
	MustEqual        ConstraintKind = iota // A == B
	MustBeAtLeast                          // A >= B
	MustDivideEvenly                       // A % B == 0
)

func (c Constraint) String() string {
	rel := map[ConstraintKind]string{MustEqual: "==", MustBeAtLeast: ">=", MustDivideEvenly: "divisible by"}[c.Kind]
	return fmt.Sprintf("%s %s %s (%s)", c.A, rel, c.B, c.Why)
}

// Check verifies a parsed module: names resolve, every operation exists and
// gets the operands and attributes it needs, and every value's dtype and
// symbolic shape is inferred. It annotates the module (Stmt.Types, Stmt.Attr,
// Module.Constraints, ...) and returns every error found as an ErrorList.
func Check(m *Module) error {
	c := &checker{m: m, dims: map[string]*DimDecl{}, params: map[string]*ParamDecl{}}
	c.run()
	c.errs.Sort()
	return c.errs.Err()
}

type checker struct {
	m      *Module
	errs   ErrorList
	dims   map[string]*DimDecl
	params map[string]*ParamDecl
}

func (c *checker) errorf(pos Pos, format string, args ...any) {
	if len(c.errs) >= maxErrors {
		return
	}
	c.errs.Add(c.m.File, pos, fmt.Sprintf(format, args...))
}

func (c *checker) run() {
	m := c.m
	m.Bounds = map[string]dim.Interval{}
	m.Constraints = nil
	for _, d := range m.Decls {
		if d, ok := d.(*DimDecl); ok {
			c.declareDim(d)
		}
	}
	for _, d := range m.Decls {
		if d, ok := d.(*ParamDecl); ok {
			c.declareParam(d)
		}
	}
	funcs := map[string]*FuncDecl{}
	for _, d := range m.Decls {
		f, ok := d.(*FuncDecl)
		if !ok {
			continue
		}
		if prev := funcs[f.Name]; prev != nil {
			c.errorf(f.NamePos, "function %s redeclared (first declared at %s)", Quote(f.Name), prev.NamePos)
			continue
		}
		funcs[f.Name] = f
		c.checkFunc(f)
	}
	if len(funcs) == 0 && len(c.errs) == 0 {
		c.errorf(Pos{Line: 1, Col: 1}, "module %s has no function: add `func main(...) -> (...) { ... }`", Quote(m.Name))
	}
}

func (c *checker) declareDim(d *DimDecl) {
	if isReserved(d.Name) {
		c.errorf(d.NamePos, "%q is a reserved word and cannot name a dim", d.Name)
		return
	}
	if prev := c.dims[d.Name]; prev != nil {
		c.errorf(d.NamePos, "dim %s redeclared (first declared at %s)", d.Name, prev.NamePos)
		return
	}
	iv := dim.Interval{Lo: 1, Hi: math.MaxInt64}
	if d.HasBounds {
		switch {
		case d.Lo < 0:
			c.errorf(d.BoundsPos, "dim %s: lower bound %d is negative (a dim is a size: >= 0)", d.Name, d.Lo)
		case d.Lo > d.Hi:
			c.errorf(d.BoundsPos, "dim %s: bounds [%d, %d] are empty (lower bound above upper bound)", d.Name, d.Lo, d.Hi)
		}
		iv = dim.Interval{Lo: d.Lo, Hi: d.Hi}
	}
	c.dims[d.Name] = d
	c.m.Bounds[d.Name] = iv
}

func (c *checker) declareParam(d *ParamDecl) {
	if prev := c.params[d.Name]; prev != nil {
		c.errorf(d.NamePos, "param %s redeclared (first declared at %s)", Quote(d.Name), prev.NamePos)
		return
	}
	c.params[d.Name] = d
	t, ok := c.typeOf(d.Type)
	if !ok {
		d.Checked = Type{}
		return
	}
	for i, x := range t.Shape {
		if !x.IsConst() {
			c.errorf(PosOf(d.Type.Dims[i]), "param %s must have a static shape, found dim %s (weights have fixed sizes)", Quote(d.Name), x)
			return
		}
	}
	d.Checked = t
	if d.Init != nil {
		c.checkLiteral(d.Init, t, false, "param "+Quote(d.Name))
	}
}

// typeOf converts a written type to a checked Type; ok is false after an error.
func (c *checker) typeOf(t *TypeExpr) (Type, bool) {
	if t == nil || t.DType == InvalidDType {
		return Type{}, false
	}
	out := Type{DType: t.DType, Shape: make([]dim.Expr, len(t.Dims))}
	ok := true
	for i, x := range t.Dims {
		d, good := c.dimOf(x, "shape")
		if !good {
			ok = false
			continue
		}
		if r := dim.Range(d, c.m.Bounds); r.Hi < 0 {
			c.errorf(PosOf(x), "dim %s is negative", d)
			ok = false
		}
		out.Shape[i] = d
	}
	return out, ok
}

// dimOf converts a written dim expression to its canonical form.
func (c *checker) dimOf(x Expr, what string) (dim.Expr, bool) {
	switch x := x.(type) {
	case *IntLit:
		return dim.Const(x.Value), true
	case *Ident:
		if _, ok := c.dims[x.Name]; !ok {
			c.errorf(x.Pos, "unknown dim %s in %s (declare it with `dim %s`)", x.Name, what, x.Name)
			return dim.Expr{}, false
		}
		return dim.Sym(x.Name), true
	case *UnaryExpr:
		v, ok := c.dimOf(x.X, what)
		if !ok {
			return v, false
		}
		r, err := dim.Neg(v)
		if err != nil {
			c.errorf(x.Pos, "%v", err)
			return r, false
		}
		return r, true
	case *BinaryExpr:
		a, ok1 := c.dimOf(x.X, what)
		b, ok2 := c.dimOf(x.Y, what)
		if !ok1 || !ok2 {
			return dim.Expr{}, false
		}
		var r dim.Expr
		var err error
		switch x.Op {
		case ADD:
			r, err = dim.Add(a, b)
		case SUB:
			r, err = dim.Sub(a, b)
		case MUL:
			r, err = dim.Mul(a, b)
		case QUO:
			r, err = dim.FloorDiv(a, b)
		case REM:
			r, err = dim.Mod(a, b)
		}
		if err != nil {
			c.errorf(x.Pos, "%v", err)
			return r, false
		}
		return r, true
	}
	c.errorf(PosOf(x), "expected an integer or a dim expression in %s, found %s", what, describe(x))
	return dim.Expr{}, false
}

// describe names an expression's kind for "found ..." messages.
func describe(x Expr) string {
	switch x := x.(type) {
	case *Ident:
		return "name " + Quote(x.Name)
	case *IntLit:
		return fmt.Sprintf("integer %d", x.Value)
	case *FloatLit:
		return "float " + formatFloat(x.Value)
	case *BoolLit:
		return fmt.Sprintf("bool %v", x.Value)
	case *StringLit:
		return "string " + quoteString(x.Value)
	case *DTypeLit:
		return "dtype " + x.DType.String()
	case *ListLit:
		return "a list"
	case *TypeExpr:
		return "type " + formatType(x)
	case *BinaryExpr, *UnaryExpr:
		return "expression " + FormatExpr(x)
	}
	return "something else"
}

// checkLiteral checks a param or const literal against a static type: nested
// lists match the shape, elements fit the dtype. splat allows one scalar to
// fill the whole tensor.
func (c *checker) checkLiteral(x Expr, t Type, splat bool, what string) bool {
	shape := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		shape[i], _ = d.Const()
	}
	if splat {
		if _, isList := x.(*ListLit); !isList {
			return c.checkElem(x, t.DType, what)
		}
	}
	return c.checkNested(x, t.DType, shape, what)
}

func (c *checker) checkNested(x Expr, dt DType, shape []int64, what string) bool {
	if len(shape) == 0 {
		return c.checkElem(x, dt, what)
	}
	l, ok := x.(*ListLit)
	if !ok {
		c.errorf(PosOf(x), "%s: expected a list of %d elements, found %s", what, shape[0], describe(x))
		return false
	}
	if int64(len(l.Elems)) != shape[0] {
		c.errorf(l.Pos, "%s: expected a list of %d elements, found %d", what, shape[0], len(l.Elems))
		return false
	}
	for _, e := range l.Elems {
		if !c.checkNested(e, dt, shape[1:], what) {
			return false
		}
	}
	return true
}

func (c *checker) checkElem(x Expr, dt DType, what string) bool {
	switch x := x.(type) {
	case *IntLit:
		switch {
		case dt.IsFloat():
			return true
		case dt == Bool:
		default:
			lo, hi := intRange(dt)
			if x.Value < lo || x.Value > hi {
				c.errorf(x.Pos, "%s: %d does not fit in %s (range %d to %d)", what, x.Value, dt, lo, hi)
				return false
			}
			return true
		}
	case *FloatLit:
		if dt.IsFloat() {
			return true
		}
	case *BoolLit:
		if dt == Bool {
			return true
		}
	case *ListLit:
		c.errorf(x.Pos, "%s: expected %s %s scalar, found a list (too many nesting levels for the shape)", what, article(dt.String()), dt)
		return false
	}
	c.errorf(PosOf(x), "%s: expected %s %s value, found %s", what, article(dt.String()), dt, describe(x))
	return false
}

func intRange(dt DType) (int64, int64) {
	switch dt {
	case I8:
		return math.MinInt8, math.MaxInt8
	case I16:
		return math.MinInt16, math.MaxInt16
	case I32:
		return math.MinInt32, math.MaxInt32
	case U8:
		return 0, math.MaxUint8
	}
	return math.MinInt64, math.MaxInt64
}

// scope maps value names to definitions within one function.
type scope struct {
	defs map[string]Definition
	typ  map[string]Type
	pos  map[string]Pos
}

func (c *checker) checkFunc(f *FuncDecl) {
	sc := &scope{defs: map[string]Definition{}, typ: map[string]Type{}, pos: map[string]Pos{}}
	for name, p := range c.params {
		sc.defs[name] = Definition{Kind: DefParam, Param: p}
		sc.typ[name] = p.Checked
		sc.pos[name] = p.NamePos
	}
	define := func(name string, pos Pos, d Definition, t Type) {
		if prev, ok := sc.pos[name]; ok {
			what := "value"
			if sc.defs[name].Kind == DefParam {
				what = "param"
			}
			c.errorf(pos, "%s redefined: %s %s is already defined at %s (values are defined once)", Quote(name), what, Quote(name), prev)
			return
		}
		sc.defs[name], sc.typ[name], sc.pos[name] = d, t, pos
	}
	for _, a := range f.Params {
		t, _ := c.typeOf(a.Type)
		a.Checked = t
		define(a.Name, a.Pos, Definition{Kind: DefArg, Arg: a}, t)
	}
	for _, r := range f.Results {
		t, _ := c.typeOf(r.Type)
		r.Checked = t
	}
	for _, s := range f.Body {
		c.checkStmt(s, sc)
		for i, r := range s.Results {
			var t Type
			if i < len(s.Types) {
				t = s.Types[i]
			}
			define(r.Name, r.Pos, Definition{Kind: DefStmt, Stmt: s, Index: i}, t)
		}
	}
	r := f.Return
	if r == nil {
		return
	}
	r.Defs = make([]Definition, len(r.Values))
	if len(r.Values) != len(f.Results) {
		c.errorf(r.Pos, "return: %s declares %s, found %s", Quote(f.Name), count(len(f.Results), "result"), count(len(r.Values), "value"))
	}
	for i, v := range r.Values {
		d, ok := sc.defs[v.Name]
		if !ok {
			c.errorf(v.Pos, "return: unknown value %s", Quote(v.Name))
			continue
		}
		r.Defs[i] = d
		if i >= len(f.Results) {
			continue
		}
		got, want := sc.typ[v.Name], f.Results[i].Checked
		if got.DType == InvalidDType || want.DType == InvalidDType {
			continue
		}
		c.sameType(v.Pos, got, want, fmt.Sprintf("return: %s", Quote(v.Name)), fmt.Sprintf("result %s is declared", Quote(f.Results[i].Name)))
	}
}

// sameType checks an inferred type against a declared one; declared is a
// phrase such as "result y is declared".
func (c *checker) sameType(pos Pos, got, want Type, gotWhat, declared string) {
	if got.DType != want.DType || got.Rank() != want.Rank() {
		c.errorf(pos, "%s has type %s but %s %s", gotWhat, got, declared, want)
		return
	}
	for i := range got.Shape {
		switch dim.EqualUnder(got.Shape[i], want.Shape[i], c.m.Bounds) {
		case dim.Never:
			c.errorf(pos, "%s has type %s but %s %s (dim %d: %s vs %s)",
				gotWhat, got, declared, want, i, got.Shape[i], want.Shape[i])
			return
		case dim.Unknown:
			c.constrain(pos, MustEqual, got.Shape[i], want.Shape[i], fmt.Sprintf("%s matches its declared type (dim %d)", gotWhat, i))
		}
	}
}

func (c *checker) constrain(pos Pos, kind ConstraintKind, a, b dim.Expr, why string) {
	c.m.Constraints = append(c.m.Constraints, Constraint{File: c.m.File, Pos: pos, Kind: kind, A: a, B: b, Why: why})
}

func (c *checker) checkStmt(s *Stmt, sc *scope) {
	spec, ok := lookupOp(s.Op)
	if !ok {
		c.errorf(s.OpPos, "unknown operation %q%s", s.Op, suggestOp(s.Op))
		return
	}
	x := &opCtx{c: c, s: s, spec: spec, nres: len(s.Results)}
	s.Defs = make([]Definition, len(s.Args))
	valid := true
	if spec.literalArgs {
		// const(VALUE, TYPE): its operands are not values.
		valid = x.checkConstArgs()
	} else {
		for i, a := range s.Args {
			id, isIdent := a.(*Ident)
			if !isIdent {
				c.errorf(PosOf(a), "%s: operand %d must be a value name, found %s", s.Op, i+1, describe(a))
				valid = false
				continue
			}
			d, ok := sc.defs[id.Name]
			if !ok {
				c.errorf(id.Pos, "%s: unknown value %s%s", s.Op, Quote(id.Name), suggestName(id.Name, sc))
				valid = false
				continue
			}
			s.Defs[i] = d
			t := sc.typ[id.Name]
			if t.DType == InvalidDType {
				valid = false // already reported where it was defined
			}
			x.args = append(x.args, t)
			x.names = append(x.names, Quote(id.Name))
		}
		if valid && !x.checkArity() {
			valid = false
		}
	}
	if !x.parseAttrs() {
		valid = false
	}
	if spec.results >= 0 && x.nres != spec.results {
		c.errorf(s.Results[0].Pos, "%s gives %s, found %s", s.Op, count(spec.results, "result"), count(x.nres, "name"))
		valid = false
	}
	if !valid {
		return
	}
	types, ok := spec.infer(x)
	if !ok || len(types) != len(s.Results) {
		return
	}
	s.Types = types
	if s.Type != nil {
		if want, ok := c.typeOf(s.Type); ok {
			c.sameType(s.Type.Pos, types[0], want, fmt.Sprintf("%s: %s", s.Op, Quote(s.Results[0].Name)), "it is declared")
		}
	}
}

// article is "a" or "an" for a word as it is read aloud (an i64, a f32 is
// read "an eff thirty-two").
func article(word string) string {
	if word != "" && strings.ContainsRune("aefhilmnorsx", rune(word[0])) {
		return "an"
	}
	return "a"
}

// count spells "1 result", "2 results".
func count(n int, noun string) string {
	if n != 1 && strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %s%s", n, noun, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// suggestName offers the closest defined value name for a typo.
func suggestName(name string, sc *scope) string {
	names := make([]string, 0, len(sc.defs))
	for n := range sc.defs {
		names = append(names, n)
	}
	if best := suggest.Nearest(name, names); best != "" {
		return fmt.Sprintf(" (did you mean %s?)", Quote(best))
	}
	return ""
}

func suggestOp(name string) string {
	if best := suggest.Nearest(name, opNames()); best != "" {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return ""
}

// joinNames lists names for messages: "a, b and c".
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
