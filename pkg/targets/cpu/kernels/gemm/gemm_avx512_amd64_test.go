//go:build amd64 && !purego

package gemm

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// Tests of the AVX-512F kernel against the AVX2 one, whose sums it must
// give bit for bit, and of its runs of tiles against the Go steps.

func needAVX512(t *testing.T) {
	t.Helper()
	if !vec.AVX512F {
		t.Skip("needs hardware: AVX-512 (AVX-512F with the OS saving zmm state)")
	}
}

func TestGemmAVX512TilesQ(t *testing.T) {
	// sgemm12x16z through kernelZq: runs of 1 to 5 row panels (pairs and
	// an odd last panel), A packed and in place, several B panels with a
	// row stride other than nr, every combination of epilogue flags;
	// against the Go steps bit for bit, nothing written outside the tiles.
	needAVX512(t)
	kn := avx512Kernel()
	const nr = 16
	r := newRand(5)
	for flags := uint(0); flags < 32; flags++ {
		if flags&epiBiasCol != 0 && flags&epiBiasRow != 0 {
			continue
		}
		for _, kc := range []int{0, 1, 2, 3, 4, 5, 8, 33} {
			for _, panels := range []int{1, 2, 3, 4, 5} {
				for _, inPlace := range []bool{false, true} {
					for _, nq := range []int{1, 3} {
						rows := 6 * panels
						ldb := nr + 5
						ps := kc*ldb + 9
						lda, aAt := 0, func(a []float32, i, p int) float32 { return a[i/6*6*kc+p*6+i%6] }
						a := randSlice(r, max(rows*kc, 1))
						if inPlace {
							lda = kc + 3
							a = randSlice(r, rows*lda)
							aAt = func(a []float32, i, p int) float32 { return a[i*lda+p] }
						}
						b := randSlice(r, (nq-1)*ps+max(kc*ldb, 1)+nr)
						ldc, ldr := nq*nr+3, nq*nr+1
						c0 := randSlice(r, (rows+2)*ldc) // two rows past the tiles stay as they are
						poisonAccumulators(c0, rows, ldc)
						bias := randSlice(r, max(rows, nq*nr))
						res := randSlice(r, rows*ldr)
						e := flagsEpi(flags, bias, res, ldr)
						got := append([]float32(nil), c0...)
						kn.tilesQ(kc, a, lda, b, ldb, ps, got, ldc, e, panels, nq)
						want := tileWant(kc, rows, nq*nr, func(i, p int) float32 { return aAt(a, i, p) },
							func(p, j int) float32 { return b[j/nr*ps+p*ldb+j%nr] }, c0, ldc, flags, bias, res, ldr, e.lo, e.hi)
						checkEqual(t, fmt.Sprintf("tilesQ flags=%05b kc=%d panels=%d inPlace=%v nq=%d", flags, kc, panels, inPlace, nq), got, want)
					}
				}
			}
		}
	}
}

func TestGemmAVX512MatchesAVX2(t *testing.T) {
	// Whole products on the AVX-512F kernel and the AVX2 one with the same
	// blocking (their own, and tiny blocks crossing every kc, mc and nc
	// boundary): B per call and packed ahead of time, A transposed, bias
	// by column and by row, every epilogue, accumulation, 1 and 2 threads,
	// bit for bit.
	needAVX512(t)
	ps := pools(t)
	eps := testEpilogues()
	r := newRand(19)
	z, y := avx512Kernel(), avx2Kernel()
	for bi, blk := range [][2]gemmKernel{{z, y}, {smallBlocking(z), smallBlocking(y)}} {
		for it := 0; it < 150; it++ {
			m, n, k := 1+r.IntN(80), 1+r.IntN(80), 1+r.IntN(80)
			if it%8 == 0 && bi == 0 { // the real blocking: several k and A blocks
				m, n, k = 1+r.IntN(300), 1+r.IntN(200), 1+r.IntN(1300)
			}
			lda, ldb, ldc := k+r.IntN(3), n+r.IntN(3), n+r.IntN(3)
			aT := it%5 == 3
			if aT {
				lda = m + r.IntN(3)
			}
			a, b := randSlice(r, max(m, k)*lda), randSlice(r, k*ldb)
			es := eps[it%len(eps)]
			ep := epi{act: es.act, alpha: es.alpha, lo: es.min, hi: es.max, ldr: ldc}
			if es.bias {
				ep.biasPerRow = it%3 == 1
				ep.bias = randSlice(r, max(m, n))
			}
			if es.res {
				ep.res = randSlice(r, m*ldc)
			}
			acc := it%7 == 2
			c0 := randSlice(r, m*ldc)
			pre := new(packedB)
			*pre = unpackHeader("test", packB(16, blk[0].kc, k, n, b, ldb), k, n, &blk[0])
			for _, p := range ps {
				for _, src := range []BSource{denseB{b, ldb}, pre} {
					var outs [2][]float32
					for i, kn := range blk {
						c := append([]float32(nil), c0...)
						g := gemmArgs{m: m, n: n, k: k, a: a, lda: lda, aT: aT, b: src, c: c, ldc: ldc, accumulate: acc, ep: ep}
						gemm(p, kn, &g)
						outs[i] = c
					}
					what := fmt.Sprintf("kc%d/mc%d %d×%d×%d aT=%v acc=%v %s rowbias=%v %T threads=%d",
						blk[0].kc, blk[0].mc, m, n, k, aT, acc, es.name, ep.biasPerRow, src, p.Threads())
					checkEqual(t, what, outs[0], outs[1])
				}
			}
		}
	}
}

func TestGemmAVX512Layout(t *testing.T) {
	// Both amd64 kernels read the same packed B, so an artifact packed on
	// either machine runs on the other without repacking.
	const want = "sgemm-b/nr16/kc512"
	for _, kn := range []gemmKernel{avx2Kernel(), avx512Kernel()} {
		if got := kernelLayout(kn); got != want {
			t.Errorf("%s kernel: layout %s, want %s", kn.name, got, want)
		}
	}
}

// BenchmarkGemmAVX512vsAVX2 times the AVX2 and AVX-512 kernels call by
// call in turn on one thread (each pair of calls meets the same load on
// a shared machine), over BenchmarkGemm's and BenchmarkGemmPacked's
// squares and BenchmarkGemmModelShapes' products: each kernel's median
// GFLOP/s per call, and the median of the pairs' time ratios (AVX-512's
// time over AVX2's: below 1 is faster).
func BenchmarkGemmAVX512vsAVX2(b *testing.B) {
	if !vec.AVX512F {
		b.Skip("needs hardware: AVX-512")
	}
	type shape struct {
		name    string
		m, k, n int
		packed  bool
	}
	var shapes []shape
	for _, n := range []int{256, 512, 1024, 2048} {
		shapes = append(shapes, shape{fmt.Sprintf("square/n=%d", n), n, n, n, false}, shape{fmt.Sprintf("packed/n=%d", n), n, n, n, true})
	}
	for _, s := range []struct {
		name    string
		m, k, n int
	}{{"enc_qkv", 128, 256, 768}, {"enc_out", 128, 256, 256}, {"enc_ffn1", 128, 256, 1024}, {"enc_ffn2", 128, 1024, 256},
		{"mlp_l1", 64, 512, 2048}, {"mlp_l2", 64, 2048, 2048}, {"mlp_l3", 64, 2048, 512},
		{"mbv2_7_960to160", 49, 960, 160}, {"mbv2_7_160to960", 49, 160, 960}, {"mbv2_7_320to1280", 49, 320, 1280},
		{"mbv2_14_384to64", 196, 384, 64}, {"mbv2_14_64to384", 196, 64, 384}, {"mbv2_14_576to96", 196, 576, 96}, {"mbv2_14_96to576", 196, 96, 576},
		{"mbv2_28_192to32", 784, 192, 32}, {"mbv2_28_32to192", 784, 32, 192}} {
		shapes = append(shapes, shape{"model/" + s.name, s.m, s.k, s.n, true})
	}
	kns := [2]gemmKernel{avx2Kernel(), avx512Kernel()}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			r := newRand(1)
			x, y, c := randSlice(r, s.m*s.k), randSlice(r, s.k*s.n), make([]float32, s.m*s.n)
			var src BSource = denseB{y, s.n}
			ep := epi{}
			if s.packed {
				pb := unpackHeader("bench", packB(16, kns[0].kc, s.k, s.n, y, s.n), s.k, s.n, &kns[0])
				src = &pb
				if s.name[:5] == "model" {
					ep = colEpi(&Epilogue{Bias: randSlice(r, s.n), Act: vec.ActRelu}, s.n)
				}
			}
			var ts [2][]float64
			var ratios []float64
			for b.Loop() {
				var d [2]float64
				for i, kn := range kns {
					t0 := time.Now()
					g := gemmArgs{m: s.m, n: s.n, k: s.k, a: x, lda: s.k, b: src, c: c, ldc: s.n, ep: ep}
					gemm(nil, kn, &g)
					d[i] = time.Since(t0).Seconds()
					ts[i] = append(ts[i], d[i])
				}
				ratios = append(ratios, d[1]/d[0])
			}
			flop := 2 * float64(s.m) * float64(s.n) * float64(s.k)
			med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
			b.ReportMetric(flop/med(ts[0])/1e9, "avx2-GFLOP/s")
			b.ReportMetric(flop/med(ts[1])/1e9, "avx512-GFLOP/s")
			b.ReportMetric(med(ratios), "avx512/avx2-time")
		})
	}
}
