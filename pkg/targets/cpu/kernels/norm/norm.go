package norm

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Softmax writes softmax (log_softmax when log) of x over the middle dim of
// [outer, axis, inner]. It subtracts the maximum first and sums in float64.
// A slice whose maximum is ±Inf or that holds a NaN gives NaN (all -Inf
// included), as PyTorch does. out may be x.
func Softmax(p *parallel.Pool, out, x []float32, outer, axis, inner int, log bool) {
	n := outer * axis * inner
	if outer < 0 || axis < 0 || inner < 0 || len(x) < n || len(out) < n {
		panic(fmt.Sprintf("kernels: Softmax: slices of %d, %d elements for [%d, %d, %d]", len(out), len(x), outer, axis, inner))
	}
	if n == 0 {
		return
	}
	if inner == 1 {
		p.For(outer, max(1, 4096/axis), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				softmaxRow(out[o*axis:(o+1)*axis], x[o*axis:(o+1)*axis], log)
			}
		})
		return
	}
	// Strided: each task takes a block of inner columns of one outer slice
	// and sweeps the axis row by row, contiguous within each row.
	const blk = 256
	nb := ceilDiv(inner, blk)
	p.For(outer*nb, max(1, 4096/(axis*min(inner, blk))), func(lo, hi int) {
		mx := make([]float64, blk)
		sum := make([]float64, blk)
		for t := lo; t < hi; t++ {
			o, j0 := t/nb, (t%nb)*blk
			w := min(blk, inner-j0)
			mx, sum := mx[:w], sum[:w]
			base := o * axis * inner
			for j := range mx {
				mx[j] = math.Inf(-1)
				sum[j] = 0
			}
			for a := 0; a < axis; a++ {
				row := x[base+a*inner+j0 : base+a*inner+j0+w]
				for j, v := range row {
					if v := float64(v); v > mx[j] || v != v {
						mx[j] = v
					}
				}
			}
			for a := 0; a < axis; a++ {
				off := base + a*inner + j0
				row, orow := x[off:off+w], out[off:off+w]
				for j, v := range row {
					d := float64(v) - mx[j]
					e := vec.ExpNaN(d)
					sum[j] += e
					if log {
						orow[j] = float32(d)
					} else {
						orow[j] = float32(e)
					}
				}
			}
			for j := range sum {
				if log {
					sum[j] = math.Log(sum[j])
				} else {
					sum[j] = 1 / sum[j]
				}
			}
			for a := 0; a < axis; a++ {
				orow := out[base+a*inner+j0 : base+a*inner+j0+w]
				for j, v := range orow {
					if log {
						orow[j] = float32(float64(v) - sum[j])
					} else {
						orow[j] = float32(float64(v) * sum[j])
					}
				}
			}
		}
	})
}

func softmaxRow(out, x []float32, log bool) {
	m := math.Inf(-1)
	for _, v := range x {
		if v := float64(v); v > m || v != v {
			m = v
		}
	}
	var s float64
	if log {
		for _, v := range x {
			s += vec.ExpNaN(float64(v) - m)
		}
		ls := math.Log(s) + m
		for j, v := range x {
			out[j] = float32(float64(v) - ls)
		}
		return
	}
	if math.IsInf(m, -1) {
		// Every input is -Inf: 0/0, NaN, as PyTorch gives.
		for j := range out[:len(x)] {
			out[j] = float32(math.NaN())
		}
		return
	}
	copy(out, x)
	s = vec.ExpSub(out[:len(x)], m)
	inv := 1 / s
	for j, v := range out {
		out[j] = float32(float64(v) * inv)
	}
}

// rowGrain picks rows per chunk so each chunk has some 16K elements.
func rowGrain(cols int) int { return max(1, tuning.GrainWork/max(1, cols)) }

func checkRows(fn string, rows, cols int, slices ...[]float32) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("kernels: %s: bad shape %d×%d", fn, rows, cols))
	}
	for _, s := range slices {
		if s != nil && len(s) < rows*cols {
			panic(fmt.Sprintf("kernels: %s: slice of %d elements for %d×%d", fn, len(s), rows, cols))
		}
	}
}

func checkVec(fn, name string, s []float32, n int) {
	if s != nil && len(s) < n {
		panic(fmt.Sprintf("kernels: %s: %s has %d elements, want %d", fn, name, len(s), n))
	}
}

// LayerNorm normalizes each row of x [rows, cols] to zero mean and unit
// (biased) variance, out = (x-mean)/sqrt(var+eps)·scale + bias; mean and
// variance in float64, two passes. scale and bias ([cols]) may be nil. out
// may be x.
func LayerNorm(p *parallel.Pool, out, x, scale, bias []float32, rows, cols int, eps float32) {
	checkRows("LayerNorm", rows, cols, out, x)
	checkVec("LayerNorm", "scale", scale, cols)
	checkVec("LayerNorm", "bias", bias, cols)
	if cols == 0 {
		return
	}
	p.For(rows, rowGrain(cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			layerNormRow(out[i*cols:(i+1)*cols], x[i*cols:(i+1)*cols], scale, bias, eps)
		}
	})
}

// AddLayerNorm is the residual-add-then-normalize pair: s = x + r (a float32
// add, as the separate op would round it); when sum is not nil s is written
// there; out = LayerNorm(s). Any of out, sum, x and r may be the same slice.
func AddLayerNorm(p *parallel.Pool, out, sum, x, r, scale, bias []float32, rows, cols int, eps float32) {
	checkRows("AddLayerNorm", rows, cols, out, sum, x, r)
	checkVec("AddLayerNorm", "scale", scale, cols)
	checkVec("AddLayerNorm", "bias", bias, cols)
	if cols == 0 {
		return
	}
	p.For(rows, rowGrain(cols), func(lo, hi int) {
		var tmp []float32
		if sum == nil {
			tmp = make([]float32, cols)
		}
		for i := lo; i < hi; i++ {
			s := tmp
			if sum != nil {
				s = sum[i*cols : (i+1)*cols]
			}
			// s = x + r, as a copy and an axpy with a = 1 (an FMA with a
			// factor of 1 rounds as the add does): the Go loop took most
			// of a 128x256 AddLayerNorm's time.
			copy(s, x[i*cols:(i+1)*cols])
			vec.Axpy(s, r[i*cols:(i+1)*cols], 1)
			layerNormRow(out[i*cols:(i+1)*cols], s, scale, bias, eps)
		}
	})
}

// RMSNorm scales each row of x [rows, cols] by 1/sqrt(mean(x²)+eps) and by
// scale ([cols], may be nil); the mean square is summed in float64. out may
// be x.
func RMSNorm(p *parallel.Pool, out, x, scale []float32, rows, cols int, eps float32) {
	checkRows("RMSNorm", rows, cols, out, x)
	checkVec("RMSNorm", "scale", scale, cols)
	if cols == 0 {
		return
	}
	p.For(rows, rowGrain(cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			rmsNormRow(out[i*cols:(i+1)*cols], x[i*cols:(i+1)*cols], scale, eps)
		}
	})
}
func ceilDiv(a, b int) int { return (a + b - 1) / b }
