package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// Tests of the micro-kernels against each other and a float64 reference,
// of the pre-packed B path, and of the whole package with the portable
// kernel forced (the purego build tag runs everything on it as well).

// testKernels returns the kernels this machine runs: the portable one and,
// where built and supported, the assembly one.
func testKernels() []gemmKernel {
	if gemmRace {
		// The parallel code is every kernel's: under the race detector
		// the default kernel checks it, and the main run every kernel
		// (each grid once per kernel made this package the longest part
		// of make test's race run).
		return []gemmKernel{defaultKernel()}
	}
	ks := []gemmKernel{goKernel()}
	if kn, ok := asmKernel(); ok {
		ks = append(ks, kn)
	}
	return append(ks, otherKernels()...)
}

// useKernel makes kn the package's kernel until the test ends.
func useKernel(t testing.TB, kn gemmKernel) {
	old := gemmDefault
	gemmDefault = kn
	t.Cleanup(func() { gemmDefault = old })
}

// smallBlocking shrinks kn's blocking so that small shapes cross every
// kc, mc and nc boundary.
func smallBlocking(kn gemmKernel) gemmKernel {
	kn.kc, kn.mc, kn.nc = 16, 2*kn.mr+1, 2*kn.nr
	return kn
}

func TestGemmKernelsRef(t *testing.T) {
	// Odd sizes and edges, padded leading dimensions, every epilogue, through
	// gemm on each kernel (with its own and with tiny blocking), one and two
	// threads; against float64 and, for the same kernel, thread counts bit
	// for bit.
	ps := pools(t)
	eps := testEpilogues()
	sizes := []int{1, 2, 3, 5, 6, 7, 11, 13, 16, 17, 20, 23, 31, 37, 38, 48, 53, 67, 70}
	ks := []int{1, 2, 3, 4, 5, 7, 16, 17, 31, 61}
	r := newRand(42)
	for _, kn := range testKernels() {
		// A blocks of 2·mr+2 rows end in two rows past a full panel (the
		// AVX2 kernel's two four-row tiles, k blocks of 16 being short).
		even := smallBlocking(kn)
		even.mc = 2*kn.mr + 2
		for _, blk := range []gemmKernel{kn, smallBlocking(kn), even} {
			name := fmt.Sprintf("%s/kc%d/mc%d/nc%d", blk.name, blk.kc, blk.mc, blk.nc)
			for it := 0; it < 300; it++ {
				m, n, k := sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))], ks[r.IntN(len(ks))]
				pa, pb, pc := r.IntN(3)*r.IntN(9), r.IntN(3)*r.IntN(9), r.IntN(3)*r.IntN(9)
				ep := eps[it%len(eps)]
				runKernelCase(t, name, blk, ps, m, n, k, pa, pb, pc, ep, uint64(it))
			}
		}
	}
}

func runKernelCase(t *testing.T, name string, kn gemmKernel, ps []*parallel.Pool, m, n, k, padA, padB, padC int, epSpec struct {
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
				c[i*ldc+j] = 7
			}
		}
		g := gemmArgs{m: m, n: n, k: k, a: a, lda: lda, b: denseB{b, ldb}, c: c, ldc: ldc, ep: colEpi(&ep, ldc)}
		gemm(p, kn, &g)
		got := make([]float32, m*n)
		for i := 0; i < m; i++ {
			copy(got[i*n:], c[i*ldc:i*ldc+n])
			for j := n; j < ldc; j++ {
				if c[i*ldc+j] != 7 {
					t.Fatalf("%s %d×%d×%d: padding C[%d,%d] overwritten", name, m, n, k, i, j)
				}
			}
		}
		what := fmt.Sprintf("%s %d×%d×%d ld+%d/%d/%d %s threads=%d", name, m, n, k, padA, padB, padC, epSpec.name, p.Threads())
		checkClose(t, what, got, want, scale, 1e-5, 1e-6)
		if first == nil {
			first = got
		} else {
			checkEqual(t, what+" vs threads=1", got, first)
		}
	}
}

func TestGemmKernelsAgree(t *testing.T) {
	// The assembly kernel and the portable one give the same products
	// within float32 rounding, also through Gemm and BatchMatMul.
	ks := testKernels()
	if len(ks) < 2 {
		t.Skip("needs hardware: no assembly kernel on this machine")
	}
	r := newRand(7)
	ps := pools(t)
	useKernel(t, gemmDefault) // restored when the test ends
	for it := 0; it < 40; it++ {
		m, n, k := 1+r.IntN(90), 1+r.IntN(90), 1+r.IntN(600)
		a, b := randSlice(r, m*k), randSlice(r, k*n)
		ep := Epilogue{Bias: randSlice(r, n), Act: vec.ActRelu}
		want, scale := refGemm(m, n, k, a, k, b, n, &ep, n)
		for _, p := range ps {
			var outs [][]float32
			for _, kn := range ks {
				gemmDefault = kn
				c := poison(m * n)
				gemmDense(p, m, n, k, a, k, b, n, c, n, ep)
				checkClose(t, fmt.Sprintf("Gemm %s %d×%d×%d", kn.name, m, n, k), c, want, scale, 1e-5, 1e-6)
				o := poison(2 * m * n)
				a2 := append(append([]float32(nil), a...), a...)
				BatchMatMul(p, o, a2, []int{2, m, k}, b, []int{k, n}, ep)
				checkClose(t, fmt.Sprintf("BatchMatMul %s", kn.name), o[m*n:], want, scale, 1e-5, 1e-6)
				outs = append(outs, c)
			}
			checkClose(t, "asm vs go", outs[1], toF64(outs[0]), scale, 2e-5, 1e-6)
		}
	}
}

func toF64(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

func TestGemmTileEpilogue(t *testing.T) {
	// The tile function alone: every combination of its epilogue flags, B
	// read with a row stride other than nr, against the same steps in Go;
	// on each assembly kernel the machine runs.
	kn, ok := asmKernel()
	if !ok {
		t.Skip("needs hardware: no assembly kernel on this machine")
	}
	for _, kn := range append([]gemmKernel{kn}, otherKernels()...) {
		t.Run(kn.name, func(t *testing.T) { checkTileEpilogue(t, kn) })
	}
}

func checkTileEpilogue(t *testing.T, kn gemmKernel) {
	if kn.tile == nil {
		t.Skipf("needs hardware: the %s kernel of this machine has no tile form (Go applies its epilogue)", kn.name)
	}
	mr, nr := kn.mr, kn.nr
	r := newRand(3)
	for flags := uint(0); flags < 32; flags++ {
		if flags&epiBiasCol != 0 && flags&epiBiasRow != 0 {
			continue
		}
		for _, kc := range []int{0, 1, 3, 4, 5, 8, 33} {
			for _, ldb := range []int{nr, nr + 5} {
				ldc, ldr := nr+3, nr+1
				a, b := randSlice(r, kc*mr), randSlice(r, max(kc*ldb, 1))
				c0 := randSlice(r, mr*ldc)
				poisonAccumulators(c0, mr, ldc)
				bias := randSlice(r, max(mr, nr))
				res := randSlice(r, mr*ldr)
				e := flagsEpi(flags, bias, res, ldr)
				got := append([]float32(nil), c0...)
				kn.tile(kc, a, b, ldb, got, ldc, e)
				want := tileWant(kc, mr, nr, func(i, p int) float32 { return a[p*mr+i] },
					func(p, j int) float32 { return b[p*ldb+j] }, c0, ldc, flags, bias, res, ldr, e.lo, e.hi)
				checkEqual(t, fmt.Sprintf("tile flags=%05b kc=%d ldb=%d", flags, kc, ldb), got, want)
			}
		}
	}
}

func TestGemmReluFused(t *testing.T) {
	// ReLU and clamp fused into the kernel keep Go's semantics: NaN passes
	// through, and an inverted clamp (lo > hi) is left to the Go loop.
	useKernel(t, gemmDefault)
	for _, kn := range testKernels() {
		gemmDefault = kn
		m, n, k := 13, 35, 2
		a := make([]float32, m*k)
		b := make([]float32, k*n)
		for i := 0; i < m; i++ {
			a[i*k] = 1
		}
		b[0], b[1], b[2], b[3] = float32(math.NaN()), -5, -2, 3
		copy(b[8:12], b[0:4]) // the same in the second vector of each row
		for _, ep := range []Epilogue{{Act: vec.ActRelu}, {Act: vec.ActClamp, Min: -1, Max: 2}, {Act: vec.ActClamp, Min: 1, Max: -1}} {
			c := poison(m * n)
			gemmDense(nil, m, n, k, a, k, b, n, c, n, ep)
			want := []float32{float32(math.NaN()), 0, 0, 3}
			switch {
			case ep.Act == vec.ActClamp && ep.Min < ep.Max:
				want = []float32{float32(math.NaN()), -1, -1, 2}
			case ep.Act == vec.ActClamp:
				want = []float32{float32(math.NaN()), 1, 1, -1} // v < lo is tested first
			}
			for i := 0; i < m; i++ {
				checkEqual(t, fmt.Sprintf("%s %+v row %d", kn.name, ep, i), c[i*n:i*n+4], want)
				checkEqual(t, fmt.Sprintf("%s %+v row %d", kn.name, ep, i), c[i*n+8:i*n+12], want)
			}
		}
	}
}

func TestGemmPacked(t *testing.T) {
	// GemmPacked on packBHost's output equals Gemm bit for bit, for every
	// kernel, including the few-rows path, padded leading dimensions and
	// every epilogue.
	ps := pools(t)
	eps := testEpilogues()
	r := newRand(11)
	useKernel(t, gemmDefault)
	for _, kn := range testKernels() {
		for bi, blk := range []gemmKernel{kn, smallBlocking(kn)} {
			gemmDefault = blk
			for it := 0; it < 100; it++ {
				m, n, k := 1+r.IntN(40), 1+r.IntN(70), 1+r.IntN(70)
				switch {
				case it%10 == 0 && bi == 0: // the real blocking: large shapes
					m, n, k = 1+r.IntN(300), 1+r.IntN(300), 1+r.IntN(1200)
				case it%10 == 1: // few rows, wide: chunks across threads and chain widths
					m, n, k = 1+r.IntN(5), 4100+r.IntN(300), 1+r.IntN(90)
				}
				lda, ldb, ldc := k+r.IntN(3), n+r.IntN(3), n+r.IntN(3)
				a, b := randSlice(r, m*lda), randSlice(r, k*ldb)
				es := eps[it%len(eps)]
				ep := Epilogue{Act: es.act, Alpha: es.alpha, Min: es.min, Max: es.max, ActLast: es.last}
				if es.bias {
					ep.Bias = randSlice(r, n)
				}
				if es.res {
					ep.Residual = randSlice(r, m*ldc)
				}
				packed := packBHost(k, n, b, ldb)
				for _, p := range ps {
					c1, c2 := poison(m*ldc), poison(m*ldc)
					gemmDense(p, m, n, k, a, lda, b, ldb, c1, ldc, ep)
					GemmPacked(p, m, n, k, a, lda, packed, c2, ldc, ep)
					what := fmt.Sprintf("%s %d×%d×%d %s threads=%d", PackedLayout(), m, n, k, es.name, p.Threads())
					if m >= blk.mr || blk.tile != nil {
						checkEqual(t, what, c2, c1)
					} else { // the portable kernel's few-rows path sums in another order
						want, scale := refGemm(m, n, k, a, lda, b, ldb, &ep, ldc)
						got := make([]float32, 0, m*n)
						for i := 0; i < m; i++ {
							got = append(got, c2[i*ldc:i*ldc+n]...)
						}
						checkClose(t, what, got, want, scale, 1e-5, 1e-6)
					}
				}
			}
		}
	}
}

// TestGemmOneBlockTail checks products a few rows longer than one A block
// (kernel mc + 1..5), which run as one block ending in a partial row panel
// instead of a second block of fewer rows than a tile: packed and per-call
// B, short and long k, on 1 and 2 threads, against the reference.
func TestGemmOneBlockTail(t *testing.T) {
	kn := defaultKernel()
	r := newRand(23)
	for _, extra := range []int{1, 2, 4, 5} {
		for _, k := range []int{100, kn.kc + 188} {
			m, n := kn.mc/kn.mr*kn.mr+extra, 200
			checkGemmBothB(t, r, m, n, k, Epilogue{Act: vec.ActClamp, Min: -1, Max: 1})
		}
	}
}

// TestGemmFourRowGroups checks blocks that end in a four-row tile over runs
// of B panels too large to stay in L2 (fourGroupBytes), whose four-row tiles
// follow the six-row ones group by group: 64 and 70 rows over several k
// blocks and 600 columns, with B packed ahead of time and per call, on 1 and
// 2 threads, against the reference.
func TestGemmFourRowGroups(t *testing.T) {
	kn := defaultKernel()
	if kn.tiles4 == nil {
		t.Skip("needs hardware: no four-row tile on this machine's kernel")
	}
	r := newRand(17)
	for _, m := range []int{64, 70} {
		checkGemmBothB(t, r, m, 600, 2*kn.kc+76, Epilogue{Act: vec.ActRelu})
	}
}

// checkGemmBothB checks an m×n×k product of random operands with ep and a
// random bias, B given per call (Gemm) and packed ahead of time
// (GemmPacked), on 1 and 2 threads: against the reference, and the two
// bit for bit.
func checkGemmBothB(t *testing.T, r *rand.Rand, m, n, k int, ep Epilogue) {
	t.Helper()
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	ep.Bias = randSlice(r, n)
	want, scale := refGemm(m, n, k, a, k, b, n, &ep, n)
	packed := packBHost(k, n, b, n)
	for _, p := range pools(t) {
		c1, c2 := poison(m*n), poison(m*n)
		gemmDense(p, m, n, k, a, k, b, n, c1, n, ep)
		GemmPacked(p, m, n, k, a, k, packed, c2, n, ep)
		what := fmt.Sprintf("%dx%dx%d threads=%d", m, n, k, p.Threads())
		checkClose(t, what, c1, want, scale, 1e-5, 1e-6)
		checkEqual(t, what+" packed vs per call", c2, c1)
	}
}

func TestGemmPackedLayout(t *testing.T) {
	useKernel(t, gemmDefault)
	for _, kn := range testKernels() {
		gemmDefault = kn
		layout := PackedLayout()
		if want := fmt.Sprintf("sgemm-b/nr%d/kc%d", kn.nr, kn.kc); layout != want {
			t.Errorf("PackedLayout() = %q, want %q", layout, want)
		}
		r := newRand(5)
		k, n := 37, 45
		b := randSlice(r, k*n)
		p1 := packBHost(k, n, b, n)
		p2, err := PackBLayout(layout, k, n, b, n)
		if err != nil {
			t.Fatal(err)
		}
		checkEqual(t, "PackBLayout == PackB", p2, p1)
		// The documented layout: header, then B[p][j] at
		// 8 + pc·P·nr + q·nr·kb + (p-pc)·nr + (j-q·nr).
		P := ceilDiv(n, kn.nr)
		if len(p1) != 8+P*kn.nr*k {
			t.Fatalf("packed length %d, want %d", len(p1), 8+P*kn.nr*k)
		}
		for i, v := range []uint32{0x42584c52, 1, uint32(k), uint32(n), uint32(kn.nr), uint32(kn.kc)} {
			if got := math.Float32bits(p1[i]); got != v {
				t.Errorf("header[%d] = %#x, want %#x", i, got, v)
			}
		}
		for p := 0; p < k; p++ {
			pc := p / kn.kc * kn.kc
			kb := min(kn.kc, k-pc)
			for j := 0; j < P*kn.nr; j++ {
				q := j / kn.nr
				got := p1[8+pc*P*kn.nr+q*kn.nr*kb+(p-pc)*kn.nr+j-q*kn.nr]
				var want float32
				if j < n {
					want = b[p*n+j]
				}
				if got != want {
					t.Fatalf("%s: B[%d][%d] packed as %v, want %v", layout, p, j, got, want)
				}
			}
		}
	}
	// Another machine's layout packs here and is refused by GemmPacked.
	other, err := PackBLayout("sgemm-b/nr8/kc64", 3, 4, make([]float32, 12), 4)
	if err != nil {
		t.Fatal(err)
	}
	mustPanic(t, "foreign layout", "repack", func() {
		GemmPacked(nil, 2, 4, 3, make([]float32, 6), 3, other, make([]float32, 8), 4, Epilogue{})
	})
	for _, bad := range []string{"", "sgemm-b/nr0/kc64", "sgemm-b/nr8", "sgemm-b/nr8/kc64x", "avx2/nr16/kc256"} {
		if _, err := PackBLayout(bad, 3, 4, make([]float32, 12), 4); err == nil {
			t.Errorf("PackBLayout(%q) succeeded", bad)
		}
	}
	good := packBHost(3, 4, make([]float32, 12), 4)
	mustPanic(t, "wrong k", "packed B is 3×4", func() {
		GemmPacked(nil, 2, 4, 5, make([]float32, 10), 5, good, make([]float32, 8), 4, Epilogue{})
	})
	mustPanic(t, "no header", "no valid header", func() {
		GemmPacked(nil, 2, 4, 3, make([]float32, 6), 3, make([]float32, 100), make([]float32, 8), 4, Epilogue{})
	})
	mustPanic(t, "truncated", "elements", func() {
		GemmPacked(nil, 2, 4, 3, make([]float32, 6), 3, good[:len(good)-1], make([]float32, 8), 4, Epilogue{})
	})
	// Empty shapes.
	c := []float32{5, 5}
	GemmPacked(nil, 1, 2, 0, nil, 0, packBHost(0, 2, nil, 2), c, 2, Epilogue{Bias: []float32{1, 2}})
	checkEqual(t, "k=0", c, []float32{1, 2})
	GemmPacked(nil, 3, 0, 4, make([]float32, 12), 4, packBHost(4, 0, nil, 0), nil, 0, Epilogue{})
}

func mustPanic(t *testing.T, name, substr string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic", name)
		} else if !strings.Contains(fmt.Sprint(r), substr) {
			t.Errorf("%s: panic %q does not mention %q", name, r, substr)
		}
	}()
	f()
}

func TestGemmPortableKernelSuite(t *testing.T) {
	// The package's GEMM-based tests again with the portable kernel (the
	// default when no assembly kernel runs; `go test -tags purego` runs
	// everything that way).
	if gemmDefault.name == "go" {
		t.Skip("needs hardware: the portable kernel is already this machine's default")
	}
	if gemmRace {
		t.Skip("slow under the race detector; the parallel code is every kernel's")
	}
	useKernel(t, goKernel())
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"GemmSizes", TestGemmSizes}, {"GemmBlocking", TestGemmBlocking}, {"GemmEpilogues", TestGemmEpilogues},
		{"GemmLeadingDims", TestGemmLeadingDims}, {"GemmEmpty", TestGemmEmpty}, {"GemmNaNInf", TestGemmNaNInf},
		{"GemmAccumulateAndWork", TestGemmAccumulateAndWork}, {"BatchMatMul", TestBatchMatMul},
		{"BatchMatMulManySmall", TestBatchMatMulManySmall}, {"ContractPanics", TestContractPanics},
	} {
		t.Run(tc.name, tc.f)
	}
}

func TestGemmWorkReuse(t *testing.T) {
	// Pooled buffers reused across shapes, kernels and thread counts, some
	// of them left full of NaNs and larger than needed: results equal the
	// float64 reference every time.
	r := newRand(9)
	ps := pools(t)
	for _, kn := range testKernels() {
		for it := 0; it < 20; it++ {
			m, n, k := 1+r.IntN(120), 1+r.IntN(120), 1+r.IntN(600)
			if it%3 == 0 {
				m = 1 + r.IntN(5) // the few-rows path's scratch
			}
			a, b := randSlice(r, m*k), randSlice(r, k*n)
			for i := 0; i < 2; i++ { // bigger than any of these shapes needs
				// The second buffer is too small for most: replaced.
				w := &gemmWork{bufs: [][]float32{poison(1 << 16), poison(64)}, bp: poison(1 << 17)}
				gemmWorkPool.Put(w)
			}
			c := poison(m * n)
			g := gemmArgs{m: m, n: n, k: k, a: a, lda: k, b: denseB{b, n}, c: c, ldc: n}
			gemm(ps[it%2], kn, &g)
			want, scale := refGemm(m, n, k, a, k, b, n, &Epilogue{}, n)
			checkClose(t, fmt.Sprintf("%s %d×%d×%d", kn.name, m, n, k), c, want, scale, 1e-5, 1e-6)
		}
	}
}

// TestFewRowsChains checks products with fewer rows than the tile against
// a row-major B with several k blocks, which threads split by k block
// (fewRowsChains): the same bits on 1 and 2 threads (each k block's sums
// added in order), close to the reference, with bias and residual, widths
// with a partial panel. (TestGemmPacked checks the chains against the row
// kernels bit for bit.)
func TestFewRowsChains(t *testing.T) {
	r := newRand(17)
	p2 := parallel.NewPool(2)
	defer p2.Close()
	for _, m := range []int{1, 2, 3, 5} {
		for _, n := range []int{16, 100, 1000, 1007} {
			for _, k := range []int{513, 1280, 1500} {
				lda, ldb := k+1, n+3
				a, b := randSlice(r, m*lda), randSlice(r, k*ldb)
				ep := Epilogue{Bias: randSlice(r, n), Residual: randSlice(r, m*n), Act: vec.ActRelu}
				c1, c2 := poison(m*n), poison(m*n)
				gemmDense(nil, m, n, k, a, lda, b, ldb, c1, n, ep)
				gemmDense(p2, m, n, k, a, lda, b, ldb, c2, n, ep)
				what := fmt.Sprintf("%d×%d×%d", m, n, k)
				checkEqual(t, what+" 2 threads vs 1", c2, c1)
				want, scale := refGemm(m, n, k, a, lda, b, ldb, &ep, n)
				checkClose(t, what, c2, want, scale, 1e-5, 1e-6)
			}
		}
	}
}

// TestGemmChain2 checks the two-row chain kernel against the one-row chain
// on each row, bit for bit: widths through the 32- and 8-column steps,
// row counts through the four-row passes, B rows wider than the sums.
func TestGemmChain2(t *testing.T) {
	kn := defaultKernel()
	if kn.chain2 == nil {
		t.Skip("needs hardware: this machine's kernel has no two-row chain")
	}
	r := newRand(23)
	for _, n := range []int{8, 24, 32, 40, 72, 264} {
		for _, rows := range []int{1, 3, 4, 5, 9} {
			ldb := n + 5
			b := randSlice(r, rows*ldb)
			a0, a1 := randSlice(r, rows), randSlice(r, rows)
			d0, d1 := randSlice(r, n), randSlice(r, n)
			w0, w1 := append([]float32(nil), d0...), append([]float32(nil), d1...)
			kn.chain2(d0, d1, b, ldb, a0, a1)
			kn.chain(w0, b, ldb, a0)
			kn.chain(w1, b, ldb, a1)
			what := fmt.Sprintf("n=%d rows=%d", n, rows)
			checkEqual(t, what+" row 0", d0, w0)
			checkEqual(t, what+" row 1", d1, w1)
		}
	}
}

func TestGemmTiles4(t *testing.T) {
	// The four-row tiles alone: every combination of epilogue flags, A
	// packed (the first four rows of a 6-row panel) and in place, B with a
	// row stride other than nr, several B panels a call; against the same
	// steps in Go bit for bit, and nothing written past the four rows or
	// the panels' columns.
	kn, ok := asmKernel()
	if !ok || kn.tiles4 == nil {
		t.Skip("needs hardware: no four-row tiles on this machine")
	}
	nr := kn.nr
	r := newRand(4)
	for flags := uint(0); flags < 32; flags++ {
		if flags&epiBiasCol != 0 && flags&epiBiasRow != 0 {
			continue
		}
		for _, kc := range []int{0, 1, 2, 3, 5, 8, 33} {
			for _, inPlace := range []bool{false, true} {
				for _, nq := range []int{1, 3} {
					ldb := nr + 5
					ps := kc*ldb + 9
					lda, aAt := 0, func(a []float32, i, p int) float32 { return a[p*6+i] }
					a := randSlice(r, max(6*kc, 1))
					if inPlace {
						lda = kc + 3
						a = randSlice(r, 4*lda)
						aAt = func(a []float32, i, p int) float32 { return a[i*lda+p] }
					}
					b := randSlice(r, (nq-1)*ps+max(kc*ldb, 1)+nr)
					ldc, ldr := nq*nr+3, nq*nr+1
					c0 := randSlice(r, 6*ldc) // rows 4 and 5 must stay as they are
					poisonAccumulators(c0, 4, ldc)
					bias := randSlice(r, nq*nr)
					res := randSlice(r, 4*ldr)
					e := flagsEpi(flags, bias, res, ldr)
					got := append([]float32(nil), c0...)
					kn.tiles4(kc, a, lda, b, ldb, ps, got, ldc, e, nq)
					want := tileWant(kc, 4, nq*nr, func(i, p int) float32 { return aAt(a, i, p) },
						func(p, j int) float32 { return b[j/nr*ps+p*ldb+j%nr] }, c0, ldc, flags, bias, res, ldr, e.lo, e.hi)
					checkEqual(t, fmt.Sprintf("tiles4 flags=%05b kc=%d inPlace=%v nq=%d", flags, kc, inPlace, nq), got, want)
				}
			}
		}
	}
}

// poisonAccumulators puts NaN and ±Inf into every accumulator register's
// part of a tile's rows rows of C (16 columns, rows ldc apart).
func poisonAccumulators(c []float32, rows, ldc int) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for i := 0; i < rows; i++ {
		c[i*ldc+i%8], c[i*ldc+8+(i+3)%8] = nan, nan
		c[i*ldc+(i+5)%8], c[i*ldc+8+(i+1)%8] = -inf, inf
	}
}

// flagsEpi is the tile epilogue of the given flags with the tile tests'
// bias, residual (rows ldr apart) and clamp bounds [-0.3, 0.4].
func flagsEpi(flags uint, bias, res []float32, ldr int) tileEpi {
	e := tileEpi{flags: flags, lo: -0.3, hi: 0.4}
	if flags&(epiBiasCol|epiBiasRow) != 0 {
		e.bias = bias
	}
	if flags&epiRes != 0 {
		e.res, e.ldr = res, ldr
	}
	return e
}

// tileWant is c0 with its rows × cols tile replaced by what a tile with the
// given epilogue flags stores: the FMA chain of A(i, p)·B(p, j) over p < kc
// from zero, then the old C, a bias by column or by row, the clamp to
// [lo, hi] and the residual (rows ldr apart), in that order.
func tileWant(kc, rows, cols int, aAt func(i, p int) float32, bAt func(p, j int) float32, c0 []float32, ldc int,
	flags uint, bias, res []float32, ldr int, lo, hi float32) []float32 {
	want := append([]float32(nil), c0...)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			var s float32
			for p := 0; p < kc; p++ {
				s = float32(math.FMA(float64(aAt(i, p)), float64(bAt(p, j)), float64(s)))
			}
			v := s
			if flags&epiAcc != 0 {
				v += c0[i*ldc+j]
			}
			if flags&epiBiasCol != 0 {
				v += bias[j]
			}
			if flags&epiBiasRow != 0 {
				v += bias[i]
			}
			if flags&epiClamp != 0 {
				if v < lo {
					v = lo
				} else if v > hi {
					v = hi
				}
			}
			if flags&epiRes != 0 {
				v += res[i*ldr+j]
			}
			want[i*ldc+j] = v
		}
	}
	return want
}
