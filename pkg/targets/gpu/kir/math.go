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

// Abs of any numeric type.
func Abs(x *Expr) *Expr {
	if x.T == F32 {
		return Call("abs", x)
	}
	return Select(Lt(x, Const(x.T, 0, 0)), Neg(x), x)
}

// Erf by Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7).
func Erf(x *Expr) *Expr {
	ax := Call("abs", x)
	t := Recip(Add(f(1), Mul(f(0.3275911), ax)))
	poly := Mul(t, Add(f(0.254829592), Mul(t, Add(f(-0.284496736), Mul(t, Add(f(1.421413741), Mul(t, Add(f(-1.453152027), Mul(t, f(1.061405429))))))))))
	y := Sub(f(1), Mul(poly, Exp(Neg(Mul(ax, ax)))))
	return Select(Lt(x, f(0)), Neg(y), y)
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

// FloorMod is the floored remainder of floats (its sign follows b).
func FloorMod(a, b *Expr) *Expr {
	r := Sub(a, Mul(b, Call("trunc", Div(a, b))))
	return Select(And(Ne(r, f(0)), Ne(Lt(r, f(0)), Lt(b, f(0)))), Add(r, b), r)
}

// IntDiv truncates; a zero divisor gives 0 (defined, as on the CPU target).
func IntDiv(a, b *Expr) *Expr {
	zero, one := Const(a.T, 0, 0), Const(a.T, 1, 0)
	return Select(Eq(b, zero), zero, Div(a, Select(Eq(b, zero), one, b)))
}

// IntFloorMod is the floored remainder of integers; a zero divisor gives 0.
func IntFloorMod(a, b *Expr) *Expr {
	zero, one := Const(a.T, 0, 0), Const(a.T, 1, 0)
	safe := Select(Eq(b, zero), one, b)
	r := Rem(a, safe)
	fixed := Select(And(Ne(r, zero), Ne(Lt(r, zero), Lt(b, zero))), Add(r, b), r)
	return Select(Eq(b, zero), zero, fixed)
}

// Pow follows C's pow on the cases models meet: negative bases with
// integral exponents keep their sign, 0^negative is +Inf, x^0 is 1.
func Pow(a, b *Expr) *Expr {
	mag := Call("exp2", Mul(b, Call("log2", Call("abs", a))))
	integral := Eq(Call("floor", b), b)
	odd := And(integral, Ne(Sub(b, Mul(f(2), Call("floor", Mul(b, f(0.5))))), f(0)))
	neg := Select(integral, Select(odd, Neg(mag), mag), NaN())
	r := Select(Lt(a, f(0)), neg, mag)
	zero := Select(Lt(b, f(0)), f(math.Inf(1)), Select(odd, a, f(0)))
	r = Select(Eq(a, f(0)), zero, r)
	return Select(Eq(b, f(0)), f(1), r)
}

// Wrap narrows an i32 to the width of storage type t (i8, i16, u8) the way
// a C cast does, so later arithmetic sees the narrowed value.
func Wrap(x *Expr, t Type) *Expr {
	switch t {
	case I8:
		return Shr(Shl(x, Int(24)), Int(24))
	case I16:
		return Shr(Shl(x, Int(16)), Int(16))
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
