package kernelgen

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// The tiled attention kernel: a workgroup computes R query rows (16, or
// fewer where the grid would be small: attnRows) of one batch, walking the keys in blocks of attnKeys. Each block's keys
// are staged once in workgroup memory (rows padded by a word, so that the
// invocations scoring different keys read different banks) and scored
// against all the workgroup's queries, also staged; each query row keeps
// an online softmax (its running maximum and sum in workgroup memory);
// and each invocation accumulates R/2 rows of one output column in
// registers, reading each value of V once for them. The row-at-a-time
// kernel (attentionRow) read every key and value once per query row, from
// global memory. Causal attention skips the key blocks past the
// workgroup's last query's horizon.

const (
	attnThreads = 128 // four warps
	attnKeys    = 32  // keys per block: one per invocation of a warp
	// attnMaxRows is the most query rows a workgroup takes.
	attnMaxRows = 16
	// attnShared is the most workgroup memory the kernel takes, in
	// words: 16 KiB, what every Vulkan device provides. A head dim too
	// large for it takes the row-at-a-time kernel.
	attnShared = 4096
)

// attnSharedWords is the workgroup memory of the tiled kernel for head
// dim d and r query rows: the staged queries and keys, the scores, and
// three per-row values.
func attnSharedWords(d, r int64) int64 {
	return r*d + attnKeys*(d+1) + r*attnKeys + 3*r
}

// attnRows is how many query rows a workgroup of the tiled kernel takes
// for sq queries in nb batches: 16 (each staged key block serves 16 rows)
// where that leaves gemmMinGroups workgroups, else 8 or 4 (at least one
// score per invocation): a short sequence at batch 1 has few query rows,
// and a large GPU needs workgroups more than reuse.
func attnRows(sq, nb int64) int64 {
	for _, r := range []int64{attnMaxRows, 8} {
		if ceilDiv(sq, r)*nb >= gemmMinGroups {
			return r
		}
	}
	return 4
}

// attnBatch checks an attention step's batch: its operands' batch
// strides (one per batch dim each), and rows with no stride of their own
// (views read in place have one); it returns the strides and the batch
// count.
func (g *gen) attnBatch(op *lir.Attention) ([][]int64, int64, error) {
	v := &op.Geom
	if v.QRow != 0 || v.KRow != 0 || v.VRow != 0 {
		return nil, 0, g.unsupported("attention operands with row strides (views read in place)")
	}
	strides := [][]int64{v.QStrides, v.KStrides, v.VStrides}
	if op.Mask != lir.NoBuf {
		strides = append(strides, v.MaskStrides)
	}
	for _, st := range strides {
		if len(st) != len(v.Batch) {
			return nil, 0, fmt.Errorf("malformed attention step: %d batch strides for %d batch dims", len(st), len(v.Batch))
		}
	}
	return strides, tensor.NumElements(v.Batch), nil
}

// attnParams declares an attention kernel's parameters: q, k, v, the
// mask where there is one, and out.
func (g *gen) attnParams(op *lir.Attention) (q, k, v, mask, out operand, err error) {
	if q, err = g.param(op.Q, kir.F32, false, "q"); err != nil {
		return
	}
	if k, err = g.param(op.K, kir.F32, false, "k"); err != nil {
		return
	}
	if v, err = g.param(op.V, kir.F32, false, "v"); err != nil {
		return
	}
	if op.Mask != lir.NoBuf {
		if mask, err = g.param(op.Mask, kir.F32, false, "mask"); err != nil {
			return
		}
	}
	out, err = g.param(op.Out, kir.F32, true, "out")
	return
}

// attention lowers fused scaled-dot-product attention without
// materializing the score matrix: tiled where its head dim fits the
// workgroup memory, else a row at a time.
func (g *gen) attention(op *lir.Attention) error {
	if attnSharedWords(op.Geom.D, attnMaxRows) > attnShared {
		return g.attentionRow(op)
	}
	v := &op.Geom
	sq, sk, d, dv, causal, mrs, mcs, hasMask := v.Sq, v.Sk, v.D, v.Dv, v.Causal, v.MaskRowStride, v.MaskColStride, op.Mask != lir.NoBuf
	batch := v.Batch
	strides, nb, err := g.attnBatch(op)
	if err != nil {
		return err
	}
	R := attnRows(sq, nb)
	qBlocks := ceilDiv(sq, R)
	if qBlocks > maxGroups || nb > maxGroups {
		return g.unsupported("attention over %d queries × %d batches exceeds the workgroup grid", sq, nb)
	}
	const T, L = attnThreads, attnKeys
	g.begin([3]int{T, 1, 1})
	q, k, vv, mask, out, err := g.attnParams(op)
	if err != nil {
		return err
	}
	const sQ, sK, sS, sM, sL, sA = 0, 1, 2, 3, 4, 5
	g.k.Shared = []kir.Shared{
		{Name: "qs", Elem: kir.F32, Len: int(R * d)},
		{Name: "ks", Elem: kir.F32, Len: int(L * (d + 1))},
		{Name: "scores", Elem: kir.F32, Len: int(R * L)},
		{Name: "rowmax", Elem: kir.F32, Len: int(R)},
		{Name: "rowsum", Elem: kir.F32, Len: int(R)},
		{Name: "rescale", Elem: kir.F32, Len: int(R)},
	}
	I, F := kir.Int, kir.Float
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	VF := func(n string) *kir.Expr { return kir.Var(n, kir.F32) }
	ninf := F(math.Inf(-1))
	pre, offs := g.batchOffsets(kir.GroupID(1), batch, strides...)
	body := []*kir.Stmt{
		kir.Decl("tid", kir.LocalID(0)),
		kir.Decl("q0", kir.Mul(kir.GroupID(0), I(R))),
	}
	body = append(body, pre...)
	body = append(body,
		kir.Decl("qo", offs[0]),
		kir.Decl("ko", offs[1]),
		kir.Decl("vo", offs[2]),
	)
	if hasMask {
		body = append(body, kir.Decl("mo", offs[3]))
	}
	// Stage the queries (rows past sq read the last one), reset the rows'
	// softmax state.
	body = append(body,
		kir.For("i", VI("tid"), I(R*d), I(T),
			kir.Decl("qr", kir.Min(kir.Add(VI("q0"), kir.Div(VI("i"), I(d))), I(sq-1))),
			kir.StoreShared(sQ, VI("i"), q.load(kir.Add(VI("qo"), kir.Add(kir.Mul(VI("qr"), I(d)), kir.Rem(VI("i"), I(d))))))),
		kir.If(kir.Lt(VI("tid"), I(R)), []*kir.Stmt{
			kir.StoreShared(sM, VI("tid"), ninf),
			kir.StoreShared(sL, VI("tid"), F(0)),
		}),
	)
	// Each invocation's output: column c (and c+T/2·u for wide values)
	// of rows rr + 2i.
	half := int64(T / 2)
	cols := ceilDiv(dv, half)
	body = append(body,
		kir.Decl("oc", kir.Rem(VI("tid"), I(half))),
		kir.Decl("orr", kir.Div(VI("tid"), I(half))),
	)
	acc := func(i, u int64) string { return fmt.Sprintf("acc%d_%d", i, u) }
	for i := range int64(R / 2) {
		for u := range cols {
			body = append(body, kir.Decl(acc(i, u), F(0)))
		}
	}
	// The keys this workgroup's queries can see: all, or for causal
	// attention those up to its last query's horizon.
	kEnd := I(sk)
	if causal {
		kEnd = kir.Min(I(sk), kir.Add(VI("q0"), I(R+sk-sq)))
	}
	// One key block.
	var blk []*kir.Stmt
	blk = append(blk,
		kir.For("i", VI("tid"), I(L*d), I(T),
			kir.Decl("kj", kir.Add(VI("j0"), kir.Div(VI("i"), I(d)))),
			kir.StoreShared(sK, kir.Add(kir.Mul(kir.Div(VI("i"), I(d)), I(d+1)), kir.Rem(VI("i"), I(d))),
				k.load(kir.Add(VI("ko"), kir.Add(kir.Mul(kir.Min(VI("kj"), I(sk-1)), I(d)), kir.Rem(VI("i"), I(d))))))),
		kir.Barrier(),
	)
	// Scores: invocation t scores key t%L of the block for rows t/L + 4i.
	blk = append(blk,
		kir.Decl("sj", kir.Rem(VI("tid"), I(L))),
		kir.Decl("j", kir.Add(VI("j0"), VI("sj"))),
	)
	for i := range int64(R * L / T) {
		r := addC(kir.Div(VI("tid"), I(L)), i*(T/L))
		rn, dot, sc := fmt.Sprintf("sr%d", i), fmt.Sprintf("dot%d", i), fmt.Sprintf("sc%d", i)
		blk = append(blk,
			kir.Decl(rn, r),
			kir.Decl(dot, F(0)),
			kir.For("e", I(0), I(d), I(1),
				kir.Assign(dot, kir.Add(VF(dot), kir.Mul(
					kir.LoadShared(sQ, kir.F32, kir.Add(kir.Mul(VI(rn), I(d)), VI("e"))),
					kir.LoadShared(sK, kir.F32, kir.Add(kir.Mul(VI("sj"), I(d+1)), VI("e"))))))),
			kir.Decl(sc, kir.Mul(VF(dot), F(v.Scale))),
		)
		qi := kir.Add(VI("q0"), VI(rn))
		if hasMask {
			mrow := kir.Min(qi, I(sq-1))
			blk = append(blk, kir.Assign(sc, kir.Add(VF(sc),
				mask.load(kir.Add(VI("mo"), kir.Add(kir.Mul(mrow, I(mrs)), kir.Mul(kir.Min(VI("j"), I(sk-1)), I(mcs))))))))
		}
		visible := kir.Lt(VI("j"), I(sk))
		if causal {
			visible = kir.And(visible, kir.Le(VI("j"), kir.Add(qi, I(sk-sq))))
		}
		blk = append(blk, kir.StoreShared(sS, kir.Add(kir.Mul(VI(rn), I(L)), VI("sj")), kir.Select(visible, VF(sc), ninf)))
	}
	blk = append(blk, kir.Barrier())
	// The rows' online softmax: invocation r < R takes row r's block
	// maximum, rescales its sum, and turns its scores into weights.
	sAt := func(jj *kir.Expr) *kir.Expr { return kir.Add(kir.Mul(VI("tid"), I(L)), jj) }
	blk = append(blk, kir.If(kir.Lt(VI("tid"), I(R)), []*kir.Stmt{
		kir.Decl("mold", kir.LoadShared(sM, kir.F32, VI("tid"))),
		kir.Decl("mn", VF("mold")),
		kir.For("jj", I(0), I(L), I(1),
			kir.Assign("mn", kir.Max(VF("mn"), kir.LoadShared(sS, kir.F32, sAt(VI("jj")))))),
		// alpha rescales what was accumulated under the old maximum; a
		// masked score (-Inf) weighs 0.
		kir.Decl("alpha", kir.Select(kir.Eq(VF("mold"), ninf), F(0), kir.Exp(kir.Sub(VF("mold"), VF("mn"))))),
		kir.Decl("ps", F(0)),
		kir.For("jj", I(0), I(L), I(1),
			kir.Decl("s", kir.LoadShared(sS, kir.F32, sAt(VI("jj")))),
			kir.Decl("p", kir.Select(kir.Eq(VF("s"), ninf), F(0), kir.Exp(kir.Sub(VF("s"), VF("mn"))))),
			kir.StoreShared(sS, sAt(VI("jj")), VF("p")),
			kir.Assign("ps", kir.Add(VF("ps"), VF("p")))),
		kir.StoreShared(sL, VI("tid"), kir.Add(kir.Mul(kir.LoadShared(sL, kir.F32, VI("tid")), VF("alpha")), VF("ps"))),
		kir.StoreShared(sM, VI("tid"), VF("mn")),
		kir.StoreShared(sA, VI("tid"), VF("alpha")),
	}), kir.Barrier())
	// Accumulate: rescale, then add each key's weighted value row.
	for i := range int64(R / 2) {
		a := kir.LoadShared(sA, kir.F32, addC(VI("orr"), 2*i))
		for u := range cols {
			blk = append(blk, kir.Assign(acc(i, u), kir.Mul(VF(acc(i, u)), a)))
		}
	}
	var perKey []*kir.Stmt
	for u := range cols {
		col := addC(VI("oc"), u*half)
		vn := fmt.Sprintf("vv%d", u)
		perKey = append(perKey, kir.Decl(vn,
			vv.load(kir.Add(VI("vo"), kir.Add(kir.Mul(kir.Add(VI("j0"), VI("jj")), I(dv)), kir.Min(col, I(dv-1)))))))
		for i := range int64(R / 2) {
			w := kir.LoadShared(sS, kir.F32, kir.Add(kir.Mul(addC(VI("orr"), 2*i), I(L)), VI("jj")))
			perKey = append(perKey, kir.Assign(acc(i, u), kir.Add(VF(acc(i, u)), kir.Mul(w, VF(vn)))))
		}
	}
	blk = append(blk,
		kir.For("jj", I(0), kir.Min(I(L), kir.Sub(I(sk), VI("j0"))), I(1), perKey...),
		kir.Barrier())
	body = append(body, kir.For("j0", I(0), kEnd, I(L), blk...))
	// Store the rows in range.
	for i := range int64(R / 2) {
		row := addC(VI("orr"), 2*i)
		qi := kir.Add(VI("q0"), row)
		for u := range cols {
			col := addC(VI("oc"), u*half)
			ok := kir.Lt(qi, I(sq))
			if dv%half != 0 || u*half+half > dv {
				ok = kir.And(ok, kir.Lt(col, I(dv)))
			}
			idx := kir.Add(kir.Mul(kir.Add(kir.Mul(kir.GroupID(1), I(sq)), qi), I(dv)), col)
			body = append(body, kir.If(ok, []*kir.Stmt{
				out.store(idx, kir.Div(VF(acc(i, u)), kir.LoadShared(sL, kir.F32, row))),
			}))
		}
	}
	g.end([3]int{int(qBlocks), int(nb), 1}, body...)
	return nil
}
