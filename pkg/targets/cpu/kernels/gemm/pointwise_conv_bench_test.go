package gemm

import (
	"fmt"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// BenchmarkPointwiseConv times MobileNetV2's 1×1 convolutions (O×C weights
// over a C×HW plane) with B packed and read in place (gemmArgs.directB).
func BenchmarkPointwiseConv(b *testing.B) {
	for _, c := range []struct{ O, C, HW int }{
		{16, 32, 12544}, {96, 16, 12544}, {144, 24, 3136}, {24, 144, 3136},
		{32, 144, 784}, {192, 32, 784}, {32, 192, 784}, {64, 192, 196}, {384, 64, 196}, {64, 384, 196}, {96, 576, 196},
	} {
		r := newRand(1)
		x, w := randSlice(r, c.C*c.HW), randSlice(r, c.O*c.C)
		out := make([]float32, c.O*c.HW)
		for _, direct := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dx%d_%d/direct=%v", c.O, c.C, c.HW, direct), func(b *testing.B) {
				for b.Loop() {
					g := gemmArgs{m: c.O, n: c.HW, k: c.C, a: w, lda: c.C, b: denseB{x, c.HW}, c: out, ldc: c.HW,
						ep: epi{act: vec.ActClamp, lo: 0, hi: 6}, directB: direct}
					gemm(nil, defaultKernel(), &g)
				}
				b.ReportMetric(2*float64(c.O*c.C*c.HW)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// convOperands is a 1x1 convolution's random input [C, HW] and weights
// [O, C], and the weights packed as Conv1x1Packed takes them (Wᵀ).
func convOperands(o, c, hw int) (x, w, packed []float32) {
	r := newRand(1)
	x, w = randSlice(r, c*hw), randSlice(r, o*c)
	wt := make([]float32, c*o)
	for i := 0; i < o; i++ {
		for j := 0; j < c; j++ {
			wt[j*o+i] = w[i*c+j]
		}
	}
	return x, w, packBHost(c, o, wt, o)
}

// BenchmarkConv1x1Packed times MobileNetV2's 7×7-stage 1×1 convolutions
// with build-time packed weights.
func BenchmarkConv1x1Packed(b *testing.B) {
	for _, c := range []struct{ O, C, HW int }{{960, 160, 49}, {160, 960, 49}, {320, 960, 49}, {1280, 320, 49}, {576, 96, 196}, {400, 400, 49}, {512, 1024, 49}} {
		x, _, pw := convOperands(c.O, c.C, c.HW)
		out := make([]float32, c.O*c.HW)
		b.Run(fmt.Sprintf("%dx%d_%d", c.O, c.C, c.HW), func(b *testing.B) {
			for b.Loop() {
				Conv1x1Packed(nil, out, x, pw, 1, c.C, c.HW, c.O, Epilogue{Act: vec.ActClamp, Min: 0, Max: 6})
			}
			b.ReportMetric(2*float64(c.O*c.C*c.HW)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSmallProductThreads times small products (ResNet-18's strided
// 1x1 shortcuts after their subsampling copy: a few MFLOP each) on pools
// of 1 to 16 threads. On the 16-core Xeon host these took longer at 16
// threads than at 1 inside the model (docs/perf/scheduling.md): the
// benchmark separates the kernel's own scaling from the model's.
func BenchmarkSmallProductThreads(b *testing.B) {
	for _, c := range []struct{ O, C, HW int }{{512, 256, 49}, {256, 128, 196}} {
		x, w, pw := convOperands(c.O, c.C, c.HW)
		out := make([]float32, c.O*c.HW)
		for _, threads := range []int{1, 2, 4, 8, 16} {
			p := parallel.NewPool(threads)
			b.Run(fmt.Sprintf("packed/%dx%d_%d/threads=%d", c.O, c.C, c.HW, threads), func(b *testing.B) {
				for b.Loop() {
					Conv1x1Packed(p, out, x, pw, 1, c.C, c.HW, c.O, Epilogue{})
				}
				b.ReportMetric(2*float64(c.O*c.C*c.HW)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			b.Run(fmt.Sprintf("gemm/%dx%d_%d/threads=%d", c.O, c.C, c.HW, threads), func(b *testing.B) {
				for b.Loop() {
					g := gemmArgs{m: c.O, n: c.HW, k: c.C, a: w, lda: c.C, b: denseB{x, c.HW}, c: out, ldc: c.HW}
					gemm(p, defaultKernel(), &g)
				}
				b.ReportMetric(2*float64(c.O*c.C*c.HW)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			p.Close()
		}
	}
}
