package reduce

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// PoolGeom is the geometry of a 2-D pooling over NCHW input: x [N, C, H, W],
// output [N, C, OH, OW]. Strides and dilations of 0 are taken as 1. OH and OW
// are the caller's (floor or ceil mode); windows may run past the padding.
type PoolGeom struct {
	N, C, H, W             int
	KH, KW                 int
	StrideH, StrideW       int
	PadT, PadL, PadB, PadR int
	DilH, DilW             int
	OH, OW                 int
}

func (g *PoolGeom) check(fn string, out, x []float32) {
	g.StrideH, g.StrideW = max(g.StrideH, 1), max(g.StrideW, 1)
	g.DilH, g.DilW = max(g.DilH, 1), max(g.DilW, 1)
	if min(g.N, g.C, g.H, g.W, g.KH, g.KW, g.OH, g.OW) < 0 {
		panic(fmt.Sprintf("kernels: %s: bad geometry %+v", fn, *g))
	}
	if len(x) < g.N*g.C*g.H*g.W || len(out) < g.N*g.C*g.OH*g.OW {
		panic(fmt.Sprintf("kernels: %s: slices of %d, %d elements for %+v", fn, len(x), len(out), *g))
	}
}

// poolPlanes runs plane(x, out) over the N·C planes in parallel.
func poolPlanes(p *parallel.Pool, out, x []float32, g *PoolGeom, plane func(xp, op []float32)) {
	hw, s := g.H*g.W, g.OH*g.OW
	if s == 0 {
		return
	}
	grain := max(1, tuning.GrainWork/max(1, s*g.KH*g.KW))
	p.For(g.N*g.C, grain, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			plane(x[t*hw:(t+1)*hw], out[t*s:(t+1)*s])
		}
	})
}

// forWindowCells calls fn once per kernel cell and output row whose input
// row for that cell lies inside the input: orow is the run of outputs whose
// input column lies inside too, xrow the input row and iw0 the input column
// of orow[0] (each next output steps StrideW).
func forWindowCells(g *PoolGeom, xp, op []float32, fn func(orow, xrow []float32, iw0 int)) {
	for kh := 0; kh < g.KH; kh++ {
		for kw := 0; kw < g.KW; kw++ {
			iwOff := kw*g.DilW - g.PadL
			owLo, owHi := validRange(iwOff, g.StrideW, g.W, g.OW)
			if owLo >= owHi {
				continue
			}
			for oh := 0; oh < g.OH; oh++ {
				ih := oh*g.StrideH + kh*g.DilH - g.PadT
				if ih < 0 || ih >= g.H {
					continue
				}
				fn(op[oh*g.OW+owLo:oh*g.OW+owHi], xp[ih*g.W:(ih+1)*g.W], owLo*g.StrideW+iwOff)
			}
		}
	}
}

// MaxPool2D takes the maximum over each window. Padding never wins: a cell
// outside the input counts as -Inf, so a window wholly outside the input
// gives -Inf. NaN in a window gives NaN.
func MaxPool2D(p *parallel.Pool, out, x []float32, g PoolGeom) {
	g.check("MaxPool2D", out, x)
	ninf := float32(math.Inf(-1))
	poolPlanes(p, out, x, &g, func(xp, op []float32) {
		for i := range op {
			op[i] = ninf
		}
		forWindowCells(&g, xp, op, func(orow, xrow []float32, iw int) {
			for j, m := range orow {
				v := xrow[iw]
				if v > m || v != v {
					orow[j] = v
				}
				iw += g.StrideW
			}
		})
	})
}

// AvgPool2D averages each window with ONNX semantics. The divisor is the
// number of window cells inside the input (countIncludePad false) or inside
// the input plus its padding (true); cells of a ceil-mode window that run
// past the padding never count. A window with no counted cell gives 0/0 =
// NaN (PyTorch and ONNX geometries never produce one).
func AvgPool2D(p *parallel.Pool, out, x []float32, g PoolGeom, countIncludePad bool) {
	g.check("AvgPool2D", out, x)
	// The divisor factors into rows times columns.
	count := func(o, stride, k, dil, pad, padEnd, size int) int {
		n := 0
		for i := 0; i < k; i++ {
			pos := o*stride + i*dil - pad
			if countIncludePad {
				if pos >= -pad && pos < size+padEnd {
					n++
				}
			} else if pos >= 0 && pos < size {
				n++
			}
		}
		return n
	}
	rows := make([]float32, g.OH)
	for oh := range rows {
		rows[oh] = float32(count(oh, g.StrideH, g.KH, g.DilH, g.PadT, g.PadB, g.H))
	}
	cols := make([]float32, g.OW)
	for ow := range cols {
		cols[ow] = float32(count(ow, g.StrideW, g.KW, g.DilW, g.PadL, g.PadR, g.W))
	}
	poolPlanes(p, out, x, &g, func(xp, op []float32) {
		clear(op)
		forWindowCells(&g, xp, op, func(orow, xrow []float32, iw int) {
			if g.StrideW == 1 {
				xs := xrow[iw : iw+len(orow)]
				for j := range orow {
					orow[j] += xs[j]
				}
				return
			}
			for j := range orow {
				orow[j] += xrow[iw]
				iw += g.StrideW
			}
		})
		for oh := 0; oh < g.OH; oh++ {
			orow := op[oh*g.OW : (oh+1)*g.OW]
			for ow := range orow {
				orow[ow] /= rows[oh] * cols[ow]
			}
		}
	})
}

// sum64 sums in float64 with four independent accumulators.
func sum64(x []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// validRange returns the outputs [lo, hi) of a dimension with n outputs
// whose input index lo·stride + off lies in [0, size).
func validRange(off, stride, size, n int) (lo, hi int) {
	if off < 0 {
		lo = (-off + stride - 1) / stride
	}
	if size-1-off < 0 {
		return 0, 0
	}
	hi = min(n, (size-1-off)/stride+1)
	return min(lo, hi), hi
}
