package winograd

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/conv"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/internal/kerneltest"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// RefConv3x3 is the direct 3x3 stride-1 convolution in float64 with the
// epilogue, and each output's scale (the sum of |x·w| it adds, plus
// |bias|, for the tolerance).
func RefConv3x3(x, w []float32, g conv.ConvGeom, ep *gemm.Epilogue) (want, scale []float64) {
	want = make([]float64, g.N*g.O*g.OH*g.OW)
	scale = make([]float64, len(want))
	for n := range g.N {
		for o := range g.O {
			for oh := range g.OH {
				for ow := range g.OW {
					s, a := 0.0, 0.0
					for c := range g.C {
						for kh := range 3 {
							for kw := range 3 {
								ih, iw := oh+kh-g.PadT, ow+kw-g.PadL
								if ih < 0 || ih >= g.H || iw < 0 || iw >= g.W {
									continue
								}
								p := float64(x[((n*g.C+c)*g.H+ih)*g.W+iw]) * float64(w[((o*g.C+c)*3+kh)*3+kw])
								s += p
								a += math.Abs(p)
							}
						}
					}
					if ep.Bias != nil {
						s += float64(ep.Bias[o])
						a += math.Abs(float64(ep.Bias[o]))
					}
					last := ep.ActLast && ep.Residual != nil
					if !last {
						s = kerneltest.RefAct(ep.Act, s, float64(ep.Alpha), float64(ep.Min), float64(ep.Max))
					}
					i := ((n*g.O+o)*g.OH+oh)*g.OW + ow
					if ep.Residual != nil {
						s += float64(ep.Residual[i])
						a += math.Abs(float64(ep.Residual[i]))
					}
					if last {
						s = kerneltest.RefAct(ep.Act, s, float64(ep.Alpha), float64(ep.Min), float64(ep.Max))
					}
					want[i], scale[i] = s, a
				}
			}
		}
	}
	return want, scale
}

// Geom3x3 is the geometry of a 3x3 stride-1 convolution with the given
// padding (top/left, bottom/right).
func Geom3x3(n, c, h, w, o, pad0, pad1 int) conv.ConvGeom {
	return conv.ConvGeom{N: n, C: c, H: h, W: w, O: o, KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1,
		PadT: pad0, PadL: pad0, PadB: pad1, PadR: pad1, OH: h + pad0 + pad1 - 2, OW: w + pad0 + pad1 - 2}
}

// run is the three steps over fresh buffers, V and M poisoned past what
// each step must write.
func run(p *parallel.Pool, x, w []float32, g conv.ConvGeom, m int, ep gemm.Epilogue) ([]float32, error) {
	return runParts(p, x, w, g, m, ep, 0)
}

// runParts is run in parts of ld tiles (every tile at once for 0), the
// three steps per part, V and M of one part's size.
func runParts(p *parallel.Pool, x, w []float32, g conv.ConvGeom, m int, ep gemm.Epilogue, ld int) ([]float32, error) {
	u, err := Weights(w, g.O, g.C, m)
	if err != nil {
		return nil, err
	}
	_, _, _, tp := tiles(&g, m)
	parts := []Part{{}}
	if ld > 0 {
		parts = nil
		for t0 := 0; t0 < tp; t0 += ld {
			parts = append(parts, Part{T0: t0, T1: min(t0+ld, tp), LD: ld})
		}
	} else {
		ld = tp
	}
	pts := (m + 2) * (m + 2)
	v := kerneltest.Poison(pts * g.C * ld)
	mm := kerneltest.Poison(pts * g.O * ld)
	out := kerneltest.Poison(g.N * g.O * g.OH * g.OW)
	if ep.Residual != nil && len(ep.Residual) == 0 {
		ep.Residual = out // the residual in place
	}
	for _, part := range parts {
		n := tp
		if part.LD > 0 {
			n = part.T1 - part.T0
		}
		Input(p, v, x, g, m, part)
		Product(p, mm, v, u, pts, g.C, g.O, n, ld)
		Output(p, out, mm, g, m, ep, part)
	}
	return out, nil
}

// Tolerance is the error allowed relative to an output's scale: each
// transform adds a few roundings of sums whose terms can be far larger
// than the output they cancel down to (F(4×4)'s Bᵀ rows sum |entries| to
// up to 325, its Aᵀ rows to under 9).
func Tolerance(m int) float64 {
	if m == 4 {
		return 2e-5
	}
	return 2e-6
}

func TestWinograd(t *testing.T) {
	r := kerneltest.NewRand(7)
	geoms := []conv.ConvGeom{
		Geom3x3(1, 4, 8, 8, 5, 1, 1),     // whole tiles of 4
		Geom3x3(2, 3, 7, 9, 4, 1, 1),     // partial tiles, two images
		Geom3x3(1, 16, 14, 14, 24, 1, 1), // ResNet's 14x14 stage, small
		Geom3x3(1, 5, 6, 5, 3, 0, 0),     // no padding: 4x3 output
		Geom3x3(1, 2, 5, 5, 2, 2, 1),     // uneven padding
		Geom3x3(3, 3, 3, 3, 2, 1, 1),     // planes smaller than a tile
	}
	// Odd entries take a residual.
	acts := []gemm.Epilogue{{}, {Act: lir.ActRelu}, {Act: lir.ActClamp, Min: 0, Max: 0.5}, {Act: lir.ActSilu},
		{}, {Act: lir.ActRelu, ActLast: true}, {}, {Act: lir.ActClamp, Min: 0, Max: 0.5, ActLast: true}}
	for _, p := range kerneltest.Pools(t) {
		for gi, g := range geoms {
			x := kerneltest.RandSlice(r, g.N*g.C*g.H*g.W)
			w := kerneltest.RandSlice(r, g.O*g.C*9)
			for _, m := range []int{2, 4} {
				for ai, ep := range acts {
					ep.Bias = kerneltest.RandSlice(r, g.O)
					if ai%2 == 1 {
						ep.Residual = kerneltest.RandSlice(r, g.N*g.O*g.OH*g.OW)
					}
					name := fmt.Sprintf("threads=%d/geom%d/F%d/%s/last=%v", p.Threads(), gi, m, ep.Act, ep.ActLast)
					want, scale := RefConv3x3(x, w, g, &ep)
					got, err := run(p, x, w, g, m, ep)
					if err != nil {
						t.Fatal(err)
					}
					kerneltest.CheckClose(t, name, got, want, scale, Tolerance(m), 0)
				}
			}
		}
	}
}

// The residual may be the output itself: each element is read before it
// is written.
func TestWinogradResidualInPlace(t *testing.T) {
	r := kerneltest.NewRand(8)
	g := Geom3x3(1, 3, 9, 10, 4, 1, 1)
	x := kerneltest.RandSlice(r, g.N*g.C*g.H*g.W)
	w := kerneltest.RandSlice(r, g.O*g.C*9)
	res := kerneltest.RandSlice(r, g.N*g.O*g.OH*g.OW)
	ep := gemm.Epilogue{Act: lir.ActRelu, Residual: res}
	want, scale := RefConv3x3(x, w, g, &ep)
	p := parallel.NewPool(2)
	defer p.Close()
	u, _ := Weights(w, g.O, g.C, 4)
	_, _, _, tp := tiles(&g, 4)
	v, mm := make([]float32, 36*g.C*tp), make([]float32, 36*g.O*tp)
	out := append([]float32(nil), res...)
	ep.Residual = out
	Input(p, v, x, g, 4, Part{})
	Product(p, mm, v, u, 36, g.C, g.O, tp, tp)
	Output(p, out, mm, g, 4, ep, Part{})
	kerneltest.CheckClose(t, "in place", out, want, scale, Tolerance(4), 0)
}

func TestWinogradErrors(t *testing.T) {
	if _, err := For(3); err == nil {
		t.Error("For(3): no error")
	}
	if _, err := Weights(make([]float32, 10), 1, 1, 4); err == nil {
		t.Error("Weights of 10 values for 1x1x3x3: no error")
	}
}

// TestWinogradRandomGeometries runs both tiles over random small
// geometries (planes from 1x1, paddings of 0 to 2 on each side, one to
// three images) against the direct convolution: the tile arithmetic at
// plane edges and across images; all tiles at once and in parts of 16
// and 32 tiles.
func TestWinogradRandomGeometries(t *testing.T) {
	r := kerneltest.NewRand(9)
	p := parallel.NewPool(2)
	defer p.Close()
	for i := range 60 {
		g := conv.ConvGeom{N: 1 + r.IntN(3), C: 1 + r.IntN(9), H: 1 + r.IntN(13), W: 1 + r.IntN(13), O: 1 + r.IntN(9),
			KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1,
			PadT: r.IntN(3), PadL: r.IntN(3), PadB: r.IntN(3), PadR: r.IntN(3)}
		g.OH, g.OW = g.H+g.PadT+g.PadB-2, g.W+g.PadL+g.PadR-2
		if g.OH < 1 || g.OW < 1 {
			continue
		}
		x := kerneltest.RandSlice(r, g.N*g.C*g.H*g.W)
		w := kerneltest.RandSlice(r, g.O*g.C*9)
		ep := gemm.Epilogue{Bias: kerneltest.RandSlice(r, g.O), Act: lir.ActRelu}
		want, scale := RefConv3x3(x, w, g, &ep)
		for _, m := range []int{2, 4} {
			for _, ld := range []int{0, 16, 32} {
				got, err := runParts(p, x, w, g, m, ep, ld)
				if err != nil {
					t.Fatal(err)
				}
				kerneltest.CheckClose(t, fmt.Sprintf("case %d %+v F%d parts of %d", i, g, m, ld), got, want, scale, Tolerance(m), 0)
			}
		}
	}
}

// TestTransformIdentity checks each transform's matrices, entered by
// hand, against the correlation they stand for, in float64: a slip in
// one coefficient would otherwise show only as a larger error.
func TestTransformIdentity(t *testing.T) {
	r := kerneltest.NewRand(11)
	for _, m := range []int{2, 4} {
		tr, err := For(m)
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 20 {
			var g [3]float64
			d := make([]float64, tr.Alpha)
			for i := range g {
				g[i] = float64(kerneltest.RandSlice(r, 1)[0])
			}
			for i := range d {
				d[i] = float64(kerneltest.RandSlice(r, 1)[0])
			}
			for i := range m {
				got, want, scale := 0.0, 0.0, 0.0
				for j := range tr.Alpha {
					gg, bd := 0.0, 0.0
					for k := range 3 {
						gg += tr.G[j][k] * g[k]
					}
					for k := range tr.Alpha {
						bd += tr.BT[j][k] * d[k]
					}
					got += tr.AT[i][j] * gg * bd
				}
				for k := range 3 {
					want += g[k] * d[i+k]
					scale += math.Abs(g[k] * d[i+k])
				}
				if math.Abs(got-want) > 1e-12*(1+scale) {
					t.Fatalf("F(%d): trial %d, output %d: %g, correlation %g", m, trial, i, got, want)
				}
			}
		}
	}
}

// TestRoundingError bounds F(4×4)'s float32 error against the direct
// convolution's: a 3x3 layer of 256 input channels over a ReLU's
// outputs, the rms of each against the float64 reference. The
// transform's interpolation points set that ratio (see f4).
func TestRoundingError(t *testing.T) {
	r := kerneltest.NewRand(5)
	g := Geom3x3(1, 256, 16, 16, 8, 1, 1)
	x := kerneltest.RandSlice(r, g.N*g.C*g.H*g.W)
	for i := range x {
		x[i] = max(x[i], 0)
	}
	w := kerneltest.RandSlice(r, g.O*g.C*9)
	for i := range w {
		w[i] /= 48 // 1/sqrt(9·256): outputs of the inputs' size
	}
	want, _ := RefConv3x3(x, w, g, &gemm.Epilogue{})
	direct := make([]float32, len(want))
	for o := range g.O {
		for oh := range g.OH {
			for ow := range g.OW {
				var s float32
				for c := range g.C {
					for kh := range 3 {
						for kw := range 3 {
							ih, iw := oh+kh-g.PadT, ow+kw-g.PadL
							if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
								s += x[(c*g.H+ih)*g.W+iw] * w[((o*g.C+c)*3+kh)*3+kw]
							}
						}
					}
				}
				direct[(o*g.OH+oh)*g.OW+ow] = s
			}
		}
	}
	rms := func(got []float32) float64 {
		s := 0.0
		for i, v := range got {
			d := float64(v) - want[i]
			s += d * d
		}
		return math.Sqrt(s / float64(len(got)))
	}
	p := parallel.NewPool(1)
	defer p.Close()
	base := rms(direct)
	for _, c := range []struct {
		m     int
		bound float64
	}{{2, 1.5}, {4, 3}} {
		got, err := run(p, x, w, g, c.m, gemm.Epilogue{})
		if err != nil {
			t.Fatal(err)
		}
		ratio := rms(got) / base
		t.Logf("F(%dx%d): rms error %.3g, %.2fx the direct convolution's (%.3g)", c.m, c.m, rms(got), ratio, base)
		if ratio > c.bound {
			t.Errorf("F(%dx%d): rms error %.2fx the direct convolution's, want at most %gx", c.m, c.m, ratio, c.bound)
		}
	}
}
