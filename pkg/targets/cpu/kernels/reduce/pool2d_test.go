package reduce

import (
	"fmt"
	"math"
	"testing"
)

func poolGeom(n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw int, ceil bool) PoolGeom {
	return PoolGeom{N: n, C: c, H: h, W: w, KH: kh, KW: kw, StrideH: sh, StrideW: sw,
		PadT: pt, PadL: pl, PadB: pb, PadR: pr, DilH: dh, DilW: dw,
		OH: outSize(h, kh, sh, dh, pt, pb, ceil), OW: outSize(w, kw, sw, dw, pl, pr, ceil)}
}

// refPool computes max and both averages. The average's divisor follows
// PyTorch's CPU kernel for dilation 1 (window clipped to input+padding, then
// to the input when padding is excluded) and counts cells for dilation > 1.
func refPool(x []float32, g PoolGeom) (mx, avgIncl, avgExcl []float64) {
	n := g.N * g.C * g.OH * g.OW
	mx, avgIncl, avgExcl = make([]float64, n), make([]float64, n), make([]float64, n)
	for t := 0; t < g.N*g.C; t++ {
		for oh := 0; oh < g.OH; oh++ {
			for ow := 0; ow < g.OW; ow++ {
				m, s := math.Inf(-1), 0.0
				cntIn, cntPad := 0, 0
				for kh := 0; kh < g.KH; kh++ {
					for kw := 0; kw < g.KW; kw++ {
						ih := oh*g.StrideH - g.PadT + kh*g.DilH
						iw := ow*g.StrideW - g.PadL + kw*g.DilW
						if ih >= -g.PadT && ih < g.H+g.PadB && iw >= -g.PadL && iw < g.W+g.PadR {
							cntPad++
						}
						if ih < 0 || ih >= g.H || iw < 0 || iw >= g.W {
							continue
						}
						cntIn++
						v := float64(x[(t*g.H+ih)*g.W+iw])
						if v > m || math.IsNaN(v) {
							if !math.IsNaN(m) {
								m = v
							}
						}
						s += v
					}
				}
				if g.DilH == 1 && g.DilW == 1 {
					hs, ws := oh*g.StrideH-g.PadT, ow*g.StrideW-g.PadL
					he, we := min(hs+g.KH, g.H+g.PadB), min(ws+g.KW, g.W+g.PadR)
					cntPad = (he - hs) * (we - ws)
					hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, g.H), min(we, g.W)
					if c := max(he-hs, 0) * max(we-ws, 0); c != cntIn {
						panic(fmt.Sprintf("reference disagrees with itself: %d vs %d", c, cntIn))
					}
				}
				i := (t*g.OH+oh)*g.OW + ow
				mx[i] = m
				avgIncl[i] = s / float64(cntPad)
				avgExcl[i] = s / float64(cntIn)
			}
		}
	}
	return mx, avgIncl, avgExcl
}

func TestPool2D(t *testing.T) {
	ps := pools(t)
	geoms := []struct {
		name string
		g    PoolGeom
	}{
		{"2x2 s2", poolGeom(2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false)},
		{"2x2 s2 odd input", poolGeom(1, 2, 7, 9, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false)},
		{"3x3 s2 p1", poolGeom(2, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false)},
		{"3x3 s1 p1", poolGeom(1, 4, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false)},
		{"asym pad", poolGeom(1, 2, 7, 8, 3, 2, 2, 1, 2, 0, 0, 1, 1, 1, false)},
		{"ceil mode past padding", poolGeom(1, 3, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true)},
		{"ceil mode no padding", poolGeom(2, 2, 8, 7, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true)},
		{"ceil mode 2x2", poolGeom(1, 3, 5, 5, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, true)},
		{"dilation 2", poolGeom(1, 2, 9, 10, 3, 3, 1, 2, 1, 2, 1, 2, 2, 2, false)},
		{"dilation ceil", poolGeom(1, 2, 10, 10, 2, 3, 3, 2, 1, 1, 1, 1, 2, 2, true)},
		{"global window", poolGeom(2, 3, 5, 4, 5, 4, 1, 1, 0, 0, 0, 0, 1, 1, false)},
		{"1x1", poolGeom(1, 3, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, false)},
		{"kernel larger than input", poolGeom(1, 2, 3, 2, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, false)},
		{"window wholly in padding", poolGeom(1, 2, 3, 3, 2, 2, 1, 1, 2, 2, 0, 0, 1, 1, false)},
		{"large", poolGeom(1, 17, 33, 31, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true)},
	}
	for i, tc := range geoms {
		g := tc.g
		r := newRand(uint64(700 + i))
		x := randSlice(r, g.N*g.C*g.H*g.W)
		mx, incl, excl := refPool(x, g)
		n := g.N * g.C * g.OH * g.OW
		for _, p := range ps {
			tag := fmt.Sprintf("%s threads=%d", tc.name, p.Threads())
			out := poison(n)
			MaxPool2D(p, out, x, g)
			checkClose(t, "MaxPool2D "+tag, out, mx, nil, 0, 0) // exact: max rounds nothing
			out = poison(n)
			AvgPool2D(p, out, x, g, true)
			// float32 sums of at most a few dozen cells: rtol 1e-6 of the
			// magnitude would do; 1e-5 keeps the file's convention.
			checkClose(t, "AvgPool2D incl "+tag, out, incl, nil, 1e-5, 1e-6)
			out = poison(n)
			AvgPool2D(p, out, x, g, false)
			checkClose(t, "AvgPool2D excl "+tag, out, excl, nil, 1e-5, 1e-6)
		}
	}
}

func TestMaxPoolNaN(t *testing.T) {
	// NaN anywhere in a window wins, wherever it is in the window.
	g := poolGeom(1, 1, 2, 4, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false)
	nan := float32(math.NaN())
	x := []float32{1, nan, 5, 2, 3, 4, nan, 9}
	out := make([]float32, 2)
	MaxPool2D(nil, out, x, g)
	if out[0] == out[0] || out[1] == out[1] {
		t.Errorf("got %v, want [NaN NaN]", out)
	}
}

// outSize is the output length of a window dim: floor mode, or ceil mode
// (the last window may start in the end padding but not past it, PyTorch's
// rule).
func outSize(in, k, stride, dil, padA, padB int, ceil bool) int {
	span := in + padA + padB - dil*(k-1) - 1
	if span < 0 {
		return 0
	}
	if !ceil {
		return span/stride + 1
	}
	o := (span+stride-1)/stride + 1
	if (o-1)*stride >= in+padA {
		o--
	}
	return o
}
