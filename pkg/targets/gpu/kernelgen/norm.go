package kernelgen

import (
	"fmt"
	"math"

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
func (g *gen) softmax() error {
	if err := g.need(4, 2); err != nil {
		return err
	}
	outer, axis, inner, isLog := g.step.Ints[0], g.step.Ints[1], g.step.Ints[2], g.step.Ints[3] != 0
	l := rowThreads(axis)
	g.begin("softmax", [3]int{l, 1, 1})
	x, err := g.param(0, kir.F32, false, "x")
	if err != nil {
		return err
	}
	out, err := g.param(1, kir.F32, true, "out")
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

// layernorm lowers layernorm, rmsnorm and add+layernorm: one workgroup per
// row, mean and variance by workgroup reductions (two passes, as the CPU
// target does, for accuracy).
func (g *gen) layernorm() error {
	if err := g.need(5, 2); err != nil {
		return err
	}
	s := g.step
	if len(s.Floats) < 1 {
		return fmt.Errorf("malformed %s step", s.Kernel)
	}
	rows, cols := s.Ints[0], s.Ints[1]
	hasS, hasB, rms := s.Ints[2] != 0, s.Ints[3] != 0, s.Ints[4] != 0
	add := s.Kernel == "add_layernorm"
	if add && rms {
		return fmt.Errorf("add_layernorm with rms is not supported")
	}
	l := rowThreads(cols)
	g.begin(s.Kernel, [3]int{l, 1, 1})
	x, err := g.param(0, kir.F32, false, "x")
	if err != nil {
		return err
	}
	a := 1
	var r, scale, bias, sum operand
	if add {
		if r, err = g.param(1, kir.F32, false, "r"); err != nil {
			return err
		}
		a = 2
	}
	if hasS {
		if scale, err = g.param(a, kir.F32, false, "scale"); err != nil {
			return err
		}
		a++
	}
	if hasB {
		if bias, err = g.param(a, kir.F32, false, "bias"); err != nil {
			return err
		}
		a++
	}
	out, err := g.param(a, kir.F32, true, "out")
	if err != nil {
		return err
	}
	hasSum := add && a+1 < len(s.Args)
	if hasSum {
		if sum, err = g.param(a+1, kir.F32, true, "sum"); err != nil {
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
	body = append(body, kir.Decl("rstd", kir.Rsqrt(kir.Add(kir.Div(VF("ss"), n), F(s.Floats[0])))))
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
func (g *gen) reduce() error {
	s := g.step
	if err := g.need(2, 2); err != nil {
		return err
	}
	if len(s.Shapes) < 2 {
		return fmt.Errorf("malformed reduce step")
	}
	shape, axes := s.Shapes[0], s.Shapes[1]
	kind, dt := s.Ints[0], tensor.DType(s.Ints[1])
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
	g.begin("reduce", [3]int{256, 1, 1})
	x, err := g.param(0, et, false, "x")
	if err != nil {
		return err
	}
	out, err := g.param(1, et, true, "out")
	if err != nil {
		return err
	}
	ct := computeOf(dt)
	if ct == kir.Bool {
		return g.unsupported("reductions of bool tensors")
	}
	nred := tensor.NumElements(redShape)
	ident := map[int64]float64{0: 0, 1: math.NaN(), 2: math.Inf(-1), 3: math.Inf(1), 4: 1}[kind]
	combine := map[int64]func(a, b *kir.Expr) *kir.Expr{0: kir.Add, 1: kir.Add, 2: kir.MaxNaN, 3: kir.MinNaN, 4: kir.Mul}[kind]
	if combine == nil {
		return fmt.Errorf("malformed reduce step: kind %d", kind)
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
		if kind == 1 {
			res = kir.Div(acc, kir.Const(ct, nred, float64(nred)))
		}
		return append(ss, out.store(i, res))
	})
	g.end(grid, body...)
	return nil
}

// argreduce lowers argmax/argmin along an axis: the first index of the
// extreme value, as i64.
func (g *gen) argreduce() error {
	if err := g.need(5, 2); err != nil {
		return err
	}
	v := g.step.Ints
	isMax, outer, axis, inner, dt := v[0] != 0, v[1], v[2], v[3], tensor.DType(v[4])
	et, err := g.elemType(dt)
	if err != nil {
		return err
	}
	g.begin("argreduce", [3]int{256, 1, 1})
	x, err := g.param(0, et, false, "x")
	if err != nil {
		return err
	}
	out, err := g.param(1, kir.I64, true, "out")
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
		at := func(a *kir.Expr) *kir.Expr {
			return kir.Add(kir.Mul(kir.Add(kir.Mul(kir.Div(i, I(inner)), I(axis)), a), I(inner)), kir.Rem(i, I(inner)))
		}
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

// pool2d lowers max and average pooling (ONNX semantics, as the CPU
// target's kernels): one invocation per output element.
func (g *gen) pool2d() error {
	if err := g.need(17, 2); err != nil {
		return err
	}
	v := g.step.Ints
	N, C, H, W, KH, KW := v[0], v[1], v[2], v[3], v[4], v[5]
	sh, sw, pt, pl, pb, pr, dh, dw, OH, OW := v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]
	isMax, includePad := g.step.Kernel == "maxpool2d", v[16] != 0
	g.begin(g.step.Kernel, [3]int{256, 1, 1})
	x, err := g.param(0, kir.F32, false, "x")
	if err != nil {
		return err
	}
	out, err := g.param(1, kir.F32, true, "out")
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
