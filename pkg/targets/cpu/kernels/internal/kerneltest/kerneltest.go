// Package kerneltest holds what the kernel packages' tests share: seeded
// inputs, poisoned outputs, float64 references and comparisons with
// explicit tolerances, and the 1- and 2-thread pools every kernel is run
// on. Only tests import it.
package kerneltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// NewRand is a seeded generator: every test input is reproducible.
func NewRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// RandSlice returns n values uniform in [-1, 1).
func RandSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(2*r.Float64() - 1)
	}
	return s
}

// Poison returns n NaNs: outputs start poisoned so an element a kernel
// forgets to write shows up.
func Poison(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(math.NaN())
	}
	return s
}

// CloseTo reports whether got is within tol of want, or is want rounded to
// float32; NaNs must match NaNs and infinities must match exactly.
func CloseTo(got float32, want, tol float64) bool {
	if got == float32(want) {
		return true
	}
	g := float64(got)
	if math.IsNaN(want) || math.IsNaN(g) {
		return math.IsNaN(want) && math.IsNaN(g)
	}
	if math.IsInf(want, 0) || math.IsInf(g, 0) {
		return g == want
	}
	return math.Abs(g-want) <= tol
}

// CheckClose compares got with want elementwise: |got-want| <= rtol·scale[i]
// + atol, where scale[i] is the magnitude the result was built from (for a
// dot product, sum |a·b|), or |want[i]| when scale is nil. It reports at
// most a few mismatches.
func CheckClose(t testing.TB, name string, got []float32, want, scale []float64, rtol, atol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d elements, want %d", name, len(got), len(want))
	}
	bad := 0
	for i := range want {
		s := math.Abs(want[i])
		if scale != nil {
			s = math.Max(s, scale[i])
		}
		if !CloseTo(got[i], want[i], rtol*s+atol) {
			if bad < 5 {
				t.Errorf("%s: [%d] = %v, want %v (tol %.3g)", name, i, got[i], want[i], rtol*s+atol)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d mismatches in all", name, bad)
	}
}

// CheckEqual compares got with want exactly (NaN equals NaN).
func CheckEqual[T comparable](t testing.TB, name string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d elements, want %d", name, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] && !(IsNaN(got[i]) && IsNaN(want[i])) {
			if bad < 5 {
				t.Errorf("%s: [%d] = %v, want %v", name, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d mismatches in all", name, bad)
	}
}

// IsNaN reports a float NaN of either width.
func IsNaN[T comparable](v T) bool {
	switch x := any(v).(type) {
	case float32:
		return x != x
	case float64:
		return x != x
	}
	return false
}

// Pools returns a 1-thread and a 2-thread pool, closed when the test ends.
func Pools(t testing.TB) []*parallel.Pool {
	p1, p2 := parallel.NewPool(1), parallel.NewPool(2)
	t.Cleanup(func() { p1.Close(); p2.Close() })
	return []*parallel.Pool{p1, p2}
}

// RefAct is the activation in float64, written from the definitions.
func RefAct(act lir.Activation, v, alpha, lo, hi float64) float64 {
	switch act {
	case lir.ActNone:
		return v
	case lir.ActRelu:
		return math.Max(v, 0)
	case lir.ActGelu:
		return 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
	case lir.ActGeluTanh:
		return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
	case lir.ActSilu:
		return v / (1 + math.Exp(-v))
	case lir.ActSigmoid:
		return 1 / (1 + math.Exp(-v))
	case lir.ActTanh:
		return math.Tanh(v)
	case lir.ActLeakyRelu:
		if v < 0 {
			return alpha * v
		}
		return v
	case lir.ActClamp:
		return math.Min(math.Max(v, lo), hi)
	}
	panic("bad activation")
}
