package gemm

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// BatchMatMul computes out = a·b over broadcast batch dimensions: a is
// [...batchA, M, K] and b [...batchB, K, N] (both of rank >= 2, contiguous);
// the batch shapes broadcast NumPy-style (aligned at the right, 1 stretches)
// and out is [...broadcast, M, N]. ep.Bias is [N]; ep.Residual has out's
// layout. out must not overlap a, b, Bias or Residual.
//
// When b has no batch (or only 1s) a's batches fold into one [batch·M, K]
// Gemm; otherwise each output matrix is one Gemm, split across the pool by
// batch when the matrices are small and within each Gemm when they are not.
func BatchMatMul(p *parallel.Pool, out, a []float32, aShape []int, b []float32, bShape []int, ep Epilogue) {
	ra, rb := len(aShape), len(bShape)
	if ra < 2 || rb < 2 {
		panic(fmt.Sprintf("kernels: BatchMatMul: operands need rank >= 2, got %v and %v", aShape, bShape))
	}
	m, k := aShape[ra-2], aShape[ra-1]
	k2, n := bShape[rb-2], bShape[rb-1]
	if k != k2 {
		panic(fmt.Sprintf("kernels: BatchMatMul: inner dims differ: %v · %v", aShape, bShape))
	}
	batch, ok := broadcastShapes(aShape[:ra-2], bShape[:rb-2])
	if !ok {
		panic(fmt.Sprintf("kernels: BatchMatMul: batch dims do not broadcast: %v · %v", aShape, bShape))
	}
	nb := prod(batch)
	if len(a) < prod(aShape) || len(b) < prod(bShape) || len(out) < nb*m*n {
		panic(fmt.Sprintf("kernels: BatchMatMul: slices of %d, %d, %d elements for %v · %v", len(a), len(b), len(out), aShape, bShape))
	}
	if ep.Bias != nil && len(ep.Bias) < n {
		panic(fmt.Sprintf("kernels: BatchMatMul: bias has %d elements, want %d", len(ep.Bias), n))
	}
	if ep.Residual != nil && len(ep.Residual) < nb*m*n {
		panic(fmt.Sprintf("kernels: BatchMatMul: residual has %d elements, want %d", len(ep.Residual), nb*m*n))
	}
	if nb == 0 || m == 0 || n == 0 {
		return
	}
	kn := defaultKernel()
	if prod(bShape[:rb-2]) == 1 {
		// out's batch layout is a's: fold the batches into the rows (a
		// few rows stream B through gemm's chains, fewRowsChains).
		g := gemmArgs{m: nb * m, n: n, k: k, a: a, lda: k, b: denseB{b, n}, c: out, ldc: n, ep: colEpi(&ep, n)}
		gemm(p, kn, &g)
		return
	}
	aStr := broadcastStrides(aShape[:ra-2], len(batch), m*k)
	bStr := broadcastStrides(bShape[:rb-2], len(batch), k*n)
	one := func(bi int, q *parallel.Pool) {
		ao, bo := 0, 0
		rem := bi
		for d := len(batch) - 1; d >= 0; d-- {
			i := rem % batch[d]
			rem /= batch[d]
			ao += i * aStr[d]
			bo += i * bStr[d]
		}
		e := colEpi(&ep, n)
		if e.res != nil {
			e.res = e.res[bi*m*n : (bi+1)*m*n]
		}
		g := gemmArgs{m: m, n: n, k: k, a: a[ao : ao+m*k], lda: k, b: denseB{b[bo : bo+k*n], n},
			c: out[bi*m*n : (bi+1)*m*n], ldc: n, ep: e}
		gemm(q, kn, &g)
	}
	if p.Threads() > 1 && nb >= p.Threads() && m*n*k < tuning.BatchMatMulSplitWork {
		p.For(nb, 1, func(lo, hi int) {
			for bi := lo; bi < hi; bi++ {
				one(bi, nil)
			}
		})
		return
	}
	for bi := 0; bi < nb; bi++ {
		one(bi, p)
	}
}

// broadcastShapes aligns x and y at the right and broadcasts them.
func broadcastShapes(x, y []int) ([]int, bool) {
	r := max(len(x), len(y))
	out := make([]int, r)
	for i := 0; i < r; i++ {
		dx, dy := 1, 1
		if j := i - (r - len(x)); j >= 0 {
			dx = x[j]
		}
		if j := i - (r - len(y)); j >= 0 {
			dy = y[j]
		}
		switch {
		case dx == dy, dy == 1:
			out[i] = dx
		case dx == 1:
			out[i] = dy
		default:
			return nil, false
		}
	}
	return out, true
}

// broadcastStrides returns the element strides of a contiguous batch of
// matrices of size mat with batch shape s, aligned to rank r: broadcast
// (size-1 or missing) dims get stride 0.
func broadcastStrides(s []int, r, mat int) []int {
	st := make([]int, r)
	acc := mat
	for i := len(s) - 1; i >= 0; i-- {
		d := i + r - len(s)
		if s[i] != 1 {
			st[d] = acc
		}
		acc *= s[i]
	}
	return st
}

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}
