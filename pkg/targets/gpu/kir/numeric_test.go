package kir

// Numeric cases: elementwise kernels (see mapKernel) with their inputs and
// a check of the output against a Go reference. The composite builders of
// math.go are checked against the CPU target's definitions (tensor's half
// conversions bit for bit, math.Pow, Go's integer semantics, ...), and the
// primitive operations against the C semantics the IR promises. Each case
// runs on the Vulkan device (vulkan_test.go, the GLSL print) and as C++ on
// the host under UBSan (host_test.go, the MSL print).

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// backend describes where a case ran, for checks whose tolerance depends
// on it.
type backend struct {
	name     string
	fusedFMA bool // fma rounds once
}

// A mapCase is one elementwise kernel, its inputs (raw element bits, one
// slice per input parameter) and a check of its output's raw bits.
type mapCase struct {
	name   string
	in     []Type
	out    Type
	f      func(a []*Expr) *Expr
	inputs [][]uint64
	check  func(t *testing.T, be backend, got []uint64)
}

// kernel builds the case's kernel.
func (c *mapCase) kernel() (*Kernel, [3]int) {
	return mapKernel(c.name, len(c.inputs[0]), c.in, c.out, c.f)
}

func f32s(bits []uint64) []float32 {
	r := make([]float32, len(bits))
	for i, b := range bits {
		r[i] = math.Float32frombits(uint32(b))
	}
	return r
}

// unaryCase is an f32 -> f32 case.
func unaryCase(name string, xs []float32, f func(x *Expr) *Expr, check func(t *testing.T, be backend, got []float32)) mapCase {
	return mapCase{name, []Type{F32}, F32, func(a []*Expr) *Expr { return f(a[0]) }, [][]uint64{f32Bits(xs)},
		func(t *testing.T, be backend, got []uint64) { check(t, be, f32s(got)) }}
}

// binaryCase is an f32 x f32 -> f32 case.
func binaryCase(name string, xs, ys []float32, f func(x, y *Expr) *Expr, check func(t *testing.T, be backend, got []float32)) mapCase {
	return mapCase{name, []Type{F32, F32}, F32, func(a []*Expr) *Expr { return f(a[0], a[1]) }, [][]uint64{f32Bits(xs), f32Bits(ys)},
		func(t *testing.T, be backend, got []uint64) { check(t, be, f32s(got)) }}
}

// intCase is a case on i32 or i64 operands, compared exactly with ref.
func intCase(name string, typ Type, args [][]int64, f func(a []*Expr) *Expr, ref func(a []int64) int64) mapCase {
	in := make([]Type, len(args))
	inputs := make([][]uint64, len(args))
	for j := range args {
		in[j], inputs[j] = typ, i64Bits(args[j])
	}
	return mapCase{name, in, typ, f, inputs, func(t *testing.T, be backend, got []uint64) {
		bad := 0
		for i := range got {
			a := make([]int64, len(args))
			for j := range args {
				a[j] = args[j][i]
			}
			g := int64(got[i])
			if typ == I32 {
				g = int64(int32(got[i]))
			}
			if want := ref(a); g != want {
				if bad++; bad <= 10 {
					t.Errorf("%s %s%v = %d, want %d", typ, name, a, g, want)
				}
			}
		}
	}}
}

// pairs is the cross product of xs and ys, as two slices.
func pairs[T any](xs, ys []T) ([]T, []T) {
	var a, b []T
	for _, x := range xs {
		for _, y := range ys {
			a = append(a, x)
			b = append(b, y)
		}
	}
	return a, b
}

func bitsOf(x float32) uint32 { return math.Float32bits(x) }

// sameF32 is bit equality, except that any NaN equals any NaN.
func sameF32(a, b float32) bool {
	if a != a && b != b {
		return true
	}
	return bitsOf(a) == bitsOf(b)
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

func ulp32(x float32) float64 {
	x = float32(math.Abs(float64(x)))
	return float64(math.Nextafter32(x, float32(math.Inf(1))) - x)
}

var (
	inf    = float32(math.Inf(1))
	nan32  = float32(math.NaN())
	negZ32 = float32(math.Copysign(0, -1))
)

// halfSweep is the f32 inputs for the half-float roundings: every 2^16-th
// bit pattern (all exponents, both signs, NaNs and infinities), then for
// every finite value of the narrow type the exact midpoint to its
// neighbour away from zero and the f32 values one ulp either side of it
// (ties to even, the carries into the exponent, overflow to Inf at 65520
// for f16, the subnormal halves), then f32 subnormals and NaN payloads.
func halfSweep(mid func(h uint16) (uint32, bool)) []float32 {
	var xs []float32
	for i := range uint32(1 << 16) {
		xs = append(xs, math.Float32frombits(i<<16))
	}
	for h := range uint32(1 << 16) {
		m, ok := mid(uint16(h))
		if !ok {
			continue
		}
		for _, b := range []uint32{m - 1, m, m + 1} {
			xs = append(xs, math.Float32frombits(b))
		}
	}
	for _, b := range []uint32{1, 2, 0x7fffff, 0x400000, 0x80000001, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x7f800001, 0xffc00001, 0x7fffffff} {
		xs = append(xs, math.Float32frombits(b))
	}
	return xs
}

// f16Mid is the f32 midpoint between half h and the next half away from
// zero, for finite h.
func f16Mid(h uint16) (uint32, bool) {
	exp, mant, sign := h>>10&0x1f, uint32(h&0x3ff), uint32(h&0x8000)<<16
	switch exp {
	case 0x1f:
		return 0, false
	case 0: // (2·mant+1)·2^-25, exact in f32
		return sign | math.Float32bits(float32(2*mant+1)*0x1p-25), true
	}
	return math.Float32bits(tensor.F16ToF32(h)) + 0x1000, true
}

// bf16Mid is the f32 midpoint between bfloat16 h and its neighbour away
// from zero, for finite h.
func bf16Mid(h uint16) (uint32, bool) {
	if h&0x7f80 == 0x7f80 {
		return 0, false
	}
	return uint32(h)<<16 | 0x8000, true
}

func allHalves() []uint64 {
	hs := make([]uint64, 1<<16)
	for i := range hs {
		hs[i] = uint64(i)
	}
	return hs
}

// halfCases check the half-float conversions bit for bit against tensor's.
func halfCases() []mapCase {
	narrow := func(name string, typ Type, mid func(uint16) (uint32, bool), f func(*Expr) *Expr, ref func(float32) uint16) mapCase {
		xs := halfSweep(mid)
		return mapCase{name, []Type{F32}, typ, func(a []*Expr) *Expr { return f(a[0]) }, [][]uint64{f32Bits(xs)},
			func(t *testing.T, be backend, got []uint64) {
				bad := 0
				for i, x := range xs {
					if want := ref(x); uint16(got[i]) != want {
						if bad++; bad <= 10 {
							t.Errorf("%s(%g = %#08x) = %#04x, want %#04x", name, x, bitsOf(x), got[i], want)
						}
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d wrong", bad, len(xs))
				}
			}}
	}
	widen := func(name string, typ Type, f func(*Expr) *Expr, ref func(uint16) float32) mapCase {
		return mapCase{name, []Type{typ}, F32, func(a []*Expr) *Expr { return f(a[0]) }, [][]uint64{allHalves()},
			func(t *testing.T, be backend, got []uint64) {
				bad := 0
				for h := range got {
					// Bit for bit, NaN payloads included: tensor defines them.
					if want := math.Float32bits(ref(uint16(h))); uint32(got[h]) != want {
						if bad++; bad <= 10 {
							t.Errorf("%s(%#04x) = %#08x, want %#08x", name, h, got[h], want)
						}
					}
				}
				if bad > 0 {
					t.Errorf("%d of 65536 wrong", bad)
				}
			}}
	}
	return []mapCase{
		narrow("f32tof16", F16, f16Mid, F32ToF16, tensor.F32ToF16),
		widen("f16tof32", F16, F16ToF32, tensor.F16ToF32),
		narrow("f32tobf16", BF16, bf16Mid, F32ToBF16, tensor.F32ToBF16),
		widen("bf16tof32", BF16, BF16ToF32, tensor.BF16ToF32),
	}
}

// activationInputs: a dense grid over [-12, 12], magnitudes from 1e-30 to
// 3e38 of both signs, the points where exp over- and underflows, and the
// special values.
func activationInputs() []float32 {
	var xs []float32
	for i := -12000; i <= 12000; i++ {
		xs = append(xs, float32(i)/1000)
	}
	for e := -30.0; e <= 38.5; e += 0.25 {
		v := float32(math.Pow(10, e))
		xs = append(xs, v, -v)
	}
	for _, v := range []float64{0, 1e-40, 1e-45, 0.5, 1, 2, 3.7, 5, 8, 9.2, 15, 20, 40, 87, 88, 88.7, 89, 100, 1e4, 1e13, math.MaxFloat32, math.Inf(1)} {
		xs = append(xs, float32(v), -float32(v))
	}
	return append(xs, nan32)
}

func sigmoid64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// activationCases compare the f32 builders with float64 references. The
// tolerances are error bounds of the algorithms in f32:
//
//   - Erf: below |x| = 1 a Taylor series, accurate to a few ulp; above,
//     Abramowitz & Stegun 7.1.26, within 1.5e-7 of erf, plus the rounding
//     of 1 - poly·exp (half an ulp of 1, 6e-8): 2e-7 absolute (the worst
//     seen on llvmpipe is 1.75e-7, at 1.405).
//   - Tanh: (1-e)/(1+e) with e = exp(-2|x|) cancels in 1-e, so its error is
//     absolute, a few ulp of 1: 4e-7.
//   - Sigmoid and Silu: 1/(1+exp(-x)) has no cancellation, so exp's
//     relative error carries over: Vulkan allows exp 3+2|x| ulp, and the
//     division and addition add one: (4+2|x|)·2^-23 relative. Plus 1e-35
//     absolute: below x = -88.7 exp(-x) overflows and the result is 0
//     where x·sigmoid(x) is still about 1e-37.
//   - Gelu, GeluTanh: 0.5·x·(1+f) carries f's absolute error times 0.5|x|,
//     plus a few ulp of the result.
func activationCases() []mapCase {
	xs := activationInputs()
	expTol := func(x, ref float64) float64 { return (4+2*math.Abs(x))*0x1p-23*math.Abs(ref) + 1e-35 }
	var cases []mapCase
	for _, c := range []struct {
		name string
		f    func(x *Expr) *Expr
		ref  func(x float64) float64
		tol  func(x, ref float64) float64
	}{
		{"erf", Erf, math.Erf, func(x, ref float64) float64 { return 2e-7 }},
		{"tanh", Tanh, math.Tanh, func(x, ref float64) float64 { return 4e-7 }},
		{"sigmoid", Sigmoid, sigmoid64, expTol},
		{"silu", Silu, func(x float64) float64 { return x * sigmoid64(x) }, expTol},
		{"gelu", Gelu, func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) },
			func(x, ref float64) float64 { return 0.5*math.Abs(x)*2e-7 + 1e-6*math.Abs(ref) + 1e-37 }},
		{"gelutanh", GeluTanh, func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}, func(x, ref float64) float64 { return 0.5*math.Abs(x)*4e-7 + 1e-6*math.Abs(ref) + 1e-37 }},
	} {
		cases = append(cases, unaryCase(c.name, xs, c.f, func(t *testing.T, be backend, got []float32) {
			bad := 0
			worst, worstX := 0.0, float32(0)
			for i, x := range xs {
				ref, g := c.ref(float64(x)), float64(got[i])
				var ok bool
				switch {
				case math.IsNaN(ref): // NaN in, NaN out
					ok = math.IsNaN(g)
				case math.IsInf(ref, 0) || math.IsInf(g, 0):
					ok = g == float64(float32(ref))
				case g == ref:
					ok = true
				default:
					err, tol := math.Abs(g-ref), c.tol(float64(x), ref)
					ok = err <= tol
					if err/tol > worst {
						worst, worstX = err/tol, x
					}
				}
				if !ok {
					if bad++; bad <= 10 {
						t.Errorf("%s(%g) = %g, want %g (error %.3g, tolerance %.3g)", c.name, x, g, ref, math.Abs(g-ref), c.tol(float64(x), ref))
					}
				}
			}
			t.Logf("%s %s: worst error %.2f of the tolerance, at %g", be.name, c.name, worst, worstX)
			if bad > 0 {
				t.Errorf("%d of %d out of tolerance", bad, len(xs))
			}
		}))
	}
	return cases
}

// powTol is Pow's relative tolerance: exp2(y·log2|x|) rounds y·log2|x|
// (up to 150 in magnitude for a finite f32 result: half an ulp of 128 is
// 4e-6, times ln 2) and inherits log2's error times |y|·ln 2; Vulkan allows
// log2 an absolute error of 2^-21 for x in [0.5, 2] (llvmpipe's is about
// 5e-8 near 1), which for 0.9999^1000 is a relative 3e-5.
func powTol(x, y float32) float64 {
	tol := 1e-5
	if ax := math.Abs(float64(x)); ax >= 0.5 && ax <= 2 {
		tol += math.Abs(float64(y)) * math.Ln2 * 0x1p-21
	}
	return tol
}

func powCase() mapCase {
	bases := []float32{0, negZ32, 1, -1, 2, -2, 3, -3, 0.5, -0.5, 0.1, 10, -10, 1e-3, 7.5, -7.5,
		1.0001, 0.9999, 1e10, 1e-10, -1e-10, inf, -inf, nan32}
	exps := []float32{0, negZ32, 1, -1, 2, -2, 3, -3, 0.5, -0.5, 2.5, -2.5, 7, -7, 10, -10, 31, -31,
		0.333, 1e3, -1e3, 1 << 24, 1<<24 + 2, 1e30, -1e30, inf, -inf, nan32}
	a, b := pairs(bases, exps)
	return binaryCase("pow", a, b, Pow, func(t *testing.T, be backend, got []float32) {
		bad := 0
		for i := range a {
			ref := float32(math.Pow(float64(a[i]), float64(b[i])))
			g := got[i]
			// The special cases exactly (signed zeros, infinities,
			// NaN, exact powers of 1 and 0); finite nonzero results with
			// the right sign, within powTol relative. Results below the
			// normal range may flush.
			ok := sameF32(g, ref)
			if !ok && !math.IsInf(float64(ref), 0) && ref != 0 && ref == ref {
				ok = math.Signbit(float64(g)) == math.Signbit(float64(ref)) &&
					math.Abs(float64(g)-float64(ref)) <= powTol(a[i], b[i])*math.Abs(float64(ref))+1e-37
			}
			if !ok {
				if bad++; bad <= 20 {
					t.Errorf("Pow(%g, %g) = %g, want %g", a[i], b[i], g, ref)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d wrong", bad, len(a))
		}
	})
}

// floorMod64 is the CPU target's floored remainder.
func floorMod64(a, b float64) float64 {
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

func floorModCases() []mapCase {
	as := []float32{0, negZ32, 0.5, -0.5, 1, -1, 2.75, -2.75, 3, -3, 5.25, -5.25, 7.5, -7.5, 100.1, -100.1,
		1000.3, -1000.3, 1e-3, 12345.678, -12345.678, 6, -6, 0.9, -0.9}
	bs := []float32{1, -1, 2, -2, 0.3, -0.3, 3, -3, 0.7, -0.7, 7, -7, 1e-2, 0.1, -0.1}
	a, b := pairs(as, bs)
	// Inputs a hair either side of a multiple of b, where a floored
	// remainder jumps between about 0 and about b.
	for _, bv := range []float32{0.1, 0.3, 0.7, 3, 7, -0.3, -3} {
		for _, k := range []float32{1, 3, 10, 33, 100, 1000, -1, -10, -100, -1000} {
			m := k * bv
			for _, x := range []float32{m, math.Nextafter32(m, inf), math.Nextafter32(m, -inf)} {
				a, b = append(a, x), append(b, bv)
			}
		}
	}
	main := binaryCase("floormod", a, b, FloorMod, func(t *testing.T, be backend, got []float32) {
		bad, jumps := 0, 0
		for i := range a {
			ref, g := floorMod64(float64(a[i]), float64(b[i])), float64(got[i])
			// The remainder of f32 operands is exact; the kernel rounds
			// once (adding b back): allow an ulp of |a| and |b|.
			tol := ulp32(a[i]) + ulp32(b[i])
			if math.Abs(g-ref) <= tol {
				continue
			}
			// Without a fused fma (llvmpipe's is a multiply and an add)
			// the product b·q rounds, and next to a multiple of b the
			// result may be the other end of the jump: about 0 for about
			// b, or b for 0.
			nearJump := math.Abs(ref) <= ulp32(a[i]) || math.Abs(math.Abs(ref)-math.Abs(float64(b[i]))) <= ulp32(a[i])
			if !be.fusedFMA && nearJump && math.Abs(math.Abs(g-ref)-math.Abs(float64(b[i]))) <= tol+ulp32(a[i]) {
				jumps++
				continue
			}
			if bad++; bad <= 20 {
				t.Errorf("FloorMod(%.9g, %.9g) = %.9g, want %.9g (fused fma: %v)", a[i], b[i], g, ref, be.fusedFMA)
			}
		}
		if jumps > 0 {
			t.Logf("%s: fma is not fused: %d results next to a multiple of b are off by b", be.name, jumps)
		}
		if bad > 0 {
			t.Errorf("%d of %d wrong", bad, len(a))
		}
	})
	// Zero divisors, infinite dividends and NaN give NaN, as math.Mod;
	// a finite a mod ±Inf is a, fixed up to b's sign (±Inf).
	sa := []float32{1, -1, 0, inf, nan32, 1, 5, -5, 0, 5, -5}
	sb := []float32{0, 0, 0, 2, 2, nan32, inf, inf, inf, -inf, -inf}
	special := binaryCase("floormod_special", sa, sb, FloorMod, func(t *testing.T, be backend, got []float32) {
		for i, g := range got {
			if want := float32(floorMod64(float64(sa[i]), float64(sb[i]))); !sameF32(g, want) {
				t.Errorf("FloorMod(%g, %g) = %g, want %g", sa[i], sb[i], g, want)
			}
		}
	})
	return []mapCase{main, special}
}

// intValues are i32 test operands: small of both signs, and the extremes.
var intValues = []int64{0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, 12345678, -12345678,
	math.MaxInt32, math.MinInt32, math.MinInt32 + 1, math.MaxInt32 - 1}

// int64Values add i64 extremes and values past 32 bits.
var int64Values = append(append([]int64(nil), intValues...),
	math.MaxInt64, math.MinInt64, math.MinInt64+1, 1<<40+3, -(1<<40 + 3), 1<<33, -(1 << 33))

// intDivCases: Go's integer semantics (what the CPU target computes):
// division truncates, the most negative value divided by -1 wraps to
// itself, a zero divisor gives 0; the floored remainder takes b's sign.
func intDivCases() []mapCase {
	var cases []mapCase
	for _, typ := range []Type{I32, I64} {
		vals, wrap := intValues, func(v int64) int64 { return int64(int32(v)) }
		if typ == I64 {
			vals, wrap = int64Values, func(v int64) int64 { return v }
		}
		a, b := pairs(vals, vals)
		cases = append(cases,
			intCase("intdiv_"+typ.String(), typ, [][]int64{a, b}, func(e []*Expr) *Expr { return IntDiv(e[0], e[1]) }, func(v []int64) int64 {
				switch {
				case v[1] == 0:
					return 0
				case v[1] == -1:
					return wrap(-v[0])
				}
				return v[0] / v[1]
			}),
			intCase("intfloormod_"+typ.String(), typ, [][]int64{a, b}, func(e []*Expr) *Expr { return IntFloorMod(e[0], e[1]) }, func(v []int64) int64 {
				if v[1] == 0 || v[1] == -1 {
					return 0
				}
				r := v[0] % v[1]
				if r != 0 && (r < 0) != (v[1] < 0) {
					r += v[1]
				}
				return r
			}))
	}
	// u32 division has no -1 to guard: 0xffffffff is an ordinary divisor.
	vals := []uint64{0, 1, 2, 7, 0x80000000, 0xffffffff, 0xfffffffe}
	a, b := pairs(vals, vals)
	for _, c := range []struct {
		name string
		f    func(a, b *Expr) *Expr
		ref  func(a, b uint64) uint64
	}{{"intdiv_u32", IntDiv, func(a, b uint64) uint64 { return a / b }}, {"intfloormod_u32", IntFloorMod, func(a, b uint64) uint64 { return a % b }}} {
		cases = append(cases, mapCase{c.name, []Type{U32, U32}, U32, func(e []*Expr) *Expr { return c.f(e[0], e[1]) }, [][]uint64{a, b},
			func(t *testing.T, be backend, got []uint64) {
				for i := range a {
					var want uint64
					if b[i] != 0 {
						want = c.ref(a[i], b[i])
					}
					if got[i] != want {
						t.Errorf("%s(%d, %d) = %d, want %d", c.name, a[i], b[i], got[i], want)
					}
				}
			}})
	}
	return cases
}

func floatToI64Case() mapCase {
	xs := []float32{0, negZ32, 1.5, -1.5, 0.9, -0.9, 123456789, -123456789, 1 << 40, -(1 << 40),
		0x1p62, -0x1p62, 0x1p63, -0x1p63, 1e19, -1e19, 1e30, -1e30, math.MaxFloat32, inf, -inf, nan32}
	return mapCase{"floattoi64", []Type{F32}, I64, func(a []*Expr) *Expr { return FloatToI64(a[0]) }, [][]uint64{f32Bits(xs)},
		func(t *testing.T, be backend, got []uint64) {
			for i, x := range xs {
				// The CPU target's cast.
				want := lir.TruncInt(float64(x))
				if int64(got[i]) != want {
					t.Errorf("FloatToI64(%g) = %d, want %d", x, int64(got[i]), want)
				}
			}
		}}
}

func wrapCases() []mapCase {
	vals := []int64{0, 1, -1, 127, 128, -128, -129, 255, 256, 1000, -1000, 32767, 32768, -32768, -32769,
		65535, 65536, 0x12345678, -0x12345678, math.MaxInt32, math.MinInt32}
	var cases []mapCase
	for _, c := range []struct {
		t   Type
		ref func(v int32) int32
	}{
		{I8, func(v int32) int32 { return int32(int8(v)) }},
		{I16, func(v int32) int32 { return int32(int16(v)) }},
		{U8, func(v int32) int32 { return int32(uint8(v)) }},
		{I32, func(v int32) int32 { return v }},
	} {
		cases = append(cases, intCase("wrap_"+c.t.String(), I32, [][]int64{vals}, func(a []*Expr) *Expr { return Wrap(a[0], c.t) },
			func(v []int64) int64 { return int64(c.ref(int32(v[0]))) }))
	}
	return cases
}

// specialF32 are the values NaN-aware operations must get right.
var specialF32 = []float32{0, negZ32, 1, -1, 2.5, -2.5, 1e-40, -1e-40, math.MaxFloat32, inf, -inf, nan32}

func nanAwareCases() []mapCase {
	// The CPU target's max and min (ew32.go): NaN if either is NaN,
	// else a > b ? a : b (a < b ? a : b).
	maxRef := func(a, b float32) float32 {
		switch {
		case a != a || b != b:
			return nan32
		case a > b:
			return a
		}
		return b
	}
	minRef := func(a, b float32) float32 {
		switch {
		case a != a || b != b:
			return nan32
		case a < b:
			return a
		}
		return b
	}
	var cases []mapCase
	a, b := pairs(specialF32, specialF32)
	for _, c := range []struct {
		name string
		f    func(a, b *Expr) *Expr
		ref  func(a, b float32) float32
	}{{"maxnan", MaxNaN, maxRef}, {"minnan", MinNaN, minRef}} {
		cases = append(cases, binaryCase(c.name, a, b, c.f, func(t *testing.T, be backend, got []float32) {
			for i := range a {
				if want := c.ref(a[i], b[i]); !sameF32(got[i], want) {
					t.Errorf("%s(%g, %g) = %g, want %g", c.name, a[i], b[i], got[i], want)
				}
			}
		}))
	}
	for _, c := range []struct {
		name string
		f    func(x *Expr) *Expr
		ref  func(x float32) float32
	}{
		{"relu", Relu, func(x float32) float32 {
			if x > 0 || x != x {
				return x
			}
			return 0
		}},
		// The CPU target's sign: zeros and NaN keep themselves.
		{"sign", Sign, func(x float32) float32 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x
		}},
		{"abs", Abs, func(x float32) float32 { return float32(math.Abs(float64(x))) }},
		{"isnan", func(x *Expr) *Expr { return Select(IsNaN(x), Float(1), Float(0)) }, func(x float32) float32 {
			if x != x {
				return 1
			}
			return 0
		}},
	} {
		cases = append(cases, unaryCase(c.name, specialF32, c.f, func(t *testing.T, be backend, got []float32) {
			for i, x := range specialF32 {
				if want := c.ref(x); !sameF32(got[i], want) {
					t.Errorf("%s(%g) = %g (%#08x), want %g (%#08x)", c.name, x, got[i], bitsOf(got[i]), want, bitsOf(want))
				}
			}
		}))
	}
	// The integer forms: no NaN, and |MinInt32| wraps to itself.
	ivals := []int64{0, 1, -1, 5, -5, math.MaxInt32, math.MinInt32}
	ia, ib := pairs(ivals, ivals)
	for _, typ := range []Type{I32, I64} {
		wrap := func(v int64) int64 {
			if typ == I32 {
				return int64(int32(v))
			}
			return v
		}
		cases = append(cases,
			intCase("relu_"+typ.String(), typ, [][]int64{ivals}, func(a []*Expr) *Expr { return Relu(a[0]) }, func(v []int64) int64 { return max(v[0], 0) }),
			intCase("sign_"+typ.String(), typ, [][]int64{ivals}, func(a []*Expr) *Expr { return Sign(a[0]) }, func(v []int64) int64 {
				return int64(max(-1, min(1, v[0])))
			}),
			intCase("abs_"+typ.String(), typ, [][]int64{ivals}, func(a []*Expr) *Expr { return Abs(a[0]) }, func(v []int64) int64 {
				if v[0] < 0 {
					return wrap(-v[0])
				}
				return v[0]
			}),
			intCase("isnan_"+typ.String(), typ, [][]int64{ivals}, func(a []*Expr) *Expr {
				return Select(IsNaN(a[0]), Const(typ, 1, 0), Const(typ, 0, 0))
			}, func([]int64) int64 { return 0 }),
			intCase("maxnan_"+typ.String(), typ, [][]int64{ia, ib}, func(a []*Expr) *Expr { return MaxNaN(a[0], a[1]) }, func(v []int64) int64 { return max(v[0], v[1]) }),
			intCase("minnan_"+typ.String(), typ, [][]int64{ia, ib}, func(a []*Expr) *Expr { return MinNaN(a[0], a[1]) }, func(v []int64) int64 { return min(v[0], v[1]) }),
		)
	}
	return cases
}

// builderCases are the cases of math.go's builders.
func builderCases() []mapCase {
	var cases []mapCase
	cases = append(cases, halfCases()...)
	cases = append(cases, activationCases()...)
	cases = append(cases, powCase())
	cases = append(cases, floorModCases()...)
	cases = append(cases, intDivCases()...)
	cases = append(cases, floatToI64Case())
	cases = append(cases, wrapCases()...)
	cases = append(cases, nanAwareCases()...)
	return cases
}

// primitiveCases check the primitive operations against the C semantics
// the IR promises (kir.go): integer division and remainder truncate,
// shifts are arithmetic on i32 and logical on u32, float to int
// conversion truncates, comparisons with NaN are false but != is true,
// rint rounds half to even, and bitcasts keep bits. Operands stay clear
// of signed overflow, which C leaves undefined.
func primitiveCases() []mapCase {
	var cases []mapCase
	small := []int64{0, 1, -1, 7, -7, 3, -3, 100, -100, 12345, -12345}
	wide := append(append([]int64(nil), small...), math.MaxInt32, math.MinInt32+1, math.MinInt32)
	nz := func(b *Expr) *Expr { return Select(Eq(b, Int(0)), Int(1), b) }
	i32 := func(name string, vals []int64, f func(a, b *Expr) *Expr, ref func(a, b int32) int32) {
		a, b := pairs(vals, vals)
		cases = append(cases, intCase(name, I32, [][]int64{a, b}, func(e []*Expr) *Expr { return f(e[0], e[1]) },
			func(v []int64) int64 { return int64(ref(int32(v[0]), int32(v[1]))) }))
	}
	noMinus1 := append(append([]int64(nil), small...), math.MaxInt32, math.MinInt32+1) // MinInt32 / -1 overflows
	i32("div", noMinus1, func(a, b *Expr) *Expr { return Div(a, nz(b)) }, func(a, b int32) int32 { return a / nzGo(b) })
	i32("rem", noMinus1, func(a, b *Expr) *Expr { return Rem(a, nz(b)) }, func(a, b int32) int32 { return a % nzGo(b) })
	i32("shr", wide, func(a, b *Expr) *Expr { return Shr(a, BitAnd(b, Int(31))) }, func(a, b int32) int32 { return a >> (b & 31) })
	i32("shl", wide, func(a, b *Expr) *Expr { return Bitcast(I32, Shl(Bitcast(U32, a), Bitcast(U32, BitAnd(b, Int(31))))) },
		func(a, b int32) int32 { return int32(uint32(a) << (b & 31)) })
	i32("ushr", wide, func(a, b *Expr) *Expr { return Bitcast(I32, Shr(Bitcast(U32, a), Bitcast(U32, BitAnd(b, Int(31))))) },
		func(a, b int32) int32 { return int32(uint32(a) >> (b & 31)) })
	i32("bitops", wide, func(a, b *Expr) *Expr { return BitXor(BitOr(BitAnd(a, b), BitNot(b)), a) }, func(a, b int32) int32 { return a&b | ^b ^ a })
	i32("minmax", small, func(a, b *Expr) *Expr { return Sub(Max(a, b), Min(a, b)) }, func(a, b int32) int32 { return max(a, b) - min(a, b) })
	i32("cmp", wide, func(a, b *Expr) *Expr { return cmpBits(a, b) }, func(a, b int32) int32 {
		return boolInt(a < b) + 2*boolInt(a <= b) + 4*boolInt(a > b) + 8*boolInt(a >= b) + 16*boolInt(a == b) + 32*boolInt(a != b)
	})
	i32("logic", small, func(a, b *Expr) *Expr {
		p, q := Gt(a, Int(0)), Lt(b, Int(0))
		return Add(Select(And(p, q), Int(1), Int(0)), Add(Select(Or(p, q), Int(2), Int(0)), Select(Not(p), Int(4), Int(0))))
	}, func(a, b int32) int32 {
		return boolInt(a > 0 && b < 0) + 2*boolInt(a > 0 || b < 0) + 4*boolInt(!(a > 0))
	})
	i32("neg", small, func(a, b *Expr) *Expr { return Sub(Neg(a), Mul(b, Int(3))) }, func(a, b int32) int32 { return -a - b*3 })

	// Float functions that are exact, and float to int conversion.
	fs := []float32{0, negZ32, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.7, 1e9, -1e9, 16777217, 0.49999997, 1e-40}
	for _, c := range []struct {
		name string
		ref  func(float64) float64
	}{{"rint", math.RoundToEven}, {"floor", math.Floor}, {"ceil", math.Ceil}, {"trunc", math.Trunc}, {"abs", math.Abs}} {
		cases = append(cases, unaryCase(c.name, fs, func(x *Expr) *Expr { return Call(c.name, x) }, func(t *testing.T, be backend, got []float32) {
			for i, x := range fs {
				want := float32(c.ref(float64(x)))
				if x == 1e-40 && got[i] == 0 {
					continue // a subnormal may be flushed
				}
				if !sameF32(got[i], want) {
					t.Errorf("%s(%g) = %g, want %g", c.name, x, got[i], want)
				}
			}
		}))
	}
	sq := []float32{0, 1, 2, 4, 0.25, 1e10, 3}
	cases = append(cases, unaryCase("sqrt", sq, Sqrt, func(t *testing.T, be backend, got []float32) {
		for i, x := range sq {
			// Vulkan's sqrt is 3 ulp (an inverse square root and a
			// multiply); exact squares come out exact on llvmpipe.
			if want := float32(math.Sqrt(float64(x))); math.Abs(float64(got[i]-want)) > 3*ulp32(want) {
				t.Errorf("sqrt(%g) = %g, want %g", x, got[i], want)
			}
		}
	}))
	cases = append(cases, mapCase{"f2i", []Type{F32}, I32, func(a []*Expr) *Expr { return Convert(I32, a[0]) }, [][]uint64{f32Bits(fs)},
		func(t *testing.T, be backend, got []uint64) {
			for i, x := range fs {
				if int32(got[i]) != int32(x) {
					t.Errorf("Convert(i32, %g) = %d, want %d", x, int32(got[i]), int32(x))
				}
			}
		}})
	// Comparisons with NaN: false, but != is true (as in C).
	fa, fb := pairs([]float32{nan32, 1, negZ32, -inf}, []float32{nan32, 1, 0, inf})
	cases = append(cases, mapCase{"fcmp", []Type{F32, F32}, I32, func(e []*Expr) *Expr { return cmpBits(e[0], e[1]) }, [][]uint64{f32Bits(fa), f32Bits(fb)},
		func(t *testing.T, be backend, got []uint64) {
			for i := range fa {
				x, y := fa[i], fb[i]
				want := boolInt(x < y) + 2*boolInt(x <= y) + 4*boolInt(x > y) + 8*boolInt(x >= y) + 16*boolInt(x == y) + 32*boolInt(x != y)
				if int32(got[i]) != want {
					t.Errorf("comparisons of %g and %g = %06b, want %06b", x, y, got[i], want)
				}
			}
		}})
	// Conversions between i32, u32, i64 and f32, and bitcasts.
	iv := []int64{0, 1, -1, 1 << 24, 1<<24 + 1, math.MaxInt32, math.MinInt32}
	cases = append(cases, intCase("conv", I32, [][]int64{iv}, func(a []*Expr) *Expr {
		x := a[0]
		// (i64(x) + i64(u32(x))·2^16 + i64(f32(x)) - i64(u32 bits of f32 bits of x)) >> 8
		return Convert(I32, Shr(Add(Add(Convert(I64, x), Mul(Convert(I64, Bitcast(U32, x)), Const(I64, 1<<16, 0))),
			Sub(Convert(I64, Convert(F32, x)), Convert(I64, Bitcast(U32, Bitcast(F32, Bitcast(U32, x)))))), Const(I64, 8, 0)))
	}, func(v []int64) int64 {
		x := int32(v[0])
		return int64(int32((int64(x) + int64(uint32(x))<<16 + int64(float32(x)) - int64(uint32(x))) >> 8))
	}))
	// Constants as the printers spell them: signed zero, subnormal and
	// extreme f32, non-finite values by their bits, the most negative i32
	// and i64, the largest u32.
	fconsts := []float32{negZ32, 1e-45, 0x1p-126, math.MaxFloat32, -math.MaxFloat32, inf, -inf, nan32, 0.1, 1.0 / 3, 16777216, -1.5e-7}
	cases = append(cases, constCase("fconst", U32, len(fconsts), func(i int) *Expr { return Bitcast(U32, Float(float64(fconsts[i]))) },
		func(i int) uint64 { return uint64(bitsOf(fconsts[i])) }))
	iconsts := []int64{math.MinInt32, math.MaxInt32, -1, 0, -7}
	cases = append(cases, constCase("iconst", I32, len(iconsts), func(i int) *Expr { return Int(iconsts[i]) },
		func(i int) uint64 { return uint64(uint32(iconsts[i])) }))
	lconsts := []int64{math.MinInt64, math.MaxInt64, -1, 1 << 40, -(1 << 33)}
	cases = append(cases, constCase("lconst", I64, len(lconsts), func(i int) *Expr { return Const(I64, lconsts[i], 0) },
		func(i int) uint64 { return uint64(lconsts[i]) }))
	cases = append(cases, constCase("uconst", U32, 3, func(i int) *Expr { return Uint([]uint32{0, 0x80000000, 0xffffffff}[i]) },
		func(i int) uint64 { return []uint64{0, 0x80000000, 0xffffffff}[i] }))

	// Narrow storage: i8 and i16 widen with their sign, u8 and bool
	// without; stores keep the low bits; any nonzero byte is true.
	cases = append(cases,
		widenCase(I8, []uint64{0, 1, 0x7f, 0x80, 0xff}, []int32{0, 1, 127, -128, -1}),
		widenCase(U8, []uint64{0, 1, 0x7f, 0x80, 0xff}, []int32{0, 1, 127, 128, 255}),
		widenCase(I16, []uint64{0, 1, 0x7fff, 0x8000, 0xffff}, []int32{0, 1, 32767, -32768, -1}),
		storeCase(I8, []int64{1, -1, 127, -128, 300}, []uint64{1, 0xff, 0x7f, 0x80, 0x2c}),
		storeCase(I16, []int64{1, -1, 32767, -32768, 70000}, []uint64{1, 0xffff, 0x7fff, 0x8000, 0x1170}),
		storeCase(U8, []int64{1, 255, 256, -1}, []uint64{1, 0xff, 0, 0xff}),
		mapCase{"bools", []Type{Bool}, Bool, func(a []*Expr) *Expr { return Not(Not(a[0])) }, [][]uint64{{0, 1, 2, 255, 0}},
			func(t *testing.T, be backend, got []uint64) {
				if fmt.Sprint(got) != "[0 1 1 1 0]" {
					t.Errorf("bool round trip = %v, want [0 1 1 1 0]", got)
				}
			}},
	)
	return cases
}

func nzGo(b int32) int32 {
	if b == 0 {
		return 1
	}
	return b
}

// cmpBits packs the six comparisons of a and b into bits.
func cmpBits(a, b *Expr) *Expr {
	return Add(Add(Select(Lt(a, b), Int(1), Int(0)), Select(Le(a, b), Int(2), Int(0))),
		Add(Add(Select(Gt(a, b), Int(4), Int(0)), Select(Ge(a, b), Int(8), Int(0))),
			Add(Select(Eq(a, b), Int(16), Int(0)), Select(Ne(a, b), Int(32), Int(0)))))
}

func widenCase(typ Type, in []uint64, want []int32) mapCase {
	return mapCase{"widen_" + typ.String(), []Type{typ}, I32, func(a []*Expr) *Expr { return a[0] }, [][]uint64{in},
		func(t *testing.T, be backend, got []uint64) {
			for i := range in {
				if int32(got[i]) != want[i] {
					t.Errorf("%s %#x loads as %d, want %d", typ, in[i], int32(got[i]), want[i])
				}
			}
		}}
}

func storeCase(typ Type, in []int64, want []uint64) mapCase {
	return mapCase{"store_" + typ.String(), []Type{I32}, typ, func(a []*Expr) *Expr { return a[0] }, [][]uint64{i64Bits(in)},
		func(t *testing.T, be backend, got []uint64) {
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%v stored as %s: %#x, want %#x", in, typ, got, want)
			}
		}}
}

// constCase stores constant i (of n) at element i, selected by an index
// read from the input, and compares the bits.
func constCase(name string, out Type, n int, c func(i int) *Expr, want func(i int) uint64) mapCase {
	idx := make([]uint64, n)
	for i := range idx {
		idx[i] = uint64(i)
	}
	return mapCase{name, []Type{I32}, out, func(a []*Expr) *Expr {
		e := c(n - 1)
		for i := n - 2; i >= 0; i-- {
			e = Select(Eq(a[0], Int(int64(i))), c(i), e)
		}
		return e
	}, [][]uint64{idx}, func(t *testing.T, be backend, got []uint64) {
		for i := range got {
			if got[i] != want(i) {
				t.Errorf("%s constant %d = %#x, want %#x", name, i, got[i], want(i))
			}
		}
	}}
}
