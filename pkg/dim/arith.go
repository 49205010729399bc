package dim

import (
	"fmt"
	"math"
	"slices"
)

// Add returns a + b.
func Add(a, b Expr) (Expr, error) {
	if a.p == nil {
		return b, nil
	}
	if b.p == nil {
		return a, nil
	}
	return build(slices.Concat(a.p.terms, b.p.terms))
}

// Sub returns a - b.
func Sub(a, b Expr) (Expr, error) {
	nb, err := Neg(b)
	if err != nil {
		return Expr{}, err
	}
	return Add(a, nb)
}

// Neg returns -a.
func Neg(a Expr) (Expr, error) {
	return scale(a, -1)
}

// scale returns k*a.
func scale(a Expr, k int64) (Expr, error) {
	ts := make([]term, len(a.terms()))
	for i, t := range a.terms() {
		c, err := mul64(t.coef, k)
		if err != nil {
			return Expr{}, err
		}
		ts[i] = term{c, t.mono}
	}
	return build(ts)
}

// Mul returns a * b.
func Mul(a, b Expr) (Expr, error) {
	ts := make([]term, 0, len(a.terms())*len(b.terms()))
	for _, x := range a.terms() {
		for _, y := range b.terms() {
			t, err := mulTerm(x, y)
			if err != nil {
				return Expr{}, err
			}
			ts = append(ts, t)
		}
	}
	return build(ts)
}

func mulTerm(x, y term) (term, error) {
	c, err := mul64(x.coef, y.coef)
	if err != nil {
		return term{}, err
	}
	if degree(x.mono)+degree(y.mono) > maxDegree {
		return term{}, tooComplex("degree more than %d", maxDegree)
	}
	// Merge the two atom lists, both sorted by cmpAtom, adding powers.
	m := make([]factor, 0, len(x.mono)+len(y.mono))
	i, j := 0, 0
	for i < len(x.mono) && j < len(y.mono) {
		fx, fy := x.mono[i], y.mono[j]
		switch c := cmpAtom(fx.a, fy.a); {
		case c < 0:
			m = append(m, fx)
			i++
		case c > 0:
			m = append(m, fy)
			j++
		default:
			m = append(m, factor{fx.a, fx.pow + fy.pow})
			i++
			j++
		}
	}
	m = append(append(m, x.mono[i:]...), y.mono[j:]...)
	return term{c, m}, nil
}

// FloorDiv returns floor(a / b), rounding toward negative infinity as
// Python's a // b. A constant 0 divisor is an error.
func FloorDiv(a, b Expr) (Expr, error) {
	if c, ok := b.Const(); ok {
		return floorConst(a, c)
	}
	if a.p == nil {
		return Expr{}, nil
	}
	var err error
	// floor(p/q) == floor(-p/-q): make the divisor's leading coefficient positive.
	if b.p.terms[0].coef < 0 {
		if a, err = Neg(a); err != nil {
			return Expr{}, err
		}
		if b, err = Neg(b); err != nil {
			return Expr{}, err
		}
	}
	if a, b, err = cancelCommon(a, b); err != nil {
		return Expr{}, err
	}
	if c, ok := b.Const(); ok {
		return floorConst(a, c)
	}
	if k, ok := exactQuotient(a, b); ok {
		return k, nil
	}
	return newFloor(a, b)
}

// floorConst returns floor(p / c) for a constant c.
func floorConst(p Expr, c int64) (Expr, error) {
	if c == 0 {
		return Expr{}, errDivZero
	}
	if v, ok := p.Const(); ok {
		q, err := floorDiv64(v, c)
		return Const(q), err
	}
	if c < 0 {
		var err error
		if p, err = Neg(p); err != nil {
			return Expr{}, err
		}
		if c == math.MinInt64 {
			return Expr{}, errOverflow
		}
		c = -c
	}
	if c == 1 {
		return p, nil
	}
	// p = c*q + r with each coefficient of r in [0, c); q is integer valued,
	// so floor(p/c) = q + floor(r/c).
	var qs, rs []term
	for _, t := range p.terms() {
		q, _ := floorDiv64(t.coef, c) // c > 1: cannot fail
		r := t.coef - q*c             // in [0, c): cannot overflow
		if q != 0 {
			qs = append(qs, term{q, t.mono})
		}
		if r != 0 {
			rs = append(rs, term{r, t.mono})
		}
	}
	q, err := build(qs)
	if err != nil {
		return Expr{}, err
	}
	if len(rs) == 0 || (len(rs) == 1 && len(rs[0].mono) == 0) {
		return q, nil // constant r in [0, c): floor(r/c) is 0
	}
	// floor(g*r'/(g*c')) = floor(r'/c').
	g := uint64(c)
	for _, t := range rs {
		g = gcd(g, uint64(t.coef))
	}
	for i := range rs {
		rs[i].coef /= int64(g)
	}
	c /= int64(g)
	r, err := build(rs)
	if err != nil {
		return Expr{}, err
	}
	f, err := floorNested(r, c)
	if err != nil {
		return Expr{}, err
	}
	return Add(q, f)
}

// floorNested returns floor(r/c) for c > 1 and r with coefficients in [0, c)
// and no common factor with c. For r = floor(x/d) + k it uses
// floor(floor(y)/c) = floor(y/c) (integer c > 0) with y = (x+k*d)/d, so that
// s/2/2 is s/4 and s/b/2 is s/(2*b).
func floorNested(r Expr, c int64) (Expr, error) {
	ts := r.terms()
	k := int64(0)
	if n := len(ts); n == 2 && len(ts[1].mono) == 0 {
		k = ts[1].coef
		ts = ts[:1]
	}
	if len(ts) == 1 && ts[0].coef == 1 && len(ts[0].mono) == 1 && ts[0].mono[0].pow == 1 &&
		ts[0].mono[0].a.isFloor() {
		a := ts[0].mono[0].a
		if e, err := nestedFloor(a.num, a.den, k, c); err == nil {
			return e, nil
		}
		// On overflow or complexity, keep the nested form.
	}
	return newFloor(r, Const(c))
}

func nestedFloor(x, d Expr, k, c int64) (Expr, error) {
	kd, err := scale(d, k)
	if err != nil {
		return Expr{}, err
	}
	if x, err = Add(x, kd); err != nil {
		return Expr{}, err
	}
	cd, err := scale(d, c)
	if err != nil {
		return Expr{}, err
	}
	return FloorDiv(x, cd)
}

// cancelCommon divides p and q by their common constant and monomial factor
// (sound as a rational identity; see the package comment about zero).
func cancelCommon(p, q Expr) (Expr, Expr, error) {
	all := slices.Concat(p.terms(), q.terms())
	g := uint64(0)
	common := all[0].mono
	for _, t := range all {
		g = gcd(g, abs64(t.coef))
		common = monoGCD(common, t.mono)
	}
	if g > math.MaxInt64 {
		g = 1 // every coefficient is MinInt64; leave them alone
	}
	if g == 1 && len(common) == 0 {
		return p, q, nil
	}
	div := func(e Expr) (Expr, error) {
		ts := make([]term, len(e.terms()))
		for i, t := range e.terms() {
			m, _ := monoDiv(t.mono, common)
			ts[i] = term{t.coef / int64(g), m}
		}
		return build(ts)
	}
	p, err := div(p)
	if err != nil {
		return Expr{}, Expr{}, err
	}
	q, err = div(q)
	return p, q, err
}

// monoGCD returns the atoms common to x and y with the smaller power.
func monoGCD(x, y []factor) []factor {
	var m []factor
	for _, fx := range x {
		for _, fy := range y {
			if fx.a.key == fy.a.key {
				m = append(m, factor{fx.a, min(fx.pow, fy.pow)})
			}
		}
	}
	return m
}

// monoDiv returns x / y if y divides x.
func monoDiv(x, y []factor) ([]factor, bool) {
	m := make([]factor, 0, len(x))
	j := 0
	for _, fx := range x {
		if j < len(y) && y[j].a.key == fx.a.key {
			if y[j].pow > fx.pow {
				return nil, false
			}
			if fx.pow > y[j].pow {
				m = append(m, factor{fx.a, fx.pow - y[j].pow})
			}
			j++
			continue
		}
		m = append(m, fx)
	}
	return m, j == len(y)
}

// exactQuotient returns k with p = k*q when multivariate division of p by q
// (by leading terms) leaves no remainder. Whatever the order, a zero
// remainder proves p = k*q, so this never gives a wrong answer.
func exactQuotient(p, q Expr) (Expr, bool) {
	lq := q.p.terms[0]
	var ks []term
	for r := p; r.p != nil; {
		if len(ks) >= maxTerms {
			return Expr{}, false
		}
		lr := r.p.terms[0]
		if lr.coef%lq.coef != 0 {
			return Expr{}, false
		}
		m, ok := monoDiv(lr.mono, lq.mono)
		if !ok {
			return Expr{}, false
		}
		c, err := floorDiv64(lr.coef, lq.coef)
		if err != nil {
			return Expr{}, false
		}
		t := term{c, m}
		ks = append(ks, t)
		tq, err := Mul(Expr{newPoly([]term{t}, 0, "")}, q)
		if err != nil {
			return Expr{}, false
		}
		if r, err = Sub(r, tq); err != nil {
			return Expr{}, false
		}
	}
	k, err := build(ks)
	return k, err == nil
}

// Mod returns the floored remainder a - b*floor(a/b), which has b's sign
// (Python's a % b). A constant 0 divisor is an error.
func Mod(a, b Expr) (Expr, error) {
	f, err := FloorDiv(a, b)
	if err != nil {
		return Expr{}, err
	}
	bf, err := Mul(b, f)
	if err != nil {
		return Expr{}, err
	}
	return Sub(a, bf)
}

// Substitute replaces symbols by expressions, all at once (a replacement is
// not itself substituted into). Symbols not in by stay symbolic. The result
// is simplified again, so binding every symbol gives a constant; a divisor
// that becomes the constant 0 is an error.
func Substitute(e Expr, by map[string]Expr) (Expr, error) {
	sum := Expr{}
	for _, t := range e.terms() {
		prod := Const(t.coef)
		for _, f := range t.mono {
			v, err := substAtom(f.a, by)
			if err != nil {
				return Expr{}, err
			}
			for range f.pow {
				if prod, err = Mul(prod, v); err != nil {
					return Expr{}, err
				}
			}
		}
		var err error
		if sum, err = Add(sum, prod); err != nil {
			return Expr{}, err
		}
	}
	return sum, nil
}

func substAtom(a *atom, by map[string]Expr) (Expr, error) {
	if !a.isFloor() {
		if v, ok := by[a.sym]; ok {
			return v, nil
		}
		return Expr{newPoly([]term{{1, []factor{{a, 1}}}}, 0, a.key)}, nil
	}
	num, err := Substitute(a.num, by)
	if err != nil {
		return Expr{}, err
	}
	den, err := Substitute(a.den, by)
	if err != nil {
		return Expr{}, err
	}
	return FloorDiv(num, den)
}

// Eval evaluates e with every symbol bound. It fails if a symbol is unbound
// (naming the first in sorted order), on int64 overflow, and on division by
// zero.
func (e Expr) Eval(binding map[string]int64) (int64, error) {
	for _, s := range e.Syms() {
		if _, ok := binding[s]; !ok {
			return 0, fmt.Errorf("unbound symbol %q in dim expression", s)
		}
	}
	return e.eval(binding)
}

func (e Expr) eval(binding map[string]int64) (int64, error) {
	sum := int64(0)
	for _, t := range e.terms() {
		prod := t.coef
		for _, f := range t.mono {
			v, err := f.a.eval(binding)
			if err != nil {
				return 0, err
			}
			for range f.pow {
				if prod, err = mul64(prod, v); err != nil {
					return 0, err
				}
			}
		}
		var err error
		if sum, err = add64(sum, prod); err != nil {
			return 0, err
		}
	}
	return sum, nil
}

func (a *atom) eval(binding map[string]int64) (int64, error) {
	if !a.isFloor() {
		return binding[a.sym], nil
	}
	n, err := a.num.eval(binding)
	if err != nil {
		return 0, err
	}
	d, err := a.den.eval(binding)
	if err != nil {
		return 0, err
	}
	return floorDiv64(n, d)
}
