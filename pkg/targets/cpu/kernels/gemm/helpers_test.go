package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

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

// refEpilogue finishes one element: act(acc + bias) + res.
func refEpilogue(ep *Epilogue, acc, bias, res float64) float64 {
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

func isNaN[T comparable](v T) bool { return kerneltest.IsNaN(v) }

func pools(t testing.TB) []*parallel.Pool { return kerneltest.Pools(t) }

// gemmDense computes C = A·B for row-major A [m,k] (leading dimension lda), B
// [k,n] (ldb) and C [m,n] (ldc), overwriting C, then applies ep: Bias is
// indexed by column, Residual is laid out like C (leading dimension ldc).
// k == 0 gives C = ep applied to zeros. C must not overlap A, B, Bias or
// Residual. It was the exported dense entry point; the runtime calls
// GemmPacked, BatchMatMul and Conv2D, so it lives here to drive gemm in tests.
func gemmDense(p *parallel.Pool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, ep Epilogue) {
	checkMatrix("Gemm", "a", a, m, k, lda)
	checkMatrix("Gemm", "b", b, k, n, ldb)
	checkMatrix("Gemm", "c", c, m, n, ldc)
	if ep.Bias != nil && len(ep.Bias) < n {
		panic(fmt.Sprintf("kernels: Gemm: bias has %d elements, want %d", len(ep.Bias), n))
	}
	if ep.Residual != nil {
		checkMatrix("Gemm", "residual", ep.Residual, m, n, ldc)
	}
	g := gemmArgs{m: m, n: n, k: k, a: a, lda: lda, b: denseB{b, ldb}, c: c, ldc: ldc, ep: colEpi(&ep, ldc)}
	gemm(p, defaultKernel(), &g)
}

// packBHost packs the k×n row-major B (leading dimension ldb) into the layout
// PackedLayout names, for GemmPacked.
func packBHost(k, n int, b []float32, ldb int) []float32 {
	kn := defaultKernel()
	return packB(kn.nr, kn.kc, k, n, b, ldb)
}
