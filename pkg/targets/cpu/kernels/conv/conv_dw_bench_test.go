package conv

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// BenchmarkDepthwise times MobileNetV2's depthwise shapes.
func BenchmarkDepthwise(b *testing.B) {
	for _, c := range []struct{ C, H, S int }{{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2}, {192, 28, 1}, {192, 28, 2}, {384, 14, 1}, {576, 14, 1}, {576, 14, 2}, {960, 7, 1}} {
		oh := (c.H+2-3)/c.S + 1
		g := ConvGeom{N: 1, C: c.C, H: c.H, W: c.H, O: c.C, KH: 3, KW: 3, StrideH: c.S, StrideW: c.S, PadT: 1, PadL: 1, PadB: 1, PadR: 1, DilH: 1, DilW: 1, Groups: c.C, OH: oh, OW: oh}
		x := make([]float32, c.C*c.H*c.H)
		w := make([]float32, c.C*9)
		out := make([]float32, c.C*oh*oh)
		p := parallel.NewPool(1)
		b.Run(fmt.Sprintf("C%d_H%d_s%d", c.C, c.H, c.S), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Conv2D(p, out, x, w, g, gemm.Epilogue{Bias: make([]float32, c.C), Act: vec.ActClamp, Min: 0, Max: 6})
			}
			b.ReportMetric(float64(2*9*c.C*oh*oh)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		p.Close()
	}
}

// TestDot9 checks the assembly nine-tap row against the Go twin.
func TestDot9(t *testing.T) {
	for n := 0; n <= 40; n++ {
		var src [9][]float32
		var w [9]float32
		for k := range src {
			src[k] = make([]float32, n)
			for i := range src[k] {
				src[k][i] = float32((i*7+k*3)%11) - 5
			}
			w[k] = float32(k) - 4.5
		}
		d1, d2 := make([]float32, n), make([]float32, n)
		dot9(d1, &src, &w, 0.25, -20, 30)
		dot9Go(d2, &src, &w, 0.25, -20, 30)
		for i := range d1 {
			if d := d1[i] - d2[i]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("n=%d: element %d = %g, want %g", n, i, d1[i], d2[i])
			}
		}
	}
}

func TestDeinterleave2(t *testing.T) {
	for n := 0; n <= 41; n++ {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i)
		}
		even, odd := make([]float32, (n+1)/2), make([]float32, n/2)
		deinterleave2(even, odd, src)
		for i, v := range even {
			if v != float32(2*i) {
				t.Fatalf("n=%d: even[%d] = %g", n, i, v)
			}
		}
		for i, v := range odd {
			if v != float32(2*i+1) {
				t.Fatalf("n=%d: odd[%d] = %g", n, i, v)
			}
		}
	}
}

// TestDepthwiseRows covers the multi-row vector path of 3x3 depthwise
// convolution (rows of at least 8 outputs), against plain loops: strides 1
// and 2, pads 0..2, asymmetric sizes, ReLU and clamp fused, NaN passing.
func TestDepthwiseRows(t *testing.T) {
	for _, c := range []struct{ H, W, S, P int }{{20, 23, 1, 1}, {20, 23, 2, 1}, {17, 30, 1, 0}, {16, 35, 2, 2}, {12, 9, 1, 1}, {40, 40, 2, 0}, {7, 7, 1, 1}, {6, 5, 1, 0}, {14, 14, 2, 1}} {
		for _, act := range []vec.Activation{vec.ActNone, vec.ActRelu, vec.ActClamp} {
			C := 3
			oh := (c.H+2*c.P-3)/c.S + 1
			ow := (c.W+2*c.P-3)/c.S + 1
			g := ConvGeom{N: 1, C: C, H: c.H, W: c.W, O: C, KH: 3, KW: 3, StrideH: c.S, StrideW: c.S,
				PadT: c.P, PadL: c.P, PadB: c.P, PadR: c.P, DilH: 1, DilW: 1, Groups: C, OH: oh, OW: ow}
			x := make([]float32, C*c.H*c.W)
			for i := range x {
				x[i] = float32((i*37)%23) - 11
			}
			x[5] = float32(math.NaN())
			w := make([]float32, C*9)
			for i := range w {
				w[i] = float32(i%7) - 3
			}
			bias := []float32{0.5, -1, 2}
			out := make([]float32, C*oh*ow)
			Conv2D(parallel.NewPool(1), out, x, w, g, gemm.Epilogue{Bias: bias, Act: act, Min: -5, Max: 6})
			for ch := 0; ch < C; ch++ {
				for i := 0; i < oh; i++ {
					for j := 0; j < ow; j++ {
						acc := float64(bias[ch])
						for kh := 0; kh < 3; kh++ {
							for kw := 0; kw < 3; kw++ {
								ih, iw := i*c.S+kh-c.P, j*c.S+kw-c.P
								if ih >= 0 && ih < c.H && iw >= 0 && iw < c.W {
									acc += float64(w[ch*9+kh*3+kw]) * float64(x[(ch*c.H+ih)*c.W+iw])
								}
							}
						}
						switch {
						case act == vec.ActRelu && acc < 0:
							acc = 0
						case act == vec.ActClamp && acc < -5:
							acc = -5
						case act == vec.ActClamp && acc > 6:
							acc = 6
						}
						got := out[(ch*oh+i)*ow+j]
						if math.IsNaN(acc) != math.IsNaN(float64(got)) || !math.IsNaN(acc) && math.Abs(float64(got)-acc) > 1e-4 {
							t.Fatalf("%+v %v: out[%d][%d][%d] = %g, want %g", c, act, ch, i, j, got, acc)
						}
					}
				}
			}
		}
	}
}

// TestDepthwiseSmallReuse runs two depthwise geometries whose padded planes
// have the same size but whose inputs land in different cells, one after
// the other and back: the small-plane buffers come from a pool, and stale
// cells from the other geometry must never count as padding.
func TestDepthwiseSmallReuse(t *testing.T) {
	a := convGeom(1, 3, 10, 10, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, false)
	b := convGeom(1, 3, 10, 10, 3, 3, 3, 1, 1, 2, 2, 0, 0, 1, 1, 3, false)
	r := newRand(61)
	for i, g := range []ConvGeom{a, b, a, b} {
		x, w := randSlice(r, g.C*g.H*g.W), randSlice(r, g.C*9)
		out := poison(g.O * g.OH * g.OW)
		Conv2D(nil, out, x, w, g, gemm.Epilogue{})
		want, scale := refConv(x, w, g, &gemm.Epilogue{})
		checkClose(t, fmt.Sprintf("run %d", i), out, want, scale, 1e-5, 1e-6)
	}
}
