// Package lower lowers HIR to MIR (this file) and MIR to the kernel schedule
// that specialization turns into a program.
package lower

import (
	"fmt"
	"path/filepath"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// WeightSource supplies the data of a param at build time.
type WeightSource interface {
	Weight(p *hir.ParamDecl) (*tensor.Tensor, error)
}

// srcFile is the file name a node's Src gives: the base name, so that the
// artifact (whose steps carry Src for profiles and errors) is the same
// whichever way the path to the model was spelled.
func srcFile(m *hir.Module) string { return filepath.Base(m.File) }

// ToMIR lowers function fn of a checked module to a MIR graph. Params become
// constants with their data from weights.
func ToMIR(m *hir.Module, fn string, weights WeightSource) (*mir.Graph, error) {
	f := m.Func(fn)
	if f == nil {
		return nil, fmt.Errorf("%s: module %s has no function %s", m.File, hir.Quote(m.Name), hir.Quote(fn))
	}
	l := &lowerer{m: m, g: &mir.Graph{Name: f.Name}, params: map[*hir.ParamDecl]*mir.Value{}, args: map[*hir.Field]*mir.Value{}, stmts: map[*hir.Stmt][]*mir.Value{}, weights: weights}
	for _, a := range f.Params {
		v := l.g.NewValue(a.Name, a.Checked)
		l.g.Inputs = append(l.g.Inputs, v)
		l.args[a] = v
	}
	for _, s := range f.Body {
		if err := l.stmt(s); err != nil {
			return nil, err
		}
	}
	seen := map[*mir.Value]bool{}
	for _, d := range f.Return.Defs {
		v, err := l.value(d)
		if err != nil {
			return nil, err
		}
		// An output owns its buffer: one that is an input, a constant or
		// another output gets a copy.
		if v.Def == nil || seen[v] {
			n := l.g.Add(mir.OpCopy, []*mir.Value{v}, nil, srcFile(m)+": return", v.Type)
			v = n.Results[0]
		}
		seen[v] = true
		l.g.Outputs = append(l.g.Outputs, v)
	}
	for i, r := range f.Results {
		l.g.Outputs[i].Name = r.Name
	}
	return l.g, nil
}

type lowerer struct {
	m       *hir.Module
	g       *mir.Graph
	params  map[*hir.ParamDecl]*mir.Value
	args    map[*hir.Field]*mir.Value
	stmts   map[*hir.Stmt][]*mir.Value
	weights WeightSource
}

func (l *lowerer) value(d hir.Definition) (*mir.Value, error) {
	switch d.Kind {
	case hir.DefArg:
		return l.args[d.Arg], nil
	case hir.DefStmt:
		return l.stmts[d.Stmt][d.Index], nil
	case hir.DefParam:
		if v, ok := l.params[d.Param]; ok {
			return v, nil
		}
		data, err := l.weights.Weight(d.Param)
		if err != nil {
			return nil, err
		}
		if data.DType != d.Param.Checked.DType || !sameShape(data.Shape, d.Param.Checked.Shape) {
			return nil, fmt.Errorf("%s:%s: param %s is declared %s but its data is %s%s",
				l.m.File, d.Param.NamePos, hir.Quote(d.Param.Name), d.Param.Checked, data.DType, tensor.ShapeString(data.Shape))
		}
		v := l.g.NewConst(d.Param.Name, data)
		v.Param = d.Param.Name
		l.params[d.Param] = v
		return v, nil
	}
	return nil, fmt.Errorf("internal: operand with no definition")
}

func sameShape(a []int64, b []dim.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if v, ok := b[i].Const(); !ok || v != a[i] {
			return false
		}
	}
	return true
}

// emit adds a node and returns its single result.
func (l *lowerer) emit(op mir.Op, args []*mir.Value, attrs mir.Attrs, src string, t mir.Type) *mir.Value {
	return l.g.Add(op, args, attrs, src, t).Results[0]
}

func scalarConst(dt tensor.DType, v float64) *tensor.Tensor {
	t := tensor.New(dt)
	setElem(t, 0, v)
	return t
}

// setElem stores v (converted) at flat index i.
func setElem(t *tensor.Tensor, i int, v float64) {
	switch t.DType {
	case tensor.F32:
		t.F32()[i] = float32(v)
	case tensor.F64:
		t.F64()[i] = v
	case tensor.I64:
		t.I64()[i] = int64(v)
	case tensor.I32:
		t.I32()[i] = int32(v)
	case tensor.I16:
		t.Data[2*i], t.Data[2*i+1] = byte(int16(v)), byte(uint16(int16(v))>>8)
	case tensor.I8, tensor.U8:
		t.Data[i] = byte(int64(v))
	case tensor.Bool:
		if v != 0 {
			t.Data[i] = 1
		} else {
			t.Data[i] = 0
		}
	case tensor.F16:
		h := tensor.F32ToF16(float32(v))
		t.Data[2*i], t.Data[2*i+1] = byte(h), byte(h>>8)
	case tensor.BF16:
		b := tensor.F32ToBF16(float32(v))
		t.Data[2*i], t.Data[2*i+1] = byte(b), byte(b>>8)
	}
}

func (l *lowerer) stmt(s *hir.Stmt) error {
	src := fmt.Sprintf("%s:%s %s", srcFile(l.m), s.OpPos, s.Op)
	args := make([]*mir.Value, 0, len(s.Defs))
	for _, d := range s.Defs {
		if d.Kind == hir.DefNone {
			continue
		}
		v, err := l.value(d)
		if err != nil {
			return err
		}
		args = append(args, v)
	}
	a := s.Attr
	t := s.Types[0]
	var res []*mir.Value
	one := func(v *mir.Value) { res = []*mir.Value{v} }
	switch op := s.Op; {
	case mir.IsElementwise(mir.Op(op)):
		one(l.emit(mir.Op(op), args, a, src, t))
	case op == "reduce_sum" || op == "reduce_mean" || op == "reduce_max" || op == "reduce_min" || op == "reduce_prod":
		one(l.emit(mir.OpReduce, args, mir.Attrs{"kind": op[len("reduce_"):], "axes": a.Ints("axes"), "keepdims": a.Bool("keepdims")}, src, t))
	case op == "argmax" || op == "argmin":
		one(l.emit(mir.OpArgReduce, args, mir.Attrs{"max": op == "argmax", "axis": a.Int("axis"), "keepdims": a.Bool("keepdims")}, src, t))
	case op == "topk":
		res = l.g.Add(mir.OpTopK, args, mir.Attrs{"k": a.Dim("k"), "axis": a.Int("axis"), "largest": a.Bool("largest")}, src, s.Types...).Results
	case op == "softmax" || op == "log_softmax":
		one(l.emit(mir.OpSoftmax, args, mir.Attrs{"axis": a.Int("axis"), "log": op == "log_softmax"}, src, t))
	case op == "layernorm" || op == "rmsnorm":
		one(l.emit(mir.OpLayerNorm, args, mir.Attrs{"axis": a.Int("axis"), "eps": a.Float("eps"), "rms": op == "rmsnorm",
			"scale": len(args) > 1, "bias": len(args) > 2}, src, t))
	case op == "batchnorm":
		one(l.batchnorm(args, a.Float("eps"), src, t))
	case op == "matmul":
		one(l.matmul(args[0], args[1], src, t))
	case op == "linear":
		y := l.matmul(args[0], args[1], src, mir.Type(t))
		if len(args) == 3 {
			y = l.emit("add", []*mir.Value{y, args[2]}, nil, src, t)
		}
		one(y)
	case op == "attention":
		attrs := mir.Attrs{"causal": a.Bool("causal")}
		if a.Has("scale") {
			attrs["scale"] = a.Float("scale")
		}
		one(l.emit(mir.OpAttention, args, attrs, src, t))
	case op == "conv2d":
		one(l.emit(mir.OpConv2D, args, mir.Attrs{"stride": a.Ints("stride"), "pad": a.Ints("pad"), "dilation": a.Ints("dilation"), "groups": a.Int("groups"), "bias": len(args) == 3}, src, t))
	case op == "maxpool2d" || op == "avgpool2d":
		attrs := mir.Attrs{"kernel": a.Ints("kernel"), "stride": a.Ints("stride"), "pad": a.Ints("pad"), "dilation": a.Ints("dilation"), "ceil_mode": a.Bool("ceil_mode")}
		o := mir.OpMaxPool2D
		if op == "avgpool2d" {
			o = mir.OpAvgPool2D
			attrs["count_include_pad"] = a.Bool("count_include_pad")
		}
		one(l.emit(o, args, attrs, src, t))
	case op == "global_avgpool":
		axes := []int64{}
		for i := 2; i < args[0].Type.Rank(); i++ {
			axes = append(axes, int64(i))
		}
		one(l.emit(mir.OpReduce, args, mir.Attrs{"kind": "mean", "axes": axes, "keepdims": true}, src, t))
	case op == "reshape" || op == "squeeze" || op == "unsqueeze" || op == "flatten":
		one(l.emit(mir.OpReshape, args, nil, src, t))
	case op == "transpose":
		one(l.emit(mir.OpTranspose, args, mir.Attrs{"perm": a.Ints("perm")}, src, t))
	case op == "concat":
		one(l.emit(mir.OpConcat, args, mir.Attrs{"axis": a.Int("axis")}, src, t))
	case op == "split":
		ax := a.Int("axis")
		start := dim.Const(0)
		for i, sz := range a.Dims("sizes") {
			end, err := dim.Add(start, sz)
			if err != nil {
				return fmt.Errorf("%s: %v", src, err)
			}
			res = append(res, l.emit(mir.OpSlice, args, mir.Attrs{"starts": []dim.Expr{start}, "ends": []dim.Expr{end}, "axes": []int64{ax}, "steps": []int64{1}}, src, s.Types[i]))
			start = end
		}
	case op == "slice":
		one(l.emit(mir.OpSlice, args, mir.Attrs{"starts": a.Dims("starts"), "ends": a.Dims("ends"), "axes": a.Ints("axes"), "steps": a.Ints("steps")}, src, t))
	case op == "scatter":
		one(l.emit(mir.OpScatter, args, nil, src, t))
	case op == "gather":
		one(l.emit(mir.OpGather, args, mir.Attrs{"axis": a.Int("axis")}, src, t))
	case op == "expand":
		one(l.emit(mir.OpExpand, args, nil, src, t))
	case op == "pad":
		one(l.emit(mir.OpPad, args, mir.Attrs{"pads": a.Dims("pads"), "value": a.Float("value")}, src, t))
	case op == "const":
		data, err := literalTensor(s.Args[0], t)
		if err != nil {
			return fmt.Errorf("%s: %v", src, err)
		}
		v := l.g.NewConst(s.Results[0].Name, data)
		one(v)
	case op == "iota":
		one(l.emit(mir.OpIota, nil, mir.Attrs{"n": a.Dim("n")}, src, t))
	case op == "lstm" || op == "gru" || op == "rnn":
		res = l.recurrent(s, args, src)
	default:
		return fmt.Errorf("%s: internal: no lowering for %s", src, op)
	}
	for i, v := range res {
		if v.Name == "" {
			v.Name = s.Results[i].Name
		}
	}
	l.stmts[s] = res
	return nil
}

// matmul lowers NumPy matmul: a 1-D operand is reshaped to a matrix and the
// added dim is removed from the result.
func (l *lowerer) matmul(a, b *mir.Value, src string, t mir.Type) *mir.Value {
	one := dim.Const(1)
	if a.Type.Rank() == 1 {
		a = l.emit(mir.OpReshape, []*mir.Value{a}, nil, src, mir.Type{DType: a.Type.DType, Shape: []dim.Expr{one, a.Type.Shape[0]}})
	}
	bVec := b.Type.Rank() == 1
	if bVec {
		b = l.emit(mir.OpReshape, []*mir.Value{b}, nil, src, mir.Type{DType: b.Type.DType, Shape: []dim.Expr{b.Type.Shape[0], one}})
	}
	// The matrix result: broadcast batch dims, then [M, N].
	as, bs := a.Type.Shape, b.Type.Shape
	batch := broadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	full := append(append([]dim.Expr(nil), batch...), as[len(as)-2], bs[len(bs)-1])
	y := l.emit(mir.OpMatMul, []*mir.Value{a, b}, nil, src, mir.Type{DType: t.DType, Shape: full})
	if !sameDims(full, t.Shape) {
		y = l.emit(mir.OpReshape, []*mir.Value{y}, nil, src, t)
	}
	return y
}

func sameDims(a, b []dim.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !dim.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// broadcastShapes broadcasts checked shapes (Check has verified them).
func broadcastShapes(a, b []dim.Expr) []dim.Expr {
	n := max(len(a), len(b))
	out := make([]dim.Expr, n)
	for i := 0; i < n; i++ {
		var da, db dim.Expr
		da, db = dim.Const(1), dim.Const(1)
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		if v, ok := da.Const(); ok && v == 1 {
			out[i] = db
		} else {
			out[i] = da
		}
	}
	return out
}

// batchnorm lowers inference batchnorm to y = x*a + b with
// a = scale/sqrt(var+eps) and b = bias - mean*a, per channel (axis 1).
// With params for the statistics, constant folding computes a and b at
// build time.
func (l *lowerer) batchnorm(args []*mir.Value, eps float64, src string, t mir.Type) *mir.Value {
	x, scale, bias, mean, vr := args[0], args[1], args[2], args[3], args[4]
	vt := scale.Type
	e := l.g.NewConst("eps", scalarConst(t.DType, eps))
	ve := l.emit("add", []*mir.Value{vr, e}, nil, src, vt)
	inv := l.emit("rsqrt", []*mir.Value{ve}, nil, src, vt)
	a := l.emit("mul", []*mir.Value{scale, inv}, nil, src, vt)
	ma := l.emit("mul", []*mir.Value{mean, a}, nil, src, vt)
	b := l.emit("sub", []*mir.Value{bias, ma}, nil, src, vt)
	// [C] -> [C, 1, ..., 1] so it broadcasts against [N, C, ...].
	shape := []dim.Expr{vt.Shape[0]}
	for i := 2; i < t.Rank(); i++ {
		shape = append(shape, dim.Const(1))
	}
	ct := mir.Type{DType: t.DType, Shape: shape}
	a = l.emit(mir.OpReshape, []*mir.Value{a}, nil, src, ct)
	b = l.emit(mir.OpReshape, []*mir.Value{b}, nil, src, ct)
	xa := l.emit("mul", []*mir.Value{x, a}, nil, src, t)
	return l.emit("add", []*mir.Value{xa, b}, nil, src, t)
}

// recurrent lowers lstm, gru and rnn to one recurrent node (mir.OpRecurrent)
// with the weights of each direction apart and transposed: w_d = W[d]ᵀ
// [in, G*H], r_d = R[d]ᵀ [H, G*H], b_d = B[d] [2*G*H] (zeros without B).
// Over params these are constant subgraphs, which constant folding
// computes once at build time.
func (l *lowerer) recurrent(s *hir.Stmt, args []*mir.Value, src string) []*mir.Value {
	a := s.Attr
	h := a.Int("hidden")
	gates := map[string]int64{"lstm": 4, "gru": 3, "rnn": 1}[s.Op]
	dirs := int64(hir.RNNDirections(a.String("direction")))
	x := args[0]
	dt := x.Type.DType
	in := x.Type.Shape[2]
	gh := dim.Const(gates * h)
	// per takes direction d of a [dirs, ...] operand as the given shape.
	per := func(v *mir.Value, d int64, shape []dim.Expr) *mir.Value {
		if dirs > 1 {
			sl := append([]dim.Expr{dim.Const(1)}, v.Type.Shape[1:]...)
			v = l.emit(mir.OpSlice, []*mir.Value{v}, mir.Attrs{"starts": []dim.Expr{dim.Const(d)}, "ends": []dim.Expr{dim.Const(d + 1)}, "axes": []int64{0}, "steps": []int64{1}},
				src, mir.Type{DType: dt, Shape: sl})
		}
		return l.emit(mir.OpReshape, []*mir.Value{v}, nil, src, mir.Type{DType: dt, Shape: shape})
	}
	transposed := func(v *mir.Value, d int64, rows dim.Expr) *mir.Value {
		m := per(v, d, []dim.Expr{gh, rows})
		return l.emit(mir.OpTranspose, []*mir.Value{m}, mir.Attrs{"perm": []int64{1, 0}}, src, mir.Type{DType: dt, Shape: []dim.Expr{rows, gh}})
	}
	var zeros *mir.Value
	ops := []*mir.Value{x}
	for d := int64(0); d < dirs; d++ {
		ops = append(ops, transposed(args[1], d, in), transposed(args[2], d, dim.Const(h)))
		if len(args) > 3 {
			ops = append(ops, per(args[3], d, []dim.Expr{dim.Const(2 * gates * h)}))
			continue
		}
		if zeros == nil {
			zeros = l.g.NewConst(s.Results[0].Name+".bias", tensor.New(dt, 2*gates*h))
		}
		ops = append(ops, zeros)
	}
	ops = append(ops, args[min(len(args), 4):]...)
	attrs := mir.Attrs{"cell": s.Op, "hidden": h, "direction": a.String("direction"), "initial_h": len(args) > 4}
	switch s.Op {
	case "gru":
		attrs["linear_before_reset"] = a.Bool("linear_before_reset")
	case "rnn":
		attrs["activation"] = a.String("activation")
	default:
		attrs["initial_c"] = len(args) > 5
	}
	n := l.g.Add(mir.OpRecurrent, ops, attrs, src, s.Types...)
	return n.Results
}
