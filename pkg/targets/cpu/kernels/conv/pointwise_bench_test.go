package conv

import (
	"fmt"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// BenchmarkPointwise times MobileNetV2's 1x1 convolutions (C in, O out,
// H×H plane) and its first 3x3 stride-2 convolution.
func BenchmarkPointwise(b *testing.B) {
	for _, c := range []struct{ C, O, H, K, S int }{
		{3, 32, 224, 3, 2}, {32, 16, 112, 1, 1}, {16, 96, 112, 1, 1}, {96, 24, 56, 1, 1}, {24, 144, 56, 1, 1},
		{144, 24, 56, 1, 1}, {192, 32, 28, 1, 1}, {32, 192, 28, 1, 1}, {384, 64, 14, 1, 1}, {64, 384, 14, 1, 1},
		{960, 160, 7, 1, 1}, {160, 960, 7, 1, 1}, {320, 1280, 7, 1, 1},
		{64, 256, 13, 1, 1}, {384, 48, 13, 1, 1}, {512, 64, 13, 1, 1}, {160, 160, 14, 1, 1}, {256, 64, 56, 1, 1}, {128, 512, 28, 1, 1}, {64, 256, 56, 1, 1},
	} {
		pad := c.K / 2
		oh := (c.H+2*pad-c.K)/c.S + 1
		g := ConvGeom{N: 1, C: c.C, H: c.H, W: c.H, O: c.O, KH: c.K, KW: c.K, StrideH: c.S, StrideW: c.S,
			PadT: pad, PadL: pad, PadB: pad, PadR: pad, DilH: 1, DilW: 1, Groups: 1, OH: oh, OW: oh}
		x := make([]float32, c.C*c.H*c.H)
		w := make([]float32, c.O*c.C*c.K*c.K)
		out := make([]float32, c.O*oh*oh)
		for _, threads := range []int{1, 2} {
			p := parallel.NewPool(threads)
			b.Run(fmt.Sprintf("C%d_O%d_H%d_k%d/threads=%d", c.C, c.O, c.H, c.K, threads), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					Conv2D(p, out, x, w, g, gemm.Epilogue{Bias: make([]float32, c.O), Act: vec.ActClamp, Min: 0, Max: 6})
				}
				b.ReportMetric(float64(2*c.C*c.K*c.K*c.O*oh*oh)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			p.Close()
		}
	}
}
