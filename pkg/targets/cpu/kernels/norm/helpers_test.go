package norm

import (
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/internal/kerneltest"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// Test helpers: the shared ones are kerneltest's, under the names the
// tests use.

func newRand(seed uint64) *rand.Rand { return kerneltest.NewRand(seed) }

func randSlice(r *rand.Rand, n int) []float32 { return kerneltest.RandSlice(r, n) }

func poison(n int) []float32 { return kerneltest.Poison(n) }

func checkClose(t testing.TB, name string, got []float32, want, scale []float64, rtol, atol float64) {
	t.Helper()
	kerneltest.CheckClose(t, name, got, want, scale, rtol, atol)
}

func checkEqual[T comparable](t testing.TB, name string, got, want []T) {
	t.Helper()
	kerneltest.CheckEqual(t, name, got, want)
}

func pools(t testing.TB) []*parallel.Pool { return kerneltest.Pools(t) }
