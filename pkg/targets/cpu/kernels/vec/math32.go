package vec

import (
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
)

// Scalar float32 math for elementwise code. Every function computes in
// float64 and rounds once, so results are within about one ulp of the float64
// function rounded to float32 (the tests check 2 ulp over a dense sample).
// Vectorized forms come with the assembly micro-kernels.

const (
	log2e   = 1.4426950408889634
	ln2hi   = 6.93147180369123816490e-01 // high bits of ln 2, exact times small n
	ln2lo   = 1.90821492927058770002e-10
	sqrt1_2 = 0.70710678118654752440
	// sqrt(2/pi), the GELU tanh-form constant.
	sqrt2pi = 0.79788456080286535588
	// roundMagic: adding it rounds a float64 of magnitude < 2^51 to an integer.
	roundMagic = 0x1.8p52
)

// exp64 returns e^x to about 1e-8 relative error (plenty for float32
// results) for |x| <= 700; callers clamp. Range reduction x = n·ln2 + r with
// |r| <= ln2/2, a degree-7 Taylor polynomial for e^r (truncation error
// r^8/8! < 6e-9), and 2^n assembled in the exponent bits.
func exp64(x float64) float64 {
	n := x*log2e + roundMagic
	n -= roundMagic
	r := x - n*ln2hi - n*ln2lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return p * math.Float64frombits(uint64(int64(n)+1023)<<52)
}

// clampExp keeps exp64's argument where 2^n is a normal float64; beyond
// ±200 every float32 result is already 0 or +Inf.
func clampExp(x float64) float64 {
	if x > 200 {
		return 200
	}
	if x < -200 {
		return -200
	}
	return x
}

// Exp32 returns e^x. NaN gives NaN, +Inf gives +Inf, -Inf gives 0.
func Exp32(x float32) float32 {
	if x != x {
		return x
	}
	return float32(exp64(clampExp(float64(x))))
}

// sigmoid64 is 1/(1+e^-x), accurate in both tails (no cancellation).
// Below -200 it is 0 (under 1e-87, zero in float32), so x·sigmoid(x) at
// -Inf is NaN, as PyTorch's silu gives.
func sigmoid64(x float64) float64 {
	if x < -200 {
		return 0
	}
	return 1 / (1 + exp64(clampExp(-x)))
}

// Sigmoid32 returns 1/(1+e^-x).
func Sigmoid32(x float32) float32 {
	if x != x {
		return x
	}
	return float32(sigmoid64(float64(x)))
}

// Silu32 returns x·sigmoid(x).
func Silu32(x float32) float32 {
	if x != x {
		return x
	}
	xd := float64(x)
	return float32(xd * sigmoid64(xd))
}

// Tanh32 returns tanh(x).
func Tanh32(x float32) float32 { return float32(math.Tanh(float64(x))) }

// Erf32 returns the error function of x.
func Erf32(x float32) float32 { return float32(math.Erf(float64(x))) }

// gelu32 returns 0.5·x·(1+erf(x/√2)), computed as 0.5·x·erfc(-x/√2) so the
// negative tail does not cancel to zero.
func gelu32(x float32) float32 {
	if x != x {
		return x
	}
	xd := float64(x)
	return float32(0.5 * xd * erfc64(-xd*sqrt1_2))
}

// erfc64 returns erfc(z) with relative error below 1.2e-7 for every z (the
// Chebyshev-fitted form t·exp(-z²+P(t)), t = 1/(1+z/2), of Numerical
// Recipes' erfcc): a float32 result within about 2 ulp, several times
// faster than math.Erfc. Used where the result is a float32.
func erfc64(z float64) float64 {
	a := math.Abs(z)
	t := 1 / (1 + 0.5*a)
	p := -a*a - 1.26551223 + t*(1.00002368+t*(0.37409196+t*(0.09678418+t*(-0.18628806+
		t*(0.27886807+t*(-1.13520398+t*(1.48851587+t*(-0.82215223+t*0.17087277))))))))
	r := t * exp64(clampExp(p))
	if z < 0 {
		return 2 - r
	}
	return r
}

// GeluTanh32 returns 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³))), computed as
// x·sigmoid(2u) (the same function, without the cancellation of 1+tanh).
func GeluTanh32(x float32) float32 {
	if x != x {
		return x
	}
	xd := float64(x)
	u := sqrt2pi * (xd + 0.044715*xd*xd*xd)
	return float32(xd * sigmoid64(2*u))
}

// Activation selects the function an Epilogue applies: lir's numbering,
// the one the artifact stores. ActGelu is the erf form; ActGeluTanh the
// tanh approximation; ActLeakyRelu uses Epilogue.Alpha as the negative
// slope; ActClamp clamps to [Epilogue.Min, Epilogue.Max] (use ±Inf for one
// side). NaN passes through every activation unchanged.
type Activation = lir.Activation

// The activations.
const (
	ActNone      = lir.ActNone
	ActRelu      = lir.ActRelu
	ActGelu      = lir.ActGelu
	ActGeluTanh  = lir.ActGeluTanh
	ActSilu      = lir.ActSilu
	ActSigmoid   = lir.ActSigmoid
	ActTanh      = lir.ActTanh
	ActLeakyRelu = lir.ActLeakyRelu
	ActClamp     = lir.ActClamp
)

// Activate applies act to every element of x in place.
func Activate(x []float32, act Activation, alpha, lo, hi float32) {
	switch act {
	case ActNone:
	case ActRelu:
		for i, v := range x {
			if v < 0 {
				x[i] = 0
			}
		}
	case ActGelu:
		geluVec(x)
	case ActGeluTanh:
		for i, v := range x {
			x[i] = GeluTanh32(v)
		}
	case ActSilu:
		for i, v := range x {
			x[i] = Silu32(v)
		}
	case ActSigmoid:
		for i, v := range x {
			x[i] = Sigmoid32(v)
		}
	case ActTanh:
		for i, v := range x {
			x[i] = Tanh32(v)
		}
	case ActLeakyRelu:
		for i, v := range x {
			if v < 0 {
				x[i] = v * alpha
			}
		}
	case ActClamp:
		for i, v := range x {
			if v < lo {
				x[i] = lo
			} else if v > hi {
				x[i] = hi
			}
		}
	default:
		panic("kernels: unknown activation " + act.String())
	}
}

// ExpNaN is e^d for d <= 0 (or NaN, which it returns).
func ExpNaN(d float64) float64 {
	if d != d {
		return d
	}
	return exp64(clampExp(d))
}
