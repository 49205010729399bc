package conv

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// TestDwNHWCTwins checks the channels-last tap kernel against its Go twin:
// channel counts around the 16- and 8-channel blocks, runs of 1 to 9
// pixels (groups of four, a run's last group overlapping the one before)
// with input and output strides, NaN passing the clamp, and nothing written
// past each pixel's channels.
func TestDwNHWCTwins(t *testing.T) {
	r := newRand(41)
	for _, c := range []int{8, 16, 32, 56, 64, 72, 96, 136, 168, 192} {
		for _, npix := range []int{1, 3, 4, 5, 6, 7, 9} {
			var in [9][]float32
			for k := range in {
				in[k] = randSlice(r, (npix-1)*(c+8)+c)
			}
			in[4][c/2] = float32(math.NaN())
			w, bias := randSlice(r, 9*c), randSlice(r, c)
			got, want := poison((npix-1)*(c+4)+c+4), poison((npix-1)*(c+4)+c+4)
			dwNHWC(got, c+4, &in, c+8, w, bias, c, npix, -0.5, 0.75)
			dwNHWCGo(want, c+4, &in, c+8, w, bias, c, npix, -0.5, 0.75)
			for i := range got {
				g, e := got[i], want[i]
				if g != e && !(g != g && e != e) && math.Abs(float64(g-e)) > 1e-6 {
					t.Fatalf("c=%d npix=%d: element %d = %g, Go twin %g", c, npix, i, g, e)
				}
			}
		}
	}
}

// TestDepthwiseNHWC checks the channels-last depthwise convolution against
// the reference on the same data in NCHW (through ToNHWC and ToNCHW, which
// are checked against plain loops first), and bit for bit against Conv2D
// where Conv2D runs the same kernels: strides, pads, batches, every
// epilogue kind, 1 and 2 threads.
func TestDepthwiseNHWC(t *testing.T) {
	r := newRand(43)
	x := randSlice(r, 2*24*35)
	nhwc, back := make([]float32, len(x)), make([]float32, len(x))
	ToNHWC(nil, nhwc, x, 2, 24, 35)
	for i := 0; i < 2; i++ {
		for c := 0; c < 24; c++ {
			for p := 0; p < 35; p++ {
				if nhwc[(i*35+p)*24+c] != x[(i*24+c)*35+p] {
					t.Fatalf("ToNHWC: image %d channel %d pixel %d wrong", i, c, p)
				}
			}
		}
	}
	ToNCHW(parallel.NewPool(2), back, nhwc, 2, 24, 35)
	checkEqual(t, "ToNCHW(ToNHWC(x))", back, x)

	geoms := []ConvGeom{
		convGeom(2, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, false),
		convGeom(1, 72, 14, 14, 72, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 72, false),
		convGeom(2, 8, 13, 11, 8, 3, 3, 2, 2, 0, 2, 2, 1, 1, 1, 8, false),
		convGeom(1, 136, 2, 2, 136, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 136, false),
		convGeom(1, 24, 6, 9, 24, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 24, false),
		convGeom(1, 16, 28, 28, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, false), // beyond Conv2D's own channels-last cut
	}
	eps := []gemm.Epilogue{{}, {Act: vec.ActClamp, Min: 0, Max: 6}, {Act: vec.ActRelu}, {Act: vec.ActGelu},
		{Act: vec.ActRelu, ActLast: true}, {Act: vec.ActClamp, Min: 0, Max: 6, ActLast: true}}
	for gi, g := range geoms {
		for ei, ep := range eps {
			for _, bias := range []bool{false, true} {
				for _, res := range []bool{false, true} {
					for _, p := range pools(t) {
						hw, ohw := g.H*g.W, g.OH*g.OW
						x := randSlice(r, g.N*g.C*hw)
						w := randSlice(r, g.C*9)
						e := ep
						if bias {
							e.Bias = randSlice(r, g.C)
						}
						var resN []float32
						if res {
							resN = randSlice(r, g.N*g.C*ohw)
							e.Residual = resN
						}
						want := make([]float32, g.N*g.C*ohw)
						Conv2D(p, want, x, w, g, e)
						ref, scale := refConv(x, w, g, &e)
						xh, resH := make([]float32, len(x)), make([]float32, len(resN))
						ToNHWC(p, xh, x, g.N, g.C, hw)
						if res {
							ToNHWC(p, resH, resN, g.N, g.C, ohw)
							e.Residual = resH
						}
						oh := poison(g.N * g.C * ohw)
						DepthwiseNHWC(p, oh, xh, DepthwiseTaps(w, g.C, 9), g, e)
						got := make([]float32, len(oh))
						ToNCHW(p, got, oh, g.N, g.C, ohw)
						tag := fmt.Sprintf("geometry %d epilogue %d bias %v res %v threads %d", gi, ei, bias, res, p.Threads())
						checkClose(t, tag, got, ref, scale, 1e-5, 1e-6)
						if dwNHWCApplies(&g) {
							// Conv2D takes the same kernels here: the same bits.
							checkEqual(t, tag+" vs Conv2D", got, want)
						}
					}
				}
			}
		}
	}
}

// BenchmarkDepthwiseNHWC times MobileNetV2's channels-last depthwise
// layers (3×3, padding 1, clamp to [0, 6]) at 1 and 2 threads.
func BenchmarkDepthwiseNHWC(b *testing.B) {
	for _, s := range []struct{ c, hw, stride int }{{192, 28, 1}, {192, 28, 2}, {384, 14, 1}, {576, 14, 1}, {576, 14, 2}, {960, 7, 1}} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%d@%d_s%d/threads=%d", s.c, s.hw, s.stride, threads), func(b *testing.B) {
				p := parallel.NewPool(threads)
				defer p.Close()
				g := convGeom(1, s.c, s.hw, s.hw, s.c, 3, 3, s.stride, s.stride, 1, 1, 1, 1, 1, 1, s.c, false)
				r := newRand(1)
				x, w := randSlice(r, s.c*s.hw*s.hw), DepthwiseTaps(randSlice(r, s.c*9), s.c, 9)
				out := make([]float32, s.c*g.OH*g.OW)
				ep := gemm.Epilogue{Bias: randSlice(r, s.c), Act: vec.ActClamp, Min: 0, Max: 6}
				for b.Loop() {
					DepthwiseNHWC(p, out, x, w, g, ep)
				}
			})
		}
	}
}
