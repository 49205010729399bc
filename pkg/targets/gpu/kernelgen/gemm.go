package kernelgen

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
)

// The register-tiled GEMM kernel that matmul and conv2d (as an implicit
// GEMM) share: out[row, col] = Σ_r A[row, r]·B[r, col] per batch, where
// the caller says what an element of A and of B is and where a result
// goes.
//
// A workgroup of 256 invocations computes a BM×BN output tile. It walks
// K in steps of BK, staging the step's BM×BK block of A and BK×BN block
// of B in workgroup memory (each invocation loading several elements,
// consecutive invocations consecutive addresses of the global tensor),
// then each invocation accumulates a TM×TN micro-tile in registers: per
// k, TM values of A and TN of B read from workgroup memory into
// registers, then TM·TN multiply-adds. The micro-tile is strided (rows
// ty, ty+BM/TM, ...; columns tx, tx+BN/TN, ...), so the invocations of a
// warp read consecutive words of B's block and at most two of A's (no
// bank conflicts), and store consecutive output columns.

// gemmTiling is the blocking of a GEMM kernel.
type gemmTiling struct {
	bm, bn, bk int64 // the workgroup's output tile, and the K-step
	tm, tn     int64 // each invocation's micro-tile
}

// gemmThreads is the workgroup size of every tiling.
const gemmThreads = 256

// gemmMinGroups is the fewest workgroups a tiling other than the last may
// leave a problem with: a grid smaller than a large GPU's multiprocessor
// count (132 on an H100 or H200) leaves some idle, and a smaller tile then
// gains more in parallelism than it loses in reuse.
const gemmMinGroups = 128

// gemmTilingRow is a row of the tiling table: the tiling and why.
type gemmTilingRow struct {
	gemmTiling
	why string
}

// gemmTilings is the tiling table, largest first. A problem takes the
// first row whose tile its output fills (M ≥ BM and N ≥ BN) with a grid of
// at least gemmMinGroups workgroups, or else the last.
func gemmTilings() []gemmTilingRow {
	return []gemmTilingRow{
		{gemmTiling{bm: 64, bn: 64, bk: 16, tm: 4, tn: 4},
			"large outputs: 16 multiply-adds per 8 workgroup-memory reads, each staged element reused 64 times"},
		{gemmTiling{bm: 32, bn: 32, bk: 16, tm: 2, tn: 2},
			"mid-sized outputs, or large ones whose 64×64 grid is too small: four times the workgroups, 4 outputs per invocation"},
		{gemmTiling{bm: 16, bn: 16, bk: 16, tm: 1, tn: 1},
			"M or N under 32 (a GEMV-like row, a narrow output) or a small grid: one output per invocation, the smallest tile 256 invocations make"},
	}
}

// pickGemmTiling chooses the tiling of an M×N output, batch times over.
func pickGemmTiling(m, n, batch int64) gemmTiling {
	rows := gemmTilings()
	for _, r := range rows {
		t := r.gemmTiling
		if m >= t.bm && n >= t.bn && ceilDiv(m, t.bm)*ceilDiv(n, t.bn)*batch >= gemmMinGroups {
			return t
		}
	}
	return rows[len(rows)-1].gemmTiling
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// gemmGroups is the workgroup count of tiling t over an M×N output,
// batch times over, unsplit.
func gemmGroups(t gemmTiling, m, n, batch int64) int64 {
	return ceilDiv(m, t.bm) * ceilDiv(n, t.bn) * batch
}

// Splitting K. A product with a long K but few output tiles (a
// convolution's deep layers at batch 1: 512 channels by 7×7 pixels over
// 4608 taps) leaves most of a large GPU idle at a large tile, and at the
// smallest (which the table then picks) does one multiply-add per two
// workgroup-memory reads. Such a product instead takes a larger tile and
// splits K into S runs, one workgroup each (S times the grid); each
// writes its partial sums to arena scratch, and a second kernel adds the
// S partials of each output in order, s = 0..S-1, and applies the
// epilogue: the same result on every run.
const (
	// gemmSplitMinK is the least K a split sums: below it the partials'
	// store and reload cost more than the split gains.
	gemmSplitMinK = 128
	// gemmMaxSplits bounds S, and so the scratch (S partial outputs).
	gemmMaxSplits = 16
)

// gemmSplits is how many K runs a grid of groups workgroups takes for a
// K of k: enough to reach gemmMinGroups (1 where the grid does already),
// or 0 where that would take runs shorter than gemmSplitMinK or more than
// gemmMaxSplits.
func gemmSplits(groups, k int64) int64 {
	s := ceilDiv(gemmMinGroups, groups)
	if s > min(k/gemmSplitMinK, gemmMaxSplits) {
		return 0
	}
	return s
}

// planGemm is the tiling and K split of an M×N×K product, batch times
// over. The table's tiling stands where it has a micro-tile (its grid
// is large enough). Where the table falls back to the 1×1 one, the
// largest tile the output fills whose grid gemmSplits can bring to
// gemmMinGroups is taken, split; else the 1×1 tiling, unsplit.
func planGemm(m, n, k, batch int64) (gemmTiling, int64) {
	t := pickGemmTiling(m, n, batch)
	if t.tm*t.tn > 1 {
		return t, 1
	}
	for _, r := range gemmTilings() {
		if r.tm*r.tn == 1 || m < r.bm || n < r.bn {
			continue
		}
		if s := gemmSplits(gemmGroups(r.gemmTiling, m, n, batch), k); s > 1 {
			return r.gemmTiling, s
		}
	}
	return t, 1
}

// gemm is one GEMM kernel's problem: M×N outputs over K, per batch
// (workgroup z), with callbacks for the operands and the result. Rows,
// columns and r are i32 expressions within the batch.
type gemm struct {
	m, n, k int64
	batch   int64
	tile    gemmTiling
	// kSplit is the split of K (planGemm's; gemmEnd rounds it and
	// declares the scratch).
	kSplit
	// a is A[row, r], for row < m and r < k.
	a func(row, r *kir.Expr) *kir.Expr
	// bCol declares what loads of B need of column col, which is the
	// same for an invocation in every K-step (col may be ≥ n: then no
	// load happens).
	bCol func(col *kir.Expr) []*kir.Stmt
	// b is B[r, col] for r < k and col < n: the statements computing
	// it, where in range is further limited (nil: nowhere), and its
	// value, which is read only there.
	b func(r, col *kir.Expr) (pre []*kir.Stmt, ok *kir.Expr, v *kir.Expr)
	// store stores the sum acc of output (row, col), row < m, col < n.
	store func(row, col, acc *kir.Expr) []*kir.Stmt
}

// kSplit is a product's split of K into runs (see planGemm): splits runs
// of chunk (1: unsplit), their partial sums in partial, the program's
// scratch.
type kSplit struct {
	splits, chunk int64
	partial       operand
}

// declareSplit rounds a split of a K of k to runs of whole steps of step
// (only the last run's last step can then pass K) and declares the
// scratch for batch·S partial M×N outputs, or leaves the product unsplit
// where one run remains or the partials would lie past what a kernel
// indexes.
func (g *gen) declareSplit(sp *kSplit, k, step, batch, m, n int64) error {
	if sp.splits <= 1 {
		sp.splits = 1
		return nil
	}
	sp.chunk = ceilDiv(ceilDiv(k, sp.splits), step) * step
	sp.splits = ceilDiv(k, sp.chunk)
	need := 4 * batch * sp.splits * m * n
	if sp.splits <= 1 || (g.prog.Buffers[g.scratch].Offset+need)/4 > math.MaxInt32 {
		sp.splits = 1
		return nil
	}
	g.scratchBytes = max(g.scratchBytes, need)
	var err error
	sp.partial, err = g.param(g.scratch, kir.F32, true, "partial")
	return err
}

// partialAt is where batch b's split s stores output (row, col):
// partial[((b·S + s)·M + row)·N + col].
func (sp *kSplit) partialAt(split, row, col *kir.Expr, m, n int64) *kir.Expr {
	I := kir.Int
	return kir.Add(kir.Mul(kir.Add(kir.Mul(kir.Add(kir.Mul(kir.GroupID(2), I(sp.splits)), split), I(m)), row), I(n)), col)
}

// sumSplits adds, after the split kernel g has just ended, the kernel that
// sums the partials: the split kernel's parameters again (so that store's
// operands mean the same), one invocation per output of the batch
// (workgroup z, as in the first), the partials added in order s =
// 0..S-1 and stored through store.
func (g *gen) sumSplits(sp *kSplit, m, n, batch int64, store func(row, col, acc *kir.Expr) []*kir.Stmt) {
	const T = gemmThreads
	first := g.k
	g.k = &kir.Kernel{Name: first.Name + "_sum", Local: [3]int{T, 1, 1}, Params: append([]kir.Param(nil), first.Params...)}
	for i := range g.k.Params {
		g.k.Params[i].Write = i != sp.partial.p && first.Params[i].Write
	}
	g.args = append([]lir.Buf(nil), g.args...)
	g.bases = append([]int64(nil), g.bases...)
	I := kir.Int
	V := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	mn := m * n
	base := kir.Mul(kir.GroupID(2), I(sp.splits*mn))
	sum := sp.partial.load(kir.Add(base, V("i")))
	for s := int64(1); s < sp.splits; s++ {
		sum = kir.Add(sum, sp.partial.load(kir.Add(base, addC(V("i"), s*mn))))
	}
	inner := append([]*kir.Stmt{kir.Decl("total", sum)},
		store(kir.Div(V("i"), I(n)), kir.Rem(V("i"), I(n)), kir.Var("total", kir.F32))...)
	body := []*kir.Stmt{kir.Decl("i", kir.Add(kir.Mul(kir.GroupID(0), I(T)), kir.LocalID(0)))}
	if mn%T != 0 {
		body = append(body, kir.If(kir.Lt(V("i"), I(mn)), inner))
	} else {
		body = append(body, inner...)
	}
	g.end([3]int{int(ceilDiv(mn, T)), 1, int(batch)}, body...)
}

// productShape is what a split product's kernels need of it besides its
// kernel body: M×N outputs, batch times over, over K in loop steps of
// step, stored through store.
type productShape struct {
	m, n, k, batch, step int64
	store                func(row, col, acc *kir.Expr) []*kir.Stmt
}

// endSplit ends g's kernel (begun, its operands declared) with the body
// kernel makes after the statements pre, splitting K as sp says
// (declareSplit first, so that kernel sees the rounded split), and adds
// the kernel that sums the partials where it is split.
func (g *gen) endSplit(sp *kSplit, ps productShape, pre []*kir.Stmt, kernel func() ([]*kir.Stmt, [3]int, error)) error {
	if err := g.declareSplit(sp, ps.k, ps.step, ps.batch, ps.m, ps.n); err != nil {
		return err
	}
	body, groups, err := kernel()
	if err != nil {
		return err
	}
	g.end(groups, append(pre, body...)...)
	if sp.splits > 1 {
		g.sumSplits(sp, ps.m, ps.n, ps.batch, ps.store)
	}
	return nil
}

// gemmEnd ends g's kernel (begun with gemmThreads invocations, its
// operands declared) as the tiled GEMM of p, after the statements pre.
// A split GEMM (p.splits > 1) ends it as the partial products into the
// step's scratch and adds the kernel that sums them (sumSplits).
func (g *gen) gemmEnd(p *gemm, pre []*kir.Stmt) error {
	return g.endSplit(&p.kSplit, productShape{p.m, p.n, p.k, p.batch, p.tile.bk, p.store}, pre,
		func() ([]*kir.Stmt, [3]int, error) { return g.gemmKernel(p) })
}

// The tensor-core form of a tiling (gen.mma): the workgroup's 8 warps
// (gemmThreads/32) as mmaWarpRows × mmaWarpCols, each computing a
// (BM/mmaWarpRows)×(BN/mmaWarpCols) part of the output tile as 16×8
// products over K terms (kir.SMMA: 8 for tf32, 16 for bf16) from the same
// staged blocks. A tiling has it where those parts are whole products
// and BK whole K-steps of them: the table's 64×64 (2×2 products a warp)
// and 32×32 (one) tiles.
const (
	mmaWarpRows, mmaWarpCols = 2, 4
	mmaM, mmaN               = 16, 8
)

func (t gemmTiling) mmaFits(kind kir.MMAKind) bool {
	return t.bm%(mmaWarpRows*mmaM) == 0 && t.bn%(mmaWarpCols*mmaN) == 0 && t.bk%int64(kind.K()) == 0
}

// gemmOut is one accumulator of an invocation and the output it sums.
type gemmOut struct {
	acc      string
	row, col *kir.Expr
}

// gemmKernel fills g's kernel (begun with gemmLocal) with the tiled GEMM
// of p and returns its body and workgroup counts. Split (p.splits > 1),
// workgroup x is also the split: it sums its run of K and stores the
// partials, batch b's split s at p.partial[((b·S + s)·M + row)·N + col].
func (g *gen) gemmKernel(p *gemm) ([]*kir.Stmt, [3]int, error) {
	t := p.tile
	const T = gemmThreads
	if (t.bm/t.tm)*(t.bn/t.tn) != T || T%t.bk != 0 || T%t.bn != 0 || t.bm*t.bk%T != 0 || t.bk*t.bn%T != 0 {
		return nil, [3]int{}, fmt.Errorf("gemm tiling %+v does not fit %d invocations", t, T)
	}
	mma := g.mma != mmaOff && t.mmaFits(g.kind)
	g.precision = ""
	if mma {
		g.precision = g.kind.String()
	}
	splits, chunk := max(p.splits, 1), p.chunk
	ntn := ceilDiv(p.n, t.bn)
	groups := [3]int{int(ntn * splits), int(ceilDiv(p.m, t.bm)), int(p.batch)}
	for _, n := range groups {
		if n > maxGroups {
			return nil, [3]int{}, g.unsupported("%d×%d outputs in %d batches exceed the workgroup grid", p.m, p.n, p.batch)
		}
	}
	// A's block is stored transposed (k-major) with rows of BM+1 words:
	// the invocations staging it write down a column, and the padding
	// spreads that column over the banks. For tensor cores, rows of BM+8
	// and BN+8 words instead: a fragment's 32 reads (8 rows or columns
	// g, 4 k-rows t) then fall in 32 banks (8t + g).
	sa, sb := t.bm+1, t.bn
	if mma {
		sa, sb = t.bm+8, t.bn+8
	}
	g.k.Shared = []kir.Shared{{Name: "tileA", Elem: kir.F32, Len: int(t.bk * sa)}, {Name: "tileB", Elem: kir.F32, Len: int(t.bk * sb)}}
	I := kir.Int
	V := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	rn := t.bn / t.tn // the micro-tile's column stride
	body := []*kir.Stmt{
		kir.Decl("tid", kir.LocalID(0)),
		kir.Decl("tx", kir.Rem(V("tid"), I(rn))),
		kir.Decl("ty", kir.Div(V("tid"), I(rn))),
		kir.Decl("row0", kir.Mul(kir.GroupID(1), I(t.bm))),
		kir.Decl("col0", kir.Mul(remC(kir.GroupID(0), ntn), I(t.bn))),
		// Staging: A's element (ar + s·T/BK, ak) and B's (br + s·T/BN,
		// bc) of the block in load s, consecutive invocations along
		// A's rows and B's columns, which are contiguous in memory.
		kir.Decl("ak", kir.Rem(V("tid"), I(t.bk))),
		kir.Decl("ar", kir.Div(V("tid"), I(t.bk))),
		kir.Decl("bc", kir.Rem(V("tid"), I(t.bn))),
		kir.Decl("br", kir.Div(V("tid"), I(t.bn))),
		kir.Decl("bcol", kir.Add(V("col0"), V("bc"))),
	}
	body = append(body, p.bCol(V("bcol"))...)
	var outs []gemmOut
	var setup, compute, where []*kir.Stmt
	if mma {
		outs, setup, where, compute = mmaStep(t, sa, sb, g.mma, g.kind)
	} else {
		outs, where, compute = microStep(t, sa, sb)
	}
	body = append(body, setup...)
	for _, o := range outs {
		body = append(body, kir.Decl(o.acc, kir.Float(0)))
	}
	var step []*kir.Stmt
	for s := range t.bm * t.bk / T {
		r := addC(V("ar"), s*(T/t.bk))
		row := kir.Add(V("row0"), r)
		kc := kir.Add(V("k0"), V("ak"))
		var ok *kir.Expr
		if p.m%t.bm != 0 {
			ok = and(ok, kir.Lt(row, I(p.m)))
		}
		if p.k%t.bk != 0 {
			ok = and(ok, kir.Lt(kc, I(p.k)))
		}
		step = append(step, guardedStage(0, kir.Add(kir.Mul(V("ak"), I(sa)), r), ok, p.a(row, kc)))
	}
	for s := range t.bk * t.bn / T {
		r := addC(V("br"), s*(T/t.bn))
		kr := kir.Add(V("k0"), r)
		pre, ok, v := p.b(kr, V("bcol"))
		if p.n%t.bn != 0 {
			ok = and(kir.Lt(V("bcol"), I(p.n)), ok)
		}
		if p.k%t.bk != 0 {
			ok = and(kir.Lt(kr, I(p.k)), ok)
		}
		step = append(step, pre...)
		step = append(step, guardedStage(1, kir.Add(kir.Mul(r, I(sb)), V("bc")), ok, v))
	}
	step = append(step, kir.Barrier())
	step = append(step, compute...)
	step = append(step, kir.Barrier())
	kBegin, kEnd := I(0), I(p.k)
	if splits > 1 {
		body = append(body, kir.Decl("split", divC(kir.GroupID(0), ntn)))
		kBegin = kir.Mul(V("split"), I(chunk))
		kEnd = kir.Min(kir.Add(kBegin, I(chunk)), I(p.k))
	}
	body = append(body, kir.For("k0", kBegin, kEnd, I(t.bk), step...))
	body = append(body, where...)
	for _, o := range outs {
		row, col := o.row, o.col
		acc := kir.Var(o.acc, kir.F32)
		var st []*kir.Stmt
		if splits > 1 {
			st = []*kir.Stmt{p.partial.store(p.partialAt(V("split"), row, col, p.m, p.n), acc)}
		} else {
			st = p.store(row, col, acc)
		}
		var ok *kir.Expr
		if p.m%t.bm != 0 {
			ok = and(ok, kir.Lt(row, I(p.m)))
		}
		if p.n%t.bn != 0 {
			ok = and(ok, kir.Lt(col, I(p.n)))
		}
		if ok != nil {
			st = []*kir.Stmt{kir.If(ok, st)}
		}
		body = append(body, st...)
	}
	return body, groups, nil
}

// microStep is the f32 form of a K-step over the staged blocks (A's
// k-major in rows of sa words, B's in rows of sb): each invocation's
// TM×TN micro-tile, strided (rows ty, ty+BM/TM, ...; columns tx,
// tx+BN/TN, ...), per k TM values of A and TN of B read into registers,
// then TM·TN multiply-adds. It returns the accumulators with their
// outputs, the declarations those need after the loop, and the step.
func microStep(t gemmTiling, sa, sb int64) (outs []gemmOut, where, step []*kir.Stmt) {
	I := kir.Int
	V := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	rm, rn := t.bm/t.tm, t.bn/t.tn
	for i := range t.tm {
		where = append(where, kir.Decl(fmt.Sprintf("orow%d", i), kir.Add(V("row0"), addC(V("ty"), i*rm))))
	}
	for j := range t.tn {
		where = append(where, kir.Decl(fmt.Sprintf("ocol%d", j), kir.Add(V("col0"), addC(V("tx"), j*rn))))
	}
	var inner []*kir.Stmt
	for i := range t.tm {
		inner = append(inner, kir.Decl(fmt.Sprintf("a%d", i),
			kir.LoadShared(0, kir.F32, kir.Add(kir.Mul(V("kk"), I(sa)), addC(V("ty"), i*rm)))))
	}
	for j := range t.tn {
		inner = append(inner, kir.Decl(fmt.Sprintf("b%d", j),
			kir.LoadShared(1, kir.F32, kir.Add(kir.Mul(V("kk"), I(sb)), addC(V("tx"), j*rn)))))
	}
	for i := range t.tm {
		for j := range t.tn {
			acc := fmt.Sprintf("acc%d_%d", i, j)
			outs = append(outs, gemmOut{acc, V(fmt.Sprintf("orow%d", i)), V(fmt.Sprintf("ocol%d", j))})
			inner = append(inner, kir.Assign(acc, kir.Add(kir.Var(acc, kir.F32),
				kir.Mul(kir.Var(fmt.Sprintf("a%d", i), kir.F32), kir.Var(fmt.Sprintf("b%d", j), kir.F32)))))
		}
	}
	return outs, where, []*kir.Stmt{kir.For("kk", I(0), I(t.bk), I(1), inner...)}
}

// mmaStep is the tensor-core form of microStep (see mmaFits): warp w
// computes the tile part at rows wrow = (w / mmaWarpCols)·WM and columns
// wcol = (w % mmaWarpCols)·WN, as MI×NI 16×8 products of kind per K of
// its terms. Lane l holds, per product, the outputs of PTX's accumulator
// layout (rows fg and fg+8, columns 2·ft and 2·ft+1; fg = l/4, ft = l%4),
// and feeds it A's and B's fragment elements from the staged blocks
// (kir.MMAKind's AElem and BElem). Emulated, each lane sums its own
// outputs' terms from the blocks instead, its operands rounded as the
// tensor cores' are. It also returns the declarations the step needs
// before the K loop.
func mmaStep(t gemmTiling, sa, sb int64, mode mmaMode, kind kir.MMAKind) (outs []gemmOut, pre, where, step []*kir.Stmt) {
	I := kir.Int
	V := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	wm, wn := t.bm/mmaWarpRows, t.bn/mmaWarpCols
	mi, ni := wm/mmaM, wn/mmaN
	pre = []*kir.Stmt{
		kir.Decl("fg", kir.Div(kir.Rem(V("tid"), I(32)), I(4))),
		kir.Decl("ft", kir.Rem(V("tid"), I(4))),
		kir.Decl("wrow", kir.Mul(kir.Div(kir.Div(V("tid"), I(32)), I(mmaWarpCols)), I(wm))),
		kir.Decl("wcol", kir.Mul(kir.Rem(kir.Div(V("tid"), I(32)), I(mmaWarpCols)), I(wn))),
	}
	acc := func(i, j, q int64) string { return fmt.Sprintf("acc%d_%d_%d", i, j, q) }
	// rowIn and colIn are output q's place in the tile for product (i, j).
	rowIn := func(i, q int64) *kir.Expr { return addC(kir.Add(V("wrow"), V("fg")), i*mmaM+8*(q/2)) }
	colIn := func(j, q int64) *kir.Expr {
		return addC(kir.Add(V("wcol"), kir.Mul(V("ft"), I(2))), j*mmaN+q%2)
	}
	for i := range mi {
		for h := range int64(2) {
			where = append(where, kir.Decl(fmt.Sprintf("orow%d_%d", i, h), kir.Add(V("row0"), rowIn(i, 2*h))))
		}
	}
	for j := range ni {
		for c := range int64(2) {
			where = append(where, kir.Decl(fmt.Sprintf("ocol%d_%d", j, c), kir.Add(V("col0"), colIn(j, c))))
		}
	}
	for i := range mi {
		for j := range ni {
			for q := range int64(4) {
				outs = append(outs, gemmOut{acc(i, j, q), V(fmt.Sprintf("orow%d_%d", i, q/2)), V(fmt.Sprintf("ocol%d_%d", j, q%2))})
			}
		}
	}
	tileA := func(k, row *kir.Expr) *kir.Expr { return kir.LoadShared(0, kir.F32, kir.Add(kir.Mul(k, I(sa)), row)) }
	tileB := func(k, col *kir.Expr) *kir.Expr { return kir.LoadShared(1, kir.F32, kir.Add(kir.Mul(k, I(sb)), col)) }
	kk, K := V("kk"), int64(kind.K())
	var inner []*kir.Stmt
	if mode == mmaEmulated {
		for i := range mi {
			for j := range ni {
				for q := range int64(4) {
					var sum *kir.Expr
					for x := range K {
						term := kir.Mul(roundTo(kind, tileA(addC(kk, x), rowIn(i, q))), roundTo(kind, tileB(addC(kk, x), colIn(j, q))))
						if sum == nil {
							sum = term
						} else {
							sum = kir.Add(sum, term)
						}
					}
					a := acc(i, j, q)
					inner = append(inner, kir.Assign(a, kir.Add(kir.Var(a, kir.F32), sum)))
				}
			}
		}
		return outs, pre, where, []*kir.Stmt{kir.For("kk", I(0), I(t.bk), I(K), inner...)}
	}
	// The lane's k within the step: TMul·ft (tf32 one column per lane of
	// a group, bf16 a pair).
	kt := kir.Add(kk, kir.Mul(V("ft"), I(int64(kind.TMul()))))
	for i := range mi {
		r := addC(kir.Add(V("wrow"), V("fg")), i*mmaM)
		for e := range kind.A() {
			dr, dc := kind.AElem(e)
			inner = append(inner, kir.Decl(fmt.Sprintf("fa%d_%d", i, e), tileA(addC(kt, int64(dc)), addC(r, int64(dr)))))
		}
	}
	for j := range ni {
		c := addC(kir.Add(V("wcol"), V("fg")), j*mmaN)
		for e := range kind.B() {
			inner = append(inner, kir.Decl(fmt.Sprintf("fb%d_%d", j, e), tileB(addC(kt, int64(kind.BElem(e))), c)))
		}
	}
	frag := func(f string, x int64, n int) []*kir.Expr {
		var v []*kir.Expr
		for e := range n {
			v = append(v, kir.Var(fmt.Sprintf("%s%d_%d", f, x, e), kir.F32))
		}
		return v
	}
	for i := range mi {
		for j := range ni {
			inner = append(inner, kir.MMA(kind, [4]string{acc(i, j, 0), acc(i, j, 1), acc(i, j, 2), acc(i, j, 3)},
				frag("fa", i, kind.A()), frag("fb", j, kind.B())))
		}
	}
	return outs, pre, where, []*kir.Stmt{kir.For("kk", I(0), I(t.bk), I(K), inner...)}
}

// roundTo rounds a finite f32 to kind's operand type: tf32's 10 fraction
// bits to nearest, ties away from zero (PTX's cvt.rna.tf32.f32), or
// bf16's 7 to nearest, ties to even (cvt.rn.bf16x2.f32): the emulated
// products' operand rounding.
func roundTo(kind kir.MMAKind, x *kir.Expr) *kir.Expr {
	u := kir.Bitcast(kir.U32, x)
	if kind == kir.MMATF32 {
		return kir.Bitcast(kir.F32, kir.BitAnd(kir.Add(u, kir.Uint(0x1000)), kir.Uint(0xffffe000)))
	}
	odd := kir.BitAnd(kir.Shr(u, kir.Uint(16)), kir.Uint(1))
	return kir.Bitcast(kir.F32, kir.BitAnd(kir.Add(kir.Add(u, kir.Uint(0x7fff)), odd), kir.Uint(0xffff0000)))
}

// guardedStage stores v to element idx of workgroup array a where ok
// holds (everywhere for nil) and zero elsewhere: out-of-range elements of
// a block add nothing to the sums.
func guardedStage(a int, idx, ok, v *kir.Expr) *kir.Stmt {
	if ok == nil {
		return kir.StoreShared(a, idx, v)
	}
	return kir.If(ok, []*kir.Stmt{kir.StoreShared(a, idx, v)}, kir.StoreShared(a, idx, kir.Float(0)))
}

// and is a ∧ b, where a nil operand is true.
func and(a, b *kir.Expr) *kir.Expr {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return kir.And(a, b)
}

// addC, mulC, divC and remC are arithmetic with a constant that fold
// adding 0 and multiplying or dividing by 1, which the geometry often
// has (no padding, unit strides, 1×1 kernels).
func addC(a *kir.Expr, c int64) *kir.Expr {
	if c == 0 {
		return a
	}
	return kir.Add(a, kir.Int(c))
}

func mulC(a *kir.Expr, c int64) *kir.Expr {
	if c == 1 {
		return a
	}
	return kir.Mul(a, kir.Int(c))
}

func divC(a *kir.Expr, d int64) *kir.Expr {
	if d == 1 {
		return a
	}
	return kir.Div(a, kir.Int(d))
}

func remC(a *kir.Expr, d int64) *kir.Expr {
	if d == 1 {
		return kir.Int(0)
	}
	return kir.Rem(a, kir.Int(d))
}
