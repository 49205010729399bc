package gemm

import (
	"fmt"
	"math"
	"sync"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Gemm is a packed-panel design (the BLIS loop nest):
//
//	for jc in steps of gemmNC over n          (B block)
//	  for pc in steps of gemmKC over k        (pack B[pc:+kc, jc:+nc] into nr-wide panels)
//	    for ic in steps of gemmMC over m      (pack A[ic:+mc, pc:+kc] into mr-high panels; parallel tasks)
//	      for each B panel, each A panel      (the mr×nr micro-kernel, k = kc)
//
// The micro-kernel is a gemmKernel value chosen once per process: the
// AVX-512F kernel (gemm_avx512_amd64.s: 12×16 tiles over pairs of the AVX2
// kernel's 6-row panels) or the AVX2+FMA 6×16 one (gemm_amd64.s) where
// the CPU has them, else the
// portable Go one (gemm_kernel.go; also the purego build). Packing formats
// and blocking follow the kernel. Packing B is skipped for a B packed ahead
// of time (GemmPacked), whose A (activations, rows already) the kernel then
// reads in place too, and for products with fewer rows than the tile,
// which stream B: a row-major B whole rows at a time through the chain
// kernels (fewRowsChains), a packed one through the row kernels
// (gemmFewRows). Every output element is summed in the same order whatever
// the thread count, so results do not depend on Pool.Threads.

// Blocking is per kernel (gemmKernel's kc, mc, nc): kc·nr floats of a B
// panel stay in L1 while an mc×kc A block stays in L2 and the kc×nc B block
// in L3. These are the portable kernel's; the assembly kernels bring their own.
// The values, and the scheduling thresholds below, live in the tuning table.
const (
	gemmKC = tuning.GemmPortableKC
	gemmMC = tuning.GemmPortableMC // rounded down to a multiple of the kernel's mr
	gemmNC = tuning.GemmPortableNC
	// Below this many multiply-adds a Gemm runs on the calling goroutine.
	gemmSerialWork = tuning.GemmSerialWork
	// Floats of B packed per parallel chunk.
	gemmPackGrain = tuning.GemmPackGrain
)

// gemmKernel is a micro-kernel, its tile shape and its blocking.
//
// fn computes the mr×nr tile sum over p < kc of a[p*mr+i]·b[p*nr+j] from
// packed panels and stores it at c[i*ldc+j] (or adds it there when
// accumulate is set).
//
// tile, when set, is the same kernel with B rows ldb floats apart (nr for a
// packed panel; a row-major B's own stride on the few-rows path) and with
// the part of the epilogue that e describes applied as the tile is stored.
// fn and tile must give bit-identical sums.
type gemmKernel struct {
	name       string
	mr, nr     int
	kc, mc, nc int
	fn         func(kc int, a, b, c []float32, ldc int, accumulate bool)
	tile       func(kc int, a, b []float32, ldb int, c []float32, ldc int, e tileEpi)
	// tiles, where set, is tile over panels consecutive row panels of A
	// (mr·kc floats each) and the tiles of C mr rows apart, in one call.
	tiles func(kc int, a, b []float32, ldb int, c []float32, ldc int, e tileEpi, panels int)
	// tilesA, where set, is tiles with A read in place (rows lda apart)
	// instead of from packed panels, giving the same sums.
	tilesA func(kc int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, e tileEpi, panels int)
	// tilesQ, where set, is tiles (lda 0) or tilesA (lda > 0) against nq
	// consecutive full B panels ps floats apart, the C tiles, a bias by
	// column and the residual nr columns further for each: one call for a
	// run of panels.
	tilesQ func(kc int, a []float32, lda int, b []float32, ldb, ps int, c []float32, ldc int, e tileEpi, panels, nq int)
	// tiles4, where set, is tilesQ for a panel of exactly four rows (lda
	// 0: the first four of a packed mr-row panel; else rows lda apart in
	// place) against nq full B panels, with the same sums and epilogue as
	// tiles.
	tiles4 func(kc int, a []float32, lda int, b []float32, ldb, ps int, c []float32, ldc int, e tileEpi, nq int)
	// rows, when set, serves products with fewer than mr rows: rows (1 or 2)
	// rows of A, read in place lda apart, times g 16-column panels of B
	// (rows ldb apart, panels ps apart), stored at c (rows ldc apart), or
	// added there when acc is set. g is 4 or 1 for one row, 2 or 1 for two.
	// Every element is summed as tile sums it.
	rows func(kc int, a []float32, lda int, b []float32, ldb, ps int, c []float32, ldc int, acc bool, rows, g int)
	// chain, when set, is the one-row product streaming a row-major B:
	// dst[j] gets the FMA chain of a[p]·b[p·ldb+j] over p < len(a) added in
	// order (the sums rows and tile form); len(dst) is a multiple of 8.
	// Kernels without one stream B through chainAxpy (fewRowsChains).
	chain func(dst, b []float32, ldb int, a []float32)
	// chain2, when set, is chain for two rows of A at once (dst0 gets a0's
	// sums, dst1 a1's), reading B once.
	chain2 func(dst0, dst1, b []float32, ldb int, a0, a1 []float32)
}

// maxTile bounds mr·nr over all kernels (the edge-tile scratch lives on the stack).
const maxTile = 256

// goKernel is the portable micro-kernel.
func goKernel() gemmKernel {
	return gemmKernel{name: "go", mr: 4, nr: 2, kc: gemmKC, mc: gemmMC, nc: gemmNC, fn: kernel4x2}
}

// gemmDefault is the kernel Gemm, BatchMatMul, Conv2D and Attention use:
// the best one this CPU runs, chosen once at start-up. Tests swap it to
// run the whole package with the portable kernel.
var gemmDefault = bestKernel()

func bestKernel() gemmKernel {
	if kn, ok := asmKernel(); ok {
		return kn
	}
	return goKernel()
}

// defaultKernel returns the micro-kernel for this machine.
func defaultKernel() gemmKernel { return gemmDefault }

// tileEpi is the part of an epilogue a kernel's tile function applies on
// store, in this order: epiAcc adds the old C, epiBiasCol adds bias[j],
// epiBiasRow adds bias[i], epiClamp clamps to [lo, hi] (NaN passes
// through; ActRelu is [0, +Inf]), epiRes adds res[i*ldr+j]. bias and res
// start at the tile's first row and column.
type tileEpi struct {
	flags  uint
	bias   []float32
	res    []float32
	ldr    int
	lo, hi float32
}

const (
	epiAcc uint = 1 << iota
	epiBiasCol
	epiBiasRow
	epiClamp
	epiRes
)

// splitEpi splits e into the part a tile function applies (as flags and
// the equivalent epi for edge tiles, which Go finishes) and the rest, which
// runs after the tile is stored: an activation other than ReLU or a clamp
// (and then the residual, which comes after it), or an activation that
// follows the residual (the tiles add the residual last).
func splitEpi(e *epi) (flags uint, fused, rest epi) {
	fused = epi{bias: e.bias, biasPerRow: e.biasPerRow, ldr: e.ldr}
	rest = epi{act: e.act, alpha: e.alpha, lo: e.lo, hi: e.hi, res: e.res, ldr: e.ldr}
	if e.bias != nil {
		if e.biasPerRow {
			flags |= epiBiasRow
		} else {
			flags |= epiBiasCol
		}
	}
	if e.actLast && e.act != vec.ActNone {
		fused.res, rest.res = e.res, nil
		return flags | epiRes, fused, rest
	}
	switch {
	case e.act == vec.ActNone:
	case e.act == vec.ActRelu:
		fused.act = vec.ActRelu
		fused.lo, fused.hi = 0, float32(math.Inf(1))
		flags |= epiClamp
	case e.act == vec.ActClamp && !(e.lo > e.hi):
		fused.act, fused.lo, fused.hi = vec.ActClamp, e.lo, e.hi
		flags |= epiClamp
	default:
		return flags, fused, rest
	}
	rest.act = vec.ActNone
	if e.res != nil {
		fused.res = e.res
		rest.res = nil
		flags |= epiRes
	}
	return flags, fused, rest
}

// BSource is the k×n right operand, read only through packing, so that
// convolution (im2col on the fly) and attention (Kᵀ) reuse the Gemm.
type BSource interface {
	// Pack writes columns [j0, j0+w) of rows [p0, p0+kb) as nr-wide panels:
	// panel q holds columns j0+q·nr.. at dst[q·nr·kb:], element (p, c) at
	// p·nr+c; columns past w in the last panel are zero.
	Pack(dst []float32, nr, p0, kb, j0, w int)
}

// denseB is a row-major B: B[p][j] = b[p·ldb+j].
type denseB struct {
	b   []float32
	ldb int
}

func (s denseB) Pack(dst []float32, nr, p0, kb, j0, w int) {
	full := w / nr * nr
	if nr == 16 {
		packB16s(dst, s.b[p0*s.ldb+j0:], s.ldb, kb, full/16)
		if full < w {
			for p := 0; p < kb; p++ {
				src := s.b[(p0+p)*s.ldb+j0+full : (p0+p)*s.ldb+j0+w]
				tail := dst[full*kb+p*16 : full*kb+p*16+16]
				n := copy(tail, src)
				clear(tail[n:])
			}
		}
		return
	}
	for p := 0; p < kb; p++ {
		src := s.b[(p0+p)*s.ldb+j0 : (p0+p)*s.ldb+j0+w]
		d := p * nr
		if nr == 2 {
			for j := 0; j < full; j += 2 {
				o := d + j*kb
				dst[o] = src[j]
				dst[o+1] = src[j+1]
			}
		} else {
			for j := 0; j < full; j += nr {
				copy(dst[d+j*kb:d+j*kb+nr], src[j:j+nr])
			}
		}
		if full < w {
			o := d + full*kb
			tail := dst[o : o+nr]
			n := copy(tail, src[full:])
			clear(tail[n:])
		}
	}
}

// packB16Go packs np 16-column panels of kb rows of b (ldb apart) into dst.
func packB16Go(dst, b []float32, ldb, kb, np int) {
	for q := 0; q < np; q++ {
		panel := dst[q*16*kb : (q+1)*16*kb]
		o := q * 16
		for p := 0; p < kb; p++ {
			copy(panel[p*16:p*16+16], b[o:o+16])
			o += ldb
		}
	}
}

// transB is B = Xᵀ for a row-major X: B[p][j] = b[j·ldb+p].
type transB struct {
	b   []float32
	ldb int
}

func (s transB) Pack(dst []float32, nr, p0, kb, j0, w int) {
	for q := 0; q*nr < w; q++ {
		panel := dst[q*nr*kb : (q+1)*nr*kb]
		if h := min(nr, w-q*nr); h == nr || nr%8 == 0 {
			// Panel rows are columns of X: an (h × kb) block of X
			// transposed by 8×8 tiles, missing columns zero.
			vec.Transpose(panel, nr, s.b[(j0+q*nr)*s.ldb+p0:], s.ldb, h, kb)
			for p := 0; h < nr && p < kb; p++ {
				clear(panel[p*nr+h : (p+1)*nr])
			}
			continue
		}
		for c := 0; c < nr; c++ {
			j := q*nr + c
			if j >= w {
				for p := 0; p < kb; p++ {
					panel[p*nr+c] = 0
				}
				continue
			}
			src := s.b[(j0+j)*s.ldb+p0 : (j0+j)*s.ldb+p0+kb]
			for p, v := range src {
				panel[p*nr+c] = v
			}
		}
	}
}

// gemmArgs is one C = A·B (+ C when accumulate) with an epilogue applied
// to the final values.
type gemmArgs struct {
	m, n, k    int
	a          []float32
	lda        int
	aT         bool // a holds Aᵀ: A[i][p] = a[p·lda+i]
	b          BSource
	c          []float32
	ldc        int
	accumulate bool
	ep         epi
	// directB reads the full 16-column panels of a dense B in place
	// (rows ldb apart) instead of packing them, on kernels with a tile
	// form: for products with few rows of A per B panel, packing B costs
	// as much as the multiply-adds it feeds.
	directB bool
	// directA reads A's full row panels in place (rows lda apart) on a
	// kernel with tilesA, as products over packed weights do: for
	// attention's blocks (128 query rows of 64) packing A was a visible
	// share of the attention.
	directA bool
}

// storeSums stores a block of sums into C (dst), or adds them to what C
// holds (add: an accumulating product, or a k block after the first).
func storeSums(dst, src []float32, add bool) {
	if !add {
		copy(dst, src)
		return
	}
	for j, v := range src {
		dst[j] += v
	}
}

// jitPanels is the B panels a task packs and runs at a time when tasks
// pack their own (gemm's jit).
const jitPanels = tuning.GemmJitPanels

// fourGroupBytes is the size of a run of B panels past which a block's
// four-row tile follows the six-row tiles group by group (tailGroup panels
// at a time) instead of in a second pass over the whole run: half of this
// machine's L2. The MLP's 64-row layers (ten six-row panels and a four-row
// one) streamed their weights per k block from L3 or memory twice; one
// pass ran them at the rate of 66 rows. Runs that fit (MobileNetV2's
// 196-row layers: 6 panels of 576) keep one call per pass.
const fourGroupBytes = tuning.GemmFourGroupBytes

// gemmWork holds packing buffers: the B block and one A block per
// concurrently running chunk (each with a maxTile edge-tile scratch at its
// end). Every gemm call takes one from gemmWorkPool and puts it back, so
// buffers are reused across calls and callers.
type gemmWork struct {
	bp []float32
	// bufs holds A-block buffers (and edge-tile scratch), one for each
	// of a step's tasks (For's chunk lo uses bufs[lo]), call after call.
	// They went through a channel before: on 16 threads its lock, taken
	// twice by every task at once, made each product wait on the others.
	bufs [][]float32
	// step is a call's state, task and packB its methods, bound once: a
	// closure per call capturing that state cost a dozen allocations.
	step        gemmStep
	task, packB func(lo, hi int)
}

var gemmWorkPool = sync.Pool{New: func() any { return new(gemmWork) }}

func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func checkMatrix(fn, name string, s []float32, rows, cols, ld int) {
	if rows < 0 || cols < 0 || ld < cols {
		panic(fmt.Sprintf("kernels: %s: %s is %d×%d with leading dimension %d", fn, name, rows, cols, ld))
	}
	if rows > 0 && cols > 0 && len(s) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("kernels: %s: %s has %d elements, %d×%d with leading dimension %d needs %d",
			fn, name, len(s), rows, cols, ld, (rows-1)*ld+cols))
	}
}

// gemm runs g on p (nil for the calling goroutine); its buffers come from
// gemmWorkPool.
func gemm(p *parallel.Pool, kn gemmKernel, g *gemmArgs) {
	m, n, k := g.m, g.n, g.k
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		if !g.accumulate {
			for i := 0; i < m; i++ {
				clear(g.c[i*g.ldc : i*g.ldc+n])
			}
		}
		g.ep.apply(g.c, g.ldc, 0, 0, m, n)
		return
	}
	if p.Threads() > 1 && m*n*k < gemmSerialWork {
		p = nil
	}
	pre, _ := g.b.(*packedB)
	if m < kn.mr && !g.aT {
		d, dense := g.b.(denseB)
		switch {
		case dense:
			k2 := kn // only this copy escapes (into the For closures)
			fewRowsChains(p, &k2, g, d)
			return
		case pre != nil && kn.rows != nil && kn.nr == 16:
			gemmFewRows(p, &kn, g, pre)
			return
		}
	}
	threads := p.Threads()
	mr, nr := kn.mr, kn.nr
	kc, nc := kn.kc, kn.nc
	kcb := min(k, kc)
	d, direct := g.b.(denseB)
	// Not B's rows a multiple of tuning.GemmDirectBAliasFloats apart
	// over a long reduction: a k block's rows then fall in a few cache
	// sets and evict each other.
	direct = direct && g.directB && kn.tiles != nil && (k < tuning.GemmDirectBAliasMinK || d.ldb%tuning.GemmDirectBAliasFloats != 0)
	mc := max(mr, kn.mc/mr*mr)
	// B read in place, narrow against A (a small plane): A splits by
	// thread (tuning.GemmDirectSplitRatio).
	smallDirect := direct && n < tuning.GemmDirectSplitRatio*m
	switch {
	case threads > 1 && pre != nil && n > 2*m && m*kcb <= tuning.GemmWideBWork:
		// Far more weights than activations (MobileNetV2's 7×7 layers:
		// 49 pixels against up to 1280 channels, 1.6 MB of weights): one
		// A block, so the threads split B's columns and each reads half
		// of B from memory, instead of all of it for half of A's rows.
		mc = ceilDiv(m, mr) * mr
	case threads > 1 && (pre != nil || smallDirect) && m >= 4*mr*threads:
		// A multiple of the thread count of A blocks of about equal size
		// (128 rows on 2: 66 + 62, not 96 + 32; 196 on 2: 4 of 54 or
		// fewer, not 96 + 96 + 4, whose short last tasks left a thread
		// idle at the end), each thread starting on its own (see the task loop
		// below); not for a few rows, whose blocks would end in partial
		// panels (16 on 2: 12 + 4).
		nb := threads * ceilDiv(m, threads*mc)
		mc = max(mr, ceilDiv(ceilDiv(m, nb), mr)*mr)
	}
	if threads > 1 && pre == nil && !smallDirect && m > mc && m*kcb <= tuning.GemmSmallAWork {
		// A small A (convolution weights with few taps: 144 channels of
		// 24) in one block, for the per-task B packing below.
		mc = ceilDiv(m, mr) * mr
	}
	if m > mc && m < mc+mr {
		// One A block, not a second of fewer rows than a tile, whose row
		// kernels streamed all of B again: MobileNetV2's 7×7 layers at
		// batch 2 (98 rows: 96 + 2) ran faster with the two rows as the
		// block's tail.
		mc = ceilDiv(m, mr) * mr
	}
	mBlocks := ceilDiv(m, mc)
	// On several threads with one A block, each group of B panels is
	// packed by the task that runs it, just before: into its core's cache,
	// not in a pass over the whole block before any task starts, after
	// which half of each thread's panels sat in the other core's cache. No
	// B block is then shared, so one spans all columns: one parallel loop
	// per k block instead of one per nc columns (MobileNetV2's 112×112
	// layers had 4). On one thread packing the block in one pass was
	// faster (the first layer's packer keeps its input rows in L1).
	jit := pre == nil && !direct && mBlocks == 1 && threads > 1
	if jit {
		nc = ceilDiv(n, nr) * nr
	}
	w := gemmWorkPool.Get().(*gemmWork)
	defer gemmWorkPool.Put(w)
	var bp []float32
	if pre == nil {
		w.bp = grow(w.bp, ceilDiv(min(n, nc), nr)*nr*kcb)
		bp = w.bp
	}
	aLen := ceilDiv(min(m, mc), mr) * mr * kcb
	if len(w.bufs) < threads {
		w.bufs = append(w.bufs, make([][]float32, threads-len(w.bufs))...)
	}
	// The epilogue: the part the kernel applies as it stores the last k
	// block's tiles, and the rest, applied to each finished block.
	var flags uint
	fused, rest := epi{}, g.ep
	if kn.tile != nil && !g.ep.none() {
		flags, fused, rest = splitEpi(&g.ep)
	}
	// A is read in place for products with B packed ahead of time
	// (weights): their A is activations, rows already, whose packing
	// was a measurable part of the product (MobileNetV2's channels-last
	// 1x1s). Not where long rows of A (k ≥ 512: six rows 2-8 KB apart per
	// tile) meet at least 512 columns per thread, enough B panels to share
	// one packing: the MLP's layers at batch 64 ran faster packed. Nor
	// where long rows lie a multiple of 4 KiB apart: the six rows a tile
	// reads then share one L1 set (4K aliasing) and evict each other and
	// the B panel; the encoder's k=1024 layer (rows 4 KiB apart) ran
	// faster packed. A product of few columns (tuning.GemmDirectAColumns)
	// reads A in place too: each packed block of A fed a panel or two.
	directA := (pre != nil || g.directA || n <= tuning.GemmDirectAColumns) && !g.aT && kn.tilesA != nil &&
		(k < 512 || (n < 512*threads && g.lda%1024 != 0))
	// What the tasks of each step share lives in w.step, reused step after
	// step (For returns once every task has) and call after call.
	st := &w.step
	*st = gemmStep{g: g, kn: kn, bufs: w.bufs, fused: fused, rest: rest, aLen: aLen, mc: mc, mBlocks: mBlocks,
		directA: directA, jit: jit, shares: st.shares}
	defer st.release()
	if w.task == nil {
		w.task, w.packB = st.task, st.packB
	}
	task, packB := w.task, w.packB
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		nPanels := ceilDiv(nb, nr)
		// Tasks are (A block, group of B panels) pairs, claimed one at a
		// time by whichever goroutines take part, so that a late or slow
		// thread costs at most one small task of imbalance.
		nGroups := 1
		switch {
		case jit:
			// Groups of 32 panels: what a task packs stays in L2 (55 KB
			// for a 3×3 convolution of 3 channels); 8 and 16 were slower.
			nGroups = ceilDiv(nPanels, jitPanels)
			// Yet at least 8 groups per thread where that leaves 8 panels a
			// group: the threads finish within a group of each other, and
			// 56×56 convolutions had 7 (a 3:4 split).
			nGroups = max(nGroups, min(nPanels/8, 8*threads))
			// And a group for every thread where the panels go round: a
			// 1x1 convolution over a 14x14 plane (13 panels) was one task,
			// run on one thread while the others waited.
			nGroups = max(nGroups, min(nPanels, threads))
		case threads > 1:
			nGroups = min(nPanels, ceilDiv(16*threads, mBlocks))
		}
		tasks := mBlocks * nGroups
		st.jc, st.nb, st.nPanels, st.nGroups = jc, nb, nPanels, nGroups
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			acc := pc > 0 || g.accumulate
			last := pc+kb == k
			st.bp, st.pc, st.kb, st.last = bp, pc, kb, last
			st.mk = macro{kn: &st.kn, bp: bp, c: g.c, ldc: g.ldc, jc: jc, nb: nb, kb: kb, acc: acc}
			mk := &st.mk
			if directA {
				mk.da, mk.lda = g.a[pc:], g.lda
			}
			if !g.aT && kn.rows != nil && nr == 16 {
				mk.ra, mk.rlda = g.a[pc:], g.lda
			}
			switch {
			case pre != nil:
				mk.bp = pre.block(pc, jc)
			case direct:
				// Only a partial last panel is packed, into its own slot.
				mk.db, mk.ldb = d.b[pc*d.ldb:], d.ldb
				if q := nb / nr; q*nr < nb {
					g.b.Pack(bp[q*nr*kb:], nr, pc, kb, jc+q*nr, nb-q*nr)
				}
			case !jit:
				p.For(nPanels, max(1, gemmPackGrain/(kb*nr)), packB)
			}
			if last {
				mk.flags, mk.fused = flags, &st.fused
			}
			// Tasks, A block by A block, are split into one run per thread
			// (parallel.Shares): a thread packs the A blocks of its run once
			// unless it helps out a slower one, and on the pixels of a
			// convolution (A's rows channels last, B's columns in NCHW)
			// meets the part of the input it wrote in the layer before.
			st.shares = st.shares.Reset(tasks, min(threads, tasks))
			p.For(min(threads, tasks), 1, task)
		}
	}
}

// gemmStep is one (column block, k block) step of gemm: the state its
// tasks share.
type gemmStep struct {
	g      *gemmArgs
	kn     gemmKernel
	mk     macro
	shares parallel.Shares
	bufs   [][]float32 // A-block buffers (and edge-tile scratch), one a task
	fused  epi         // the epilogue's part the tiles apply
	rest   epi         // the epilogue left after the tiles' part
	bp     []float32   // B packed in the call, if it is

	aLen, mc, mBlocks  int
	jc, nb, nPanels    int
	nGroups, pc, kb    int
	directA, jit, last bool
}

// release drops the call's references to its operands (the struct stays
// in a pool), keeping the shares' memory.
func (st *gemmStep) release() {
	*st = gemmStep{shares: st.shares}
}

// packB packs B panels [lo, hi) of the step's block into st.bp.
func (st *gemmStep) packB(lo, hi int) {
	nr, kb := st.kn.nr, st.kb
	j0 := lo * nr
	st.g.b.Pack(st.bp[j0*kb:], nr, st.pc, kb, st.jc+j0, min(hi*nr, st.nb)-j0)
}

// task runs the step's tasks thread lo starts on (For's chunk lo of one per
// thread): its share first, then whatever is left of the others'.
func (st *gemmStep) task(lo, _ int) {
	g, mk := st.g, &st.mk
	mr, nr, kb, pc := mk.kn.mr, mk.kn.nr, st.kb, st.pc
	need := st.aLen + maxTile
	// lo is For's chunk, one of min(threads, tasks): no other task of
	// the step has it.
	buf := st.bufs[lo]
	if cap(buf) < need {
		buf = make([]float32, need)
		st.bufs[lo] = buf
	}
	ap, tmp := buf[:st.aLen], buf[st.aLen:need]
	packed := -1
	for step := 0; ; {
		t := st.shares.Claim(lo, &step)
		if t < 0 {
			break
		}
		ib, gi := t/st.nGroups, t%st.nGroups
		i0 := ib * st.mc
		mb := min(st.mc, g.m-i0)
		if ib != packed {
			pack := packA
			if g.aT {
				pack = packAT
			}
			// Rows the block ends in that are read in place (by the row
			// kernels or two four-row tiles) are packed only for a
			// partial B panel.
			pm := mb
			if t := mk.inPlaceTail(mb); t > 0 && st.nb%nr == 0 {
				pm = (mb - t) / mr * mr
			}
			if !st.directA {
				pack(ap, g.a, g.lda, i0, pc, pm, kb, mr)
			} else if full := mb / mr * mr; full < pm {
				// Only the partial panel is packed.
				pack(ap[full*kb:], g.a, g.lda, i0+full, pc, pm-full, kb, mr)
			}
			if mk.overlap(mb) {
				// The partial panel's slot holds the block's last mr rows.
				pack(ap[mb/mr*mr*kb:], g.a, g.lda, i0+mb-mr, pc, mr, kb, mr)
			}
			packed = ib
		}
		q0, q1 := gi*st.nPanels/st.nGroups, (gi+1)*st.nPanels/st.nGroups
		if st.jit {
			j0 := q0 * nr
			g.b.Pack(st.bp[j0*kb:], nr, pc, kb, st.jc+j0, min(q1*nr, st.nb)-j0)
		}
		mk.run(ap, tmp, i0, mb, q0, q1)
		if st.last {
			j0 := q0 * nr
			st.rest.apply(g.c, g.ldc, i0, st.jc+j0, mb, min(q1*nr, st.nb)-j0)
		}
	}
}

// packAT is packA for an A stored transposed (A[i][p] = a[p·lda+i]): each
// panel row is mr consecutive elements of a.
func packAT(dst, a []float32, lda, i0, pc, mb, kb, mr int) {
	for ir := 0; ir < mb; ir += mr {
		panel := dst[ir*kb : ir*kb+mr*kb]
		h := min(mr, mb-ir)
		if mr == 6 && h == 6 {
			// Fixed-size copies rather than a memmove call per 6 floats.
			o := pc*lda + i0 + ir
			_ = a[o+(kb-1)*lda+5]
			for p := 0; p < kb; p++ {
				*(*[6]float32)(panel[p*6 : p*6+6]) = *(*[6]float32)(a[o : o+6])
				o += lda
			}
			continue
		}
		for p := 0; p < kb; p++ {
			row := a[(pc+p)*lda+i0+ir : (pc+p)*lda+i0+ir+h]
			d := panel[p*mr : p*mr+mr]
			copy(d, row)
			clear(d[h:])
		}
	}
}

// packA packs rows [i0, i0+mb) and columns [pc, pc+kb) of A into mr-high
// panels: panel r/mr at dst[r·kb:], element (p, i) at p·mr+i; rows past mb
// are zero.
func packA(dst, a []float32, lda, i0, pc, mb, kb, mr int) {
	for ir := 0; ir < mb; ir += mr {
		panel := dst[ir*kb : ir*kb+mr*kb]
		if mr == 6 && ir+6 <= mb {
			o := (i0+ir)*lda + pc
			_ = a[o+5*lda+kb-1]
			packA6(panel, a[o:], lda, kb)
			continue
		}
		if mr == 4 && ir+4 <= mb {
			r0 := a[(i0+ir)*lda+pc : (i0+ir)*lda+pc+kb]
			r1 := a[(i0+ir+1)*lda+pc : (i0+ir+1)*lda+pc+kb]
			r2 := a[(i0+ir+2)*lda+pc : (i0+ir+2)*lda+pc+kb]
			r3 := a[(i0+ir+3)*lda+pc : (i0+ir+3)*lda+pc+kb]
			for p := range r0 {
				d := panel[p*4 : p*4+4 : p*4+4]
				d[0], d[1], d[2], d[3] = r0[p], r1[p], r2[p], r3[p]
			}
			continue
		}
		for r := 0; r < mr; r++ {
			if ir+r >= mb {
				for p := 0; p < kb; p++ {
					panel[p*mr+r] = 0
				}
				continue
			}
			src := a[(i0+ir+r)*lda+pc : (i0+ir+r)*lda+pc+kb]
			for p, v := range src {
				panel[p*mr+r] = v
			}
		}
	}
}

// packA6Go packs 6 rows of a (lda apart) and kb columns into a 6-row panel.
func packA6Go(dst, a []float32, lda, kb int) {
	r0 := a[0:kb]
	r1 := a[lda : lda+kb]
	r2 := a[2*lda : 2*lda+kb]
	r3 := a[3*lda : 3*lda+kb]
	r4 := a[4*lda : 4*lda+kb]
	r5 := a[5*lda : 5*lda+kb]
	for p := range r0 {
		d := dst[p*6 : p*6+6 : p*6+6]
		d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
	}
}

// macro is one k block's macro-kernel over a packed B block: bp holds the
// B panels of columns [jc, jc+nb) for kb rows. On the last k block flags
// and fused carry the epilogue part the kernel applies.
type macro struct {
	kn     *gemmKernel
	bp, c  []float32
	ldc    int
	jc, nb int
	kb     int
	acc    bool
	flags  uint
	fused  *epi
	// db, when set, is the dense B read in place from the block's first
	// row, rows ldb apart (gemmArgs.directB): full panels come from it,
	// a partial one from bp.
	db  []float32
	ldb int
	// da, when set, is A read in place from the block's first column,
	// rows lda apart (kn.tilesA): full row panels come from it, a partial
	// one from the packed block.
	da  []float32
	lda int
	// ra, when set, is A in place from the block's first column, rows
	// rlda apart, for the row kernels (kn.rows) that take a partial row
	// panel of up to rowsTailMax rows against full B panels.
	ra   []float32
	rlda int
}

// rowsTailMax is the most rows of a partial row panel the row kernels
// take instead of a full tile: two rows against two panels keep eight
// accumulators busy for a third of a tile's cost per panel (MobileNetV2's
// first layer, 32 = 5·6 + 2 output channels, computed 36 rows).
const rowsTailMax = tuning.GemmRowsTailMax

// rowsTail reports whether a block of mb rows ends in a partial row panel
// that the row kernels compute.
func (mk *macro) rowsTail(mb int) bool {
	t := mb % mk.kn.mr
	return mk.ra != nil && t > 0 && t <= rowsTailMax && mk.fours(mb) == 0
}

// inPlaceTail is how many rows a block of mb rows ends in that its full
// B panels take from A in place rather than from the packed block: the
// row kernels' tail, or the eight rows of two four-row tiles.
func (mk *macro) inPlaceTail(mb int) int {
	switch {
	case mk.rowsTail(mb):
		return mb % mk.kn.mr
	case mk.fours(mb) == 2:
		return 8
	}
	return 0
}

// fours is how many four-row panels end a block of mb rows, computed by
// the kernel's four-row tiles alongside the full panels' tiles: one for
// mb = 6r + 4 (from the packed partial panel), and for short k blocks
// (kb <= 64) two for mb = 6r + 2, r >= 1 (the block's last eight rows, read
// in place). The row kernels' passes of two rows and separate epilogue cost
// the 4 rows of MobileNetV2's 32->16 channels at 112x112 as much as 8 rows
// of tiles, and at k = 32 two rows nearly as much as six; a full tile over
// the last six rows (overlap) computes 6 for 4. At k = 256 the two-row
// tail costs what two four-row tiles save.
func (mk *macro) fours(mb int) int {
	kn := mk.kn
	if kn.tiles4 == nil || kn.tilesQ == nil || kn.mr != 6 {
		return 0
	}
	switch {
	case mb%6 == 4:
		return 1
	case mb%6 == 2 && mb >= 8 && mk.kb <= tuning.GemmShortK && mk.ra != nil:
		return 2
	}
	return 0
}

// groupsTail reports whether the rows a block ends in (a row-kernel tail
// of tailRows, or nf four-row tiles after full six-row panels) follow each
// group of tailGroup B panels, while they are in cache, rather than one
// pass over the run of runPanels: always for the row kernels; four-row
// tiles where two panels fit in L1 (longer ones gained nothing from it and
// lost to the extra calls), or where the run would not stay in L2 for a
// second pass (see fourGroupBytes).
func (mk *macro) groupsTail(tailRows, nf, full, runPanels int) bool {
	switch {
	case tailRows > 0:
		return true
	case nf == 0:
		return false
	}
	panel := mk.kb * mk.kn.nr * 4 // bytes
	return 2*panel <= tuning.GemmFourGroupL1Bytes || full > 0 && runPanels*panel > fourGroupBytes
}

// panel is B panel q of the block and its row stride.
func (mk *macro) panel(q, w int) ([]float32, int) {
	nr, kb := mk.kn.nr, mk.kb
	if mk.db != nil && w == nr {
		j0 := mk.jc + q*nr
		return mk.db[j0 : j0+(kb-1)*mk.ldb+nr], mk.ldb
	}
	return mk.bp[q*nr*kb : (q+1)*nr*kb], nr
}

// panels is the block's B from full panel q on: its rows' stride and the
// distance between panels.
func (mk *macro) panels(q int) (b []float32, ldb, ps int) {
	nr, kb := mk.kn.nr, mk.kb
	if mk.db != nil {
		return mk.db[mk.jc+q*nr:], mk.ldb, nr
	}
	return mk.bp[q*nr*kb:], nr, nr * kb
}

// edge computes the plain mr×nr tile of A panel apan and a B panel (rows
// ldb apart) into tmp, rows nr apart.
func (mk *macro) edge(apan, bpan []float32, ldb int, tmp []float32) {
	kn := mk.kn
	if ldb == kn.nr {
		kn.fn(mk.kb, apan, bpan, tmp, kn.nr, false)
		return
	}
	kn.tile(mk.kb, apan, bpan, ldb, tmp, kn.nr, tileEpi{})
}

// run runs the micro-kernel over B panels [q0, q1) and all A panels of the
// packed block ap: rows [i0, i0+mb) of C. tmp is maxTile floats of scratch.
// overlap reports whether an A block of mb rows ending in a partial panel
// computes it as a full tile over its last mr rows instead (re-storing rows
// of the panel above with the values they already hold): only where tiles
// overwrite C (no accumulation across k blocks) and the block has mr rows.
func (mk *macro) overlap(mb int) bool {
	return mk.kn.tiles != nil && !mk.acc && mb%mk.kn.mr != 0 && mb >= mk.kn.mr && !mk.rowsTail(mb) && mk.fours(mb) == 0
}

// tileEpi is the fused epilogue of the tile whose top-left element of C is
// (i, j0).
func (mk *macro) tileEpi(base uint, i, j0 int) tileEpi {
	e := tileEpi{flags: base | mk.flags}
	if mk.flags != 0 {
		f := mk.fused
		if f.bias != nil {
			if f.biasPerRow {
				e.bias = f.bias[i:]
			} else {
				e.bias = f.bias[j0:]
			}
		}
		if mk.flags&epiRes != 0 {
			e.res, e.ldr = f.res[i*f.ldr+j0:], f.ldr
		}
		e.lo, e.hi = f.lo, f.hi
	}
	return e
}

func (mk *macro) run(ap, tmp []float32, i0, mb, q0, q1 int) {
	kn, kb, ldc, c := mk.kn, mk.kb, mk.ldc, mk.c
	mr, nr := kn.mr, kn.nr
	var base uint
	if mk.acc {
		base = epiAcc
	}
	// With a row-kernel tail, full B panels' tiles stop at the last full
	// row panel; the tail rows follow every tailGroup panels, while those
	// panels are still in cache (B is read once: a block of weights
	// streamed from memory for the tiles and then again for the tail cost
	// a 7×7 layer a second pass over 1.6 MB).
	tailRows, qTail := 0, q0
	if mk.rowsTail(mb) {
		tailRows, qTail = mb%mr, min(q1, mk.nb/nr)
	}
	tg := tailGroup(kb)
	done := q0 // full B panels below done have had their tiles (tilesQ)
	for q := q0; q < q1; q++ {
		if q < qTail && q > q0 && (q-q0)%tg == 0 {
			mk.tail(q-tg, q, i0+mb-tailRows, tailRows)
		}
		j0 := mk.jc + q*nr
		w := min(nr, mk.nb-q*nr)
		bpan, ldb := mk.panel(q, w)
		mbq := mb
		if q < qTail {
			mbq -= tailRows
		}
		ir0 := 0
		nf := mk.fours(mb)
		if full := (mb - 4*nf) / mr; kn.tiles != nil && w == nr && (full > 0 || nf > 0) {
			// Every full row panel against this B panel in one call, or
			// against the run of full B panels up to the next tail.
			switch {
			case kn.tilesQ != nil:
				if q >= done {
					done = min(q1, mk.nb/nr)
					if mk.groupsTail(tailRows, nf, full, q1-q0) {
						done = min(done, q0+((q-q0)/tg+1)*tg)
					}
					b, ldb, ps := mk.panels(q)
					if full > 0 {
						a, lda := ap, 0
						if mk.da != nil {
							a, lda = mk.da[i0*mk.lda:], mk.lda
						}
						kn.tilesQ(kb, a, lda, b, ldb, ps, c[i0*ldc+j0:], ldc, mk.tileEpi(base, i0, j0), full, done-q)
					}
					for f := range nf {
						i := i0 + full*mr + 4*f
						a, lda := ap[full*mr*kb:], 0 // the packed partial panel
						if nf == 2 {
							a, lda = mk.ra[i*mk.rlda:], mk.rlda
						}
						kn.tiles4(kb, a, lda, b, ldb, ps, c[i*ldc+j0:], ldc, mk.tileEpi(base, i, j0), done-q)
					}
				}
			case mk.da != nil:
				kn.tilesA(kb, mk.da[i0*mk.lda:], mk.lda, bpan, ldb, c[i0*ldc+j0:], ldc, mk.tileEpi(base, i0, j0), full)
			default:
				kn.tiles(kb, ap, bpan, ldb, c[i0*ldc+j0:], ldc, mk.tileEpi(base, i0, j0), full)
			}
			ir0 = full * mr
			if nf > 0 {
				ir0 = mb // the four-row panels are done too (nf > 0 implies tilesQ)
			}
		}
		for ir := ir0; ir < mbq; ir += mr {
			h := min(mr, mbq-ir)
			apan := ap[ir*kb : ir*kb+mr*kb]
			i := i0 + ir
			ci := i*ldc + j0
			if h < mr && mk.overlap(mb) {
				// A full tile over the block's last mr rows: the rows it
				// shares with the panel above get the same values again.
				top := i0 + mb - mr
				if w == nr {
					kn.tile(kb, apan, bpan, ldb, c[top*ldc+j0:], ldc, mk.tileEpi(base, top, j0))
					continue
				}
				mk.edge(apan, bpan, ldb, tmp)
				for r := mr - h; r < mr; r++ {
					copy(c[(top+r)*ldc+j0:(top+r)*ldc+j0+w], tmp[r*nr:r*nr+w])
				}
				if mk.flags != 0 {
					mk.fused.apply(c, ldc, i, j0, h, w)
				}
				continue
			}
			if h == mr && w == nr {
				if kn.tile == nil {
					kn.fn(kb, apan, bpan, c[ci:], ldc, mk.acc)
					continue
				}
				kn.tile(kb, apan, bpan, ldb, c[ci:], ldc, mk.tileEpi(base, i, j0))
				continue
			}
			if mk.da != nil && h == mr {
				// A full row panel (against a partial B panel) in place.
				kn.tilesA(kb, mk.da[i*mk.lda:], mk.lda, bpan, ldb, tmp, nr, tileEpi{}, 1)
			} else {
				mk.edge(apan, bpan, ldb, tmp)
			}
			for r := 0; r < h; r++ {
				storeSums(c[ci+r*ldc:ci+r*ldc+w], tmp[r*nr:r*nr+w], mk.acc)
			}
			if mk.flags != 0 {
				mk.fused.apply(c, ldc, i, j0, h, w)
			}
		}
	}
	if qTail > q0 {
		mk.tail(q0+(qTail-q0-1)/tg*tg, qTail, i0+mb-tailRows, tailRows)
	}
}

// tailGroup is how many B panels of kb rows have their tiles run before
// their row-kernel tail (or a four-row tile that follows group by group):
// as many as fit in 128 KiB (a quarter of L2), an even number from 4 to 16.
// The group was sized for L1 (16 KiB, two panels at kb = 512), but the
// calls cost more than the L2 reads saved: 49-row products (MobileNetV2's
// 7x7 layers, eight six-row panels and a one-row tail) ran faster in
// groups of 4-8 panels at kb = 512, and so did the encoder's 128-row ones,
// 64 rows with a four-row tile over 2048 columns and the 3x3 stride-2
// first layer, by less. Short panels in small groups spent more on the
// calls than on the rows (32->16 channels at 112x112: the tail's quarter
// of the rows, four panels a group, took a disproportionate share of the
// time).
func tailGroup(kb int) int {
	return min(tuning.GemmTailGroupMax, max(tuning.GemmTailGroupMin, tuning.GemmTailGroupBytes/(kb*16*4))&^1)
}

// tail runs rows [i, i+rows) of C against full B panels [q0, q1) through
// the row kernels, then their fused epilogue.
func (mk *macro) tail(q0, q1, i, rows int) {
	kn, nr, ldc := mk.kn, mk.kn.nr, mk.ldc
	b, ldb, ps := mk.panels(0)
	rowPanels(kn, mk.kb, mk.ra[i*mk.rlda:], mk.rlda, rows, b, ldb, ps, mk.c[i*ldc+mk.jc:], ldc, mk.acc, q0, q1)
	if mk.flags != 0 {
		mk.fused.apply(mk.c, ldc, i, mk.jc+q0*nr, rows, (q1-q0)*nr)
	}
}

// gemmFewRows is the path for fewer rows than the micro-kernel's mr with
// B packed ahead of time, on a kernel with row kernels: B is read once,
// rows of A in place, one or two rows at a time against 64 or 32 columns.
// Threads split the columns in groups of 4 panels. Every sum is formed
// exactly as on the packed path (the same FMA chains over the same k
// blocks, the same C updates), so Gemm and GemmPacked agree bit for bit
// and the thread count does not matter.
func gemmFewRows(p *parallel.Pool, kn *gemmKernel, g *gemmArgs, pre *packedB) {
	const nr = 16
	w := fewRowsPool.Get().(*fewRowsWork)
	defer fewRowsPool.Put(w)
	w.kn, w.g, w.pre = *kn, *g, *pre
	defer w.release()
	w.nPanels, w.nFull = ceilDiv(g.n, nr), g.n/nr
	grain := max(1, tuning.GemmFewRowsGrainBytes/(g.k*4*nr))
	p.For(ceilDiv(w.nPanels, 4), grain, w.run)
}

// fewRowsWork is a gemmFewRows call's state, copied in so that the
// caller's operands stay on its stack, and its task bound once: small
// products (an unrolled recurrence's steps) ran a dozen allocations a
// call before.
type fewRowsWork struct {
	kn             gemmKernel
	g              gemmArgs
	pre            packedB
	nPanels, nFull int
	run            func(lo, hi int) // task, bound once
	// tmp holds the partial panel's sums: only the task with the last
	// panel group uses it.
	tmp [2 * 16]float32
}

var fewRowsPool = sync.Pool{New: func() any {
	w := new(fewRowsWork)
	w.run = w.task
	return w
}}

// release drops the call's references to its operands.
func (w *fewRowsWork) release() {
	w.g, w.pre = gemmArgs{}, packedB{}
}

// task computes the columns of panel groups [lo, hi) (4 panels a group).
func (w *fewRowsWork) task(lo, hi int) {
	const nr = 16
	kn, g, pre := &w.kn, &w.g, &w.pre
	m, n, k, kc := g.m, g.n, g.k, kn.kc
	nPanels, nFull := w.nPanels, w.nFull
	q0, q1 := lo*4, min(hi*4, nPanels)
	tmp := w.tmp[:]
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		acc := pc > 0 || g.accumulate
		// Panel q of this k block: bsrc[q·ps:], rows nr apart.
		bsrc, ps := pre.block(pc, 0), nr*kb
		if q0 < nFull {
			rowPanels(kn, kb, g.a[pc:], g.lda, m, bsrc, nr, ps, g.c, g.ldc, acc, q0, min(q1, nFull))
		}
		if q1 > nFull { // the partial panel (zero-padded), through tmp
			q, w := nFull, n-nFull*nr
			for i := 0; i < m; {
				rows := min(2, m-i)
				kn.rows(kb, g.a[i*g.lda+pc:], g.lda, bsrc[nFull*ps:], nr, nr, tmp, nr, false, rows, 1)
				for r := 0; r < rows; r++ {
					storeSums(g.c[(i+r)*g.ldc+q*nr:(i+r)*g.ldc+n], tmp[r*nr:r*nr+w], acc)
				}
				i += rows
			}
		}
	}
	g.ep.apply(g.c, g.ldc, 0, q0*nr, m, min(q1*nr, n)-q0*nr)
}

// fewRowsChains is the path for fewer rows than the micro-kernel's mr
// against a row-major B: B's rows are streamed whole, in order, through
// the kernel's chain into sums held in memory (L1), two rows of A at a
// time where the kernel has chain2; columns past the chain's multiple of 8
// are summed in Go the same way. Reading B in 64-column strips with the row
// kernels, as this path once did, took 2.4 times as long for two rows as
// one chain for one (MobileNetV2's classifier at batch 2, B cold).
//
// Tasks are (k block, column range) pairs: each forms its k block's sums
// into its own partials, and the partials are added into C in k order
// afterwards, as the other paths add one k block's tile sums to the next,
// so the sums are the same on any thread count (and on the AVX2 kernel
// the same as its tiles'). Splitting only columns left each thread a
// strided walk over B's rows, and a matrix-vector product, bound by
// reading B, ran no faster on 2 threads than on 1.
func fewRowsChains(p *parallel.Pool, kn *gemmKernel, g *gemmArgs, d denseB) {
	m, n, k, kc := g.m, g.n, g.k, kn.kc
	nkb, n8 := ceilDiv(k, kc), n/8
	// Column ranges per k block, in units of 8: enough tasks to balance
	// the threads (the last k block may be short), each at least 256
	// columns.
	ncol := max(1, min(ceilDiv(2*p.Threads(), nkb), n/256))
	width := chainWidth
	if m > 1 && kn.chain2 != nil {
		width /= 2 // two rows of sums in L1
	}
	sw := gemmWorkPool.Get().(*gemmWork)
	defer gemmWorkPool.Put(sw)
	sw.bp = grow(sw.bp, nkb*m*n)
	parts := sw.bp // k block b's partials: m rows of n at b·m·n
	p.For(nkb*ncol, 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			b, cq := t/ncol, t%ncol
			pc := b * kc
			kb := min(kc, k-pc)
			part := parts[b*m*n:]
			j0, j1 := cq*n8/ncol*8, (cq+1)*n8/ncol*8
			if cq == ncol-1 {
				j1 = n
			}
			for ; j0 < j1; j0 += width {
				jw := min(width, j1-j0)
				bs := d.b[pc*d.ldb+j0:]
				for i := 0; i < m; {
					a0 := g.a[i*g.lda+pc : i*g.lda+pc+kb]
					d0 := part[i*n+j0 : i*n+j0+jw]
					if i+1 < m && kn.chain2 != nil {
						d1 := part[(i+1)*n+j0 : (i+1)*n+j0+jw]
						chainRows(kn, d0, d1, bs, d.ldb, a0, g.a[(i+1)*g.lda+pc:(i+1)*g.lda+pc+kb])
						i += 2
						continue
					}
					chainRows(kn, d0, nil, bs, d.ldb, a0, nil)
					i++
				}
			}
		}
	})
	for i := 0; i < m; i++ {
		dst := g.c[i*g.ldc : i*g.ldc+n]
		for b := 0; b < nkb; b++ {
			storeSums(dst, parts[(b*m+i)*n:(b*m+i+1)*n], b > 0 || g.accumulate)
		}
	}
	g.ep.apply(g.c, g.ldc, 0, 0, m, n)
}

// chainRows sets d0 (and d1, when set, with chain2) to the chains of a0
// (a1) against len(a0) rows of b, ldb apart: the kernel's chains over the
// columns up to a multiple of 8 where it has one, the rest as FMA chains
// in Go (the same sums), and chainAxpy on a kernel without.
func chainRows(kn *gemmKernel, d0, d1, b []float32, ldb int, a0, a1 []float32) {
	clear(d0)
	clear(d1)
	w := len(d0)
	if kn.chain == nil {
		chainAxpy(d0, b, ldb, a0)
		if d1 != nil {
			chainAxpy(d1, b, ldb, a1)
		}
		return
	}
	w8 := w / 8 * 8
	if w8 > 0 {
		if d1 != nil {
			kn.chain2(d0[:w8], d1[:w8], b, ldb, a0, a1)
		} else {
			kn.chain(d0[:w8], b, ldb, a0)
		}
	}
	for j := w8; j < w; j++ {
		d0[j] = fmaChain(b[j:], ldb, a0)
		if d1 != nil {
			d1[j] = fmaChain(b[j:], ldb, a1)
		}
	}
}

// fmaChain is the FMA chain of a[p]·b[p·ldb] over p, from zero.
func fmaChain(b []float32, ldb int, a []float32) float32 {
	var s float32
	for p, v := range a {
		s = float32(math.FMA(float64(v), float64(b[p*ldb]), float64(s)))
	}
	return s
}

// chainAxpy is the chain of the kernels without one (the portable and
// NEON kernels): dst += a[p]·b[p·ldb:] over p, B's rows four at a time
// through axpy4. Its sums are not the tiles' FMA chains, but they do not
// depend on the thread count.
func chainAxpy(dst, b []float32, ldb int, a []float32) {
	w, p := len(dst), 0
	for ; p+4 <= len(a); p += 4 {
		c := [4]float32{a[p], a[p+1], a[p+2], a[p+3]}
		vec.Axpy4(dst, b[p*ldb:p*ldb+w], b[(p+1)*ldb:(p+1)*ldb+w], b[(p+2)*ldb:(p+2)*ldb+w], b[(p+3)*ldb:(p+3)*ldb+w], &c)
	}
	for ; p < len(a); p++ {
		vec.Axpy(dst, b[p*ldb:p*ldb+w], a[p])
	}
}

// rowPanels runs the row kernels for the m rows of A (a, rows lda apart,
// from the k block's first column) against full B panels [q0, q1) (panel
// q at b[q·ps:], rows ldb apart): groups of 4 panels (64 columns), each
// read from L1 or L2 by every row pair, into C (rows ldc apart).
func rowPanels(kn *gemmKernel, kb int, a []float32, lda, m int, b []float32, ldb, ps int, c []float32, ldc int, acc bool, q0, q1 int) {
	const nr = 16
	for qg := q0; qg < q1; qg += 4 {
		qe := min(qg+4, q1)
		for i := 0; i < m; {
			rows := min(2, m-i)
			for q := qg; q < qe; {
				gw := 1
				if rows == 1 && q+4 <= qe {
					gw = 4
				} else if rows == 2 && q+2 <= qe {
					gw = 2
				}
				kn.rows(kb, a[i*lda:], lda, b[q*ps:], ldb, ps, c[i*ldc+q*nr:], ldc, acc, rows, gw)
				q += gw
			}
			i += rows
		}
	}
}

// chainWidth is the most columns one chain kernel call covers: whole rows
// of B stream best, and 16 KiB of sums stay in L1.
const chainWidth = tuning.GemmChainWidth
