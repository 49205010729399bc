package conv

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

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

func refConv(x, w []float32, g ConvGeom, ep *gemm.Epilogue) (want, scale []float64) {
	g.normalize()
	cg, og := g.C/g.Groups, g.O/g.Groups
	want = make([]float64, g.N*g.O*g.OH*g.OW)
	scale = make([]float64, len(want))
	for n := 0; n < g.N; n++ {
		for o := 0; o < g.O; o++ {
			grp := o / og
			for oh := 0; oh < g.OH; oh++ {
				for ow := 0; ow < g.OW; ow++ {
					var s, mag float64
					for c := 0; c < cg; c++ {
						ci := grp*cg + c
						for kh := 0; kh < g.KH; kh++ {
							for kw := 0; kw < g.KW; kw++ {
								ih := oh*g.StrideH - g.PadT + kh*g.DilH
								iw := ow*g.StrideW - g.PadL + kw*g.DilW
								if ih < 0 || ih >= g.H || iw < 0 || iw >= g.W {
									continue
								}
								v := float64(x[((n*g.C+ci)*g.H+ih)*g.W+iw]) * float64(w[((o*cg+c)*g.KH+kh)*g.KW+kw])
								s += v
								mag += math.Abs(v)
							}
						}
					}
					i := ((n*g.O+o)*g.OH+oh)*g.OW + ow
					var bias, res float64
					if ep.Bias != nil {
						bias = float64(ep.Bias[o])
					}
					if ep.Residual != nil {
						res = float64(ep.Residual[i])
					}
					want[i] = refEpilogue(ep, s, bias, res)
					scale[i] = mag + math.Abs(bias) + math.Abs(res)
				}
			}
		}
	}
	return want, scale
}

func convGeom(n, c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, groups int, ceil bool) ConvGeom {
	return ConvGeom{N: n, C: c, H: h, W: w, O: o, KH: kh, KW: kw, StrideH: sh, StrideW: sw,
		PadT: pt, PadL: pl, PadB: pb, PadR: pr, DilH: dh, DilW: dw, Groups: groups,
		OH: outSize(h, kh, sh, dh, pt, pb, ceil), OW: outSize(w, kw, sw, dw, pl, pr, ceil)}
}

func TestConv2D(t *testing.T) {
	ps := pools(t)
	geoms := []struct {
		name string
		g    ConvGeom
	}{
		{"3x3 pad1", convGeom(2, 3, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false)},
		{"stride2 asym pad", convGeom(1, 3, 9, 8, 5, 3, 3, 2, 2, 1, 0, 2, 1, 1, 1, 1, false)},
		{"stride (2,3)", convGeom(1, 2, 11, 13, 3, 3, 2, 2, 3, 0, 1, 0, 1, 1, 1, 1, false)},
		{"dilation 2", convGeom(2, 3, 10, 9, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, false)},
		{"dilation (2,3) stride 2", convGeom(1, 2, 13, 14, 3, 3, 3, 2, 2, 1, 3, 0, 2, 2, 3, 1, false)},
		{"groups 2", convGeom(2, 4, 6, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, false)},
		{"groups 3 stride 2", convGeom(1, 6, 9, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, false)},
		{"depthwise", convGeom(2, 5, 8, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5, false)},
		{"depthwise stride2 asym", convGeom(1, 4, 9, 10, 4, 3, 3, 2, 2, 0, 1, 1, 0, 1, 1, 4, false)},
		{"depthwise small s1", convGeom(1, 9, 14, 14, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 9, false)},
		{"depthwise small s2", convGeom(2, 6, 14, 14, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, false)},
		{"depthwise small s2 odd", convGeom(1, 5, 15, 13, 5, 3, 3, 2, 2, 0, 2, 2, 1, 1, 1, 5, false)},
		{"depthwise small s2 ceil", convGeom(1, 3, 8, 8, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, true)},
		{"depthwise small pad2", convGeom(1, 4, 7, 7, 4, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 4, false)},
		{"depthwise 32x32 s2 pad0", convGeom(1, 3, 32, 32, 3, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 3, false)},
		{"depthwise 1x1 plane", convGeom(1, 3, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, false)},
		{"depthwise 2x3 s2", convGeom(1, 3, 2, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, false)},
		{"depthwise wide s1", convGeom(1, 3, 20, 40, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, false)},
		{"depthwise wide s2 odd", convGeom(1, 3, 21, 35, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, false)},
		{"depthwise wide s2 pad2", convGeom(1, 2, 17, 36, 2, 3, 3, 2, 2, 2, 2, 0, 0, 1, 1, 2, false)},
		{"depthwise wide s2 pad0", convGeom(1, 2, 16, 37, 2, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 2, false)},
		{"depthwise s2 in place 112", convGeom(1, 2, 112, 112, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, false)},
		{"depthwise s2 in place odd", convGeom(2, 3, 23, 41, 3, 3, 3, 2, 2, 0, 1, 2, 1, 1, 1, 3, false)},
		{"depthwise s2 in place 18 wide", convGeom(1, 2, 5, 18, 2, 3, 3, 2, 2, 2, 1, 1, 0, 1, 1, 2, false)},
		{"depthwise s2 in place ceil", convGeom(1, 2, 30, 34, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, true)},
		{"depthwise s1 in place 16 wide", convGeom(2, 2, 2, 16, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, false)},
		{"depthwise s1 in place pad top 2", convGeom(1, 3, 9, 23, 3, 3, 3, 1, 1, 2, 1, 0, 1, 1, 1, 3, false)},
		{"depthwise s1 in place 112", convGeom(1, 2, 112, 112, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, false)},
		{"stride 2 panels from the input", convGeom(1, 3, 64, 64, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, false)},
		{"stride 2 panels mixed", convGeom(2, 2, 46, 40, 7, 3, 3, 2, 2, 2, 1, 0, 1, 1, 1, 1, false)},
		// 100 rows over k = 576: one A block on several threads, the
		// input's column phases split across them.
		{"stride 2 one A block, phases", convGeom(1, 64, 30, 30, 100, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, false)},
		{"depthwise large s1 (row kernel)", convGeom(1, 2, 130, 131, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, false)},
		{"depthwise large s2 (row kernel)", convGeom(1, 2, 131, 130, 2, 3, 3, 2, 2, 1, 0, 1, 1, 1, 1, 2, false)},
		{"depthwise channels-last s1", convGeom(2, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, false)},
		{"depthwise channels-last s2 two blocks", convGeom(1, 72, 14, 14, 72, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 72, false)},
		{"depthwise channels-last s2 odd asym", convGeom(2, 8, 13, 11, 8, 3, 3, 2, 2, 0, 2, 2, 1, 1, 1, 8, false)},
		{"depthwise channels-last pad0", convGeom(1, 24, 6, 9, 24, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 24, false)},
		{"depthwise channels-last 1x1 plane", convGeom(1, 8, 1, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, false)},
		{"depthwise channels-last 2x2 s2", convGeom(1, 136, 2, 2, 136, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 136, false)},
		{"depthwise channels-last stride (1,2)", convGeom(1, 16, 10, 10, 16, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 16, false)},
		{"depthwise channels-last ceil", convGeom(1, 8, 8, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8, true)},
		{"depthwise channels-last 28x28 s2", convGeom(1, 8, 28, 28, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8, false)},
		{"depthwise 5x5 dil2", convGeom(1, 3, 12, 11, 3, 5, 5, 1, 1, 4, 4, 4, 4, 2, 2, 3, false)},
		{"depthwise multiplier 2", convGeom(1, 3, 7, 7, 6, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 3, false)},
		{"single input channel", convGeom(2, 1, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false)},
		// From tuning.ConvOneChannelGemmRows output channels on, the
		// implicit GEMM: 2-D, and 1-D with a long stride (raw audio).
		{"single input channel GEMM", convGeom(2, 1, 9, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false)},
		{"single input channel 1-D k10 s5", convGeom(1, 1, 1, 203, 33, 1, 10, 1, 5, 0, 0, 0, 0, 1, 1, 1, false)},
		{"1x1", convGeom(2, 8, 5, 7, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false)},
		{"1x1 groups 2", convGeom(1, 8, 5, 5, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, false)},
		// 1x1 over 64 or more channels reads its input in place
		// (ConvPointwiseDirectK) whatever its output channels.
		{"1x1 long reduction", convGeom(2, 70, 9, 11, 80, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false)},
		{"1x1 long reduction groups 2", convGeom(1, 140, 7, 13, 160, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, false)},
		{"1x1 stride 2", convGeom(1, 4, 9, 9, 3, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, false)},
		{"1x1 padded", convGeom(1, 4, 5, 5, 3, 1, 1, 1, 1, 1, 2, 1, 0, 1, 1, 1, false)},
		{"kernel larger than input", convGeom(1, 2, 3, 2, 3, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, false)},
		{"depthwise kernel larger than input", convGeom(1, 2, 3, 2, 2, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 2, false)},
		{"zero-size kernel", convGeom(1, 2, 3, 3, 3, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, false)},
		{"ceil mode past padding", convGeom(1, 3, 8, 8, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true)},
		{"ceil mode no padding", convGeom(1, 3, 8, 7, 2, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 1, true)},
		{"row 1xK", convGeom(2, 3, 1, 17, 4, 1, 5, 1, 2, 0, 2, 0, 2, 1, 1, 1, false)},
		// Patchify stems (kernel = stride, every tap inside its row):
		// taps gathered in blocks, one row longer than a block.
		{"patchify 4x4/4", convGeom(2, 3, 16, 20, 8, 4, 4, 4, 4, 0, 0, 0, 0, 1, 1, 1, false)},
		{"patchify long row", convGeom(1, 2, 3, 300, 4, 1, 4, 1, 4, 0, 0, 0, 0, 1, 1, 1, false)},
		{"wide 17x33", convGeom(1, 16, 17, 33, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false)},
		{"many channels", convGeom(1, 70, 6, 6, 65, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false)},
		{"batch of small", convGeom(6, 2, 4, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false)},
		{"empty batch", convGeom(0, 2, 4, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false)},
	}
	eps := []string{"plain", "bias", "bias+relu+res", "silu+res", "relu(bias+res)", "clamp(res)"}
	seed := uint64(500)
	for _, tc := range geoms {
		for _, e := range eps {
			seed++
			g := tc.g
			r := newRand(seed)
			x := randSlice(r, g.N*g.C*g.H*g.W)
			w := randSlice(r, g.O*(g.C/g.Groups)*g.KH*g.KW)
			nOut := g.N * g.O * g.OH * g.OW
			var ep gemm.Epilogue
			switch e {
			case "bias":
				ep.Bias = randSlice(r, g.O)
			case "bias+relu+res":
				ep.Bias, ep.Act, ep.Residual = randSlice(r, g.O), vec.ActRelu, randSlice(r, nOut)
			case "silu+res":
				ep.Act, ep.Residual = vec.ActSilu, randSlice(r, nOut)
			case "relu(bias+res)":
				ep.Bias, ep.Act, ep.Residual, ep.ActLast = randSlice(r, g.O), vec.ActRelu, randSlice(r, nOut), true
			case "clamp(res)":
				ep.Act, ep.Min, ep.Max, ep.Residual, ep.ActLast = vec.ActClamp, -0.25, 0.5, randSlice(r, nOut), true
			}
			want, scale := refConv(x, w, g, &ep)
			var first []float32
			for _, p := range ps {
				out := poison(nOut)
				Conv2D(p, out, x, w, g, ep)
				tag := fmt.Sprintf("Conv2D %s %s threads=%d", tc.name, e, p.Threads())
				checkClose(t, tag, out, want, scale, 1e-5, 1e-6)
				if first == nil {
					first = out
				} else {
					checkEqual(t, tag+" vs 1 thread", out, first)
				}
			}
		}
	}
}

func BenchmarkConv2D(b *testing.B) {
	// A ResNet stage-1 conv: 3×3, 64→64 channels, 56×56, pad 1.
	g := convGeom(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false)
	flops := 2 * float64(g.O*g.OH*g.OW) * float64(g.C*g.KH*g.KW)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprint("3x3_64x64_56/threads=", threads), func(b *testing.B) {
			p := parallel.NewPool(threads)
			defer p.Close()
			r := newRand(1)
			x, w := randSlice(r, 64*56*56), randSlice(r, 64*64*9)
			out := make([]float32, 64*56*56)
			ep := gemm.Epilogue{Bias: randSlice(r, 64), Act: vec.ActRelu}
			for b.Loop() {
				Conv2D(p, out, x, w, g, ep)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	// MobileNetV2's first layer: 3→32 channels, 3×3 stride 2 over 224×224.
	b.Run("3x3s2_3x32_224", func(b *testing.B) {
		g := convGeom(1, 3, 224, 224, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, false)
		r := newRand(3)
		x, w := randSlice(r, 3*224*224), randSlice(r, 32*27)
		out := make([]float32, 32*112*112)
		ep := gemm.Epilogue{Bias: randSlice(r, 32), Act: vec.ActClamp, Min: 0, Max: 6}
		for b.Loop() {
			Conv2D(nil, out, x, w, g, ep)
		}
		b.ReportMetric(2*32*27*112*112*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("depthwise_3x3_128_56", func(b *testing.B) {
		g := convGeom(1, 128, 56, 56, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 128, false)
		r := newRand(2)
		x, w := randSlice(r, 128*56*56), randSlice(r, 128*9)
		out := make([]float32, 128*56*56)
		for b.Loop() {
			Conv2D(nil, out, x, w, g, gemm.Epilogue{})
		}
		b.ReportMetric(2*9*128*56*56*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

func TestOutSizeCeil(t *testing.T) {
	// The ceil-mode geometries used in the tests do have a last window that
	// runs past the padding.
	if f, c := outSize(8, 3, 2, 1, 1, 1, false), outSize(8, 3, 2, 1, 1, 1, true); f != 4 || c != 5 {
		t.Errorf("pad 1: floor %d ceil %d, want 4 5", f, c)
	}
	if f, c := outSize(7, 3, 2, 1, 0, 0, false), outSize(7, 3, 2, 1, 0, 0, true); f != 3 || c != 3 {
		t.Errorf("7 pad 0: floor %d ceil %d, want 3 3", f, c)
	}
	if f, c := outSize(8, 3, 2, 1, 0, 0, false), outSize(8, 3, 2, 1, 0, 0, true); f != 3 || c != 4 {
		t.Errorf("8 pad 0: floor %d ceil %d, want 3 4", f, c)
	}
	// PyTorch's rule drops a window that would start in the end padding.
	if c := outSize(5, 2, 2, 1, 1, 1, true); c != 3 {
		t.Errorf("5 k2 s2 pad 1: ceil %d, want 3", c)
	}
}

// TestConv1x1Packed checks the transposed, pre-packed 1×1 path against the
// reference convolution: planes that are not a multiple of the tile, more
// input channels than one k block, every epilogue.
func TestConv1x1Packed(t *testing.T) {
	ps := pools(t)
	seed := uint64(900)
	for _, c := range []struct{ n, c, hw, o int }{
		{1, 16, 49, 32}, {2, 7, 5, 3}, {1, 600, 13, 20}, {1, 5, 196, 17}, {3, 24, 6, 40}, {1, 1, 1, 1}, {0, 4, 4, 4},
	} {
		for _, e := range []string{"plain", "bias", "bias+relu+res", "clamp", "silu+res", "relu(bias+res)", "silu(res)"} {
			seed++
			r := newRand(seed)
			g := convGeom(c.n, c.c, 1, c.hw, c.o, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false)
			x := randSlice(r, max(1, c.n*c.c*c.hw))
			w := randSlice(r, c.o*c.c)
			nOut := c.n * c.o * c.hw
			var ep gemm.Epilogue
			switch e {
			case "bias":
				ep.Bias = randSlice(r, c.o)
			case "bias+relu+res":
				ep.Bias, ep.Act, ep.Residual = randSlice(r, c.o), vec.ActRelu, randSlice(r, nOut)
			case "clamp":
				ep.Act, ep.Min, ep.Max = vec.ActClamp, -0.5, 0.5
			case "silu+res":
				ep.Act, ep.Residual = vec.ActSilu, randSlice(r, nOut)
			case "relu(bias+res)":
				ep.Bias, ep.Act, ep.Residual, ep.ActLast = randSlice(r, c.o), vec.ActRelu, randSlice(r, nOut), true
			case "silu(res)":
				ep.Act, ep.Residual, ep.ActLast = vec.ActSilu, randSlice(r, nOut), true
			}
			want, scale := refConv(x, w, g, &ep)
			wt := make([]float32, c.c*c.o) // Wᵀ [C, O]
			for oc := 0; oc < c.o; oc++ {
				for ic := 0; ic < c.c; ic++ {
					wt[ic*c.o+oc] = w[oc*c.c+ic]
				}
			}
			packed := packBHost(c.c, c.o, wt, c.o)
			for _, p := range ps {
				out := poison(nOut)
				gemm.Conv1x1Packed(p, out, x, packed, c.n, c.c, c.hw, c.o, ep)
				checkClose(t, fmt.Sprintf("Conv1x1Packed %+v %s threads=%d", c, e, p.Threads()), out, want, scale, 1e-5, 1e-6)
			}
		}
	}
}
