package kernelgen

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
)

// The GEMV kernel: a product of few rows (M ≤ gemvMaxRows), where the
// tiled GEMM would leave all but M rows of every tile empty and give each
// workgroup a few columns of B to stream. Here a workgroup of 256
// invocations computes every row of C consecutive output columns: its
// invocations form S = 256/C slices of K, each invocation summing every
// S-th k of its column, so a warp reads whole runs of a row of B (B is
// [K, N], row-major) and the M values of A it multiplies them with are
// one address per warp. The loop over k is unrolled gemvUnroll times with
// its loads unconditional (clamped), so that many loads are in flight.
// The slices' partial sums then meet in workgroup memory, and M·C
// invocations add them up and store through the epilogue. The order of
// the additions is fixed: the result is the same on every run.

// gemvMaxRows is the most rows the GEMV kernel takes: its M running sums
// per invocation are registers, and at 8 rows the smallest GEMM tile (16
// rows) would still be half empty.
const gemvMaxRows = 8

// gemvUnroll is how many k's of its slice an invocation loads per loop
// step.
const gemvUnroll = 4

// gemvColumns is the workgroup's column count for an output of n columns
// and batch matrices: 32 (a warp reads one 128-byte run of B's row) while
// that leaves at least gemmMinGroups workgroups, else 16 (half-runs,
// twice the workgroups for narrow outputs).
func gemvColumns(n, batch int64) int64 {
	if ceilDiv(n, 32)*batch >= gemmMinGroups {
		return 32
	}
	return 16
}

// A GEMV streams B once, so its speed is how many loads are in flight:
// at 32 or 16 columns a workgroup, an MLP layer of 2048 columns is 128
// workgroups, a few warps per multiprocessor of a large GPU, each with
// gemvUnroll loads out. Where the grid is smaller than gemvMinGroups and
// K long, K is split into runs as a GEMM's is (planGemm): each workgroup
// sums a run, and a second kernel adds the partials in order.
const (
	// gemvMinGroups is the grid a split GEMV aims for: four workgroups
	// per multiprocessor of an H100 or H200.
	gemvMinGroups = 4 * gemmMinGroups
	// gemvSplitMinK is the least K a run of a split GEMV sums.
	gemvSplitMinK = 256
)

// gemvSplits is how many runs a GEMV of n columns, batch times over,
// splits its K of k into (1: none).
func gemvSplits(n, k, batch int64) int64 {
	groups := ceilDiv(n, gemvColumns(n, batch)) * batch
	s := min(ceilDiv(gemvMinGroups, groups), k/gemvSplitMinK, gemmMaxSplits)
	if groups >= gemvMinGroups || s < 2 {
		return 1
	}
	return s
}

// gemv is one GEMV kernel's problem, with callbacks as gemm's: A[row, r],
// B[r, col] and the store of output (row, col).
type gemv struct {
	m, n, k int64
	batch   int64
	kSplit  // gemvEnd sets it
	a       func(row, r *kir.Expr) *kir.Expr
	b       func(r, col *kir.Expr) *kir.Expr
	store   func(row, col, acc *kir.Expr) []*kir.Stmt
}

// gemvEnd ends g's kernel (begun with gemmThreads invocations, its
// operands declared) as the GEMV of p after the statements pre, split
// where gemvSplits says, with the kernel that sums the partials then.
func (g *gen) gemvEnd(p *gemv, pre []*kir.Stmt) error {
	p.splits = gemvSplits(p.n, p.k, p.batch)
	step := gemmThreads / gemvColumns(p.n, p.batch) * gemvUnroll
	return g.endSplit(&p.kSplit, productShape{p.m, p.n, p.k, p.batch, step, p.store}, pre,
		func() ([]*kir.Stmt, [3]int, error) { return g.gemvKernel(p) })
}

// gemvKernel fills g's kernel (begun with gemmThreads invocations) with
// the GEMV of p and returns its body and workgroup counts.
func (g *gen) gemvKernel(p *gemv) ([]*kir.Stmt, [3]int, error) {
	const T = gemmThreads
	if p.m < 1 || p.m > gemvMaxRows {
		return nil, [3]int{}, fmt.Errorf("gemv of %d rows", p.m)
	}
	c := gemvColumns(p.n, p.batch)
	s := T / c
	splits, ntc := max(p.splits, 1), ceilDiv(p.n, c)
	groups := [3]int{int(ntc * splits), 1, int(p.batch)}
	for _, n := range groups {
		if n > maxGroups {
			return nil, [3]int{}, g.unsupported("%d×%d outputs in %d batches exceed the workgroup grid", p.m, p.n, p.batch)
		}
	}
	g.k.Shared = []kir.Shared{{Name: "partial", Elem: kir.F32, Len: int(p.m * T)}}
	I := kir.Int
	V := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	F := func(n string) *kir.Expr { return kir.Var(n, kir.F32) }
	body := []*kir.Stmt{
		kir.Decl("tid", kir.LocalID(0)),
		kir.Decl("tx", kir.Rem(V("tid"), I(c))),
		kir.Decl("ty", kir.Div(V("tid"), I(c))),
		kir.Decl("ct", remC(kir.GroupID(0), ntc)),
		kir.Decl("col", kir.Add(kir.Mul(V("ct"), I(c)), V("tx"))),
	}
	// Loads read a column in range; a column past n sums garbage that is
	// never stored.
	lcol := V("col")
	if p.n%c != 0 {
		body = append(body, kir.Decl("lcol", kir.Min(V("col"), I(p.n-1))))
		lcol = V("lcol")
	}
	for i := range p.m {
		body = append(body, kir.Decl(fmt.Sprintf("acc%d", i), kir.Float(0)))
	}
	var step []*kir.Stmt
	ragged := p.k%(s*gemvUnroll) != 0
	for u := range int64(gemvUnroll) {
		kk := fmt.Sprintf("kk%d", u)
		step = append(step, kir.Decl(kk, addC(V("k0"), u*s)))
		kr := V(kk)
		if ragged {
			// Past K the load reads row K-1 and the product is dropped:
			// a select, not a zero factor, so an infinity there adds
			// nothing.
			step = append(step, kir.Decl(kk+"c", kir.Min(V(kk), I(p.k-1))))
			kr = V(kk + "c")
		}
		bv := fmt.Sprintf("b%d", u)
		step = append(step, kir.Decl(bv, p.b(kr, lcol)))
		for i := range p.m {
			acc := fmt.Sprintf("acc%d", i)
			prod := kir.Mul(p.a(I(i), kr), F(bv))
			if ragged {
				prod = kir.Select(kir.Lt(V(kk), I(p.k)), prod, kir.Float(0))
			}
			step = append(step, kir.Assign(acc, kir.Add(F(acc), prod)))
		}
	}
	kBegin, kEnd := V("ty"), I(p.k)
	if splits > 1 {
		// A run is whole loop steps (declareSplit), so only the last
		// run's last step can pass K, which the loads guard.
		body = append(body, kir.Decl("split", divC(kir.GroupID(0), ntc)))
		kBegin = kir.Add(kir.Mul(V("split"), I(p.chunk)), V("ty"))
		kEnd = kir.Min(kir.Add(kir.Mul(V("split"), I(p.chunk)), I(p.chunk)), I(p.k))
	}
	body = append(body, kir.For("k0", kBegin, kEnd, I(s*gemvUnroll), step...))
	for i := range p.m {
		idx := addC(kir.Add(kir.Mul(V("ty"), I(c)), V("tx")), i*s*c) // partial[(i·S + ty)·C + tx]
		body = append(body, kir.StoreShared(0, idx, F(fmt.Sprintf("acc%d", i))))
	}
	body = append(body, kir.Barrier())
	// Invocation r·C + x adds up row r, column x over the slices.
	sum := kir.LoadShared(0, kir.F32, kir.Add(kir.Mul(V("row"), I(s*c)), V("x")))
	for y := int64(1); y < s; y++ {
		sum = kir.Add(sum, kir.LoadShared(0, kir.F32, kir.Add(kir.Mul(V("row"), I(s*c)), addC(V("x"), y*c))))
	}
	ocol := kir.Add(kir.Mul(V("ct"), I(c)), V("x"))
	fin := []*kir.Stmt{
		kir.Decl("row", kir.Div(V("tid"), I(c))),
		kir.Decl("x", kir.Rem(V("tid"), I(c))),
		kir.Decl("ocol", ocol),
		kir.Decl("total", sum),
	}
	var st []*kir.Stmt
	if splits > 1 {
		st = []*kir.Stmt{p.partial.store(p.partialAt(V("split"), V("row"), V("ocol"), p.m, p.n), F("total"))}
	} else {
		st = p.store(V("row"), V("ocol"), F("total"))
	}
	if p.n%c != 0 {
		st = []*kir.Stmt{kir.If(kir.Lt(V("ocol"), I(p.n)), st)}
	}
	fin = append(fin, st...)
	if p.m*c < T {
		fin = []*kir.Stmt{kir.If(kir.Lt(V("tid"), I(p.m*c)), fin)}
	}
	return append(body, fin...), groups, nil
}
