package dim

// Builder rebuilds an expression in another representation (HIR
// statements that compute a dim at run time, generated code): Build
// hands it the expression's canonical structure, a sum of products of
// symbols and floor divisions with integer coefficients.
type Builder[T any] interface {
	Const(v int64) T
	Sym(name string) T
	Add(a, b T) T
	Mul(a, b T) T
	// FloorDiv is floor(num/den), rounding toward negative infinity.
	FloorDiv(num, den T) T
}

// Build rebuilds e with b, term by term in canonical order; each floor
// division's operands are built first. The zero Expr is b.Const(0).
func Build[T any](e Expr, b Builder[T]) T {
	ts := e.terms()
	if len(ts) == 0 {
		return b.Const(0)
	}
	var sum T
	for i, t := range ts {
		var prod T
		have := t.coef != 1 || len(t.mono) == 0
		if have {
			prod = b.Const(t.coef)
		}
		for _, f := range t.mono {
			var x T
			if f.a.isFloor() {
				x = b.FloorDiv(Build(f.a.num, b), Build(f.a.den, b))
			} else {
				x = b.Sym(f.a.sym)
			}
			for range f.pow {
				if have {
					prod = b.Mul(prod, x)
				} else {
					prod, have = x, true
				}
			}
		}
		if i == 0 {
			sum = prod
		} else {
			sum = b.Add(sum, prod)
		}
	}
	return sum
}
