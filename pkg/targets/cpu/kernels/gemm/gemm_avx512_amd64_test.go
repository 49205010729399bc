//go:build amd64 && !purego

package gemm

import (
	"fmt"
	"testing"

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
			pre := unpackHeader("test", packB(16, blk[0].kc, k, n, b, ldb), k, n, &blk[0])
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
