package dim

import (
	"math"
	"strconv"
)

// Interval is an inclusive integer range. Lo == math.MinInt64 means
// unbounded below and Hi == math.MaxInt64 unbounded above.
type Interval struct{ Lo, Hi int64 }

// Unbounded returns the interval of all integers.
func Unbounded() Interval { return Interval{math.MinInt64, math.MaxInt64} }

// String formats iv as "[1, 4096]", "[1, inf)" or "(-inf, inf)".
func (iv Interval) String() string {
	lo, hi := "["+strconv.FormatInt(iv.Lo, 10), strconv.FormatInt(iv.Hi, 10)+"]"
	if iv.Lo == math.MinInt64 {
		lo = "(-inf"
	}
	if iv.Hi == math.MaxInt64 {
		hi = "inf)"
	}
	return lo + ", " + hi
}

// ext is an extended integer: a finite int64 or an infinity.
type ext struct {
	v   int64
	inf int8 // -1, 0 or +1
}

var (
	negInf = ext{inf: -1}
	posInf = ext{inf: 1}
)

func (x ext) sign() int {
	switch {
	case x.inf != 0:
		return int(x.inf)
	case x.v > 0:
		return 1
	case x.v < 0:
		return -1
	}
	return 0
}

func cmpExt(x, y ext) int {
	if x.inf != y.inf {
		return int(x.inf) - int(y.inf)
	}
	switch {
	case x.inf != 0 || x.v == y.v:
		return 0
	case x.v < y.v:
		return -1
	}
	return 1
}

func minExt(x, y ext) ext {
	if cmpExt(x, y) <= 0 {
		return x
	}
	return y
}

func maxExt(x, y ext) ext {
	if cmpExt(x, y) >= 0 {
		return x
	}
	return y
}

// rounded turns the true value of an operation that overflowed int64, whose
// sign is sign, into a bound: rounding up (for an upper bound) a positive
// overflow gives +inf and a negative one MinInt64; rounding down is the
// mirror image. Bounds are only ever moved outward, which keeps Range sound.
func rounded(sign int, up bool) ext {
	switch {
	case sign > 0 && up:
		return posInf
	case sign > 0:
		return ext{v: math.MaxInt64}
	case up:
		return ext{v: math.MinInt64}
	}
	return negInf
}

// xiv is an interval of extended integers used while computing Range.
type xiv struct{ lo, hi ext }

func fromInterval(iv Interval) xiv {
	r := xiv{ext{v: iv.Lo}, ext{v: iv.Hi}}
	if iv.Lo == math.MinInt64 {
		r.lo = negInf
	}
	if iv.Hi == math.MaxInt64 {
		r.hi = posInf
	}
	return r
}

func (r xiv) interval() Interval {
	conv := func(x ext) int64 {
		switch x.inf {
		case -1:
			return math.MinInt64
		case 1:
			return math.MaxInt64
		}
		return x.v
	}
	return Interval{conv(r.lo), conv(r.hi)}
}

func constIv(v int64) xiv { return xiv{ext{v: v}, ext{v: v}} }

func addExt(x, y ext, up bool) ext {
	if x.inf != 0 || y.inf != 0 {
		if x.inf != 0 && y.inf != 0 && x.inf != y.inf {
			if up { // inf - inf: no bound either way
				return posInf
			}
			return negInf
		}
		if x.inf != 0 {
			return x
		}
		return y
	}
	s, err := add64(x.v, y.v)
	if err != nil {
		return rounded(x.sign(), up) // overflow: both have this sign
	}
	return ext{v: s}
}

func mulExt(x, y ext, up bool) ext {
	s := x.sign() * y.sign()
	if s == 0 {
		return ext{} // 0*inf is 0: an unbounded factor times exactly 0
	}
	if x.inf != 0 || y.inf != 0 {
		return ext{inf: int8(s)}
	}
	p, err := mul64(x.v, y.v)
	if err != nil {
		return rounded(s, up)
	}
	return ext{v: p}
}

// divExt is floor(x/y) for y != 0, with infinities read as limits.
func divExt(x, y ext, up bool) ext {
	switch {
	case x.inf != 0:
		return ext{inf: int8(x.sign() * y.sign())}
	case y.inf != 0:
		// floor(x/y) for |y| large is 0 when x/y >= 0, else -1.
		if x.sign()*y.sign() < 0 {
			return ext{v: -1}
		}
		return ext{}
	}
	q, err := floorDiv64(x.v, y.v)
	if err != nil {
		return rounded(1, up) // only MinInt64 / -1
	}
	return ext{v: q}
}

func addIv(a, b xiv) xiv {
	return xiv{addExt(a.lo, b.lo, false), addExt(a.hi, b.hi, true)}
}

// corners applies op to the four corners of a and b and returns the hull,
// which is exact for operations monotone in each argument on the box.
func corners(a, b xiv, op func(x, y ext, up bool) ext) xiv {
	lo := minExt(minExt(op(a.lo, b.lo, false), op(a.lo, b.hi, false)),
		minExt(op(a.hi, b.lo, false), op(a.hi, b.hi, false)))
	hi := maxExt(maxExt(op(a.lo, b.lo, true), op(a.lo, b.hi, true)),
		maxExt(op(a.hi, b.lo, true), op(a.hi, b.hi, true)))
	return xiv{lo, hi}
}

func mulIv(a, b xiv) xiv { return corners(a, b, mulExt) }

// floorDivIv bounds floor(a/b) over b's nonzero values: on each side of zero
// floor(x/y) is monotone in x and in y, so the corners give the extremes.
func floorDivIv(a, b xiv) xiv {
	one, minusOne := ext{v: 1}, ext{v: -1}
	var r *xiv
	join := func(part xiv) {
		q := corners(a, part, divExt)
		if r == nil {
			r = &q
		} else {
			r.lo, r.hi = minExt(r.lo, q.lo), maxExt(r.hi, q.hi)
		}
	}
	if cmpExt(b.hi, one) >= 0 {
		join(xiv{maxExt(b.lo, one), b.hi})
	}
	if cmpExt(b.lo, minusOne) <= 0 {
		join(xiv{b.lo, minExt(b.hi, minusOne)})
	}
	if r == nil { // the divisor is always 0: there are no values
		return xiv{negInf, posInf}
	}
	return *r
}

// Range bounds e for bindings of its symbols within syms. A symbol missing
// from syms ranges over [0, +inf), since symbols are dims. The bound is
// computed by interval arithmetic that saturates instead of overflowing: it
// is sound (every value e takes lies in it) but may be loose, since it does
// not see that two occurrences of a symbol are the same value (batch*seq-seq
// is not known to be >= 0 for batch >= 1). Remainders are recognized: s%2,
// which is s-2*(s/2), is in [0, 1].
func Range(e Expr, syms map[string]Interval) Interval {
	rg := ranger{syms, map[*atom]xiv{}}
	return rg.of(e, maxTerms).interval()
}

// ranger computes Range, remembering each floor atom's range so that the
// work stays polynomial however the remainders below are peeled.
type ranger struct {
	syms  map[string]Interval
	atoms map[*atom]xiv
}

// of bounds e; peel limits how many remainders it looks for.
func (rg ranger) of(e Expr, peel int) xiv {
	r := rg.terms(e)
	if peel == 0 {
		return r
	}
	// A term k*floor(R/d) with constant d > 0 and k = j*d is j*(R - R%d),
	// so e = e' - j*(R%d) with e' = e - k*floor(R/d) + j*R, and R%d is in
	// [0, d-1]. When e holds -R (as in R%d itself) e' cancels it. Both
	// bounds are sound, so keep their intersection.
	for _, t := range e.terms() {
		if len(t.mono) != 1 || t.mono[0].pow != 1 || !t.mono[0].a.isFloor() {
			continue
		}
		a := t.mono[0].a
		d, ok := a.den.Const()
		if !ok || t.coef%d != 0 {
			continue
		}
		j := t.coef / d
		e2, err := Sub(e, Expr{newPoly([]term{t}, 0, "")})
		if err == nil {
			var jr Expr
			if jr, err = scale(a.num, j); err == nil {
				e2, err = Add(e2, jr)
			}
		}
		if err != nil {
			continue
		}
		rem := mulIv(constIv(-j), xiv{ext{}, ext{v: d - 1}})
		r2 := addIv(rg.of(e2, peel-1), rem)
		r.lo, r.hi = maxExt(r.lo, r2.lo), minExt(r.hi, r2.hi)
		break
	}
	return r
}

func (rg ranger) terms(e Expr) xiv {
	sum := constIv(0)
	for _, t := range e.terms() {
		prod := constIv(t.coef)
		for _, f := range t.mono {
			v := rg.atom(f.a)
			pw := v
			for range f.pow - 1 {
				pw = mulIv(pw, v)
			}
			if f.pow%2 == 0 && pw.lo.sign() < 0 {
				pw.lo = ext{} // an even power is never negative
			}
			prod = mulIv(prod, pw)
		}
		sum = addIv(sum, prod)
	}
	return sum
}

func (rg ranger) atom(a *atom) xiv {
	if a.isFloor() {
		r, ok := rg.atoms[a]
		if !ok {
			r = floorDivIv(rg.of(a.num, maxTerms), rg.of(a.den, maxTerms))
			rg.atoms[a] = r
		}
		return r
	}
	if iv, ok := rg.syms[a.sym]; ok {
		return fromInterval(iv)
	}
	return xiv{ext{}, posInf}
}

// Relation is the answer to a question about all bindings of some symbols.
type Relation int

const (
	Unknown Relation = iota // could not be decided
	Always                  // holds for every binding
	Never                   // holds for no binding
)

func (r Relation) String() string {
	switch r {
	case Always:
		return "always"
	case Never:
		return "never"
	}
	return "unknown"
}

// EqualUnder says whether a == b for all bindings within syms (see Range for
// symbols missing from syms). Always when a and b have the same canonical
// form (or a-b can only be 0); Never when a-b is a nonzero constant or its
// range excludes 0; otherwise Unknown.
func EqualUnder(a, b Expr, syms map[string]Interval) Relation {
	d, err := Sub(a, b)
	if err != nil {
		return Unknown
	}
	r := Range(d, syms)
	switch {
	case r.Lo == 0 && r.Hi == 0:
		return Always
	case r.Lo > 0 || r.Hi < 0:
		return Never
	}
	return Unknown
}

// GreaterEqualUnder says whether a >= b for all bindings within syms: Always
// when the range of a-b is non-negative, Never when it is negative, else
// Unknown.
func GreaterEqualUnder(a, b Expr, syms map[string]Interval) Relation {
	d, err := Sub(a, b)
	if err != nil {
		return Unknown
	}
	r := Range(d, syms)
	switch {
	case r.Lo >= 0:
		return Always
	case r.Hi < 0:
		return Never
	}
	return Unknown
}
