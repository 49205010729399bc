package gemm

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// refGemm is C = A·B in float64 with the epilogue, plus the magnitude
// sum |a·b| + |bias| + |res| each element was built from.
func refGemm(m, n, k int, a []float32, lda int, b []float32, ldb int, ep *Epilogue, ldr int) (want, scale []float64) {
	want = make([]float64, m*n)
	scale = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, mag float64
			for p := 0; p < k; p++ {
				v := float64(a[i*lda+p]) * float64(b[p*ldb+j])
				s += v
				mag += math.Abs(v)
			}
			var bias, res float64
			if ep.Bias != nil {
				bias = float64(ep.Bias[j])
			}
			if ep.Residual != nil {
				res = float64(ep.Residual[i*ldr+j])
			}
			want[i*n+j] = refEpilogue(ep, s, bias, res)
			scale[i*n+j] = mag + math.Abs(bias) + math.Abs(res)
		}
	}
	return want, scale
}

// testEpilogues is every activation (clamp one- and two-sided) crossed with
// bias on/off and residual on/off, and each with a residual also with the
// activation last; entry 0 is the plain product.
func testEpilogues() []struct {
	name            string
	act             vec.Activation
	bias, res, last bool
	alpha, min, max float32
} {
	type e = struct {
		name            string
		act             vec.Activation
		bias, res, last bool
		alpha, min, max float32
	}
	inf := float32(math.Inf(1))
	var out []e
	for _, a := range []e{
		{act: vec.ActNone}, {act: vec.ActRelu}, {act: vec.ActGelu}, {act: vec.ActGeluTanh}, {act: vec.ActSilu}, {act: vec.ActSigmoid},
		{act: vec.ActTanh}, {act: vec.ActLeakyRelu, alpha: 0.1}, {act: vec.ActClamp, min: -0.5, max: 0.25},
		{act: vec.ActClamp, min: 0, max: inf}, {act: vec.ActClamp, min: -inf, max: 0.3},
	} {
		for _, bias := range []bool{false, true} {
			for _, res := range []bool{false, true} {
				a.bias, a.res, a.last = bias, res, false
				a.name = fmt.Sprintf("%v[%v,%v] bias=%v res=%v", a.act, a.min, a.max, bias, res)
				out = append(out, a)
				if res && a.act != vec.ActNone {
					a.last = true
					a.name += " act-last"
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// gemmCase runs one Gemm on every pool and checks it against the reference
// and the 1-thread result against the 2-thread one bit for bit. The pad
// arguments make lda, ldb, ldc exceed the row length; C's padding must be
// left alone.
func gemmCase(t *testing.T, ps []*parallel.Pool, m, n, k, padA, padB, padC int, epSpec struct {
	name            string
	act             vec.Activation
	bias, res, last bool
	alpha, min, max float32
}, seed uint64) {
	t.Helper()
	r := newRand(seed)
	lda, ldb, ldc := k+padA, n+padB, n+padC
	a := randSlice(r, max(m*lda, 1))
	b := randSlice(r, max(k*ldb, 1))
	ep := Epilogue{Act: epSpec.act, Alpha: epSpec.alpha, Min: epSpec.min, Max: epSpec.max, ActLast: epSpec.last}
	if epSpec.bias {
		ep.Bias = randSlice(r, n)
	}
	if epSpec.res {
		ep.Residual = randSlice(r, max(m*ldc, 1))
	}
	want, scale := refGemm(m, n, k, a, lda, b, ldb, &ep, ldc)
	var first []float32
	for _, p := range ps {
		c := poison(max(m*ldc, 1))
		for i := 0; i < m; i++ {
			for j := n; j < ldc; j++ {
				c[i*ldc+j] = 7 // padding sentinel
			}
		}
		gemmDense(p, m, n, k, a, lda, b, ldb, c, ldc, ep)
		got := make([]float32, m*n)
		for i := 0; i < m; i++ {
			copy(got[i*n:], c[i*ldc:i*ldc+n])
			for j := n; j < ldc; j++ {
				if c[i*ldc+j] != 7 {
					t.Fatalf("%d×%d×%d ld+%d/%d/%d %s threads=%d: padding C[%d,%d] overwritten", m, n, k, padA, padB, padC, epSpec.name, p.Threads(), i, j)
				}
			}
		}
		// float32 accumulation over k terms: error grows like sqrt(k)·eps
		// relative to sum |a·b|; 1e-5 holds up to k in the thousands.
		checkClose(t, fmt.Sprintf("Gemm %d×%d×%d ld+%d/%d/%d %s threads=%d", m, n, k, padA, padB, padC, epSpec.name, p.Threads()),
			got, want, scale, 1e-5, 1e-6)
		if first == nil {
			first = got
		} else {
			checkEqual(t, fmt.Sprintf("Gemm %d×%d×%d %s: threads=%d vs 1", m, n, k, epSpec.name, p.Threads()), got, first)
		}
	}
}

func TestGemmSizes(t *testing.T) {
	ps := pools(t)
	plain := testEpilogues()[0]
	sizes := []int{1, 2, 3, 4, 5, 7, 17, 63, 64, 65, 127, 129}
	seed := uint64(1)
	for _, m := range sizes {
		for _, n := range sizes {
			for _, k := range []int{1, 3, 17, 65, 129} {
				seed++
				gemmCase(t, ps, m, n, k, 0, 0, 0, plain, seed)
			}
		}
	}
}

func TestGemmBlocking(t *testing.T) {
	// Shapes that cross gemmMC, gemmKC and gemmNC boundaries, and large k.
	ps := pools(t)
	plain := testEpilogues()[0]
	kn := defaultKernel()
	mc, kc, nc := kn.mc/kn.mr*kn.mr, kn.kc, kn.nc
	for i, s := range [][3]int{
		{mc + 1, 33, kc + 1}, {2*mc - 1, 70, 2*kc + 3}, {9, nc + 3, 11},
		{130, 2*nc + 1, 5}, {200, 300, 1000}, {1, 1, 4000}, {3, 513, 700}, {1, 5000, 9},
	} {
		gemmCase(t, ps, s[0], s[1], s[2], 0, 0, 0, plain, uint64(100+i))
	}
}

func TestGemmEpilogues(t *testing.T) {
	ps := pools(t)
	for i, ep := range testEpilogues() {
		for _, s := range [][3]int{{1, 7, 5}, {3, 5, 9}, {17, 63, 33}, {65, 129, 64}} {
			gemmCase(t, ps, s[0], s[1], s[2], 0, 0, 0, ep, uint64(1000+i))
		}
	}
}

func TestGemmLeadingDims(t *testing.T) {
	ps := pools(t)
	eps := testEpilogues()
	for i, s := range [][3]int{{1, 5, 3}, {3, 1, 7}, {17, 33, 65}, {66, 130, 260}} {
		for _, pad := range [][3]int{{1, 0, 0}, {0, 3, 0}, {0, 0, 5}, {7, 9, 11}} {
			gemmCase(t, ps, s[0], s[1], s[2], pad[0], pad[1], pad[2], eps[3], uint64(2000+i))  // none, bias, res
			gemmCase(t, ps, s[0], s[1], s[2], pad[0], pad[1], pad[2], eps[11], uint64(3000+i)) // gelu, bias, res
		}
	}
}

func TestGemmEmpty(t *testing.T) {
	ps := pools(t)
	for _, p := range ps {
		// m or n zero: nothing happens, even with nil slices.
		gemmDense(p, 0, 5, 3, nil, 3, make([]float32, 15), 5, nil, 5, Epilogue{})
		gemmDense(p, 4, 0, 3, make([]float32, 12), 3, nil, 0, nil, 0, Epilogue{})
		// k zero: C = epilogue(0).
		c := poison(6)
		bias := []float32{1, -2, 3}
		res := []float32{0.5, 0.5, 0.5, 1, 1, 1}
		gemmDense(p, 2, 3, 0, nil, 0, nil, 3, c, 3, Epilogue{Bias: bias, Act: vec.ActRelu, Residual: res})
		checkEqual(t, "k=0", c, []float32{1.5, 0.5, 3.5, 2, 1, 4})
	}
}

func TestGemmNaNInf(t *testing.T) {
	// NaN and Inf propagate as in a plain loop (no zero-skipping shortcuts):
	// 0·NaN and 0·Inf are NaN.
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, m := range []int{1, 2, 5} { // the few-rows path and the packed path
		a := make([]float32, m*2)
		for i := 0; i < m; i++ {
			a[i*2] = 1
		}
		b := []float32{nan, 1, 3, inf, 2, 4}
		c := make([]float32, m*3)
		gemmDense(nil, m, 3, 2, a, 2, b, 3, c, 3, Epilogue{})
		for i := 0; i < m; i++ {
			row := c[i*3 : i*3+3]
			if !math.IsNaN(float64(row[0])) || row[1] != 1 || row[2] != 3 {
				t.Errorf("m=%d row %d: got %v, want [NaN 1 3]", m, i, row)
			}
		}
		b = []float32{1, 1, 1, inf, -2, nan}
		gemmDense(nil, m, 3, 2, a, 2, b, 3, c, 3, Epilogue{})
		for i := 0; i < m; i++ {
			row := c[i*3 : i*3+3]
			if !math.IsNaN(float64(row[0])) || row[1] != 1 || !math.IsNaN(float64(row[2])) {
				t.Errorf("m=%d row %d: got %v, want [NaN 1 NaN]", m, i, row)
			}
		}
	}
}

// BenchmarkGemm times square products. Its GFLOP/s is that of the median
// call, the statistic the OpenBLAS timer it is set beside (make bench:
// ../shared/bench/gemm) reports: on this shared VM a few slow calls moved
// the mean where the median held.
func BenchmarkGemm(b *testing.B) {
	for _, threads := range []int{1, 2} {
		for _, n := range []int{256, 512, 1024, 2048} {
			b.Run(fmt.Sprintf("n=%d/threads=%d", n, threads), func(b *testing.B) {
				p := parallel.NewPool(threads)
				defer p.Close()
				r := newRand(1)
				x, y, c := randSlice(r, n*n), randSlice(r, n*n), make([]float32, n*n)
				var calls []time.Duration
				for b.Loop() {
					t0 := time.Now()
					gemmDense(p, n, n, n, x, n, y, n, c, n, Epilogue{})
					calls = append(calls, time.Since(t0))
				}
				slices.Sort(calls)
				med := calls[len(calls)/2].Seconds()
				b.ReportMetric(2*float64(n)*float64(n)*float64(n)/med/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkGemmPacked is BenchmarkGemm with B packed ahead of time.
func BenchmarkGemmPacked(b *testing.B) {
	for _, threads := range []int{1, 2} {
		for _, n := range []int{256, 512, 1024, 2048} {
			b.Run(fmt.Sprintf("n=%d/threads=%d", n, threads), func(b *testing.B) {
				p := parallel.NewPool(threads)
				defer p.Close()
				r := newRand(1)
				x, y, c := randSlice(r, n*n), randSlice(r, n*n), make([]float32, n*n)
				packed := packBHost(n, n, y, n)
				for b.Loop() {
					GemmPacked(p, n, n, n, x, n, packed, c, n, Epilogue{})
				}
				b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// loopKernel is a plainly written micro-kernel of any shape: the packing and
// blocking must be right for whatever mr×nr an assembly kernel brings.
func loopKernel(mr, nr int) gemmKernel {
	return gemmKernel{mr: mr, nr: nr, kc: gemmKC, mc: gemmMC, nc: gemmNC, fn: func(kc int, a, b, c []float32, ldc int, accumulate bool) {
		for i := 0; i < mr; i++ {
			for j := 0; j < nr; j++ {
				var s float32
				for p := 0; p < kc; p++ {
					s += a[p*mr+i] * b[p*nr+j]
				}
				if accumulate {
					c[i*ldc+j] += s
				} else {
					c[i*ldc+j] = s
				}
			}
		}
	}}
}

func TestGemmKernelShapes(t *testing.T) {
	ps := pools(t)
	shapes := [][2]int{{1, 1}, {3, 5}, {6, 8}, {6, 16}, {8, 4}, {14, 16}, {6, 32}}
	for si, sh := range shapes {
		kn := loopKernel(sh[0], sh[1])
		for ci, s := range [][3]int{{1, 1, 1}, {7, 13, 5}, {70, 45, 300}, {129, 67, 17}, {5, 2100, 3}} {
			m, n, k := s[0], s[1], s[2]
			for _, trans := range []bool{false, true} {
				r := newRand(uint64(si*100 + ci))
				a, b := randSlice(r, m*k), randSlice(r, k*n)
				ep := Epilogue{Bias: randSlice(r, n), Act: vec.ActTanh, Residual: randSlice(r, m*n)}
				want, scale := refGemm(m, n, k, a, k, b, n, &ep, n)
				var src BSource = denseB{b, n}
				if trans { // the same B, stored transposed
					bt := make([]float32, k*n)
					for p := 0; p < k; p++ {
						for j := 0; j < n; j++ {
							bt[j*k+p] = b[p*n+j]
						}
					}
					src = transB{bt, k}
				}
				for _, p := range ps {
					c := poison(m * n)
					g := gemmArgs{m: m, n: n, k: k, a: a, lda: k, b: src, c: c, ldc: n, ep: colEpi(&ep, n)}
					gemm(p, kn, &g)
					checkClose(t, fmt.Sprintf("kernel %dx%d %v trans=%v threads=%d", sh[0], sh[1], s, trans, p.Threads()),
						c, want, scale, 1e-5, 1e-6)
				}
			}
		}
	}
}

func TestGemmAccumulateAndWork(t *testing.T) {
	// The internal accumulate mode adds to C, and buffers reused from
	// gemmWorkPool give the same results as fresh ones.
	r := newRand(5)
	for _, s := range [][3]int{{9, 10, 300}, {70, 3, 20}, {2, 9, 5}, {9, 10, 300}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c0 := randSlice(r, m*k), randSlice(r, k*n), randSlice(r, m*n)
		want, scale := refGemm(m, n, k, a, k, b, n, &Epilogue{Residual: c0}, n)
		c := append([]float32(nil), c0...)
		g := gemmArgs{m: m, n: n, k: k, a: a, lda: k, b: denseB{b, n}, c: c, ldc: n, accumulate: true}
		gemm(nil, defaultKernel(), &g)
		checkClose(t, fmt.Sprint("accumulate ", s), c, want, scale, 1e-5, 1e-6)
	}
}

// TestGemmDirectB checks the in-place B mode (gemmArgs.directB) against the
// packed path bit for bit, and so against the reference through it: row
// counts around the tile height, partial last panels, k past a k block
// (accumulating blocks), padded leading dimensions, fused and unfused
// epilogues with a residual, on 1 and 2 threads (narrow B against many
// rows: A split by thread, tuning.GemmDirectSplitRatio); accumulate mode
// too.
func TestGemmDirectB(t *testing.T) {
	kn := defaultKernel()
	if kn.tiles == nil {
		t.Skip("the in-place B mode needs a kernel with a tile form; this one has none")
	}
	r := newRand(21)
	eps := []Epilogue{{}, {Act: vec.ActClamp, Min: 0, Max: 6}, {Act: vec.ActGelu}}
	for _, s := range [][3]int{{16, 64, 32}, {13, 50, 9}, {6, 16, 1}, {64, 200, 600}, {7, 33, 1030}, {24, 3136 / 4, 144}, {1, 40, 5}, {100, 47, 70}, {256, 169, 64}, {200, 196, 600}} {
		m, n, k := s[0], s[1], s[2]
		for pad := 0; pad <= 3; pad += 3 {
			lda, ldb, ldc := k+pad, n+pad, n+pad
			a, b := randSlice(r, m*lda), randSlice(r, k*ldb)
			for ei, ep := range eps {
				for _, res := range []bool{false, true} {
					for _, acc := range []bool{false, true} {
						for _, p := range pools(t) {
							e := colEpi(&ep, ldc)
							if res {
								e.res = randSlice(r, m*ldc)
							}
							c0 := randSlice(r, m*ldc)
							var out [2][]float32
							for i, direct := range []bool{false, true} {
								c := append([]float32(nil), c0...)
								g := gemmArgs{m: m, n: n, k: k, a: a, lda: lda, b: denseB{b, ldb}, c: c, ldc: ldc, ep: e, accumulate: acc, directB: direct}
								gemm(p, kn, &g)
								out[i] = c
							}
							checkEqual(t, fmt.Sprintf("%v pad %d epilogue %d res %v acc %v threads %d: direct vs packed", s, pad, ei, res, acc, p.Threads()), out[1], out[0])
						}
					}
				}
			}
		}
	}
}

// TestGemvBlocks checks one-row products on several threads against one
// thread bit for bit and against the reference: k past one and several k
// blocks, widths past one chain call, with an epilogue, and in accumulate
// mode.
func TestGemvBlocks(t *testing.T) {
	kn := defaultKernel()
	p := parallel.NewPool(2)
	defer p.Close()
	r := newRand(51)
	for _, s := range [][2]int{{kn.kc + 1, 16}, {2*kn.kc + 6, 48}, {4 * kn.kc, 4096 + 32}} {
		k, n := s[0], s[1]
		a, b := randSlice(r, k), randSlice(r, k*n)
		ep := Epilogue{Bias: randSlice(r, n), Act: vec.ActGelu}
		want, scale := refGemm(1, n, k, a, k, b, n, &ep, n)
		one, two := make([]float32, n), make([]float32, n)
		gemmDense(nil, 1, n, k, a, k, b, n, one, n, ep)
		gemmDense(p, 1, n, k, a, k, b, n, two, n, ep)
		checkClose(t, fmt.Sprintf("gemv %dx%d", k, n), two, want, scale, 1e-5, 1e-6)
		checkEqual(t, fmt.Sprintf("gemv %dx%d: 2 threads vs 1", k, n), two, one)
		c0 := randSlice(r, n)
		acc1, acc2 := append([]float32(nil), c0...), append([]float32(nil), c0...)
		g1 := gemmArgs{m: 1, n: n, k: k, a: a, lda: k, b: denseB{b, n}, c: acc1, ldc: n, accumulate: true}
		gemm(nil, kn, &g1)
		g2 := gemmArgs{m: 1, n: n, k: k, a: a, lda: k, b: denseB{b, n}, c: acc2, ldc: n, accumulate: true}
		gemm(p, kn, &g2)
		checkEqual(t, fmt.Sprintf("gemv %dx%d accumulate: 2 threads vs 1", k, n), acc2, acc1)
	}
}

// BenchmarkGemmPackedModel times MobileNetV2's channels-last 1×1
// convolutions at 14×14 and 7×7 (pixels × input channels times packed
// weights) as they run in the model: the weights cold (the caches flushed
// between runs, untimed), the activations warm.
func BenchmarkGemmPackedModel(b *testing.B) {
	flush := make([]byte, 64<<20)
	for _, s := range []struct{ m, k, n int }{
		{49, 160, 960}, {49, 960, 160}, {49, 960, 320}, {49, 320, 1280}, {196, 96, 576}, {196, 576, 96}, {196, 64, 384},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%dx%d/threads=%d", s.m, s.k, s.n, threads), func(b *testing.B) {
				p := parallel.NewPool(threads)
				defer p.Close()
				r := newRand(1)
				a, c := randSlice(r, s.m*s.k), make([]float32, s.m*s.n)
				packed := packBHost(s.k, s.n, randSlice(r, s.k*s.n), s.n)
				ep := Epilogue{Bias: randSlice(r, s.n), Act: vec.ActClamp, Min: 0, Max: 6}
				var sink float32
				for b.Loop() {
					b.StopTimer()
					for i := 0; i < len(flush); i += 64 {
						flush[i]++
					}
					for _, v := range a {
						sink += v
					}
					b.StartTimer()
					GemmPacked(p, s.m, s.n, s.k, a, s.k, packed, c, s.n, ep)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				_ = sink
			})
		}
	}
}
