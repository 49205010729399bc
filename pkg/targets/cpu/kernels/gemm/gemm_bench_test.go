package gemm

import (
	"fmt"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// BenchmarkGemmMicroKernel times the micro-kernel alone on L1-resident
// panels: the ceiling the blocking can reach. -gemm.kernel picks the
// kernel (main_test.go), as for every benchmark here.
func BenchmarkGemmMicroKernel(b *testing.B) {
	kn := defaultKernel()
	for _, kc := range []int{64, 256, 512} {
		b.Run(fmt.Sprintf("%s/kc=%d", kn.name, kc), func(b *testing.B) {
			r := newRand(1)
			a, bb := randSlice(r, kc*kn.mr), randSlice(r, kc*kn.nr)
			c := make([]float32, kn.mr*kn.nr)
			for b.Loop() {
				kn.fn(kc, a, bb, c, kn.nr, false)
			}
			b.ReportMetric(2*float64(kc*kn.mr*kn.nr)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		if kn.tiles == nil {
			continue
		}
		// Two row panels in one call: the AVX-512 kernel's 12-row tile
		// (two 6-row tiles on the AVX2 kernel).
		b.Run(fmt.Sprintf("%s/rows=%d/kc=%d", kn.name, 2*kn.mr, kc), func(b *testing.B) {
			r := newRand(1)
			a, bb := randSlice(r, 2*kc*kn.mr), randSlice(r, kc*kn.nr)
			c := make([]float32, 2*kn.mr*kn.nr)
			for b.Loop() {
				kn.tiles(kc, a, bb, kn.nr, c, kn.nr, tileEpi{}, 2)
			}
			b.ReportMetric(2*float64(2*kc*kn.mr*kn.nr)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGemmPack times packing an A block and a B block, in floats per ns.
func BenchmarkGemmPack(b *testing.B) {
	kn := defaultKernel()
	const n = 1024
	r := newRand(1)
	src := randSlice(r, n*n)
	mc := kn.mc / kn.mr * kn.mr
	b.Run("A", func(b *testing.B) {
		dst := make([]float32, mc*kn.kc)
		for b.Loop() {
			packA(dst, src, n, 0, 0, mc, kn.kc, kn.mr)
		}
		b.ReportMetric(float64(mc*kn.kc)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "floats/ns")
	})
	b.Run("B", func(b *testing.B) {
		dst := make([]float32, n*kn.kc)
		for b.Loop() {
			denseB{src, n}.Pack(dst, kn.nr, 0, kn.kc, 0, n)
		}
		b.ReportMetric(float64(n*kn.kc)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "floats/ns")
	})
}

// BenchmarkGemmFewRows times products with fewer rows than the tile
// (batch-1 inference): B row-major (Gemm) and pre-packed (GemmPacked).
func BenchmarkGemmFewRows(b *testing.B) {
	for _, m := range []int{1, 4} {
		for _, sz := range [][2]int{{256, 256}, {1024, 1024}, {4096, 1024}} {
			n, k := sz[0], sz[1]
			r := newRand(1)
			x, y, c := randSlice(r, m*k), randSlice(r, k*n), make([]float32, m*n)
			packed := packBHost(k, n, y, n)
			for _, pre := range []bool{false, true} {
				b.Run(fmt.Sprintf("m=%d/n=%d/k=%d/packed=%v", m, n, k, pre), func(b *testing.B) {
					for b.Loop() {
						if pre {
							GemmPacked(nil, m, n, k, x, k, packed, c, n, Epilogue{})
						} else {
							gemmDense(nil, m, n, k, x, k, y, n, c, n, Epilogue{})
						}
					}
					b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkGemmEpilogue times Gemm with a fused epilogue (bias, ReLU,
// residual: applied by the kernel as it stores) and with one Go finishes.
func BenchmarkGemmEpilogue(b *testing.B) {
	const n = 512
	r := newRand(1)
	x, y, c := randSlice(r, n*n), randSlice(r, n*n), make([]float32, n*n)
	bias, res := randSlice(r, n), randSlice(r, n*n)
	for _, tc := range []struct {
		name string
		ep   Epilogue
	}{
		{"none", Epilogue{}},
		{"bias+relu", Epilogue{Bias: bias, Act: vec.ActRelu}},
		{"bias+relu+res", Epilogue{Bias: bias, Act: vec.ActRelu, Residual: res}},
		{"bias+gelu", Epilogue{Bias: bias, Act: vec.ActGelu}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				gemmDense(nil, n, n, n, x, n, y, n, c, n, tc.ep)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGemmModelShapes times the products of the bundled models with
// weights packed ahead of time: the encoder's projections at 128 tokens,
// the MLP's layers at batch 64, and MobileNetV2's channels-last 1x1
// convolutions (pixels × input channels times the packed Wᵀ).
func BenchmarkGemmModelShapes(b *testing.B) {
	for _, s := range []struct {
		name    string
		m, k, n int
	}{{"enc_qkv", 128, 256, 768}, {"enc_out", 128, 256, 256}, {"enc_ffn1", 128, 256, 1024}, {"enc_ffn2", 128, 1024, 256},
		{"mlp_l1", 64, 512, 2048}, {"mlp_l2", 64, 2048, 2048}, {"mlp_l3", 64, 2048, 512},
		{"mbv2_7_960to160", 49, 960, 160}, {"mbv2_7_160to960", 49, 160, 960}, {"mbv2_7_320to1280", 49, 320, 1280},
		{"mbv2_14_384to64", 196, 384, 64}, {"mbv2_14_64to384", 196, 64, 384}, {"mbv2_14_576to96", 196, 576, 96}, {"mbv2_14_96to576", 196, 96, 576},
		{"mbv2_28_192to32", 784, 192, 32}, {"mbv2_28_32to192", 784, 32, 192}} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", s.name, threads), func(b *testing.B) {
				p := parallel.NewPool(threads)
				defer p.Close()
				r := newRand(1)
				x, y, c := randSlice(r, s.m*s.k), randSlice(r, s.k*s.n), make([]float32, s.m*s.n)
				packed := packBHost(s.k, s.n, y, s.n)
				bias := randSlice(r, s.n)
				for b.Loop() {
					GemmPacked(p, s.m, s.n, s.k, x, s.k, packed, c, s.n, Epilogue{Bias: bias, Act: vec.ActRelu})
				}
				b.ReportMetric(2*float64(s.m*s.k*s.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkGemv times MobileNetV2's classifier, one or two rows of 1280
// times a row-major 1280×1000 B, at 1 and 2 threads: with B warm in cache,
// and cold (eight copies in turn, 41 MB, more than this machine's L3), as
// it is in a model whose other weights pass through cache between runs.
func BenchmarkGemv(b *testing.B) {
	const k, n = 1280, 1000
	r := newRand(1)
	x, c := randSlice(r, 2*k), make([]float32, 2*n)
	bs := make([][]float32, 8)
	for i := range bs {
		bs[i] = randSlice(r, k*n)
	}
	for _, m := range []int{1, 2} {
		for _, cold := range []bool{false, true} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("m=%d/cold=%v/threads=%d", m, cold, threads), func(b *testing.B) {
					p := parallel.NewPool(threads)
					defer p.Close()
					i := 0
					for b.Loop() {
						y := bs[0]
						if cold {
							y = bs[i%len(bs)]
							i++
						}
						gemmDense(p, m, n, k, x, k, y, n, c, n, Epilogue{})
					}
					b.ReportMetric(4*float64(k*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
				})
			}
		}
	}
}
