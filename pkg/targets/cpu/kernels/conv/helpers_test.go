package conv

import (
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/internal/kerneltest"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// Test helpers: the shared ones are kerneltest's, under the names the
// tests use.

func newRand(seed uint64) *rand.Rand { return kerneltest.NewRand(seed) }

func randSlice(r *rand.Rand, n int) []float32 { return kerneltest.RandSlice(r, n) }

func poison(n int) []float32 { return kerneltest.Poison(n) }

func refAct(act vec.Activation, v, alpha, lo, hi float64) float64 {
	return kerneltest.RefAct(act, v, alpha, lo, hi)
}

// refEpilogue finishes one element: act(acc + bias) + res, or where
// ep.ActLast act(acc + bias + res).
func refEpilogue(ep *gemm.Epilogue, acc, bias, res float64) float64 {
	if ep.ActLast && ep.Residual != nil {
		return refAct(ep.Act, acc+bias+res, float64(ep.Alpha), float64(ep.Min), float64(ep.Max))
	}
	return refAct(ep.Act, acc+bias, float64(ep.Alpha), float64(ep.Min), float64(ep.Max)) + res
}

func checkClose(t testing.TB, name string, got []float32, want, scale []float64, rtol, atol float64) {
	t.Helper()
	kerneltest.CheckClose(t, name, got, want, scale, rtol, atol)
}

func checkEqual[T comparable](t testing.TB, name string, got, want []T) {
	t.Helper()
	kerneltest.CheckEqual(t, name, got, want)
}

func pools(t testing.TB) []*parallel.Pool { return kerneltest.Pools(t) }

// packBHost packs the k×n row-major B (leading dimension ldb) in this
// machine's layout, for GemmPacked and Conv1x1Packed.
func packBHost(k, n int, b []float32, ldb int) []float32 {
	pb, err := gemm.PackBLayout(gemm.PackedLayout(), k, n, b, ldb)
	if err != nil {
		panic(err)
	}
	return pb
}
