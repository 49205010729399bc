package kir

import "math"

// Composite math built from the primitive operations, so that every
// language computes it with the same algorithm. Operands are used more
// than once: pass variables or constants, not large expressions.

func f(v float64) *Expr { return Float(v) }
func u(v uint32) *Expr  { return Uint(v) }

// NaN is a quiet f32 NaN.
func NaN() *Expr { return Float(math.NaN()) }

// Recip is 1/x.
func Recip(x *Expr) *Expr { return Div(f(1), x) }

// Rsqrt is 1/sqrt(x).
func Rsqrt(x *Expr) *Expr { return Div(f(1), Call("sqrt", x)) }

// Exp, Log and Sqrt are the f32 functions.
func Exp(x *Expr) *Expr  { return Call("exp", x) }
func Log(x *Expr) *Expr  { return Call("log", x) }
func Sqrt(x *Expr) *Expr { return Call("sqrt", x) }

// Abs of any numeric type. The most negative i32 is its own absolute
// value, as in Go: the negation is done on u32, since negating it as an
// int overflows (undefined in C; the i64 form has no u64 to use).
func Abs(x *Expr) *Expr {
	switch x.T {
	case F32:
		return Call("abs", x)
	case I32:
		return Select(Lt(x, Int(0)), Bitcast(I32, Neg(Bitcast(U32, x))), x)
	}
	return Select(Lt(x, Const(x.T, 0, 0)), Neg(x), x)
}

// Erf is the Taylor series x·Σ (-x²)^n·2/(√π·n!·(2n+1)) for |x| < 1
// (11 terms: truncation below 2e-9 relative, and accurate relative to
// erf near 0, where 7.1.26's absolute error of 1e-7 is all there is of
// erf(1e-7)), and Abramowitz and Stegun 7.1.26 beyond (|error| < 1.5e-7
// in exact arithmetic, under 2e-7 in f32 where erf > 0.84).
func Erf(x *Expr) *Expr {
	ax := Call("abs", x)
	t := Recip(Add(f(1), Mul(f(0.3275911), ax)))
	poly := Mul(t, Add(f(0.254829592), Mul(t, Add(f(-0.284496736), Mul(t, Add(f(1.421413741), Mul(t, Add(f(-1.453152027), Mul(t, f(1.061405429))))))))))
	y := Sub(f(1), Mul(poly, Exp(Neg(Mul(ax, ax)))))
	big := Select(Lt(x, f(0)), Neg(y), y)
	s := Mul(x, x)
	const terms = 11
	c := func(n int) float64 { // 2/√π · (-1)^n / (n!·(2n+1))
		v := 2 / math.Sqrt(math.Pi) / float64(2*n+1)
		for k := 2; k <= n; k++ {
			v /= float64(k)
		}
		if n%2 == 1 {
			v = -v
		}
		return v
	}
	series := f(c(terms - 1))
	for n := terms - 2; n >= 0; n-- {
		series = Add(f(c(n)), Mul(s, series))
	}
	return Select(Lt(ax, f(1)), Mul(x, series), big)
}

// Tanh as (1-e)/(1+e) with e = exp(-2|x|): no overflow for any x.
func Tanh(x *Expr) *Expr {
	e := Exp(Mul(f(-2), Call("abs", x)))
	y := Div(Sub(f(1), e), Add(f(1), e))
	return Select(Lt(x, f(0)), Neg(y), y)
}

// Sigmoid is 1/(1+exp(-x)).
func Sigmoid(x *Expr) *Expr { return Recip(Add(f(1), Exp(Neg(x)))) }

// Silu is x·sigmoid(x).
func Silu(x *Expr) *Expr { return Div(x, Add(f(1), Exp(Neg(x)))) }

// Gelu is the erf form, 0.5·x·(1+erf(x/√2)).
func Gelu(x *Expr) *Expr {
	return Mul(Mul(f(0.5), x), Add(f(1), Erf(Mul(x, f(1/math.Sqrt2)))))
}

// GeluTanh is the tanh approximation of GELU.
func GeluTanh(x *Expr) *Expr {
	inner := Mul(f(math.Sqrt(2/math.Pi)), Add(x, Mul(f(0.044715), Mul(x, Mul(x, x)))))
	return Mul(Mul(f(0.5), x), Add(f(1), Tanh(inner)))
}

// Mish is x·tanh(softplus(x)), softplus as max(x, 0) + log(1 + exp(-|x|)):
// no overflow for any x.
func Mish(x *Expr) *Expr {
	sp := Add(Max(x, f(0)), Log(Add(f(1), Exp(Neg(Call("abs", x))))))
	return Mul(x, Tanh(sp))
}

// Relu is max(x, 0) (NaN stays NaN for floats).
func Relu(x *Expr) *Expr {
	return Select(Gt(x, Const(x.T, 0, 0)), x, Select(IsNaN(x), x, Const(x.T, 0, 0)))
}

// IsNaN is false for integers.
func IsNaN(x *Expr) *Expr {
	if x.T != F32 {
		return False()
	}
	return Call("isnan", x)
}

// MaxNaN and MinNaN propagate NaN, as the CPU target does.
func MaxNaN(a, b *Expr) *Expr {
	if a.T != F32 {
		return Max(a, b)
	}
	return Select(Or(IsNaN(a), IsNaN(b)), NaN(), Max(a, b))
}

// MinNaN is MaxNaN's twin.
func MinNaN(a, b *Expr) *Expr {
	if a.T != F32 {
		return Min(a, b)
	}
	return Select(Or(IsNaN(a), IsNaN(b)), NaN(), Min(a, b))
}

// Sign is -1, 0 or 1; zeros and NaN keep themselves.
func Sign(x *Expr) *Expr {
	one, zero := Const(x.T, 1, 1), Const(x.T, 0, 0)
	return Select(Gt(x, zero), one, Select(Lt(x, zero), Neg(one), x))
}

// FloorMod is the floored remainder of floats (its sign follows b), as
// the CPU target computes it from math.Mod. The truncated remainder is
// fma(-b, trunc(a/b), a): when a/b rounds up to an integer the quotient is
// one too large, and only an unrounded product leaves a remainder of the
// right sign for the fix-up to add b back (a - b·q with a rounded product
// gives 0 for 0.5 mod 0.1, where the answer is 0.1). Exact up to the final
// rounding while |a/b| < 2^24 (and fma is fused, as in CUDA, Metal and
// most Vulkan devices). A finite a mod ±Inf is a, fixed up as usual.
func FloorMod(a, b *Expr) *Expr {
	r := Call("fma", Neg(b), Call("trunc", Div(a, b)), a)
	r = Select(And(Call("isinf", b), Not(Call("isinf", a))), a, r)
	return Select(And(Ne(r, f(0)), Ne(Lt(r, f(0)), Lt(b, f(0)))), Add(r, b), r)
}

// IntDiv truncates; a zero divisor gives 0 (defined, as on the CPU target).
// A signed division of the most negative value by -1 wraps to itself, as
// in Go, rather than overflowing (undefined in C, and a trap on some
// hardware): a divisor of -1 negates with a guard instead.
func IntDiv(a, b *Expr) *Expr {
	zero, one := Const(a.T, 0, 0), Const(a.T, 1, 0)
	if a.T != I32 && a.T != I64 {
		return Select(Eq(b, zero), zero, Div(a, Select(Eq(b, zero), one, b)))
	}
	m1 := Const(a.T, -1, 0)
	safe := Select(Or(Eq(b, zero), Eq(b, m1)), one, b)
	neg := Select(Eq(a, minInt(a.T)), a, Neg(a))
	return Select(Eq(b, zero), zero, Select(Eq(b, m1), neg, Div(a, safe)))
}

// minInt is the most negative value of a signed integer type.
func minInt(t Type) *Expr {
	if t == I64 {
		return Const(I64, math.MinInt64, 0)
	}
	return Const(t, math.MinInt32, 0)
}

// IntFloorMod is the floored remainder of integers; a zero divisor gives 0.
// Signed divisors of -1 (remainder 0) are divided as 1, so that the
// remainder never computes the overflowing quotient of the most negative
// value by -1.
func IntFloorMod(a, b *Expr) *Expr {
	zero, one := Const(a.T, 0, 0), Const(a.T, 1, 0)
	bad := Eq(b, zero)
	if a.T == I32 || a.T == I64 {
		bad = Or(bad, Eq(b, Const(a.T, -1, 0)))
	}
	safe := Select(bad, one, b)
	r := Rem(a, safe)
	fixed := Select(And(Ne(r, zero), Ne(Lt(r, zero), Lt(b, zero))), Add(r, b), r)
	return Select(Eq(b, zero), zero, fixed)
}

// Pow follows C's pow (and Go's math.Pow) in every special case: negative
// bases with integral exponents keep the sign of odd powers, 0^y is ±0 or
// ±Inf by y's sign and parity, x^0 and 1^y are 1 (even for NaN), (-1)^±Inf
// is 1, other NaN operands give NaN, and exponents of magnitude 2^24 and
// more (±Inf too) are even integers. Otherwise it is exp2(y·log2|x|),
// whose relative error is |y·ln 2| times log2's absolute error.
func Pow(a, b *Expr) *Expr {
	mag := Call("exp2", Mul(b, Call("log2", Call("abs", a))))
	integral := Eq(Call("floor", b), b)
	odd := And(And(integral, Lt(Call("abs", b), f(1<<24))), Ne(Sub(b, Mul(f(2), Call("floor", Mul(b, f(0.5))))), f(0)))
	neg := Select(Or(integral, Call("isinf", a)), Select(odd, Neg(mag), mag), NaN())
	r := Select(Lt(a, f(0)), neg, mag)
	zero := Select(Lt(b, f(0)), Select(odd, Recip(a), f(math.Inf(1))), Select(Gt(b, f(0)), Select(odd, a, f(0)), b))
	r = Select(Eq(a, f(0)), zero, r)
	// NaN explicitly: log2 and exp2 need not propagate it (llvmpipe's
	// log2(NaN) is finite).
	r = Select(Or(Call("isnan", a), Call("isnan", b)), NaN(), r)
	r = Select(Or(Eq(a, f(1)), And(Eq(a, f(-1)), Call("isinf", b))), f(1), r)
	return Select(Eq(b, f(0)), f(1), r)
}

// Wrap narrows an i32 to the width of storage type t (i8, i16, u8) the way
// a C cast does, so later arithmetic sees the narrowed value. The left
// shift is done on u32: shifting a negative int left is undefined in C++
// before C++20 (CUDA, MSL).
func Wrap(x *Expr, t Type) *Expr {
	switch t {
	case I8:
		return Shr(Bitcast(I32, Shl(Bitcast(U32, x), u(24))), Int(24))
	case I16:
		return Shr(Bitcast(I32, Shl(Bitcast(U32, x), u(16))), Int(16))
	case U8:
		return BitAnd(x, Int(255))
	}
	return x
}

// FloatToI64 truncates toward zero, saturating, with NaN as 0.
func FloatToI64(x *Expr) *Expr {
	return Select(IsNaN(x), Const(I64, 0, 0),
		Select(Ge(x, f(9.223372036854775807e18)), Const(I64, math.MaxInt64, 0),
			Select(Le(x, f(-9.223372036854775808e18)), Const(I64, math.MinInt64, 0), Convert(I64, x))))
}

// F16ToF32 widens half-float bits (in a u32) to f32.
func F16ToF32(h *Expr) *Expr {
	sign := Shl(BitAnd(h, u(0x8000)), u(16))
	exp := BitAnd(Shr(h, u(10)), u(0x1f))
	mant := BitAnd(h, u(0x3ff))
	inf := Bitcast(F32, BitOr(BitOr(sign, u(0x7f800000)), Shl(mant, u(13))))
	sub := Mul(Convert(F32, mant), f(1.0/(1<<24)))
	sub = Select(Ne(sign, u(0)), Neg(sub), sub)
	normal := Bitcast(F32, BitOr(BitOr(sign, Shl(Add(exp, u(112)), u(23))), Shl(mant, u(13))))
	return Select(Eq(exp, u(0x1f)), inf, Select(Eq(exp, u(0)), sub, normal))
}

// F32ToF16 rounds to the nearest half float, ties to even, and returns its
// bits in a u32 (the CPU target's tensor.F32ToF16, step for step).
func F32ToF16(x *Expr) *Expr {
	b := Bitcast(U32, x)
	sign := BitAnd(Shr(b, u(16)), u(0x8000))
	e := BitAnd(Shr(b, u(23)), u(0xff))
	exp := Sub(Bitcast(I32, e), Int(112))
	mant := BitAnd(b, u(0x7fffff))
	special := Select(Ne(mant, u(0)), BitOr(sign, u(0x7e00)), BitOr(sign, u(0x7c00)))
	// Subnormal halves: shift the implicit-one mantissa right by 14-exp.
	shift := Bitcast(U32, Min(Max(Sub(Int(14), exp), Int(1)), Int(31)))
	m := BitOr(mant, u(0x800000))
	half := Shr(m, shift)
	rem := BitAnd(m, Sub(Shl(u(1), shift), u(1)))
	mid := Shl(u(1), Sub(shift, u(1)))
	up := Or(Gt(rem, mid), And(Eq(rem, mid), Eq(BitAnd(half, u(1)), u(1))))
	sub := Select(Lt(exp, Int(-10)), sign, BitOr(sign, Add(half, Select(up, u(1), u(0)))))
	h := BitOr(Shl(Bitcast(U32, Max(exp, Int(0))), u(10)), Shr(mant, u(13)))
	nrem := BitAnd(mant, u(0x1fff))
	nup := Or(Gt(nrem, u(0x1000)), And(Eq(nrem, u(0x1000)), Eq(BitAnd(h, u(1)), u(1))))
	normal := BitOr(sign, Add(h, Select(nup, u(1), u(0))))
	return Select(Eq(e, u(0xff)), special,
		Select(Ge(exp, Int(0x1f)), BitOr(sign, u(0x7c00)),
			Select(Le(exp, Int(0)), sub, normal)))
}

// BF16ToF32 widens bfloat16 bits (in a u32).
func BF16ToF32(h *Expr) *Expr { return Bitcast(F32, Shl(h, u(16))) }

// F32ToBF16 rounds to the nearest bfloat16, ties to even; NaN stays NaN.
func F32ToBF16(x *Expr) *Expr {
	b := Bitcast(U32, x)
	nan := BitOr(Shr(b, u(16)), u(0x40))
	r := Shr(Add(Add(b, u(0x7fff)), BitAnd(Shr(b, u(16)), u(1))), u(16))
	return Select(Gt(BitAnd(b, u(0x7fffffff)), u(0x7f800000)), nan, r)
}
