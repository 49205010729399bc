package kernelgen

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// rowThreads picks the workgroup size of a row kernel: a power of two
// between 32 and 256, no wider than the row needs.
func rowThreads(cols int64) int {
	l := 32
	for l < 256 && int64(l) < cols {
		l *= 2
	}
	return l
}

// rowGrid lays rows out over a 2-D grid of workgroups (one row each) and
// declares "row" (clamped to a real row, so loads stay in bounds) and
// "valid" (whether this workgroup has a row; stores test it). Invalid
// workgroups still run every barrier.
func rowGrid(rows int64) ([3]int, []*kir.Stmt) {
	gx := max(1, min(rows, maxGroups))
	gy := (rows + gx - 1) / gx
	lin := kir.Add(kir.Mul(kir.GroupID(1), kir.Int(gx)), kir.GroupID(0))
	return [3]int{int(gx), int(max(gy, 1)), 1}, []*kir.Stmt{
		kir.Decl("rowid", lin),
		kir.Decl("valid", kir.Lt(kir.Var("rowid", kir.I32), kir.Int(rows))),
		kir.Decl("row", kir.Min(kir.Var("rowid", kir.I32), kir.Int(max(rows-1, 0)))),
	}
}

// wgReduce combines each invocation's v across the workgroup of l (a power
// of two) invocations through workgroup array arr, by a tree of barriers,
// and declares result, which every invocation then holds.
func wgReduce(arr int, l int, v *kir.Expr, op func(a, b *kir.Expr) *kir.Expr, result string) []*kir.Stmt {
	tid := kir.Var("tid", kir.I32)
	ss := []*kir.Stmt{kir.StoreShared(arr, tid, v), kir.Barrier()}
	for off := l / 2; off > 0; off /= 2 {
		o := kir.Int(int64(off))
		ss = append(ss,
			kir.If(kir.Lt(tid, o), []*kir.Stmt{kir.StoreShared(arr, tid,
				op(kir.LoadShared(arr, kir.F32, tid), kir.LoadShared(arr, kir.F32, kir.Add(tid, o))))}),
			kir.Barrier())
	}
	return append(ss, kir.Decl(result, kir.LoadShared(arr, kir.F32, kir.Int(0))), kir.Barrier())
}

// softmax lowers softmax (or log-softmax) along an axis: one workgroup per
// row, three passes (max, sum of exponentials, write) with workgroup
// reductions between them.
func (g *gen) softmax(op *lir.Softmax) error {
	outer, axis, inner, isLog := op.Outer, op.Axis, op.Inner, op.Log
	l := rowThreads(axis)
	g.begin([3]int{l, 1, 1})
	x, err := g.param(op.X, kir.F32, false, "x")
	if err != nil {
		return err
	}
	out, err := g.param(op.Out, kir.F32, true, "out")
	if err != nil {
		return err
	}
	g.k.Shared = []kir.Shared{{Name: "partial", Elem: kir.F32, Len: l}}
	I, F := kir.Int, kir.Float
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	VF := func(n string) *kir.Expr { return kir.Var(n, kir.F32) }
	grid, body := rowGrid(outer * inner)
	// Element a of the row: (o·axis + a)·inner + in.
	idx := func(a *kir.Expr) *kir.Expr { return kir.Add(VI("base"), kir.Mul(a, I(inner))) }
	body = append(body,
		kir.Decl("tid", kir.LocalID(0)),
		kir.Decl("base", kir.Add(kir.Mul(kir.Div(VI("row"), I(inner)), I(axis*inner)), kir.Rem(VI("row"), I(inner)))),
		kir.Decl("mx", F(math.Inf(-1))),
		kir.For("a", VI("tid"), I(axis), I(int64(l)), kir.Assign("mx", kir.MaxNaN(VF("mx"), x.load(idx(VI("a")))))),
	)
	body = append(body, wgReduce(0, l, VF("mx"), kir.MaxNaN, "m")...)
	body = append(body,
		kir.Decl("sm", F(0)),
		kir.For("a", VI("tid"), I(axis), I(int64(l)), kir.Assign("sm", kir.Add(VF("sm"), kir.Exp(kir.Sub(x.load(idx(VI("a"))), VF("m")))))),
	)
	body = append(body, wgReduce(0, l, VF("sm"), kir.Add, "sum")...)
	var y *kir.Expr
	if isLog {
		body = append(body, kir.Decl("lsum", kir.Log(VF("sum"))))
		y = kir.Sub(kir.Sub(x.load(idx(VI("a"))), VF("m")), VF("lsum"))
	} else {
		body = append(body, kir.Decl("inv", kir.Recip(VF("sum"))))
		y = kir.Mul(kir.Exp(kir.Sub(x.load(idx(VI("a"))), VF("m"))), VF("inv"))
	}
	body = append(body, kir.If(kir.Var("valid", kir.Bool), []*kir.Stmt{
		kir.For("a", VI("tid"), I(axis), I(int64(l)), out.store(idx(VI("a")), y)),
	}))
	g.end(grid, body...)
	return nil
}

// norm is a layernorm or an add+layernorm step: x (+ r, when r is not
// NoBuf) normalized into out, the sum also stored in sum when it is not
// NoBuf. rms (no mean, as lir.LayerNorm's RMS) is never set with r.
type norm struct {
	x, r, scale, bias, out, sum lir.Buf
	rows, cols                  int64
	rms                         bool
	eps                         float64
}

// layernorm lowers layernorm, rmsnorm and add+layernorm: one workgroup per
// row, mean and variance by workgroup reductions (two passes, as the CPU
// target does, for accuracy).
func (g *gen) layernorm(op norm) error {
	rows, cols := op.rows, op.cols
	hasS, hasB, rms := op.scale != lir.NoBuf, op.bias != lir.NoBuf, op.rms
	add := op.r != lir.NoBuf
	l := rowThreads(cols)
	g.begin([3]int{l, 1, 1})
	x, err := g.param(op.x, kir.F32, false, "x")
	if err != nil {
		return err
	}
	var r, scale, bias, sum operand
	if add {
		if r, err = g.param(op.r, kir.F32, false, "r"); err != nil {
			return err
		}
	}
	if hasS {
		if scale, err = g.param(op.scale, kir.F32, false, "scale"); err != nil {
			return err
		}
	}
	if hasB {
		if bias, err = g.param(op.bias, kir.F32, false, "bias"); err != nil {
			return err
		}
	}
	out, err := g.param(op.out, kir.F32, true, "out")
	if err != nil {
		return err
	}
	hasSum := op.sum != lir.NoBuf
	if hasSum {
		if sum, err = g.param(op.sum, kir.F32, true, "sum"); err != nil {
			return err
		}
	}
	g.k.Shared = []kir.Shared{{Name: "partial", Elem: kir.F32, Len: l}}
	I, F := kir.Int, kir.Float
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	VF := func(n string) *kir.Expr { return kir.Var(n, kir.F32) }
	at := func() *kir.Expr { return kir.Add(kir.Mul(VI("row"), I(cols)), VI("j")) }
	val := func() *kir.Expr {
		if add {
			return kir.Add(x.load(at()), r.load(at()))
		}
		return x.load(at())
	}
	grid, body := rowGrid(rows)
	body = append(body, kir.Decl("tid", kir.LocalID(0)))
	loop := func(ss ...*kir.Stmt) *kir.Stmt {
		return kir.For("j", VI("tid"), I(cols), I(int64(l)), append([]*kir.Stmt{kir.Decl("v", val())}, ss...)...)
	}
	n := F(float64(cols))
	if rms {
		body = append(body, kir.Decl("acc", F(0)), loop(kir.Assign("acc", kir.Add(VF("acc"), kir.Mul(VF("v"), VF("v"))))))
		body = append(body, wgReduce(0, l, VF("acc"), kir.Add, "ss")...)
		body = append(body, kir.Decl("mean", F(0)))
	} else {
		first := []*kir.Stmt{kir.Assign("acc", kir.Add(VF("acc"), VF("v")))}
		if hasSum {
			first = append(first, kir.If(kir.Var("valid", kir.Bool), []*kir.Stmt{sum.store(at(), VF("v"))}))
		}
		body = append(body, kir.Decl("acc", F(0)), loop(first...))
		body = append(body, wgReduce(0, l, VF("acc"), kir.Add, "total")...)
		body = append(body, kir.Decl("mean", kir.Div(VF("total"), n)),
			kir.Decl("acc2", F(0)),
			loop(kir.Decl("dv", kir.Sub(VF("v"), VF("mean"))), kir.Assign("acc2", kir.Add(VF("acc2"), kir.Mul(VF("dv"), VF("dv"))))))
		body = append(body, wgReduce(0, l, VF("acc2"), kir.Add, "ss")...)
	}
	body = append(body, kir.Decl("rstd", kir.Rsqrt(kir.Add(kir.Div(VF("ss"), n), F(op.eps)))))
	y := kir.Mul(kir.Sub(VF("v"), VF("mean")), VF("rstd"))
	if hasS {
		y = kir.Mul(y, scale.load(VI("j")))
	}
	if hasB {
		y = kir.Add(y, bias.load(VI("j")))
	}
	body = append(body, kir.If(kir.Var("valid", kir.Bool), []*kir.Stmt{loop(out.store(at(), y))}))
	g.end(grid, body...)
	return nil
}

// reduce lowers a reduction over some axes: one invocation per output
// element loops over the reduced elements.
func (g *gen) reduce(op *lir.Reduce) error {
	shape, axes := op.Shape, op.Axes
	fn, dt := op.Fn, op.DType
	red := map[int]bool{}
	for _, a := range axes {
		if a < 0 || int(a) >= len(shape) {
			return fmt.Errorf("malformed reduce step: axis %d of rank %d", a, len(shape))
		}
		red[int(a)] = true
	}
	st := tensor.Strides(shape)
	var keptShape, keptSt, redShape, redSt []int64
	for i, d := range shape {
		if red[i] {
			redShape, redSt = append(redShape, d), append(redSt, st[i])
		} else {
			keptShape, keptSt = append(keptShape, d), append(keptSt, st[i])
		}
	}
	et, err := g.elemType(dt)
	if err != nil {
		return err
	}
	g.begin([3]int{256, 1, 1})
	x, err := g.param(op.X, et, false, "x")
	if err != nil {
		return err
	}
	out, err := g.param(op.Out, et, true, "out")
	if err != nil {
		return err
	}
	ct := computeOf(dt)
	if ct == kir.Bool {
		return g.unsupported("reductions of bool tensors")
	}
	nred := tensor.NumElements(redShape)
	// The value over an empty set, and how two partial results combine.
	var ident float64
	var combine func(a, b *kir.Expr) *kir.Expr
	switch fn {
	case lir.ReduceSum:
		ident, combine = 0, kir.Add
	case lir.ReduceMean:
		ident, combine = math.NaN(), kir.Add
	case lir.ReduceMax:
		ident, combine = math.Inf(-1), kir.MaxNaN
	case lir.ReduceMin:
		ident, combine = math.Inf(1), kir.MinNaN
	case lir.ReduceProd:
		ident, combine = 1, kir.Mul
	default:
		return fmt.Errorf("malformed reduce step: %s", fn)
	}
	grid, body := g.gridStride(tensor.NumElements(keptShape), func(i *kir.Expr) []*kir.Stmt {
		pre, offs := g.decompose(i, keptShape, keptSt)
		ss := append(pre, kir.Decl("base", offs[0]))
		if nred == 0 {
			return append(ss, out.store(i, castTo(kir.Float(ident), dt)))
		}
		r := kir.Var("r", kir.I32)
		rpre, roffs := g.decompose(r, redShape, redSt)
		xi := kir.Add(kir.Var("base", kir.I32), roffs[0])
		acc := kir.Var("acc", ct)
		ss = append(ss, kir.Decl("acc", x.load(kir.Var("base", kir.I32))),
			kir.For("r", kir.Int(1), kir.Int(nred), kir.Int(1), append(rpre, kir.Assign("acc", combine(acc, x.load(xi))))...))
		res := acc
		if fn == lir.ReduceMean {
			res = kir.Div(acc, kir.Const(ct, nred, float64(nred)))
		}
		return append(ss, out.store(i, res))
	})
	g.end(grid, body...)
	return nil
}

// argreduce lowers argmax/argmin along an axis: the first index of the
// extreme value, as i64.
func (g *gen) argreduce(op *lir.ArgReduce) error {
	isMax, outer, axis, inner, dt := op.Max, op.Outer, op.Axis, op.Inner, op.DType
	et, err := g.elemType(dt)
	if err != nil {
		return err
	}
	g.begin([3]int{256, 1, 1})
	x, err := g.param(op.X, et, false, "x")
	if err != nil {
		return err
	}
	out, err := g.param(op.Out, kir.I64, true, "out")
	if err != nil {
		return err
	}
	ct := computeOf(dt)
	if ct == kir.Bool {
		return g.unsupported("argmax/argmin of bool tensors")
	}
	I := kir.Int
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	grid, body := g.gridStride(outer*inner, func(i *kir.Expr) []*kir.Stmt {
		at := lineElem(i, axis, inner)
		better := kir.Gt(kir.Var("xv", ct), kir.Var("best", ct))
		if !isMax {
			better = kir.Lt(kir.Var("xv", ct), kir.Var("best", ct))
		}
		if axis == 0 {
			return []*kir.Stmt{out.store(i, kir.Const(kir.I64, 0, 0))}
		}
		return []*kir.Stmt{
			kir.Decl("best", x.load(at(I(0)))),
			kir.Decl("bi", I(0)),
			kir.For("a", I(1), I(axis), I(1),
				kir.Decl("xv", x.load(at(VI("a")))),
				kir.If(better, []*kir.Stmt{kir.Assign("best", kir.Var("xv", ct)), kir.Assign("bi", VI("a"))})),
			out.store(i, kir.Convert(kir.I64, VI("bi"))),
		}
	})
	g.end(grid, body...)
	return nil
}

// topk lowers a TopK step: one invocation per line, k passes over it, the
// r-th pass keeping the first element in the order that ranks after the
// one the pass before chose. O(k·axis) per line and no scratch memory:
// for the small k of classifiers' top-5 and detectors' score cuts. The
// order is the CPU kernels': equal values by lower index, a NaN above
// every number.
func (g *gen) topk(op *lir.TopK) error {
	outer, axis, inner, k, dt := op.Outer, op.Axis, op.Inner, op.K, op.DType
	et, err := g.elemType(dt)
	if err != nil {
		return err
	}
	g.begin([3]int{256, 1, 1})
	x, err := g.param(op.X, et, false, "x")
	if err != nil {
		return err
	}
	vals, err := g.param(op.Values, et, true, "values")
	if err != nil {
		return err
	}
	idx, err := g.param(op.Indices, kir.I64, true, "indices")
	if err != nil {
		return err
	}
	ct := computeOf(dt)
	if ct == kir.Bool {
		return g.unsupported("topk of bool tensors")
	}
	I := kir.Int
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	V := func(n string) *kir.Expr { return kir.Var(n, ct) }
	float := ct == kir.F32
	// above: value a ranks above value b (a NaN above every number).
	above := func(a, b *kir.Expr) *kir.Expr {
		if !float {
			return kir.Gt(a, b)
		}
		return kir.Or(kir.Gt(a, b), kir.And(kir.IsNaN(a), kir.Not(kir.IsNaN(b))))
	}
	same := func(a, b *kir.Expr) *kir.Expr {
		if !float {
			return kir.Eq(a, b)
		}
		return kir.Or(kir.Eq(a, b), kir.And(kir.IsNaN(a), kir.IsNaN(b)))
	}
	// before: element (av, ai) comes before (bv, bi) in the output.
	before := func(av, ai, bv, bi *kir.Expr) *kir.Expr {
		first := above(av, bv)
		if !op.Largest {
			first = above(bv, av)
		}
		return kir.Or(first, kir.And(same(av, bv), kir.Lt(ai, bi)))
	}
	grid, body := g.gridStride(outer*inner, func(i *kir.Expr) []*kir.Stmt {
		at, dst := lineElem(i, axis, inner), lineElem(i, k, inner)
		candidate := kir.And(
			kir.Or(kir.Lt(VI("pi"), I(0)), before(V("pv"), VI("pi"), V("xv"), VI("a"))),
			kir.Or(kir.Lt(VI("bi"), I(0)), before(V("xv"), VI("a"), V("best"), VI("bi"))))
		return []*kir.Stmt{
			kir.Decl("pv", x.load(at(I(0)))),
			kir.Decl("pi", I(-1)),
			kir.For("r", I(0), I(k), I(1),
				kir.Decl("best", V("pv")),
				kir.Decl("bi", I(-1)),
				kir.For("a", I(0), I(axis), I(1),
					kir.Decl("xv", x.load(at(VI("a")))),
					kir.If(candidate, []*kir.Stmt{kir.Assign("best", V("xv")), kir.Assign("bi", VI("a"))})),
				vals.store(dst(VI("r")), V("best")),
				idx.store(dst(VI("r")), kir.Convert(kir.I64, VI("bi"))),
				kir.Assign("pv", V("best")),
				kir.Assign("pi", VI("bi"))),
		}
	})
	g.end(grid, body...)
	return nil
}

// lineElem returns, for line i of a tensor viewed as [outer, n, inner]
// (i = o·inner + in), the index of its element a: (o·n + a)·inner + in.
func lineElem(i *kir.Expr, n, inner int64) func(a *kir.Expr) *kir.Expr {
	return func(a *kir.Expr) *kir.Expr {
		o, in := kir.Div(i, kir.Int(inner)), kir.Rem(i, kir.Int(inner))
		return kir.Add(kir.Mul(kir.Add(kir.Mul(o, kir.Int(n)), a), kir.Int(inner)), in)
	}
}

// pool2d lowers max and average pooling (ONNX semantics, as the CPU
// target's kernels): one invocation per output element.
func (g *gen) pool2d(op *lir.Pool2D) error {
	v := &op.Geom
	N, C, H, W, KH, KW := v.N, v.C, v.H, v.W, v.KH, v.KW
	sh, sw, pt, pl, pb, pr, dh, dw, OH, OW := v.StrideH, v.StrideW, v.PadT, v.PadL, v.PadB, v.PadR, v.DilH, v.DilW, v.OH, v.OW
	isMax, includePad := op.Max, op.CountIncludePad
	g.begin([3]int{256, 1, 1})
	x, err := g.param(op.X, kir.F32, false, "x")
	if err != nil {
		return err
	}
	out, err := g.param(op.Out, kir.F32, true, "out")
	if err != nil {
		return err
	}
	I, F := kir.Int, kir.Float
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	VF := func(n string) *kir.Expr { return kir.Var(n, kir.F32) }
	in := func(e *kir.Expr, lo, hi int64) *kir.Expr { return kir.And(kir.Ge(e, I(lo)), kir.Lt(e, I(hi))) }
	grid, body := g.gridStride(N*C*OH*OW, func(i *kir.Expr) []*kir.Stmt {
		xv := x.load(kir.Add(kir.Mul(kir.Add(kir.Mul(VI("nc"), I(H)), VI("ih")), I(W)), VI("iw")))
		var cell, init []*kir.Stmt
		var result *kir.Expr
		if isMax {
			init = []*kir.Stmt{kir.Decl("acc", F(math.Inf(-1)))}
			cell = []*kir.Stmt{kir.If(in(VI("iw"), 0, W), []*kir.Stmt{
				kir.Decl("xv", xv),
				kir.If(kir.Or(kir.Gt(VF("xv"), VF("acc")), kir.IsNaN(VF("xv"))), []*kir.Stmt{kir.Assign("acc", VF("xv"))}),
			})}
			result = VF("acc")
		} else {
			init = []*kir.Stmt{kir.Decl("acc", F(0)), kir.Decl("cnt", F(0))}
			counted := kir.And(in(VI("ih"), 0, H), in(VI("iw"), 0, W))
			if includePad {
				counted = kir.And(in(VI("ih"), -pt, H+pb), in(VI("iw"), -pl, W+pr))
			}
			cell = []*kir.Stmt{
				kir.If(counted, []*kir.Stmt{kir.Assign("cnt", kir.Add(VF("cnt"), F(1)))}),
				kir.If(kir.And(in(VI("ih"), 0, H), in(VI("iw"), 0, W)), []*kir.Stmt{kir.Assign("acc", kir.Add(VF("acc"), xv))}),
			}
			result = kir.Div(VF("acc"), VF("cnt"))
		}
		rowLoop := kir.For("kw", I(0), I(KW), I(1), append([]*kir.Stmt{
			kir.Decl("iw", kir.Add(kir.Sub(kir.Mul(VI("ow"), I(sw)), I(pl)), kir.Mul(VI("kw"), I(dw))))}, cell...)...)
		var khBody []*kir.Stmt
		khBody = append(khBody, kir.Decl("ih", kir.Add(kir.Sub(kir.Mul(VI("oh"), I(sh)), I(pt)), kir.Mul(VI("kh"), I(dh)))))
		if isMax {
			khBody = append(khBody, kir.If(in(VI("ih"), 0, H), []*kir.Stmt{rowLoop}))
		} else {
			khBody = append(khBody, rowLoop)
		}
		ss := []*kir.Stmt{
			kir.Decl("ow", kir.Rem(i, I(OW))),
			kir.Decl("oh", kir.Rem(kir.Div(i, I(OW)), I(OH))),
			kir.Decl("nc", kir.Div(i, I(OW*OH))),
		}
		ss = append(ss, init...)
		ss = append(ss, kir.For("kh", I(0), I(KH), I(1), khBody...), out.store(i, result))
		return ss
	})
	g.end(grid, body...)
	return nil
}
