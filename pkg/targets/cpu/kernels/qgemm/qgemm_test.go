package qgemm

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// reference is the product written out: Σ (a − zero)·b in int64, then
// rounded to float32.
func reference(m, n, k int, a []byte, signed bool, zero int32, b []int8, bias ...int32) []float32 {
	out := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s int64
			if bias != nil {
				s = int64(bias[j])
			}
			for p := range k {
				av := int64(a[i*k+p])
				if signed {
					av = int64(int8(a[i*k+p]))
				}
				s += (av - int64(zero)) * int64(b[p*n+j])
			}
			out[i*n+j] = float32(s)
		}
	}
	return out
}

func randomOperands(r *rand.Rand, m, n, k int) ([]byte, []int8) {
	a := make([]byte, m*k)
	for i := range a {
		a[i] = byte(r.IntN(256))
	}
	b := make([]int8, k*n)
	for i := range b {
		b[i] = int8(r.IntN(256) - 128)
	}
	return a, b
}

// TestGemm checks every kernel this CPU runs (and the driver over them)
// against the reference: rows past each kernel's tile (12, 4, 1), columns
// past a panel and a pair, K not a multiple of 4, int8 A, extreme values
// (the largest terms, 255·−128), at 1 and 2 threads.
func TestGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{3, 5, 0}, {1, 1, 1}, {1, 16, 4}, {3, 5, 7}, {12, 32, 64}, {13, 33, 65}, {17, 48, 3}, {29, 70, 130}, {48, 31, 256}, {128, 96, 768}, {50, 17, 1000}}
	for _, threads := range []int{1, 2} {
		pool := parallel.NewPool(threads)
		defer pool.Close()
		for name, kern := range kernels() {
			for _, s := range shapes {
				for _, signed := range []bool{false, true} {
					m, n, k := s[0], s[1], s[2]
					a, b := randomOperands(r, m, n, k)
					zero := int32(r.IntN(256))
					if signed {
						zero -= 128
					}
					var bias []int32 // with int8 A, a bias too
					if signed {
						bias = make([]int32, n)
						for j := range bias {
							bias[j] = int32(r.IntN(1<<20)) - 1<<19
						}
					}
					want := reference(m, n, k, a, signed, zero, b, bias...)
					got := make([]float32, m*n)
					// scratch reused from another call: its bytes are stale
					scratch := make([]byte, GemmScratch(m, k))
					for i := range scratch {
						scratch[i] = byte(i*7 + 1)
					}
					gemmWith(kern, pool, m, n, k, a, k, signed, zero, Pack(k, n, b, n), bias, got, n, scratch)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("%s threads=%d m=%d n=%d k=%d signed=%v zero=%d: out[%d] = %v, want %v", name, threads, m, n, k, signed, zero, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestGemmExtremes runs the largest terms over a long K: sums of
// (0 − 255)·−128 past 2^24 (where float32 sums would round) up to MaxK.
func TestGemmExtremes(t *testing.T) {
	pool := parallel.NewPool(1)
	defer pool.Close()
	for name, kern := range kernels() {
		for _, k := range []int{1024, 4096, MaxK} {
			m, n := 2, 16
			a := make([]byte, m*k)
			b := make([]int8, k*n)
			for i := range b {
				b[i] = -128
			}
			for i := range a {
				a[i] = byte(255 * (i % 2)) // row 0 all 0 (− zero 255: −255), row 1 all 255
			}
			for i := k; i < m*k; i++ {
				a[i] = 0
			}
			for i := range k {
				a[i] = 0
			}
			const zero = 255
			want := reference(m, n, k, a, false, zero, b)
			got := make([]float32, m*n)
			gemmWith(kern, pool, m, n, k, a, k, false, zero, Pack(k, n, b, n), nil, got, n, nil)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s k=%d: out[%d] = %v, want %v", name, k, i, got[i], want[i])
				}
			}
		}
	}
}

// TestGemmStrides checks row strides past the row length for A and out,
// and that nothing past the columns or rows is written.
func TestGemmStrides(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := parallel.NewPool(2)
	defer pool.Close()
	for name, kern := range kernels() {
		m, n, k, lda, ldo := 19, 21, 40, 45, 30
		a := make([]byte, (m-1)*lda+k)
		for i := range a {
			a[i] = byte(r.IntN(256))
		}
		_, b := randomOperands(r, 1, n, k)
		dense := make([]byte, m*k)
		for i := range m {
			copy(dense[i*k:], a[i*lda:i*lda+k])
		}
		want := reference(m, n, k, dense, false, 7, b)
		out := make([]float32, m*ldo+8)
		for i := range out {
			out[i] = -1
		}
		gemmWith(kern, pool, m, n, k, a, lda, false, 7, Pack(k, n, b, n), nil, out, ldo, nil)
		for i := range out {
			row, col := i/ldo, i%ldo
			if row < m && col < n {
				if out[i] != want[row*n+col] {
					t.Fatalf("%s: out[%d,%d] = %v, want %v", name, row, col, out[i], want[row*n+col])
				}
			} else if out[i] != -1 {
				t.Fatalf("%s: wrote out[%d] past the matrix", name, i)
			}
		}
	}
}

func TestPackedLen(t *testing.T) {
	for _, c := range []struct{ k, n, want int }{{4, 16, 64 + 128}, {5, 16, 128 + 128}, {4, 17, 128 + 128}, {8, 33, 3*128 + 4*64}} {
		if got := PackedLen(c.k, c.n); got != c.want {
			t.Errorf("PackedLen(%d, %d) = %d, want %d", c.k, c.n, got, c.want)
		}
	}
}

func BenchmarkGemm(b *testing.B) {
	for _, s := range [][3]int{{128, 768, 768}, {1, 768, 768}, {3136, 64, 576}} {
		m, n, k := s[0], s[1], s[2]
		r := rand.New(rand.NewPCG(5, 6))
		a, bm := randomOperands(r, m, n, k)
		packed := Pack(k, n, bm, n)
		out := make([]float32, m*n)
		scratch := make([]byte, GemmScratch(m, k))
		for name, kern := range kernels() {
			b.Run(fmt.Sprintf("%dx%dx%d/%s", m, n, k, name), func(b *testing.B) {
				pool := parallel.NewPool(1)
				defer pool.Close()
				for b.Loop() {
					gemmWith(kern, pool, m, n, k, a, k, false, 128, packed, nil, out, n, scratch)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
			})
		}
	}
}

// TestLayoutContract checks that the verifier's sizes of a packed weight
// (lir.QMatMulPackedBytes) and of the scratch, and the longest K, are this
// package's.
func TestLayoutContract(t *testing.T) {
	for _, k := range []int{1, 3, 4, 5, 64, 767} {
		for _, n := range []int{1, 15, 16, 17, 32, 33, 768} {
			if got, want := lir.QMatMulPackedBytes(int64(k), int64(n)), int64(PackedLen(k, n)); got != want {
				t.Fatalf("k=%d n=%d: lir says %d bytes, qgemm packs %d", k, n, got, want)
			}
			if got, want := lir.QMatMulScratch(int64(n), int64(k)), int64(GemmScratch(n, k)); got != want {
				t.Fatalf("m=%d k=%d: lir's scratch is %d bytes, qgemm's %d", n, k, got, want)
			}
		}
	}
	for _, g := range []ConvGeom{geomOf(1, 3, 5, 7, 4, 3, 1, 1, 1), geomOf(2, 64, 14, 14, 33, 1, 2, 0, 1), geomOf(1, 5, 9, 9, 17, 3, 1, 2, 2), geomOf(1, 3, 30, 30, 8, 7, 2, 3, 1)} {
		lg := lir.ConvGeom{N: int64(g.N), C: int64(g.C), H: int64(g.H), W: int64(g.W), O: int64(g.O), KH: int64(g.KH), KW: int64(g.KW),
			StrideH: int64(g.StrideH), StrideW: int64(g.StrideW), PadT: int64(g.PadT), PadL: int64(g.PadL), PadB: int64(g.PadB), PadR: int64(g.PadR),
			DilH: int64(g.DilH), DilW: int64(g.DilW), Groups: 1, OH: int64(g.OH), OW: int64(g.OW)}
		xpad, outT := ConvScratch(g)
		lx, lo := lir.QConvScratch(lg)
		if lir.QConvPackedBytes(lg) != int64(ConvPackedLen(g)) || lx != int64(xpad) || lo != 4*int64(outT) {
			t.Fatalf("%+v: lir says %d, %d, %d bytes; qgemm %d, %d, %d", g, lir.QConvPackedBytes(lg), lx, lo, ConvPackedLen(g), xpad, 4*outT)
		}
	}
	if lir.QMatMulMaxK != MaxK {
		t.Fatalf("lir.QMatMulMaxK = %d, qgemm.MaxK = %d", lir.QMatMulMaxK, MaxK)
	}
}

// convReference is the convolution written out in int64.
func convReference(g ConvGeom, x []byte, signed bool, zero int32, w []int8, bias []int32) []float32 {
	out := make([]float32, g.N*g.O*g.OH*g.OW)
	for n := range g.N {
		for o := range g.O {
			for oh := range g.OH {
				for ow := range g.OW {
					var s int64
					if bias != nil {
						s = int64(bias[o])
					}
					for c := range g.C {
						for kh := range g.KH {
							for kw := range g.KW {
								h, wi := oh*g.StrideH-g.PadT+kh*g.DilH, ow*g.StrideW-g.PadL+kw*g.DilW
								if h < 0 || h >= g.H || wi < 0 || wi >= g.W {
									continue
								}
								v := int64(x[((n*g.C+c)*g.H+h)*g.W+wi])
								if signed {
									v = int64(int8(x[((n*g.C+c)*g.H+h)*g.W+wi]))
								}
								s += (v - int64(zero)) * int64(w[((o*g.C+c)*g.KH+kh)*g.KW+kw])
							}
						}
					}
					out[((n*g.O+o)*g.OH+oh)*g.OW+ow] = float32(s)
				}
			}
		}
	}
	return out
}

// convOperands are random uint8 input and int8 weights for g.
func convOperands(r *rand.Rand, g ConvGeom) ([]byte, []int8) {
	x := make([]byte, g.N*g.C*g.H*g.W)
	for i := range x {
		x[i] = byte(r.IntN(256))
	}
	w := make([]int8, g.O*g.C*g.KH*g.KW)
	for i := range w {
		w[i] = int8(r.IntN(256) - 128)
	}
	return x, w
}

func geomOf(n, c, h, w, o, k, stride, pad, dil int) ConvGeom {
	g := ConvGeom{Groups: 1, N: n, C: c, H: h, W: w, O: o, KH: k, KW: k, StrideH: stride, StrideW: stride, PadT: pad, PadL: pad, PadB: pad, PadR: pad, DilH: dil, DilW: dil}
	g.OH = (h+2*pad-dil*(k-1)-1)/stride + 1
	g.OW = (w+2*pad-dil*(k-1)-1)/stride + 1
	return g
}

// TestConv checks every kernel against the reference: 1x1 and 3x3,
// strides, dilation, padding, channel counts not a multiple of 4, output
// channels past a pair of panels, rows past each tile size, two images,
// int8 input, a bias.
func TestConv(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	geoms := []ConvGeom{geomOf(1, 3, 5, 5, 4, 3, 1, 1, 1), geomOf(2, 8, 7, 9, 33, 3, 1, 1, 1), geomOf(1, 16, 28, 28, 64, 1, 1, 0, 1),
		geomOf(1, 5, 11, 13, 17, 3, 2, 1, 1), geomOf(1, 6, 15, 15, 7, 3, 1, 2, 2), geomOf(1, 4, 6, 30, 40, 5, 1, 2, 1), geomOf(1, 64, 14, 14, 32, 3, 1, 1, 1),
		// few channels, relaid wide: dilated and strided, and a 7x7 stem
		geomOf(1, 3, 15, 17, 20, 3, 2, 2, 2), geomOf(2, 3, 30, 30, 8, 7, 2, 3, 1), geomOf(1, 1, 9, 9, 5, 3, 1, 0, 1), geomOf(1, 2, 7, 9, 5, 3, 1, 1, 1)}
	pool := parallel.NewPool(2)
	defer pool.Close()
	for name, kern := range kernels() {
		for _, g := range geoms {
			for _, signed := range []bool{false, true} {
				x, w := convOperands(r, g)
				var bias []int32
				if signed {
					bias = make([]int32, g.O)
					for i := range bias {
						bias[i] = int32(r.IntN(20001) - 10000)
					}
				}
				zero := int32(r.IntN(256))
				if signed {
					zero -= 128
				}
				want := convReference(g, x, signed, zero, w, bias)
				packed := PackConv(w, g)
				xl, ol := ConvScratch(g)
				for _, l := range []Layout{{}, {XNHWC: true}, {OutNHWC: true}, {XNHWC: true, OutNHWC: true}} {
					got := make([]float32, len(want))
					xpad := make([]byte, xl) // scratch from another call: stale bytes
					for i := range xpad {
						xpad[i] = byte(i*13 + 5)
					}
					xin := x
					if l.XNHWC {
						xin = swapInner(x, g.N, g.C, g.H*g.W)
					}
					outT := make([]float32, ol)
					if l.OutNHWC {
						outT = nil
					}
					convWith(kern, pool, g, l, xin, signed, zero, packed, bias, xpad, outT, got)
					if l.OutNHWC {
						got = swapInner(got, g.N, g.OH*g.OW, g.O)
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("%s %+v signed=%v layout %+v: out[%d] = %v, want %v", name, g, signed, l, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// swapInner is x [n, a, b] as [n, b, a]: an NCHW tensor channels last
// (a = C, b = H·W), or back (a = H·W, b = C).
func swapInner[T any](x []T, n, a, b int) []T {
	y := make([]T, len(x))
	for i := range n {
		for j := range a {
			for k := range b {
				y[(i*b+k)*a+j] = x[(i*a+j)*b+k]
			}
		}
	}
	return y
}

func BenchmarkConv(b *testing.B) {
	for _, g := range []ConvGeom{geomOf(1, 64, 56, 56, 64, 3, 1, 1, 1), geomOf(1, 256, 28, 28, 64, 1, 1, 0, 1), geomOf(1, 16, 112, 112, 96, 1, 1, 0, 1), geomOf(1, 3, 224, 224, 64, 7, 2, 3, 1)} {
		x, w := convOperands(rand.New(rand.NewPCG(9, 10)), g)
		packed := PackConv(w, g)
		xl, ol := ConvScratch(g)
		xpad, outT, out := make([]byte, xl), make([]float32, ol), make([]float32, g.N*g.O*g.OH*g.OW)
		for name, kern := range kernels() {
			if strings.HasPrefix(name, "go") {
				continue
			}
			b.Run(fmt.Sprintf("%dx%dx%d->%d_k%d/%s", g.C, g.H, g.W, g.O, g.KH, name), func(b *testing.B) {
				pool := parallel.NewPool(1)
				defer pool.Close()
				for b.Loop() {
					convWith(kern, pool, g, Layout{}, x, false, 128, packed, nil, xpad, outT, out)
				}
				flop := 2 * float64(g.N*g.O*g.OH*g.OW*g.C*g.KH*g.KW)
				b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
			})
		}
	}
}

// TestTransposeBytes checks the relayout's transposes, the pure-Go one and
// the one this CPU runs, against the definition: sizes below, at and past
// the blocks, strides past the sizes, nothing else written.
func TestTransposeBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for name, f := range transposers() {
		fn := struct {
			name string
			f    func(dst []byte, ldd int, src []byte, lds, rows, cols int)
		}{name, f}
		for _, s := range [][2]int{{3, 5}, {8, 8}, {9, 13}, {16, 16}, {17, 28}, {64, 56}, {256, 28}, {33, 100}} {
			rows, cols := s[0], s[1]
			lds, ldd := cols+3, rows+5
			src := make([]byte, rows*lds)
			for i := range src {
				src[i] = byte(r.IntN(256))
			}
			dst := make([]byte, cols*ldd)
			for i := range dst {
				dst[i] = 0xee
			}
			fn.f(dst, ldd, src, lds, rows, cols)
			for w := range cols {
				for c := range ldd {
					want := byte(0xee)
					if c < rows {
						want = src[c*lds+w]
					}
					if got := dst[w*ldd+c]; got != want {
						t.Fatalf("%s %dx%d: dst[%d][%d] = %d, want %d", fn.name, rows, cols, w, c, got, want)
					}
				}
			}
		}
	}
}

func BenchmarkTransposeBytes(b *testing.B) {
	src := make([]byte, 256*784)
	dst := make([]byte, 28*256)
	for name, f := range transposers() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for h := range 28 {
					f(dst, 256, src[h*28:], 784, 256, 28)
				}
			}
		})
	}
}

// TestGemmEveryRowCount runs every row count a tile ends in (each of the
// 1- to 12-row kernels) against the reference.
func TestGemmEveryRowCount(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	pool := parallel.NewPool(1)
	defer pool.Close()
	for name, kern := range kernels() {
		for m := 1; m <= 2*tileRows; m++ {
			n, k := 40, 36
			a, b := randomOperands(r, m, n, k)
			want := reference(m, n, k, a, false, 99, b)
			got := make([]float32, m*n)
			gemmWith(kern, pool, m, n, k, a, k, false, 99, Pack(k, n, b, n), nil, got, n, nil)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s m=%d: out[%d] = %v, want %v", name, m, i, got[i], want[i])
				}
			}
		}
	}
}
