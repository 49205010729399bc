// Package dim implements symbolic integer dimension expressions.
//
// Tensor shapes in rlx have dims that are integers or expressions over
// declared symbols (batch, seq) with + - * / % and parentheses, where / and %
// are floor division and floored remainder, as Python's // and %. Shape
// inference keeps them symbolic and compares them; specialization and the
// runtime loader bind the symbols and evaluate them. The package depends only
// on the standard library so that the loader can use it.
//
// # Canonical form
//
// An Expr is a polynomial with int64 coefficients: a sum of terms
// coeff*monomial, each monomial a product of atoms with powers. An atom is
// either a symbol or a floor division floor(p/q) of two canonical
// expressions that could not be simplified away. Remainders are rewritten as
// p - q*floor(p/q), so floor division is the only non-polynomial atom.
// Terms are ordered by degree (descending), then lexicographically by their
// atoms (graded lexicographic order; symbols by name come before floor
// divisions), and like terms are merged, so two expressions that are equal
// as polynomials over the same atoms have the same representation and the
// same String: 4*seq+4, a*a-b*b, s-2*(s/2) (which is s%2), b-a/2.
//
// Floor divisions are simplified where that is exact for every integer
// binding of the symbols (negative ones included, so Substitute stays exact):
//   - floor(p/c) for a constant c > 0 splits each coefficient by floored
//     division, p = c*q + r with r's coefficients in [0, c), giving
//     q + floor(r/c) (q is integer valued); r and c are then divided by the
//     gcd of c and r's coefficients, and floor((floor(x/d)+k)/c) becomes
//     floor((x+k*d)/(c*d)), so s/2/2 is s/4.
//   - floor(p/-c) is floor(-p/c); a symbolic divisor is made to have a
//     positive leading coefficient the same way.
//   - A common constant and monomial factor of p and q is cancelled, and if q
//     divides p exactly (p = k*q as polynomials) the result is k.
//
// The last rule assumes the divisor is nonzero: batch*seq/batch is seq even
// though it is a division by zero when batch is 0. Simplification can thus
// remove a division-by-zero error but never changes a value that is defined.
//
// # Limits
//
// All arithmetic is checked: a coefficient or intermediate value outside
// int64 is an error, never a wrapped value (Eval works on the canonical
// form, whose intermediate values can differ from the text's). So that no input can take
// unbounded time or memory, an expression has at most 64 terms, each
// monomial has total degree at most 16, floor divisions nest at most 8 deep,
// and the canonical text is at most 4096 bytes long.
package dim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

const (
	maxTerms  = 64
	maxDegree = 16
	maxDepth  = 8
	maxText   = 4096
)

var (
	errOverflow = errors.New("dim expression overflows int64")
	errDivZero  = errors.New("division by zero in dim expression")
)

func tooComplex(format string, args ...any) error {
	return fmt.Errorf("dim expression too complex: "+format, args...)
}

// Expr is an immutable integer expression over named symbols, in canonical
// form: two Exprs that canonicalize the same are Equal and have the same
// String. The zero value is the constant 0.
type Expr struct {
	p *poly // nil for the constant 0
}

// poly is a nonzero canonical polynomial. It is never modified once built.
type poly struct {
	terms []term // canonical order, distinct monomials, nonzero coefficients
	depth int    // deepest nesting of floor atoms; 0 if there are none
	// key is the canonical text, rendered on first use: most intermediate
	// results are never printed or compared. Concurrent first uses may both
	// render it, which is harmless.
	key atomic.Pointer[string]
}

func newPoly(ts []term, depth int, key string) *poly {
	p := &poly{terms: ts, depth: depth}
	if key != "" {
		p.key.Store(&key)
	}
	return p
}

func (p *poly) text() string {
	if k := p.key.Load(); k != nil {
		return *k
	}
	k := render(p.terms)
	p.key.Store(&k)
	return k
}

type term struct {
	coef int64
	mono []factor // sorted by cmpAtom, distinct atoms; empty for the constant term
}

type factor struct {
	a   *atom
	pow int // >= 1
}

// atom is a symbol, or floor(num/den) when den is not the zero Expr.
type atom struct {
	sym      string
	num, den Expr
	key      string // the symbol name, or the floor division's text
	depth    int
}

func (a *atom) isFloor() bool { return a.den.p != nil }

// Const returns the constant expression v.
func Const(v int64) Expr {
	if v == 0 {
		return Expr{}
	}
	ts := []term{{coef: v}}
	return Expr{newPoly(ts, 0, "")}
}

// Sym returns the expression consisting of the symbol name. The name should
// match the identifier grammar [A-Za-z_][A-Za-z0-9_.]*; Sym does not check it,
// but other names do not survive a round trip through String and Parse.
func Sym(name string) Expr {
	a := &atom{sym: name, key: name}
	ts := []term{{coef: 1, mono: []factor{{a, 1}}}}
	return Expr{newPoly(ts, 0, name)}
}

func (e Expr) terms() []term {
	if e.p == nil {
		return nil
	}
	return e.p.terms
}

func (e Expr) depth() int {
	if e.p == nil {
		return 0
	}
	return e.p.depth
}

// Const returns e's value if e is a constant.
func (e Expr) Const() (int64, bool) {
	ts := e.terms()
	switch {
	case len(ts) == 0:
		return 0, true
	case len(ts) == 1 && len(ts[0].mono) == 0:
		return ts[0].coef, true
	}
	return 0, false
}

// IsConst reports whether e is a constant.
func (e Expr) IsConst() bool {
	_, ok := e.Const()
	return ok
}

// Syms returns the sorted, deduplicated names of the symbols in e, including
// those inside floor divisions.
func (e Expr) Syms() []string {
	set := map[string]bool{}
	e.collectSyms(set)
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (e Expr) collectSyms(set map[string]bool) {
	for _, t := range e.terms() {
		for _, f := range t.mono {
			if f.a.isFloor() {
				f.a.num.collectSyms(set)
				f.a.den.collectSyms(set)
			} else {
				set[f.a.sym] = true
			}
		}
	}
}

// String returns e's canonical text, which Parse reads back to an Equal
// expression: no spaces, products with *, powers as repeated products
// (seq*seq), floor divisions as p/q with parentheses where needed.
func (e Expr) String() string {
	if e.p == nil {
		return "0"
	}
	return e.p.text()
}

// Key returns the same as String; it identifies e's canonical form and is
// meant for use as a map key.
func (e Expr) Key() string { return e.String() }

// Equal reports whether a and b have the same canonical form.
func Equal(a, b Expr) bool { return a.String() == b.String() }

// degree is a monomial's total degree; a floor atom counts as degree 1.
func degree(m []factor) int {
	d := 0
	for _, f := range m {
		d += f.pow
	}
	return d
}

// cmpAtom orders atoms: symbols by name, then floor divisions by text, so
// that seq comes before seq/2 in a sum.
func cmpAtom(x, y *atom) int {
	if x == y {
		return 0 // the common case in products, and cheaper than comparing keys
	}
	if fx, fy := x.isFloor(), y.isFloor(); fx != fy {
		if fx {
			return 1
		}
		return -1
	}
	return strings.Compare(x.key, y.key)
}

// cmpMono orders monomials by graded lexicographic order: higher degree
// first, then by the exponent of the first atom where they differ (atoms
// ordered by cmpAtom), higher exponent first. This is a monomial order (it is
// compatible with multiplication), which exact division relies on for
// termination; the constant monomial comes last.
func cmpMono(x, y []factor) int {
	if dx, dy := degree(x), degree(y); dx != dy {
		return dy - dx
	}
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := cmpAtom(x[i].a, y[i].a); c != 0 {
			return c
		}
		if x[i].pow != y[i].pow {
			return y[i].pow - x[i].pow
		}
	}
	return len(x) - len(y)
}

// build returns the canonical polynomial of the sum of ts. It owns ts and may
// reorder and overwrite it.
func build(ts []term) (Expr, error) {
	slices.SortFunc(ts, func(x, y term) int { return cmpMono(x.mono, y.mono) })
	out := ts[:0]
	for _, t := range ts {
		if n := len(out); n > 0 && cmpMono(out[n-1].mono, t.mono) == 0 {
			c, err := add64(out[n-1].coef, t.coef)
			if err != nil {
				return Expr{}, err
			}
			out[n-1].coef = c
			continue
		}
		out = append(out, t)
	}
	out = slices.DeleteFunc(out, func(t term) bool { return t.coef == 0 })
	if len(out) == 0 {
		return Expr{}, nil
	}
	if len(out) > maxTerms {
		return Expr{}, tooComplex("more than %d terms", maxTerms)
	}
	depth := 0
	for _, t := range out {
		if degree(t.mono) > maxDegree {
			return Expr{}, tooComplex("degree more than %d", maxDegree)
		}
		for _, f := range t.mono {
			depth = max(depth, f.a.depth)
		}
	}
	if textLen(out) > maxText {
		return Expr{}, tooComplex("longer than %d characters", maxText)
	}
	return Expr{newPoly(slices.Clip(out), depth, "")}, nil
}

// minInt64Text is how math.MinInt64 is written: its magnitude is not an int64
// literal, so "-9223372036854775808" would not parse.
const minInt64Text = "(-9223372036854775807-1)"

// render writes canonical terms as text.
func render(ts []term) string {
	var b strings.Builder
	writeTerms(&b, ts)
	return b.String()
}

// textLen is len(render(ts)), without building the text.
func textLen(ts []term) int {
	var n counter
	writeTerms(&n, ts)
	return int(n)
}

type textWriter interface {
	WriteString(s string) (int, error)
	WriteByte(c byte) error
}

type counter int

func (n *counter) WriteString(s string) (int, error) { *n += counter(len(s)); return len(s), nil }
func (n *counter) WriteByte(byte) error              { *n++; return nil }

// writeTerms writes canonical terms. Unary minus binds tighter than * and /
// in Parse (as in Python), but the text never depends on that: a leading
// minus is never followed by a bare floor division.
func writeTerms(w textWriter, ts []term) {
	for i, t := range ts {
		c := t.coef
		neg := c < 0 && c != math.MinInt64
		if neg {
			c = -c
			w.WriteByte('-')
		} else if i > 0 {
			w.WriteByte('+')
		}
		coef := c != 1 || len(t.mono) == 0
		// A floor division standing alone as a term is written bare (seq/2);
		// inside a product it needs parentheses: 2*(seq/2), not 2*seq/2.
		alone := !coef && len(t.mono) == 1 && t.mono[0].pow == 1
		wrap := neg && i == 0 && alone && t.mono[0].a.isFloor() // -(a/2), not -a/2 = floor(-a/2)
		if wrap {
			w.WriteByte('(')
		}
		if coef {
			if c == math.MinInt64 {
				w.WriteString(minInt64Text)
			} else {
				w.WriteString(strconv.FormatInt(c, 10))
			}
		}
		sep := coef
		for _, f := range t.mono {
			paren := f.a.isFloor() && !alone
			for range f.pow {
				if sep {
					w.WriteByte('*')
				}
				sep = true
				if paren {
					w.WriteByte('(')
				}
				w.WriteString(f.a.key)
				if paren {
					w.WriteByte(')')
				}
			}
		}
		if wrap {
			w.WriteByte(')')
		}
	}
}

// floorText writes floor(num/den). The numerator may be bare when it is a
// single positively signed term (a*b/c parses as (a*b)/c); the divisor only
// when it is a symbol or a positive constant.
func floorText(num, den Expr) string {
	n, d := num.String(), den.String()
	if ts := num.terms(); len(ts) != 1 || ts[0].coef <= 0 {
		n = "(" + n + ")"
	}
	bare := false
	if v, ok := den.Const(); ok {
		bare = v > 0
	} else if ts := den.terms(); len(ts) == 1 && ts[0].coef == 1 && len(ts[0].mono) == 1 &&
		ts[0].mono[0].pow == 1 && !ts[0].mono[0].a.isFloor() {
		bare = true
	}
	if !bare {
		d = "(" + d + ")"
	}
	return n + "/" + d
}

// newFloor returns the atom floor(num/den) as an expression; num and den
// must already be in the form FloorDiv leaves them.
func newFloor(num, den Expr) (Expr, error) {
	depth := 1 + max(num.depth(), den.depth())
	if depth > maxDepth {
		return Expr{}, tooComplex("floor divisions nested more than %d deep", maxDepth)
	}
	key := floorText(num, den)
	if len(key) > maxText {
		return Expr{}, tooComplex("longer than %d characters", maxText)
	}
	a := &atom{num: num, den: den, key: key, depth: depth}
	ts := []term{{coef: 1, mono: []factor{{a, 1}}}}
	return Expr{newPoly(ts, depth, key)}, nil
}

func add64(a, b int64) (int64, error) {
	c := a + b
	if (c > a) != (b > 0) {
		return 0, errOverflow
	}
	return c, nil
}

func sub64(a, b int64) (int64, error) {
	c := a - b
	if (c < a) != (b > 0) {
		return 0, errOverflow
	}
	return c, nil
}

func mul64(a, b int64) (int64, error) {
	if a == 0 || b == 0 {
		return 0, nil
	}
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, errOverflow
	}
	c := a * b
	if c/b != a {
		return 0, errOverflow
	}
	return c, nil
}

// floorDiv64 is Python's a // b.
func floorDiv64(a, b int64) (int64, error) {
	if b == 0 {
		return 0, errDivZero
	}
	if a == math.MinInt64 && b == -1 {
		return 0, errOverflow
	}
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q, nil
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs64(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}
