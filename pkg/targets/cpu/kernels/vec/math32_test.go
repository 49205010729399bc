package vec

import (
	"math"
	"testing"
)

// ulps is the distance between a and b in float32 steps (NaN matches NaN
// only; +0 and -0 are 0 apart).
func ulps(a, b float32) int64 {
	if a != a || b != b {
		if a != a && b != b {
			return 0
		}
		return math.MaxInt64
	}
	ord := func(f float32) int64 {
		u := int64(math.Float32bits(f))
		if u&0x80000000 != 0 {
			return -(u & 0x7fffffff)
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

// mathSamples is a dense grid over [-lim, lim], random values, and the
// special values.
func mathSamples(lim float64) []float32 {
	var xs []float32
	for i := -20000; i <= 20000; i++ {
		xs = append(xs, float32(lim*float64(i)/20000))
	}
	r := newRand(7)
	for i := 0; i < 20000; i++ {
		xs = append(xs, float32(lim*(2*r.Float64()-1)))
		xs = append(xs, float32(math.Ldexp(2*r.Float64()-1, -r.IntN(40)))) // small magnitudes
	}
	inf := math.Inf(1)
	for _, v := range []float64{0, math.Copysign(0, -1), inf, -inf, math.NaN(), 1e-45, -1e-45, 1e-38, -1e-38, 88.72283, 88.72284, -87.3, -103.97, -104, 1e30, -1e30} {
		xs = append(xs, float32(v))
	}
	return xs
}

func TestScalarMath(t *testing.T) {
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	tests := []struct {
		name string
		f    func(float32) float32
		ref  func(float64) float64
		lim  float64
	}{
		{"Exp32", Exp32, math.Exp, 110},
		{"Sigmoid32", Sigmoid32, sigmoid, 120},
		{"Silu32", Silu32, func(x float64) float64 { return x * sigmoid(x) }, 120},
		{"Tanh32", Tanh32, math.Tanh, 20},
		{"Erf32", Erf32, math.Erf, 6},
		// Reference without 1+erf's cancellation: erfc.
		{"gelu32", gelu32, func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }, 15},
		// 1+tanh(u) = 2/(1+e^-2u) exactly; the tanh form cancels for u << 0.
		{"GeluTanh32", GeluTanh32, func(x float64) float64 {
			u := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
			return x / (1 + math.Exp(-2*u))
		}, 15},
	}
	for _, tc := range tests {
		worst := int64(0)
		for _, x := range mathSamples(tc.lim) {
			want := float32(tc.ref(float64(x)))
			got := tc.f(x)
			if d := ulps(got, want); d > 2 {
				t.Errorf("%s(%v) = %v, want %v (%d ulp)", tc.name, x, got, want, d)
			} else if d > worst {
				worst = d
			}
		}
		t.Logf("%s: worst %d ulp", tc.name, worst)
	}
	// The tanh form and the sigmoid form agree where neither cancels.
	for x := -3.0; x <= 3; x += 0.001 {
		u := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
		want := float32(0.5 * x * (1 + math.Tanh(u)))
		if got := GeluTanh32(float32(x)); ulps(got, want) > 2 && math.Abs(float64(got-want)) > 1e-7 {
			t.Errorf("GeluTanh32(%v) = %v, tanh form %v", x, got, want)
		}
	}
}

func TestActivationString(t *testing.T) {
	if ActGeluTanh.String() != "gelu_tanh" || Activation(42).String() != "Activation(42)" {
		t.Errorf("got %q %q", ActGeluTanh.String(), Activation(42).String())
	}
}

func TestActivateNaN(t *testing.T) {
	// NaN passes through every activation; relu/leaky/clamp keep it too.
	for a := ActNone; a <= ActClamp; a++ {
		x := []float32{float32(math.NaN())}
		Activate(x, a, 0.1, -1, 1)
		if x[0] == x[0] {
			t.Errorf("%v(NaN) = %v", a, x[0])
		}
	}
}
