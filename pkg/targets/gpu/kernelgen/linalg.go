package kernelgen

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// epilogue is a matmul or conv epilogue with its parameters added: out =
// act(acc + bias) + residual, or where actLast act(acc + bias + residual).
type epilogue struct {
	bias, res     *operand
	act           lir.Activation
	alpha, lo, hi float64
	actLast       bool
}

// epilogueParams adds the bias and residual parameters of e, where
// present, and returns the epilogue.
func (g *gen) epilogueParams(e *lir.Epilogue) (*epilogue, error) {
	ep := &epilogue{act: e.Act, alpha: e.Alpha, lo: e.Min, hi: e.Max, actLast: e.ActLast && e.Residual != lir.NoBuf}
	if e.Bias != lir.NoBuf {
		o, err := g.param(e.Bias, kir.F32, false, "bias")
		if err != nil {
			return nil, err
		}
		ep.bias = &o
	}
	if e.Residual != lir.NoBuf {
		o, err := g.param(e.Residual, kir.F32, false, "residual")
		if err != nil {
			return nil, err
		}
		ep.res = &o
	}
	if activation(ep.act, kir.Var("x", kir.F32), 0, 0, 0) == nil {
		return nil, fmt.Errorf("unknown epilogue activation %s", ep.act)
	}
	return ep, nil
}

// activation applies act to variable x; nil for an unknown activation.
func activation(act lir.Activation, x *kir.Expr, alpha, lo, hi float64) *kir.Expr {
	switch act {
	case lir.ActNone:
		return x
	case lir.ActRelu:
		return kir.Relu(x)
	case lir.ActGelu:
		return kir.Gelu(x)
	case lir.ActGeluTanh:
		return kir.GeluTanh(x)
	case lir.ActSilu:
		return kir.Silu(x)
	case lir.ActSigmoid:
		return kir.Sigmoid(x)
	case lir.ActTanh:
		return kir.Tanh(x)
	case lir.ActLeakyRelu:
		return kir.Select(kir.Lt(x, kir.Float(0)), kir.Mul(x, kir.Float(alpha)), x)
	case lir.ActClamp:
		y := x
		if !math.IsInf(lo, -1) {
			y = kir.Max(y, kir.Float(lo))
		}
		if !math.IsInf(hi, 1) {
			y = kir.Min(y, kir.Float(hi))
		}
		return y
	}
	return nil
}

// finish stores acc through the epilogue to out at idx; biasIdx selects
// the bias element (column or channel).
func (g *gen) finish(ep *epilogue, out operand, acc *kir.Expr, idx, biasIdx *kir.Expr) []*kir.Stmt {
	v := acc
	var ss []*kir.Stmt
	if ep.bias != nil {
		v = kir.Add(v, ep.bias.load(biasIdx))
	}
	act := func() {
		if ep.act != lir.ActNone {
			name := g.fresh("pre")
			ss = append(ss, kir.Decl(name, v))
			v = activation(ep.act, kir.Var(name, kir.F32), ep.alpha, ep.lo, ep.hi)
		}
	}
	if !ep.actLast {
		act()
	}
	if ep.res != nil {
		v = kir.Add(v, ep.res.load(idx))
	}
	if ep.actLast {
		act()
	}
	return append(ss, out.store(idx, v))
}

// batchOffsets declares the batch offsets of several operands for batch
// index b over batch shape, given each operand's batch strides.
func (g *gen) batchOffsets(b *kir.Expr, batch []int64, strides ...[]int64) ([]*kir.Stmt, []*kir.Expr) {
	if len(batch) == 0 {
		offs := make([]*kir.Expr, len(strides))
		for i := range offs {
			offs[i] = kir.Int(0)
		}
		return nil, offs
	}
	return g.decompose(b, batch, strides...)
}

// matStrides are the batch strides of an operand of shape s broadcast to
// batch, in elements, for matrices of mat elements.
func matStrides(s []int64, batch []int64, mat int64) []int64 {
	st := make([]int64, len(batch))
	acc := mat
	for i := len(s) - 1; i >= 0; i-- {
		d := i + len(batch) - len(s)
		if s[i] != 1 {
			st[d] = acc
		}
		acc *= s[i]
	}
	return st
}

func broadcast(x, y []int64) ([]int64, bool) {
	r := max(len(x), len(y))
	out := make([]int64, r)
	for i := 0; i < r; i++ {
		dx, dy := int64(1), int64(1)
		if j := i - (r - len(x)); j >= 0 {
			dx = x[j]
		}
		if j := i - (r - len(y)); j >= 0 {
			dy = y[j]
		}
		switch {
		case dx == dy, dy == 1:
			out[i] = dx
		case dx == 1:
			out[i] = dy
		default:
			return nil, false
		}
	}
	return out, true
}

// productParams declares a product's parameters: its two operands (f32,
// read), its epilogue's and its output.
func (g *gen) productParams(a, b lir.Buf, e *lir.Epilogue, out lir.Buf, an, bn string) (ao, bo operand, ep *epilogue, oo operand, err error) {
	if ao, err = g.param(a, kir.F32, false, an); err != nil {
		return
	}
	if bo, err = g.param(b, kir.F32, false, bn); err != nil {
		return
	}
	if ep, err = g.epilogueParams(e); err != nil {
		return
	}
	oo, err = g.param(out, kir.F32, true, "out")
	return
}

// matmul lowers a batched NumPy matmul with its epilogue: the GEMV
// kernel (gemv.go) for a few rows, else the tiled GEMM kernel (gemm.go),
// one workgroup per output tile and batch.
func (g *gen) matmul(op *lir.MatMul) error {
	if len(op.AShape) < 2 || len(op.BShape) < 2 {
		return fmt.Errorf("malformed matmul step: shapes %v · %v", op.AShape, op.BShape)
	}
	as, bs := op.AShape, op.BShape
	ra, rb := len(as), len(bs)
	m, k, n := as[ra-2], as[ra-1], bs[rb-1]
	if bs[rb-2] != k {
		return fmt.Errorf("matmul inner dims differ: %v · %v", as, bs)
	}
	batch, ok := broadcast(as[:ra-2], bs[:rb-2])
	if !ok {
		return fmt.Errorf("matmul batch dims do not broadcast: %v · %v", as, bs)
	}
	nb := tensor.NumElements(batch)
	if nb > maxGroups {
		return g.unsupported("%d matrices in one batch exceed %d workgroups", nb, maxGroups)
	}
	g.begin([3]int{gemmThreads, 1, 1})
	a, b, ep, out, err := g.productParams(op.A, op.B, &op.Epilogue, op.Out, "a", "b")
	if err != nil {
		return err
	}
	I := kir.Int
	bi := kir.GroupID(2)
	pre, offs := g.batchOffsets(bi, batch, matStrides(as[:ra-2], batch, m*k), matStrides(bs[:rb-2], batch, k*n))
	aoff, boff := offs[0], offs[1]
	store := func(row, col, acc *kir.Expr) []*kir.Stmt {
		return g.finish(ep, out, acc, kir.Add(kir.Mul(bi, I(m*n)), kir.Add(kir.Mul(row, I(n)), col)), col)
	}
	if m <= gemvMaxRows {
		return g.gemvEnd(&gemv{
			m: m, n: n, k: k, batch: nb,
			a:     func(row, r *kir.Expr) *kir.Expr { return a.load(kir.Add(aoff, kir.Add(mulC(row, k), r))) },
			b:     func(r, col *kir.Expr) *kir.Expr { return b.load(kir.Add(boff, kir.Add(kir.Mul(r, I(n)), col))) },
			store: store,
		}, pre)
	}
	tile, splits := g.plan(m, n, k, nb)
	return g.gemmEnd(&gemm{
		m: m, n: n, k: k, batch: nb, tile: tile, kSplit: kSplit{splits: splits},
		a:    func(row, r *kir.Expr) *kir.Expr { return a.load(kir.Add(aoff, kir.Add(kir.Mul(row, I(k)), r))) },
		bCol: func(*kir.Expr) []*kir.Stmt { return nil },
		b: func(r, col *kir.Expr) ([]*kir.Stmt, *kir.Expr, *kir.Expr) {
			return nil, nil, b.load(kir.Add(boff, kir.Add(kir.Mul(r, I(n)), col)))
		},
		store: store,
	}, pre)
}

// conv2d lowers a grouped 2-D convolution (NCHW input, OIHW weights) with
// its epilogue. A group that computes one output channel (a depthwise
// convolution, groups = C = O) takes the staged depthwise kernel
// (depthwise.go) or the direct one: as a GEMM it is a single row, which
// would leave all but one row of every tile empty.
// Every other convolution is an implicit GEMM.
func (g *gen) conv2d(op *lir.Conv2D) error {
	v := &op.Geom
	if v.Groups <= 0 || v.C%v.Groups != 0 || v.O%v.Groups != 0 {
		return fmt.Errorf("malformed conv2d step: %d groups of %d channels to %d", v.Groups, v.C, v.O)
	}
	if v.O/v.Groups == 1 {
		if v.C == v.Groups {
			if ok, err := g.conv2dDepthwise(op); ok || err != nil {
				return err
			}
		}
		return g.conv2dDirect(op)
	}
	return g.conv2dGemm(op)
}

// conv2dGemm lowers a convolution as an implicit GEMM per group:
// out[o, p] = Σ_r W[o, r]·X[r, p] with r over (channel of the group, kh,
// kw) and p over (n, oh, ow), W the group's weights as an O/groups × r
// matrix (OIHW is that already) and X the im2col matrix of the input,
// gathered while staging it (zero for padding), never stored. The
// group is the workgroup's z.
func (g *gen) conv2dGemm(op *lir.Conv2D) error {
	v := &op.Geom
	N, C, H, W, O, KH, KW := v.N, v.C, v.H, v.W, v.O, v.KH, v.KW
	sh, sw, pt, pl, dh, dw, groups, OH, OW := v.StrideH, v.StrideW, v.PadT, v.PadL, v.DilH, v.DilW, v.Groups, v.OH, v.OW
	cg, og := C/groups, O/groups
	g.begin([3]int{gemmThreads, 1, 1})
	x, w, ep, out, err := g.productParams(op.X, op.W, &op.Epilogue, op.Out, "x", "w")
	if err != nil {
		return err
	}
	I := kir.Int
	V := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	gi := kir.GroupID(2)
	r, p := cg*KH*KW, N*OH*OW
	// Where the padding cannot reach (no padding before, and the last
	// tap of the last output inside the input) the bounds are not tested.
	hLo, hHi := pt > 0, (OH-1)*sh-pt+(KH-1)*dh >= H
	wLo, wHi := pl > 0, (OW-1)*sw-pl+(KW-1)*dw >= W
	tile, splits := g.plan(og, p, r, groups)
	return g.gemmEnd(&gemm{
		m: og, n: p, k: r, batch: groups, tile: tile, kSplit: kSplit{splits: splits},
		a: func(row, rr *kir.Expr) *kir.Expr {
			return w.load(kir.Add(kir.Mul(kir.Add(kir.Mul(gi, I(og)), row), I(r)), rr))
		},
		// The invocation's im2col column: its image and the input
		// corner of its output pixel. A column past the last is clamped
		// to it (its loads do not happen) so that the image offset
		// stays within i32.
		bCol: func(col *kir.Expr) []*kir.Stmt {
			return []*kir.Stmt{
				kir.Decl("xcol", kir.Min(col, I(p-1))),
				kir.Decl("xsp", remC(V("xcol"), OH*OW)),
				kir.Decl("xih", addC(mulC(divC(V("xsp"), OW), sh), -pt)),
				kir.Decl("xiw", addC(mulC(remC(V("xsp"), OW), sw), -pl)),
				kir.Decl("xbase", kir.Mul(kir.Add(kir.Mul(divC(V("xcol"), OH*OW), I(C)), kir.Mul(gi, I(cg))), I(H*W))),
			}
		},
		b: func(rr, _ *kir.Expr) ([]*kir.Stmt, *kir.Expr, *kir.Expr) {
			c, ih, iw := g.fresh("xc"), g.fresh("xh"), g.fresh("xw")
			pre := []*kir.Stmt{
				kir.Decl(c, divC(rr, KH*KW)),
				kir.Decl(ih, kir.Add(V("xih"), mulC(remC(divC(rr, KW), KH), dh))),
				kir.Decl(iw, kir.Add(V("xiw"), mulC(remC(rr, KW), dw))),
			}
			var ok *kir.Expr
			if hLo {
				ok = and(ok, kir.Ge(V(ih), I(0)))
			}
			if hHi {
				ok = and(ok, kir.Lt(V(ih), I(H)))
			}
			if wLo {
				ok = and(ok, kir.Ge(V(iw), I(0)))
			}
			if wHi {
				ok = and(ok, kir.Lt(V(iw), I(W)))
			}
			idx := kir.Add(V("xbase"), kir.Add(kir.Mul(kir.Add(kir.Mul(V(c), I(H)), V(ih)), I(W)), V(iw)))
			return pre, ok, x.load(idx)
		},
		store: func(row, col, acc *kir.Expr) []*kir.Stmt {
			o := kir.Add(kir.Mul(gi, I(og)), row)
			idx := kir.Add(kir.Mul(kir.Add(kir.Mul(divC(col, OH*OW), I(O)), o), I(OH*OW)), remC(col, OH*OW))
			return g.finish(ep, out, acc, idx, o)
		},
	}, nil)
}

// conv2dDirect lowers a convolution with one invocation per output
// element, direct summation.
func (g *gen) conv2dDirect(op *lir.Conv2D) error {
	v := &op.Geom
	N, C, H, W, O, KH, KW := v.N, v.C, v.H, v.W, v.O, v.KH, v.KW
	sh, sw, pt, pl, dh, dw, groups, OH, OW := v.StrideH, v.StrideW, v.PadT, v.PadL, v.DilH, v.DilW, v.Groups, v.OH, v.OW
	cg, og := C/groups, O/groups
	g.begin([3]int{256, 1, 1})
	x, w, ep, out, err := g.productParams(op.X, op.W, &op.Epilogue, op.Out, "x", "w")
	if err != nil {
		return err
	}
	I := kir.Int
	V := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	grid, body := g.gridStride(N*O*OH*OW, func(i *kir.Expr) []*kir.Stmt {
		ih := kir.Add(kir.Sub(kir.Mul(V("oh"), I(sh)), I(pt)), kir.Mul(V("kh"), I(dh)))
		iw := kir.Add(kir.Sub(kir.Mul(V("ow"), I(sw)), I(pl)), kir.Mul(V("kw"), I(dw)))
		xIdx := kir.Add(kir.Mul(kir.Add(kir.Mul(kir.Add(kir.Mul(V("n"), I(C)), kir.Add(V("ci0"), V("c"))), I(H)), V("ih")), I(W)), V("iw"))
		wIdx := kir.Add(kir.Mul(kir.Add(kir.Mul(kir.Add(kir.Mul(V("o"), I(cg)), V("c")), I(KH)), V("kh")), I(KW)), V("kw"))
		inner := kir.For("kw", I(0), I(KW), I(1),
			kir.Decl("iw", iw),
			kir.If(kir.And(kir.Ge(V("iw"), I(0)), kir.Lt(V("iw"), I(W))), []*kir.Stmt{
				kir.Assign("acc", kir.Add(kir.Var("acc", kir.F32), kir.Mul(x.load(xIdx), w.load(wIdx)))),
			}))
		return append([]*kir.Stmt{
			kir.Decl("ow", kir.Rem(i, I(OW))),
			kir.Decl("oh", kir.Rem(kir.Div(i, I(OW)), I(OH))),
			kir.Decl("o", kir.Rem(kir.Div(i, I(OW*OH)), I(O))),
			kir.Decl("n", kir.Div(i, I(OW*OH*O))),
			kir.Decl("ci0", kir.Mul(kir.Div(V("o"), I(og)), I(cg))),
			kir.Decl("acc", kir.Float(0)),
			kir.For("c", I(0), I(cg), I(1),
				kir.For("kh", I(0), I(KH), I(1),
					kir.Decl("ih", ih),
					kir.If(kir.And(kir.Ge(V("ih"), I(0)), kir.Lt(V("ih"), I(H))), []*kir.Stmt{inner}))),
		}, g.finish(ep, out, kir.Var("acc", kir.F32), i, V("o"))...)
	})
	g.end(grid, body...)
	return nil
}

// attentionThreads is the workgroup of the attention kernel: it scores
// that many keys at a time.
const attentionThreads = 64

// attentionRow lowers fused scaled-dot-product attention a query row at
// a time, for head dims too large for the tiled kernel's workgroup
// memory (attention.go): one workgroup per (batch, query row) walks the
// keys in blocks of 64 with an online softmax; each invocation scores one
// key of the block and accumulates its own output columns in workgroup
// memory.
func (g *gen) attentionRow(op *lir.Attention) error {
	v := &op.Geom
	sq, sk, d, dv, causal, mrs, mcs, hasMask := v.Sq, v.Sk, v.D, v.Dv, v.Causal, v.MaskRowStride, v.MaskColStride, op.Mask != lir.NoBuf
	batch := v.Batch
	strides, nb, err := g.attnBatch(op)
	if err != nil {
		return err
	}
	if sq > maxGroups || nb > maxGroups {
		return g.unsupported("attention over %d queries × %d batches exceeds the workgroup grid", sq, nb)
	}
	const L = attentionThreads
	g.begin([3]int{L, 1, 1})
	q, k, vv, mask, out, err := g.attnParams(op)
	if err != nil {
		return err
	}
	g.k.Shared = []kir.Shared{{Name: "scores", Elem: kir.F32, Len: L}, {Name: "acc", Elem: kir.F32, Len: int(dv)}}
	I, F := kir.Int, kir.Float
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	VF := func(n string) *kir.Expr { return kir.Var(n, kir.F32) }
	pre, offs := g.batchOffsets(kir.GroupID(1), batch, strides...)
	ninf := F(math.Inf(-1))
	body := []*kir.Stmt{
		kir.Decl("tid", kir.LocalID(0)),
		kir.Decl("qi", kir.GroupID(0)),
		kir.Decl("bi", kir.GroupID(1)),
	}
	body = append(body, pre...)
	body = append(body,
		kir.Decl("qo", kir.Add(offs[0], kir.Mul(VI("qi"), I(d)))),
		kir.Decl("ko", offs[1]),
		kir.Decl("vo", offs[2]),
	)
	if hasMask {
		body = append(body, kir.Decl("mo", kir.Add(offs[3], kir.Mul(VI("qi"), I(mrs)))))
	}
	body = append(body,
		kir.For("c", VI("tid"), I(dv), I(L), kir.StoreShared(1, VI("c"), F(0))),
		kir.Decl("m", ninf),
		kir.Decl("l", F(0)),
	)
	// Score key j of this block.
	score := []*kir.Stmt{
		kir.Decl("dot", F(0)),
		kir.For("e", I(0), I(d), I(1),
			kir.Assign("dot", kir.Add(VF("dot"), kir.Mul(q.load(kir.Add(VI("qo"), VI("e"))),
				k.load(kir.Add(VI("ko"), kir.Add(kir.Mul(VI("j"), I(d)), VI("e")))))))),
		kir.Assign("sc", kir.Mul(VF("dot"), F(v.Scale))),
	}
	if hasMask {
		score = append(score, kir.Assign("sc", kir.Add(VF("sc"), mask.load(kir.Add(VI("mo"), kir.Mul(VI("j"), I(mcs)))))))
	}
	visible := kir.Lt(VI("j"), I(sk))
	if causal {
		visible = kir.And(visible, kir.Le(VI("j"), kir.Add(VI("qi"), I(sk-sq))))
	}
	blockMax := kir.For("jj", I(0), I(L), I(1),
		kir.Assign("bm", kir.Max(VF("bm"), kir.LoadShared(0, kir.F32, VI("jj")))))
	// p_j = exp(s_j - m'); a masked key (-Inf) weighs 0.
	pOf := func(sc *kir.Expr) *kir.Expr {
		return kir.Select(kir.Eq(sc, ninf), F(0), kir.Exp(kir.Sub(sc, VF("mn"))))
	}
	accumulate := kir.For("c", VI("tid"), I(dv), I(L),
		kir.Decl("a", kir.Mul(kir.LoadShared(1, kir.F32, VI("c")), VF("alpha"))),
		kir.For("jj", I(0), kir.Min(I(L), kir.Sub(I(sk), VI("j0"))), I(1),
			kir.Assign("a", kir.Add(VF("a"), kir.Mul(kir.LoadShared(0, kir.F32, VI("jj")),
				vv.load(kir.Add(VI("vo"), kir.Add(kir.Mul(kir.Add(VI("j0"), VI("jj")), I(dv)), VI("c")))))))),
		kir.StoreShared(1, VI("c"), VF("a")))
	sumP := kir.For("jj", I(0), I(L), I(1), kir.Assign("ps", kir.Add(VF("ps"), kir.LoadShared(0, kir.F32, VI("jj")))))
	body = append(body, kir.For("j0", I(0), I(sk), I(L),
		kir.Decl("j", kir.Add(VI("j0"), VI("tid"))),
		kir.Decl("sc", ninf),
		kir.If(visible, score),
		kir.StoreShared(0, VI("tid"), VF("sc")),
		kir.Barrier(),
		kir.Decl("bm", VF("m")),
		blockMax,
		kir.Decl("mn", VF("bm")),
		// alpha rescales what was accumulated under the old maximum.
		kir.Decl("alpha", kir.Select(kir.Eq(VF("m"), ninf), F(0), kir.Exp(kir.Sub(VF("m"), VF("mn"))))),
		kir.Barrier(),
		kir.StoreShared(0, VI("tid"), pOf(VF("sc"))),
		kir.Barrier(),
		kir.Decl("ps", F(0)),
		sumP,
		kir.Assign("l", kir.Add(kir.Mul(VF("l"), VF("alpha")), VF("ps"))),
		accumulate,
		kir.Assign("m", VF("mn")),
		kir.Barrier(),
	))
	outIdx := kir.Add(kir.Mul(kir.Add(kir.Mul(VI("bi"), I(sq)), VI("qi")), I(dv)), VI("c"))
	body = append(body, kir.For("c", VI("tid"), I(dv), I(L),
		out.store(outIdx, kir.Div(kir.LoadShared(1, kir.F32, VI("c")), VF("l")))))
	g.end([3]int{int(sq), int(nb), 1}, body...)
	return nil
}
