package conv

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// Test helpers: seeded inputs, float64 references and explicit tolerances.

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// randSlice returns n values uniform in [-1, 1).
func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(2*r.Float64() - 1)
	}
	return s
}

// poison returns n NaNs: outputs start poisoned so an element a kernel
// forgets to write shows up.
func poison(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(math.NaN())
	}
	return s
}

// refAct is the activation in float64, written from the definitions.
func refAct(act vec.Activation, v, alpha, lo, hi float64) float64 {
	switch act {
	case vec.ActNone:
		return v
	case vec.ActRelu:
		return math.Max(v, 0)
	case vec.ActGelu:
		return 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
	case vec.ActGeluTanh:
		return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
	case vec.ActSilu:
		return v / (1 + math.Exp(-v))
	case vec.ActSigmoid:
		return 1 / (1 + math.Exp(-v))
	case vec.ActTanh:
		return math.Tanh(v)
	case vec.ActLeakyRelu:
		if v < 0 {
			return alpha * v
		}
		return v
	case vec.ActClamp:
		return math.Min(math.Max(v, lo), hi)
	}
	panic("bad activation")
}

// refEpilogue finishes one element: act(acc + bias) + res.
func refEpilogue(ep *gemm.Epilogue, acc, bias, res float64) float64 {
	return refAct(ep.Act, acc+bias, float64(ep.Alpha), float64(ep.Min), float64(ep.Max)) + res
}

// closeTo reports whether got is within tol of want, or is want rounded to
// float32; NaNs must match NaNs and infinities must match exactly.
func closeTo(got float32, want, tol float64) bool {
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

// checkClose compares got with want elementwise: |got-want| <= rtol·scale[i]
// + atol, where scale[i] is the magnitude the result was built from (for a
// dot product, sum |a·b|), or |want[i]| when scale is nil. It reports at
// most a few mismatches.
func checkClose(t testing.TB, name string, got []float32, want, scale []float64, rtol, atol float64) {
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
		if !closeTo(got[i], want[i], rtol*s+atol) {
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

func checkEqual[T comparable](t testing.TB, name string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d elements, want %d", name, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] && !(isNaN(got[i]) && isNaN(want[i])) {
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

func isNaN[T comparable](v T) bool {
	switch x := any(v).(type) {
	case float32:
		return x != x
	case float64:
		return x != x
	}
	return false
}

// pools returns a 1-thread and a 2-thread pool, closed when the test ends.
func pools(t testing.TB) []*parallel.Pool {
	p1, p2 := parallel.NewPool(1), parallel.NewPool(2)
	t.Cleanup(func() { p1.Close(); p2.Close() })
	return []*parallel.Pool{p1, p2}
}

// packBHost packs the k×n row-major B (leading dimension ldb) in this
// machine's layout, for GemmPacked and Conv1x1Packed.
func packBHost(k, n int, b []float32, ldb int) []float32 {
	pb, err := gemm.PackBLayout(gemm.PackedLayout(), k, n, b, ldb)
	if err != nil {
		panic(err)
	}
	return pb
}
