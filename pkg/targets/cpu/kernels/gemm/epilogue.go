package gemm

import (
	"math"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// Epilogue is what a matmul or convolution applies to each accumulated output
// element before it is stored: out = act(acc + bias) + residual, or where
// ActLast act(acc + bias + residual).
//
// Bias and Residual must not overlap the output (the output is written while
// they are still being read). The zero Epilogue stores the plain product.
type Epilogue struct {
	Bias     []float32 // per output column (Gemm, BatchMatMul) or per output channel (Conv2D), or nil
	Act      vec.Activation
	Alpha    float32   // ActLeakyRelu slope
	Min, Max float32   // ActClamp bounds (±Inf for one-sided)
	Residual []float32 // same layout as the output, added after the activation, or nil
	ActLast  bool      // the activation follows the residual
}

// epi is an Epilogue bound to one output matrix: the bias runs along columns
// or along rows, and the residual has its own leading dimension.
type epi struct {
	bias       []float32
	biasPerRow bool
	act        vec.Activation
	alpha      float32
	lo, hi     float32
	res        []float32
	ldr        int
	actLast    bool // act follows res
}

func (e *epi) none() bool {
	return e == nil || (e.bias == nil && e.act == vec.ActNone && e.res == nil)
}

// colEpi binds ep to a row-major output with leading dimension ld and the
// bias along columns. The bias slice starts at column 0 and the residual at
// element 0 of the output.
func colEpi(ep *Epilogue, ld int) epi {
	return epi{bias: ep.Bias, act: ep.Act, alpha: ep.Alpha, lo: ep.Min, hi: ep.Max, res: ep.Residual, ldr: ld,
		actLast: ep.ActLast && ep.Residual != nil}
}

// split returns e as its bias and residual, then its activation alone:
// the two passes of an activation that follows the residual.
func (e *epi) split() (first, then epi) {
	first, then = *e, epi{act: e.act, alpha: e.alpha, lo: e.lo, hi: e.hi}
	first.act, first.actLast = vec.ActNone, false
	return first, then
}

// apply finishes the rows×cols block of c at (i0, j0); c is the whole output
// with leading dimension ldc, and the bias and residual are indexed by the same
// (i, j) coordinates.
func (e *epi) apply(c []float32, ldc, i0, j0, rows, cols int) {
	if e.none() || rows <= 0 || cols <= 0 {
		return
	}
	if e.actLast && e.act != vec.ActNone {
		// Row by row, so the activation reads a row still in L1.
		first, then := e.split()
		for i := i0; i < i0+rows; i++ {
			first.apply(c, ldc, i, j0, 1, cols)
			then.apply(c, ldc, i, j0, 1, cols)
		}
		return
	}
	// Bias, ReLU or a clamp, and the residual go through the vector row
	// pass (the tiles' epilogue, as rows of memory): a scalar clamp
	// branched on every element, and mispredicted on random data.
	var flags uint
	lo, hi := e.lo, e.hi
	rowPass := true
	switch e.act {
	case vec.ActNone:
	case vec.ActRelu:
		flags, lo, hi = epiClamp, 0, float32(math.Inf(1))
	case vec.ActClamp:
		// Inverted bounds give lo in Go, hi as max then min: Go does them.
		flags, rowPass = epiClamp, !(lo > hi)
	default:
		rowPass = false
	}
	if e.bias != nil {
		if e.biasPerRow {
			flags |= epiBiasRow
		} else {
			flags |= epiBiasCol
		}
	}
	if e.res != nil {
		flags |= epiRes
	}
	for i := i0; i < i0+rows; i++ {
		row := c[i*ldc+j0 : i*ldc+j0+cols]
		done := 0
		if rowPass {
			var bias, res []float32
			var bv float32
			if e.bias != nil {
				if e.biasPerRow {
					bv = e.bias[i]
				} else {
					bias = e.bias[j0 : j0+cols]
				}
			}
			if e.res != nil {
				res = e.res[i*e.ldr+j0 : i*e.ldr+j0+cols]
			}
			done = epiRowVec(row, bias, res, flags, bv, lo, hi)
		}
		if done < cols {
			e.applyRow(row[done:], i, j0+done)
		}
	}
}

// applyRow applies e to row, the part of output row i from column j0.
func (e *epi) applyRow(row []float32, i, j0 int) {
	cols := len(row)
	if e.bias != nil {
		if e.biasPerRow {
			bv := e.bias[i]
			for j := range row {
				row[j] += bv
			}
		} else {
			b := e.bias[j0 : j0+cols]
			for j := range row {
				row[j] += b[j]
			}
		}
	}
	vec.Activate(row, e.act, e.alpha, e.lo, e.hi)
	if e.res != nil {
		r := e.res[i*e.ldr+j0 : i*e.ldr+j0+cols]
		for j := range row {
			row[j] += r[j]
		}
	}
}
