package gemm

import (
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// The driver's interface for the kernels built on it (conv's implicit
// GEMM and depthwise paths, attention): a product described by Args over
// any BSource, run with the default micro-kernel, and the fused epilogue
// as Epi.

// Args is one C = A·B (+ C when Accumulate) with the epilogue Ep applied
// to the final values: A [M, K] (rows Lda apart, or Aᵀ when AT), B read
// through its packing, C [M, N] (rows Ldc apart). DirectB reads a dense
// B's full panels in place and DirectA A's full row panels, where the
// kernel can (see gemmArgs).
type Args struct {
	M, N, K    int
	A          []float32
	Lda        int
	AT         bool
	B          BSource
	C          []float32
	Ldc        int
	Accumulate bool
	Ep         Epi
	DirectB    bool
	DirectA    bool
}

// Run computes g on p (nil for the calling goroutine) with the default
// micro-kernel.
func Run(p *parallel.Pool, g *Args) {
	a := gemmArgs{m: g.M, n: g.N, k: g.K, a: g.A, lda: g.Lda, aT: g.AT, b: g.B, c: g.C, ldc: g.Ldc,
		accumulate: g.Accumulate, ep: g.Ep.epi(), directB: g.DirectB, directA: g.DirectA}
	gemm(p, defaultKernel(), &a)
}

// TileRows is the default micro-kernel's tile height (mr): products with
// fewer rows take the few-rows paths.
func TileRows() int { return defaultKernel().mr }

// Dense is a row-major B: B[p][j] = b[p·ldb+j].
func Dense(b []float32, ldb int) BSource { return denseB{b, ldb} }

// Transposed is a B given as Bᵀ, row-major: B[p][j] = bt[j·ldb+p].
func Transposed(bt []float32, ldb int) BSource { return transB{bt, ldb} }

// Epi is a fused epilogue over a block of C: the bias (by column, or by
// row when BiasPerRow), the activation Act (Alpha its slope, [Lo, Hi] its
// clamp) and the residual Res (rows Ldr apart), in that order; where
// ActLast, the activation after the residual.
type Epi struct {
	Bias       []float32
	BiasPerRow bool
	Act        vec.Activation
	Alpha      float32
	Lo, Hi     float32
	Res        []float32
	Ldr        int
	ActLast    bool
}

func (e *Epi) epi() epi {
	return epi{bias: e.Bias, biasPerRow: e.BiasPerRow, act: e.Act, alpha: e.Alpha, lo: e.Lo, hi: e.Hi, res: e.Res, ldr: e.Ldr,
		actLast: e.ActLast && e.Res != nil}
}

// Apply finishes the rows×cols block of c at (i0, j0); c is the whole
// output with leading dimension ldc, and the bias and residual are indexed
// by the same (i, j) coordinates.
func (e *Epi) Apply(c []float32, ldc, i0, j0, rows, cols int) {
	x := e.epi()
	x.apply(c, ldc, i0, j0, rows, cols)
}
