// Package winograd runs 3x3, stride-1 convolutions as Winograd's minimal
// filtering algorithm F(m×m, 3×3) (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016): each m×m block of the output is
// Aᵀ·[(G·g·Gᵀ) ⊙ (Bᵀ·d·B)]·A for the (m+2)×(m+2) input patch d it reads,
// which takes (m+2)² multiplies per input channel where the direct
// convolution takes 9·m². The element-wise products, summed over the
// input channels, are (m+2)² independent matrix products, so the work is
// three steps (lir.WinogradInput, lir.WinogradProduct,
// lir.WinogradOutput): these are the runtime's straightforward kernels for
// them, and the reference the generated code (pkg/targets/cpu/cgen) is
// tested against. The weights' transform runs at build time (Weights).
package winograd

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/conv"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// Transform is F(m×m, 3×3)'s matrices: Bᵀ (α×α, α = m+2) for the input,
// G (α×3) for the weights and Aᵀ (m×α) for the output.
type Transform struct {
	M, Alpha  int
	BT, G, AT [][]float64
}

// The interpolation points (with the point at infinity) are 0, ±1 for
// F(2×2, 3×3) and 0, ±3/2, ±3/4 for F(4×4, 3×3). F(4×4)'s float32 error
// comes mostly from the products' sums over input channels, amplified by
// the output transform; Lavin's 0, ±1, ±2 (Bᵀ entries up to 5, Aᵀ up to
// 8) left Inception-v3 outside the conformance bar. Of the sets of five
// points from 0, ±1/4, ±1/2, ±3/4, ±1, ±3/2, ±2, ±4, simulated in
// float32 over 64-512 channels, these gave the least error: half of
// Lavin's rms (TestRoundingError holds it), with as many nonzero Bᵀ
// entries (22). The powers of the points are dyadic, so Bᵀ (scaled to
// integers) and Aᵀ are exact in float32; G's fractions apply in float64
// at build time. docs/perf/native.md has the measurements.
var (
	f2 = Transform{M: 2, Alpha: 4,
		BT: [][]float64{
			{1, 0, -1, 0},
			{0, 1, 1, 0},
			{0, -1, 1, 0},
			{0, 1, 0, -1},
		},
		G: [][]float64{
			{1, 0, 0},
			{0.5, 0.5, 0.5},
			{0.5, -0.5, 0.5},
			{0, 0, 1},
		},
		AT: [][]float64{
			{1, 1, 1, 0},
			{0, 1, -1, -1},
		},
	}
	f4 = Transform{M: 4, Alpha: 6,
		BT: [][]float64{
			{81, 0, -180, 0, 64, 0},
			{0, -27, -18, 48, 32, 0},
			{0, 27, -18, -48, 32, 0},
			{0, 27, 36, -12, -16, 0},
			{0, -27, 36, 12, -16, 0},
			{0, 81, 0, -180, 0, 64},
		},
		G: [][]float64{
			{1.0 / 81, 0, 0},
			{1.0 / 243, 1.0 / 162, 1.0 / 108},
			{1.0 / 243, -1.0 / 162, 1.0 / 108},
			{8.0 / 243, 2.0 / 81, 1.0 / 54},
			{8.0 / 243, -2.0 / 81, 1.0 / 54},
			{0, 0, 1.0 / 64},
		},
		AT: [][]float64{
			{1, 1, 1, 1, 1, 0},
			{0, 3.0 / 2, -3.0 / 2, 3.0 / 4, -3.0 / 4, 0},
			{0, 9.0 / 4, 9.0 / 4, 9.0 / 16, 9.0 / 16, 0},
			{0, 27.0 / 8, -27.0 / 8, 27.0 / 64, -27.0 / 64, 1},
		},
	}
)

// For returns the transform of F(m×m, 3×3), m 2 or 4.
func For(m int) (*Transform, error) {
	switch m {
	case 2:
		return &f2, nil
	case 4:
		return &f4, nil
	}
	return nil, fmt.Errorf("winograd: no F(%dx%d, 3x3) transform (tile 2 or 4)", m, m)
}

// Points is the number of points of the transform, α².
func (t *Transform) Points() int { return t.Alpha * t.Alpha }

// Block is the output channels of one block of U: U [α², ⌈O/Block⌉, C,
// Block], so that a register tile of output channels (a multiple of
// Block at every CPU level) reads its weights as a few contiguous
// streams, one per block, where [α², O, C] would be one stream per
// channel, C·4 bytes apart: more than the prefetchers follow (the
// products of 7x7 layers with 512 channels, which stream U once per run,
// took 1.5x as long so; docs/perf/native.md).
const Block = 4

// UIndex is the index in U of point q, output channel o and input
// channel ic for c input channels.
func UIndex(q, o, ic, oBlocks, c int) int {
	return ((q*oBlocks+o/Block)*c+ic)*Block + o%Block
}

// ULen is the length of U for p points, o output and c input channels.
func ULen(p, o, c int) int { return p * (o + Block - 1) / Block * Block * c }

// Weights transforms the [o, c, 3, 3] weights w into U [α², ⌈o/Block⌉,
// c, Block] (zeros past o): U at (i·α+j, oc, ic) = (G·w[oc, ic]·Gᵀ)[i, j],
// computed in float64.
func Weights(w []float32, o, c, m int) ([]float32, error) {
	t, err := For(m)
	if err != nil {
		return nil, err
	}
	u := make([]float32, ULen(t.Points(), o, c))
	return u, WeightsInto(u, w, o, c, m)
}

// WeightsInto is Weights into u, which holds ULen((m+2)², o, c) values.
func WeightsInto(u, w []float32, o, c, m int) error {
	t, err := For(m)
	if err != nil {
		return err
	}
	if len(w) != o*c*9 {
		return fmt.Errorf("winograd: %d weights, want %d for %d x %d x 3 x 3", len(w), o*c*9, o, c)
	}
	a := t.Alpha
	if len(u) != ULen(a*a, o, c) {
		return fmt.Errorf("winograd: %d transformed weights, want %d", len(u), ULen(a*a, o, c))
	}
	clear(u)
	var g [6][3]float64
	for i := range a {
		copy(g[i][:], t.G[i])
	}
	ob := (o + Block - 1) / Block
	stride := ob * c * Block // between points
	// Channel blocks split among goroutines: a model's weights take tens
	// of millions of multiply-adds, once per load. Each value is computed
	// the same way whatever the split.
	blocks := func(lo, hi int) {
		var gw [6][3]float64
		for oc := lo * Block; oc < min(hi*Block, o); oc++ {
			for ic := range c {
				x := (*[9]float32)(w[(oc*c+ic)*9:])
				for i := range a {
					gi := &g[i]
					for k := range 3 {
						gw[i][k] = gi[0]*float64(x[k]) + gi[1]*float64(x[3+k]) + gi[2]*float64(x[6+k])
					}
				}
				at := (oc/Block*c+ic)*Block + oc%Block
				for i := range a {
					gwi := &gw[i]
					for j := range a {
						gj := &g[j]
						u[at+(i*a+j)*stride] = float32(gwi[0]*gj[0] + gwi[1]*gj[1] + gwi[2]*gj[2])
					}
				}
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, o*c/4096), ob)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() { blocks(k*ob/workers, (k+1)*ob/workers) })
	}
	wg.Wait()
	return nil
}

// tiles is g's tiles: th×tw per image, t in all, tp rounded up to 16.
func tiles(g *conv.ConvGeom, m int) (th, tw, t, tp int) {
	th, tw = (g.OH+m-1)/m, (g.OW+m-1)/m
	t = g.N * th * tw
	return th, tw, t, (t + 15) / 16 * 16
}

// Part is the part [T0, T1) of a convolution's tiles a step computes,
// and LD the tiles its scratch holds (tile t at t - T0): lir.TileRange.
// The zero Part is every tile.
type Part struct{ T0, T1, LD int }

// span returns the part's tiles and stride over tp tiles in all.
func (r Part) span(tp int) (t0, t1, ld int) {
	if r == (Part{}) {
		return 0, tp, tp
	}
	return r.T0, r.T1, r.LD
}

// Input writes V [α², C, TP]: the transform Bᵀ·d·B of the patch d that
// each tile reads from x [N, C, H, W] (zeros outside it), and zeros for
// the tiles past the last; with a part, V [α², C, LD] of its tiles.
func Input(p *parallel.Pool, v, x []float32, g conv.ConvGeom, m int, part Part) {
	t, err := For(m)
	if err != nil {
		panic(err)
	}
	th, tw, nt, tp := tiles(&g, m)
	t0, t1, ld := part.span(tp)
	a := t.Alpha
	if len(x) < g.N*g.C*g.H*g.W || len(v) < a*a*g.C*ld || t1 > tp || t1-t0 > ld {
		panic(fmt.Sprintf("winograd: Input: x has %d and v %d elements for %+v, part %+v", len(x), len(v), g, part))
	}
	p.For(g.C, 1, func(lo, hi int) {
		var d, bd [6][6]float32
		for c := lo; c < hi; c++ {
			for ti := t0; ti < t1; ti++ {
				if ti >= nt {
					for q := range a * a {
						v[(q*g.C+c)*ld+ti-t0] = 0
					}
					continue
				}
				n, r := ti/(th*tw), ti%(th*tw)
				ih0, iw0 := r/tw*m-g.PadT, r%tw*m-g.PadL
				xc := x[(n*g.C+c)*g.H*g.W:]
				for i := range a {
					for j := range a {
						d[i][j] = 0
						if ih, iw := ih0+i, iw0+j; ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
							d[i][j] = xc[ih*g.W+iw]
						}
					}
				}
				// bd = Bᵀ·d, then V = bd·B.
				for i := range a {
					for j := range a {
						var s float32
						for k := range a {
							s += float32(t.BT[i][k]) * d[k][j]
						}
						bd[i][j] = s
					}
				}
				for i := range a {
					for j := range a {
						var s float32
						for k := range a {
							s += bd[i][k] * float32(t.BT[j][k])
						}
						v[((i*a+j)*g.C+c)*ld+ti-t0] = s
					}
				}
			}
		}
	})
}

// Product computes M[q, o, :] = Σ_c U[q, o, c]·V[q, c, :] for each of
// the p points q, over the first tp tiles of rows of ld, with U blocked
// as Weights makes it.
func Product(pool *parallel.Pool, mm, v, u []float32, p, c, o, tp, ld int) {
	if len(v) < p*c*ld || len(u) < ULen(p, o, c) || len(mm) < p*o*ld || tp > ld {
		panic(fmt.Sprintf("winograd: Product: v %d, u %d, m %d elements for p %d c %d o %d tp %d ld %d", len(v), len(u), len(mm), p, c, o, tp, ld))
	}
	ob := (o + Block - 1) / Block
	pool.For(p*o, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			q, oc := i/o, i%o
			row := mm[(q*o+oc)*ld : (q*o+oc)*ld+tp]
			clear(row)
			for ic := range c {
				vec.Axpy(row, v[(q*c+ic)*ld:(q*c+ic)*ld+tp], u[UIndex(q, oc, ic, ob, c)])
			}
		}
	})
}

// Output writes out [N, O, OH, OW] = act(Aᵀ·m·A + bias) + residual from
// each tile's sums m in M [α², O, TP], the part of each m×m block inside
// the plane. The residual may be out itself: each element of it is read
// before the same element of out is written. With a part, M [α², O, LD]
// holds its tiles, and only their blocks are written.
func Output(p *parallel.Pool, out, mm []float32, g conv.ConvGeom, m int, ep gemm.Epilogue, part Part) {
	t, err := For(m)
	if err != nil {
		panic(err)
	}
	th, tw, nt, tp := tiles(&g, m)
	t0, t1, ld := part.span(tp)
	a := t.Alpha
	plane := g.OH * g.OW
	if len(mm) < a*a*g.O*ld || len(out) < g.N*g.O*plane || t1 > tp || t1-t0 > ld ||
		(ep.Bias != nil && len(ep.Bias) < g.O) || (ep.Residual != nil && len(ep.Residual) < g.N*g.O*plane) {
		panic(fmt.Sprintf("winograd: Output: m has %d and out %d elements for %+v, part %+v", len(mm), len(out), g, part))
	}
	p.For(g.O, 1, func(lo, hi int) {
		var s, am [6][6]float32
		var row [4]float32
		for o := lo; o < hi; o++ {
			var bias float32
			if ep.Bias != nil {
				bias = ep.Bias[o]
			}
			for ti := t0; ti < min(t1, nt); ti++ {
				for q := range a * a {
					s[q/a][q%a] = mm[(q*g.O+o)*ld+ti-t0]
				}
				// am = Aᵀ·s, then Aᵀ·s·A.
				for i := range m {
					for j := range a {
						var acc float32
						for k := range a {
							acc += float32(t.AT[i][k]) * s[k][j]
						}
						am[i][j] = acc
					}
				}
				n, r := ti/(th*tw), ti%(th*tw)
				oh0, ow0 := r/tw*m, r%tw*m
				cols := min(m, g.OW-ow0)
				for i := range min(m, g.OH-oh0) {
					for j := range cols {
						var acc float32
						for k := range a {
							acc += am[i][k] * float32(t.AT[j][k])
						}
						row[j] = acc + bias
					}
					last := ep.ActLast && ep.Residual != nil
					if !last {
						vec.Activate(row[:cols], ep.Act, ep.Alpha, ep.Min, ep.Max)
					}
					at := ((n*g.O+o)*g.OH+oh0+i)*g.OW + ow0
					if ep.Residual != nil {
						for j := range cols {
							row[j] += ep.Residual[at+j]
						}
					}
					if last {
						vec.Activate(row[:cols], ep.Act, ep.Alpha, ep.Min, ep.Max)
					}
					copy(out[at:at+cols], row[:cols])
				}
			}
		}
	})
}
