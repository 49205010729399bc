package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkDepthwise times MobileNetV2's depthwise shapes.
func BenchmarkDepthwise(b *testing.B) {
	for _, c := range []struct{ C, H, S int }{{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2}, {960, 7, 1}} {
		oh := (c.H+2-3)/c.S + 1
		g := ConvGeom{N: 1, C: c.C, H: c.H, W: c.H, O: c.C, KH: 3, KW: 3, StrideH: c.S, StrideW: c.S, PadT: 1, PadL: 1, PadB: 1, PadR: 1, DilH: 1, DilW: 1, Groups: c.C, OH: oh, OW: oh}
		x := make([]float32, c.C*c.H*c.H)
		w := make([]float32, c.C*9)
		out := make([]float32, c.C*oh*oh)
		p := NewPool(1)
		b.Run(fmt.Sprintf("C%d_H%d_s%d", c.C, c.H, c.S), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Conv2D(p, out, x, w, g, Epilogue{Bias: make([]float32, c.C), Act: ActClamp, Min: 0, Max: 6})
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
