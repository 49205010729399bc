package hir

import (
	"fmt"
	"math"
	"sort"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/lir"
)

// opSpec describes one HIR operation: its operands, results, attributes and
// how to infer its result types.
type opSpec struct {
	name             string
	minArgs, maxArgs int      // maxArgs < 0: any number
	argNames         []string // roles of the operands, for messages
	results          int      // < 0: as many as the statement names (split)
	attrs            []attrSpec
	literalArgs      bool // operands are a literal and a type (const)
	// elementwise: element to element with broadcasting, lowered to the
	// MIR op of the same name; every such op is in lir.EwOps, or is clamp.
	elementwise bool
	infer       func(*opCtx) ([]Type, bool)
}

func (sp *opSpec) attr(name string) *attrSpec {
	for i := range sp.attrs {
		if sp.attrs[i].name == name {
			return &sp.attrs[i]
		}
	}
	return nil
}

// opTable is every operation of HIR v1, built once; it is never modified.
var opTable = buildOps()

func lookupOp(name string) (*opSpec, bool) {
	sp, ok := opTable[name]
	return sp, ok
}

// opNames lists the operations, sorted.
func opNames() []string {
	names := make([]string, 0, len(opTable))
	for n := range opTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// OpNames lists every operation of HIR v1, sorted.
func OpNames() []string { return opNames() }

func buildOps() map[string]*opSpec {
	t := map[string]*opSpec{}
	add := func(sp *opSpec) {
		if sp.results == 0 {
			sp.results = 1
		}
		t[sp.name] = sp
	}
	x1 := []string{"x"}
	ab := []string{"a", "b"}
	// The plain elementwise ops come from lir.EwOps, the one table of
	// them: a unary or binary op whose operands are of one class of dtypes
	// and whose result has their type (bool for a comparison).
	for op := lir.EwOp(1); op < lir.NumEwOps; op++ {
		info := op.Info()
		if info.Bytecode || hirEwSpecial[op] {
			continue
		}
		pred, want := operandClass(info.Operands)
		switch info.Arity {
		case 1:
			add(&opSpec{name: info.Name, minArgs: 1, maxArgs: 1, argNames: x1, elementwise: true, infer: unary(pred, want)})
		case 2:
			add(&opSpec{name: info.Name, minArgs: 2, maxArgs: 2, argNames: ab, elementwise: true, infer: binary(pred, want, info.BoolResult)})
		}
	}
	add(&opSpec{name: "leaky_relu", minArgs: 1, maxArgs: 1, argNames: x1, elementwise: true,
		attrs: []attrSpec{{name: "alpha", kind: aFloat, def: 0.01}}, infer: unary(DType.IsFloat, "a float type")})
	add(&opSpec{name: "clamp", minArgs: 1, maxArgs: 1, argNames: x1, elementwise: true,
		attrs: []attrSpec{{name: "min", kind: aFloat}, {name: "max", kind: aFloat}}, infer: inferClamp})
	add(&opSpec{name: "cast", minArgs: 1, maxArgs: 1, argNames: x1, elementwise: true,
		attrs: []attrSpec{{name: "to", kind: aDType, required: true}}, infer: inferCast})
	add(&opSpec{name: "where", minArgs: 3, maxArgs: 3, argNames: []string{"cond", "a", "b"}, elementwise: true, infer: inferWhere})

	reduceAttrs := []attrSpec{{name: "axes", kind: aInts}, {name: "keepdims", kind: aBool, def: false}}
	for _, n := range []string{"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"} {
		add(&opSpec{name: n, minArgs: 1, maxArgs: 1, argNames: x1, attrs: reduceAttrs, infer: inferReduce(DType.IsNumeric, "a numeric type")})
	}
	add(&opSpec{name: "reduce_mean", minArgs: 1, maxArgs: 1, argNames: x1, attrs: reduceAttrs, infer: inferReduce(DType.IsFloat, "a float type")})
	argAttrs := []attrSpec{{name: "axis", kind: aInt, def: int64(0)}, {name: "keepdims", kind: aBool, def: false}}
	for _, n := range []string{"argmax", "argmin"} {
		add(&opSpec{name: n, minArgs: 1, maxArgs: 1, argNames: x1, attrs: argAttrs, infer: inferArg})
	}
	add(&opSpec{name: "topk", minArgs: 1, maxArgs: 1, argNames: x1, results: 2,
		attrs: []attrSpec{{name: "k", kind: aDim, required: true}, {name: "axis", kind: aInt, def: int64(-1)}, {name: "largest", kind: aBool, def: true}},
		infer: inferTopK})

	for _, n := range []string{"softmax", "log_softmax"} {
		add(&opSpec{name: n, minArgs: 1, maxArgs: 1, argNames: x1, attrs: []attrSpec{{name: "axis", kind: aInt, def: int64(-1)}}, infer: inferSoftmax})
	}
	add(&opSpec{name: "layernorm", minArgs: 1, maxArgs: 3, argNames: []string{"x", "scale", "bias"},
		attrs: []attrSpec{{name: "axis", kind: aInt, def: int64(-1)}, {name: "eps", kind: aFloat, def: 1e-5}}, infer: inferNorm})
	add(&opSpec{name: "rmsnorm", minArgs: 1, maxArgs: 2, argNames: []string{"x", "scale"},
		attrs: []attrSpec{{name: "axis", kind: aInt, def: int64(-1)}, {name: "eps", kind: aFloat, def: 1e-6}}, infer: inferNorm})
	add(&opSpec{name: "batchnorm", minArgs: 5, maxArgs: 5, argNames: []string{"x", "scale", "bias", "mean", "var"},
		attrs: []attrSpec{{name: "eps", kind: aFloat, def: 1e-5}}, infer: inferBatchnorm})

	add(&opSpec{name: "matmul", minArgs: 2, maxArgs: 2, argNames: ab, infer: inferMatmul})
	add(&opSpec{name: "linear", minArgs: 2, maxArgs: 3, argNames: []string{"x", "w", "b"}, infer: inferLinear})
	add(&opSpec{name: "attention", minArgs: 3, maxArgs: 4, argNames: []string{"q", "k", "v", "mask"},
		attrs: []attrSpec{{name: "causal", kind: aBool, def: false}, {name: "scale", kind: aFloat}}, infer: inferAttention})

	rnnAttrs := []attrSpec{{name: "hidden", kind: aInt, required: true}, {name: "direction", kind: aString, def: "forward"}}
	add(&opSpec{name: "lstm", minArgs: 3, maxArgs: 6, argNames: []string{"x", "w", "r", "bias", "h0", "c0"}, results: 3,
		attrs: rnnAttrs, infer: inferRecurrent(4)})
	add(&opSpec{name: "gru", minArgs: 3, maxArgs: 5, argNames: []string{"x", "w", "r", "bias", "h0"}, results: 2,
		attrs: append(append([]attrSpec(nil), rnnAttrs...), attrSpec{name: "linear_before_reset", kind: aBool, def: false}), infer: inferRecurrent(3)})
	add(&opSpec{name: "rnn", minArgs: 3, maxArgs: 5, argNames: []string{"x", "w", "r", "bias", "h0"}, results: 2,
		attrs: append(append([]attrSpec(nil), rnnAttrs...), attrSpec{name: "activation", kind: aString, def: "tanh"}), infer: inferRecurrent(1)})

	add(&opSpec{name: "conv2d", minArgs: 2, maxArgs: 3, argNames: []string{"x", "w", "b"},
		attrs: []attrSpec{
			{name: "stride", kind: aInts, def: []int64{1, 1}},
			{name: "pad", kind: aInts, def: []int64{0, 0, 0, 0}},
			{name: "dilation", kind: aInts, def: []int64{1, 1}},
			{name: "groups", kind: aInt, def: int64(1)},
		}, infer: inferConv})
	poolAttrs := []attrSpec{
		{name: "kernel", kind: aInts, required: true},
		{name: "stride", kind: aInts, def: []int64{1, 1}},
		{name: "pad", kind: aInts, def: []int64{0, 0, 0, 0}},
		{name: "dilation", kind: aInts, def: []int64{1, 1}},
		{name: "ceil_mode", kind: aBool, def: false},
	}
	add(&opSpec{name: "maxpool2d", minArgs: 1, maxArgs: 1, argNames: x1, attrs: poolAttrs, infer: inferPool})
	add(&opSpec{name: "avgpool2d", minArgs: 1, maxArgs: 1, argNames: x1,
		attrs: append(append([]attrSpec(nil), poolAttrs...), attrSpec{name: "count_include_pad", kind: aBool, def: false}), infer: inferPool})
	add(&opSpec{name: "global_avgpool", minArgs: 1, maxArgs: 1, argNames: x1, infer: inferGlobalPool})

	add(&opSpec{name: "reshape", minArgs: 1, maxArgs: 1, argNames: x1, attrs: []attrSpec{{name: "shape", kind: aDims, required: true}}, infer: inferReshape})
	add(&opSpec{name: "transpose", minArgs: 1, maxArgs: 1, argNames: x1, attrs: []attrSpec{{name: "perm", kind: aInts}}, infer: inferTranspose})
	add(&opSpec{name: "concat", minArgs: 1, maxArgs: -1, attrs: []attrSpec{{name: "axis", kind: aInt, required: true}}, infer: inferConcat})
	add(&opSpec{name: "split", minArgs: 1, maxArgs: 1, argNames: x1, results: -1,
		attrs: []attrSpec{{name: "axis", kind: aInt, def: int64(0)}, {name: "sizes", kind: aDims}}, infer: inferSplit})
	add(&opSpec{name: "slice", minArgs: 1, maxArgs: 1, argNames: x1,
		attrs: []attrSpec{
			{name: "starts", kind: aDims, required: true},
			{name: "ends", kind: aDims, required: true},
			{name: "axes", kind: aInts},
			{name: "steps", kind: aInts},
		}, infer: inferSlice})
	add(&opSpec{name: "scatter", minArgs: 3, maxArgs: 3, argNames: []string{"x", "idx", "updates"}, infer: inferScatter})
	add(&opSpec{name: "gather", minArgs: 2, maxArgs: 2, argNames: []string{"x", "idx"},
		attrs: []attrSpec{{name: "axis", kind: aInt, def: int64(0)}}, infer: inferGather})
	add(&opSpec{name: "expand", minArgs: 1, maxArgs: 1, argNames: x1, attrs: []attrSpec{{name: "shape", kind: aDims, required: true}}, infer: inferExpand})
	add(&opSpec{name: "squeeze", minArgs: 1, maxArgs: 1, argNames: x1, attrs: []attrSpec{{name: "axes", kind: aInts, required: true}}, infer: inferSqueeze})
	add(&opSpec{name: "unsqueeze", minArgs: 1, maxArgs: 1, argNames: x1, attrs: []attrSpec{{name: "axes", kind: aInts, required: true}}, infer: inferUnsqueeze})
	add(&opSpec{name: "flatten", minArgs: 1, maxArgs: 1, argNames: x1, attrs: []attrSpec{{name: "axis", kind: aInt, def: int64(1)}}, infer: inferFlatten})
	add(&opSpec{name: "pad", minArgs: 1, maxArgs: 1, argNames: x1,
		attrs: []attrSpec{{name: "pads", kind: aDims, required: true}, {name: "value", kind: aFloat, def: 0.0}}, infer: inferPad})

	add(&opSpec{name: "const", minArgs: 2, maxArgs: 2, argNames: []string{"value", "type"}, literalArgs: true, infer: inferConst})
	add(&opSpec{name: "iota", minArgs: 0, maxArgs: 0,
		attrs: []attrSpec{{name: "n", kind: aDim, required: true}, {name: "dtype", kind: aDType, def: I64}}, infer: inferIota})
	return t
}

// --- elementwise ---

// hirEwSpecial are the elementwise ops of lir.EwOps whose HIR specs are
// written by hand in buildOps: they have attributes (leaky_relu, cast) or
// an inference of their own (where). clamp, which has both, is no
// instruction at all (it compiles to max and min).
var hirEwSpecial = map[lir.EwOp]bool{lir.EwLeakyRelu: true, lir.EwCast: true, lir.EwWhere: true}

// operandClass is the dtype test of an operand class and the words a
// message uses for it.
func operandClass(c lir.EwOperands) (func(DType) bool, string) {
	switch c {
	case lir.EwFloat:
		return DType.IsFloat, "a float type"
	case lir.EwNumeric:
		return DType.IsNumeric, "a numeric type"
	case lir.EwInt:
		return DType.IsInt, "an integer type"
	case lir.EwBool:
		return isBool, "bool"
	}
	return func(DType) bool { return true }, ""
}

func unary(pred func(DType) bool, want string) func(*opCtx) ([]Type, bool) {
	return func(x *opCtx) ([]Type, bool) {
		if !x.dtypeIn(0, pred, want) {
			return nil, false
		}
		return one(x.args[0])
	}
}

func inferClamp(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsNumeric, "a numeric type") {
		return nil, false
	}
	if x.attrs.Has("min") && x.attrs.Has("max") && x.attrs.Float("min") > x.attrs.Float("max") {
		x.attrErrorf("min", "min %s is above max %s", formatFloat(x.attrs.Float("min")), formatFloat(x.attrs.Float("max")))
		return nil, false
	}
	return one(x.args[0])
}

func inferCast(x *opCtx) ([]Type, bool) {
	return one(Type{DType: x.attrs.DType("to"), Shape: x.args[0].Shape})
}

func binary(pred func(DType) bool, want string, boolResult bool) func(*opCtx) ([]Type, bool) {
	return func(x *opCtx) ([]Type, bool) {
		if !x.sameDType(0, 1) || !x.dtypeIn(0, pred, want) {
			return nil, false
		}
		shape, ok := x.broadcast(0, 1)
		if !ok {
			return nil, false
		}
		dt := x.args[0].DType
		if boolResult {
			dt = Bool
		}
		return one(Type{DType: dt, Shape: shape})
	}
}

func inferWhere(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, isBool, "bool") || !x.sameDType(1, 2) {
		return nil, false
	}
	shape, ok := x.broadcast(0, 1, 2)
	if !ok {
		return nil, false
	}
	return one(Type{DType: x.args[1].DType, Shape: shape})
}

// --- reductions ---

// reduceShape drops (or keeps as 1) the reduced axes.
func reduceShape(shape []dim.Expr, axes []int, keep bool) []dim.Expr {
	reduced := map[int]bool{}
	for _, a := range axes {
		reduced[a] = true
	}
	var out []dim.Expr
	for i, d := range shape {
		switch {
		case !reduced[i]:
			out = append(out, d)
		case keep:
			out = append(out, dim.Const(1))
		}
	}
	return out
}

func inferReduce(pred func(DType) bool, want string) func(*opCtx) ([]Type, bool) {
	return func(x *opCtx) ([]Type, bool) {
		if !x.dtypeIn(0, pred, want) {
			return nil, false
		}
		rank := x.args[0].Rank()
		var axes []int
		if x.attrs.Has("axes") {
			var ok bool
			if axes, ok = x.axes("axes", x.attrs.Ints("axes"), rank); !ok {
				return nil, false
			}
		} else {
			for i := 0; i < rank; i++ {
				axes = append(axes, i)
			}
		}
		x.attrs["axes"] = toInt64s(axes)
		return one(Type{DType: x.args[0].DType, Shape: reduceShape(x.args[0].Shape, axes, x.attrs.Bool("keepdims"))})
	}
}

func toInt64s(a []int) []int64 {
	out := make([]int64, len(a))
	for i, v := range a {
		out[i] = int64(v)
	}
	return out
}

func inferArg(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsNumeric, "a numeric type") {
		return nil, false
	}
	ax, ok := x.axis("axis", x.attrs.Int("axis"), x.args[0].Rank())
	if !ok {
		return nil, false
	}
	x.attrs["axis"] = int64(ax)
	return one(Type{DType: I64, Shape: reduceShape(x.args[0].Shape, []int{ax}, x.attrs.Bool("keepdims"))})
}

// inferTopK: values (x's dtype) and indices (i64), each x's shape with
// the axis cut to k; 1 <= k <= the axis, checked at binding where the
// dims leave it open.
func inferTopK(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsNumeric, "a numeric type") {
		return nil, false
	}
	ax, ok := x.axis("axis", x.attrs.Int("axis"), x.args[0].Rank())
	if !ok {
		return nil, false
	}
	x.attrs["axis"] = int64(ax)
	k, d := x.attrs.Dim("k"), x.args[0].Shape[ax]
	if !x.atLeast(k, dim.Const(1), fmt.Sprintf("k %s is at least 1", k)) {
		x.attrErrorf("k", "k must be at least 1, found %s", k)
		return nil, false
	}
	if !x.atLeast(d, k, fmt.Sprintf("k %s is within axis %d (%s)", k, ax, d)) {
		x.attrErrorf("k", "k %s is larger than axis %d of %s (%s)", k, ax, x.argName(0), d)
		return nil, false
	}
	shape := append([]dim.Expr(nil), x.args[0].Shape...)
	shape[ax] = k
	return []Type{{DType: x.args[0].DType, Shape: shape}, {DType: I64, Shape: shape}}, true
}

// --- normalization ---

func inferSoftmax(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsFloat, "a float type") {
		return nil, false
	}
	ax, ok := x.axis("axis", x.attrs.Int("axis"), x.args[0].Rank())
	if !ok {
		return nil, false
	}
	x.attrs["axis"] = int64(ax)
	return one(x.args[0])
}

// inferNorm covers layernorm and rmsnorm: statistics over axes axis..end;
// scale and bias have exactly the normalized shape.
func inferNorm(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsFloat, "a float type") {
		return nil, false
	}
	ax, ok := x.axis("axis", x.attrs.Int("axis"), x.args[0].Rank())
	if !ok {
		return nil, false
	}
	x.attrs["axis"] = int64(ax)
	if x.attrs.Float("eps") < 0 {
		x.attrErrorf("eps", "eps must be >= 0, found %s", formatFloat(x.attrs.Float("eps")))
		return nil, false
	}
	norm := x.args[0].Shape[ax:]
	for i := 1; i < len(x.args); i++ {
		if !x.sameDType(0, i) {
			return nil, false
		}
		if !x.shapeIs(i, norm, "the normalized shape of x") {
			return nil, false
		}
	}
	return one(x.args[0])
}

// shapeIs requires operand i to have exactly the given shape.
func (x *opCtx) shapeIs(i int, want []dim.Expr, what string) bool {
	got := x.args[i].Shape
	if len(got) == len(want) {
		ok := true
		for k := range got {
			if !x.same(got[k], want[k], fmt.Sprintf("%s matches %s (dim %d)", x.argName(i), what, k)) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	x.argErrorf(i, "%s has shape %s but %s is %s", x.argName(i), ShapeString(got), what, ShapeString(want))
	return false
}

func inferBatchnorm(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsFloat, "a float type") || !x.rankAtLeast(0, 2, "[N, C, ...]") {
		return nil, false
	}
	if x.attrs.Float("eps") < 0 {
		x.attrErrorf("eps", "eps must be >= 0, found %s", formatFloat(x.attrs.Float("eps")))
		return nil, false
	}
	c := x.args[0].Shape[1]
	for i := 1; i < 5; i++ {
		if !x.sameDType(0, i) || !x.shapeIs(i, []dim.Expr{c}, "[C] for the channels of x") {
			return nil, false
		}
	}
	return one(x.args[0])
}

// --- linear algebra ---

func inferMatmul(x *opCtx) ([]Type, bool) {
	if !x.sameDType(0, 1) || !x.dtypeIn(0, DType.IsNumeric, "a numeric type") {
		return nil, false
	}
	a, b := x.args[0], x.args[1]
	if a.Rank() == 0 || b.Rank() == 0 {
		i := 0
		if a.Rank() != 0 {
			i = 1
		}
		x.argErrorf(i, "%s is a scalar; matmul needs at least 1-D operands (use mul)", x.argName(i))
		return nil, false
	}
	// NumPy: a 1-D a is [1, K] and a 1-D b is [K, 1]; the added dims are dropped after.
	as, bs := a.Shape, b.Shape
	if len(as) == 1 {
		as = []dim.Expr{dim.Const(1), as[0]}
	}
	if len(bs) == 1 {
		bs = []dim.Expr{bs[0], dim.Const(1)}
	}
	ka, kb := as[len(as)-1], bs[len(bs)-2]
	if !x.same(ka, kb, "inner dims of a and b") {
		x.errorf("%s has %s columns but %s has %s rows (%s · %s)", x.argName(0), ka, x.argName(1), kb, ShapeString(a.Shape), ShapeString(b.Shape))
		return nil, false
	}
	batch, ok := x.broadcastShapes([][]dim.Expr{as[:len(as)-2], bs[:len(bs)-2]}, x.names)
	if !ok {
		return nil, false
	}
	out := append(batch, as[len(as)-2], bs[len(bs)-1])
	if a.Rank() == 1 {
		out = append(out[:len(out)-2], out[len(out)-1])
	}
	if b.Rank() == 1 {
		out = out[:len(out)-1]
	}
	return one(Type{DType: a.DType, Shape: out})
}

func inferLinear(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsFloat, "a float type") || !x.sameDType(0, 1) || !x.rankAtLeast(0, 1, "[..., in]") || !x.rankIs(1, 2, "[in, out]") {
		return nil, false
	}
	xs, w := x.args[0].Shape, x.args[1].Shape
	in := xs[len(xs)-1]
	if !x.same(in, w[0], "features of x match rows of w") {
		x.errorf("%s has %s features but %s expects %s", x.names[0], in, x.names[1], w[0])
		return nil, false
	}
	if len(x.args) == 3 {
		if !x.sameDType(0, 2) || !x.shapeIs(2, []dim.Expr{w[1]}, "[out] of w") {
			return nil, false
		}
	}
	out := append(append([]dim.Expr(nil), xs[:len(xs)-1]...), w[1])
	return one(Type{DType: x.args[0].DType, Shape: out})
}

func inferAttention(x *opCtx) ([]Type, bool) {
	for i := range x.args {
		if !x.rankAtLeast(i, 2, "[..., S, D]") {
			return nil, false
		}
	}
	if !x.dtypeIn(0, DType.IsFloat, "a float type") || !x.sameDType(0, 1) || !x.sameDType(0, 2) {
		return nil, false
	}
	q, k, v := x.args[0].Shape, x.args[1].Shape, x.args[2].Shape
	sq, d := q[len(q)-2], q[len(q)-1]
	sk, dk := k[len(k)-2], k[len(k)-1]
	skv, dv := v[len(v)-2], v[len(v)-1]
	if !x.same(d, dk, "head dims of q and k") {
		x.errorf("q and k must share the head dim: q %s has %s, k %s has %s", x.names[0], d, x.names[1], dk)
		return nil, false
	}
	if !x.same(sk, skv, "key lengths of k and v") {
		x.errorf("k and v must have the same length: k %s has %s keys, v %s has %s", x.names[1], sk, x.names[2], skv)
		return nil, false
	}
	batch, ok := x.broadcastShapes([][]dim.Expr{q[:len(q)-2], k[:len(k)-2], v[:len(v)-2]}, x.names[:3])
	if !ok {
		return nil, false
	}
	if len(x.args) == 4 {
		if !x.sameDType(0, 3) {
			return nil, false
		}
		scores := append(append([]dim.Expr(nil), batch...), sq, sk)
		m := x.args[3].Shape
		if len(m) > len(scores) {
			x.argErrorf(3, "mask %s %s has more dims than the scores %s", x.names[3], ShapeString(m), ShapeString(scores))
			return nil, false
		}
		off := len(scores) - len(m)
		for i, md := range m {
			if !isOne(md) && !x.same(md, scores[off+i], fmt.Sprintf("mask broadcasts to the scores (axis %d)", off+i)) {
				x.argErrorf(3, "mask %s %s does not broadcast to the scores %s (axis %d)", x.names[3], ShapeString(m), ShapeString(scores), off+i)
				return nil, false
			}
		}
	}
	if x.attrs.Has("scale") && x.attrs.Float("scale") == 0 {
		x.attrErrorf("scale", "scale must not be 0")
		return nil, false
	}
	out := append(append([]dim.Expr(nil), batch...), sq, dv)
	return one(Type{DType: x.args[0].DType, Shape: out})
}

// RNNActivation reports whether a is an activation of an rnn cell.
func RNNActivation(a string) bool { return a == "tanh" || a == "relu" || a == "sigmoid" }

// RNNDirections is the number of directions of an lstm, gru or rnn's
// direction attribute (2 for "bidirectional"), 0 for an unknown one.
func RNNDirections(direction string) int {
	switch direction {
	case "forward", "reverse":
		return 1
	case "bidirectional":
		return 2
	}
	return 0
}

// inferRecurrent covers lstm (4 gates, results y, y_h, y_c), gru (3
// gates, results y, y_h) and rnn (1 gate, results y, y_h), with ONNX's
// operands: x [seq, batch, in],
// w [dirs, gates*hidden, in], r [dirs, gates*hidden, hidden],
// b [dirs, 2*gates*hidden], h0 and c0 [dirs, batch, hidden].
func inferRecurrent(gates int64) func(*opCtx) ([]Type, bool) {
	return func(x *opCtx) ([]Type, bool) {
		if !x.dtypeIn(0, DType.IsFloat, "a float type") || !x.rankIs(0, 3, "[seq, batch, in]") {
			return nil, false
		}
		for i := 1; i < len(x.args); i++ {
			if !x.sameDType(0, i) {
				return nil, false
			}
		}
		h := x.attrs.Int("hidden")
		if h < 1 || h > 1<<20 {
			x.attrErrorf("hidden", "hidden must be from 1 to %d, found %d", 1<<20, h)
			return nil, false
		}
		if gates == 1 && !RNNActivation(x.attrs.String("activation")) {
			x.attrErrorf("activation", "activation must be \"tanh\", \"relu\" or \"sigmoid\", found %q", x.attrs.String("activation"))
			return nil, false
		}
		dirs := RNNDirections(x.attrs.String("direction"))
		if dirs == 0 {
			x.attrErrorf("direction", "direction must be \"forward\", \"reverse\" or \"bidirectional\", found %q", x.attrs.String("direction"))
			return nil, false
		}
		xs := x.args[0].Shape
		seq, batch, in := xs[0], xs[1], xs[2]
		d, gh, hd := dim.Const(int64(dirs)), dim.Const(gates*h), dim.Const(h)
		want := [][]dim.Expr{nil,
			{d, gh, in},
			{d, gh, hd},
			{d, dim.Const(2 * gates * h)},
			{d, batch, hd},
			{d, batch, hd},
		}
		what := []string{"", fmt.Sprintf("[dirs, %d*hidden, in]", gates), fmt.Sprintf("[dirs, %d*hidden, hidden]", gates),
			fmt.Sprintf("[dirs, %d*hidden]", 2*gates), "[dirs, batch, hidden]", "[dirs, batch, hidden]"}
		for i := 1; i < len(x.args); i++ {
			if !x.shapeIs(i, want[i], what[i]) {
				return nil, false
			}
		}
		dt := x.args[0].DType
		y := Type{DType: dt, Shape: []dim.Expr{seq, d, batch, hd}}
		last := Type{DType: dt, Shape: []dim.Expr{d, batch, hd}}
		if gates == 4 {
			return []Type{y, last, last}, true
		}
		return []Type{y, last}, true
	}
}

// --- convolution and pooling ---

// windowOut is the output length of a sliding window:
// floor((n + padBegin + padEnd - dilation*(k-1) - 1) / stride) + 1.
func (x *opCtx) windowOut(axis string, n, k dim.Expr, padB, padE, stride, dil int64, ceil bool) (dim.Expr, bool) {
	kd, ok := x.arith(dim.Mul, dim.Const(dil), k)
	if !ok {
		return kd, false
	}
	// span = dilation*(k-1)+1
	span, ok := x.arith(dim.Sub, kd, dim.Const(dil-1))
	if !ok {
		return span, false
	}
	padded, ok := x.arith(dim.Add, n, dim.Const(padB+padE))
	if !ok {
		return padded, false
	}
	if !x.atLeast(padded, span, fmt.Sprintf("the padded %s covers the window", axis)) {
		x.errorf("the window (%s after dilation) is larger than the padded %s (%s)", span, axis, padded)
		return span, false
	}
	room, ok := x.arith(dim.Sub, padded, span)
	if !ok {
		return room, false
	}
	if ceil {
		nv, nok := n.Const()
		rv, rok := room.Const()
		if nok && rok {
			out := (rv+stride-1)/stride + 1
			// The last window must start inside the input or the begin padding.
			if (out-1)*stride >= nv+padB {
				out--
			}
			return dim.Const(out), true
		}
		// Symbolic: ceil(room/stride)+1 is floor((room+stride-1)/stride)+1.
		// Its last window starts at most room+stride-1 = n+padB+padE-span+stride-1,
		// inside the input or the begin padding whenever stride <= span-padE,
		// so the rule that drops a window starting in the end padding never
		// applies there (3x3/2 and 2x2/2 pools among them). Otherwise whether it
		// applies depends on n's value.
		sv, sok := span.Const()
		if !sok || stride > sv-padE {
			x.errorf("ceil_mode with stride %d, a window of %s and end padding %d needs a static %s, found %s", stride, span, padE, axis, n)
			return room, false
		}
		up, ok := x.arith(dim.Add, room, dim.Const(stride-1))
		if !ok {
			return up, false
		}
		room = up
	}
	q, ok := x.arith(dim.FloorDiv, room, dim.Const(stride))
	if !ok {
		return q, false
	}
	return x.arith(dim.Add, q, dim.Const(1))
}

// checkWindowAttrs validates stride, pad and dilation lists.
func (x *opCtx) checkWindowAttrs() bool {
	want := map[string]int{"stride": 2, "pad": 4, "dilation": 2, "kernel": 2}
	for _, name := range []string{"kernel", "stride", "pad", "dilation"} {
		if !x.attrs.Has(name) {
			continue
		}
		v := x.attrs.Ints(name)
		if len(v) != want[name] {
			x.attrErrorf(name, "%s wants %d values, found %d", name, want[name], len(v))
			return false
		}
		for _, e := range v {
			if name == "pad" && e < 0 || name != "pad" && e < 1 {
				lim := "positive"
				if name == "pad" {
					lim = ">= 0"
				}
				x.attrErrorf(name, "%s values must be %s, found %d", name, lim, e)
				return false
			}
		}
	}
	return true
}

func inferConv(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsFloat, "a float type") || !x.sameDType(0, 1) ||
		!x.rankIs(0, 4, "[N, C, H, W]") || !x.rankIs(1, 4, "[O, C/groups, kh, kw]") || !x.checkWindowAttrs() {
		return nil, false
	}
	g := x.attrs.Int("groups")
	if g < 1 {
		x.attrErrorf("groups", "groups must be positive, found %d", g)
		return nil, false
	}
	xs, w := x.args[0].Shape, x.args[1].Shape
	cin, ok := x.arith(dim.Mul, w[1], dim.Const(g))
	if !ok {
		return nil, false
	}
	if !x.same(xs[1], cin, "channels of x match w") {
		x.errorf("%s has %s channels but %s expects %s (w[1]=%s x groups=%d)", x.names[0], xs[1], x.names[1], cin, w[1], g)
		return nil, false
	}
	if o, ok := w[0].Const(); ok && o%g != 0 {
		x.argErrorf(1, "%s has %d output channels, not divisible by groups=%d", x.names[1], o, g)
		return nil, false
	}
	if len(x.args) == 3 && (!x.sameDType(0, 2) || !x.shapeIs(2, []dim.Expr{w[0]}, "[O] of w")) {
		return nil, false
	}
	st, pad, dil := x.attrs.Ints("stride"), x.attrs.Ints("pad"), x.attrs.Ints("dilation")
	h, ok1 := x.windowOut("height", xs[2], w[2], pad[0], pad[2], st[0], dil[0], false)
	if !ok1 {
		return nil, false
	}
	wd, ok2 := x.windowOut("width", xs[3], w[3], pad[1], pad[3], st[1], dil[1], false)
	if !ok2 {
		return nil, false
	}
	return one(Type{DType: x.args[0].DType, Shape: []dim.Expr{xs[0], w[0], h, wd}})
}

func inferPool(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsFloat, "a float type") || !x.rankIs(0, 4, "[N, C, H, W]") || !x.checkWindowAttrs() {
		return nil, false
	}
	xs := x.args[0].Shape
	k, st, pad, dil := x.attrs.Ints("kernel"), x.attrs.Ints("stride"), x.attrs.Ints("pad"), x.attrs.Ints("dilation")
	for i, p := range pad {
		if p >= k[i%2] {
			x.attrErrorf("pad", "pad %d must be smaller than the kernel (%d)", p, k[i%2])
			return nil, false
		}
	}
	ceil := x.attrs.Bool("ceil_mode")
	h, ok := x.windowOut("height", xs[2], dim.Const(k[0]), pad[0], pad[2], st[0], dil[0], ceil)
	if !ok {
		return nil, false
	}
	w, ok := x.windowOut("width", xs[3], dim.Const(k[1]), pad[1], pad[3], st[1], dil[1], ceil)
	if !ok {
		return nil, false
	}
	return one(Type{DType: x.args[0].DType, Shape: []dim.Expr{xs[0], xs[1], h, w}})
}

func inferGlobalPool(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(0, DType.IsFloat, "a float type") || !x.rankAtLeast(0, 3, "[N, C, spatial...]") {
		return nil, false
	}
	out := append([]dim.Expr(nil), x.args[0].Shape[:2]...)
	for range x.args[0].Shape[2:] {
		out = append(out, dim.Const(1))
	}
	return one(Type{DType: x.args[0].DType, Shape: out})
}

// --- data movement ---

func inferReshape(x *opCtx) ([]Type, bool) {
	shape := append([]dim.Expr(nil), x.attrs.Dims("shape")...)
	infer := -1
	for i, d := range shape {
		v, isConst := d.Const()
		switch {
		case isConst && v == -1:
			if infer >= 0 {
				x.attrErrorf("shape", "shape has more than one -1 (axes %d and %d); at most one dim is inferred", infer, i)
				return nil, false
			}
			infer = i
		case isConst && v < 0:
			x.attrErrorf("shape", "shape dim %d is %d; dims are >= 0, or -1 for the one inferred dim", i, v)
			return nil, false
		}
	}
	total, ok := x.product(x.args[0].Shape)
	if !ok {
		return nil, false
	}
	if infer >= 0 {
		rest, ok := x.product(append(append([]dim.Expr(nil), shape[:infer]...), shape[infer+1:]...))
		if !ok {
			return nil, false
		}
		if v, ok := rest.Const(); ok && v == 0 {
			x.attrErrorf("shape", "cannot infer the -1 dim: the other dims multiply to 0")
			return nil, false
		}
		if shape[infer], ok = x.arith(dim.FloorDiv, total, rest); !ok {
			return nil, false
		}
	}
	newTotal, ok := x.product(shape)
	if !ok {
		return nil, false
	}
	if !x.same(total, newTotal, "element counts before and after reshape") {
		x.errorf("cannot reshape %s %s (%s elements) to %s (%s elements)", x.names[0], ShapeString(x.args[0].Shape), total, ShapeString(shape), newTotal)
		return nil, false
	}
	x.attrs["shape"] = shape
	return one(Type{DType: x.args[0].DType, Shape: shape})
}

func inferTranspose(x *opCtx) ([]Type, bool) {
	rank := x.args[0].Rank()
	var perm []int64
	if x.attrs.Has("perm") {
		perm = x.attrs.Ints("perm")
		if len(perm) != rank {
			x.attrErrorf("perm", "perm has %s but %s has rank %d", count(len(perm), "entry"), x.names[0], rank)
			return nil, false
		}
	} else {
		for i := rank - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	axes, ok := x.axes("perm", perm, rank)
	if !ok {
		return nil, false
	}
	_ = axes // axes() rejected repeats; with len == rank that makes perm a permutation
	out := make([]dim.Expr, rank)
	norm := make([]int64, rank)
	for i, p := range perm {
		ax, _ := x.axis("perm", p, rank)
		out[i], norm[i] = x.args[0].Shape[ax], int64(ax)
	}
	x.attrs["perm"] = norm
	return one(Type{DType: x.args[0].DType, Shape: out})
}

func inferConcat(x *opCtx) ([]Type, bool) {
	rank := x.args[0].Rank()
	ax, ok := x.axis("axis", x.attrs.Int("axis"), rank)
	if !ok {
		return nil, false
	}
	x.attrs["axis"] = int64(ax)
	out := append([]dim.Expr(nil), x.args[0].Shape...)
	for i := 1; i < len(x.args); i++ {
		if !x.sameDType(0, i) {
			return nil, false
		}
		if x.args[i].Rank() != rank {
			x.argErrorf(i, "%s has rank %d but %s has rank %d (concat needs one rank)", x.names[i], x.args[i].Rank(), x.names[0], rank)
			return nil, false
		}
		for k, d := range x.args[i].Shape {
			if k == ax {
				if out[k], ok = x.arith(dim.Add, out[k], d); !ok {
					return nil, false
				}
				continue
			}
			if !x.same(out[k], d, fmt.Sprintf("dim %d of %s and %s", k, x.names[0], x.names[i])) {
				x.argErrorf(i, "%s %s does not match %s %s in dim %d (%s vs %s); only axis %d may differ",
					x.names[i], ShapeString(x.args[i].Shape), x.names[0], ShapeString(x.args[0].Shape), k, d, out[k], ax)
				return nil, false
			}
		}
	}
	return one(Type{DType: x.args[0].DType, Shape: out})
}

func inferSplit(x *opCtx) ([]Type, bool) {
	ax, ok := x.axis("axis", x.attrs.Int("axis"), x.args[0].Rank())
	if !ok {
		return nil, false
	}
	x.attrs["axis"] = int64(ax)
	d := x.args[0].Shape[ax]
	var sizes []dim.Expr
	if x.attrs.Has("sizes") {
		sizes = x.attrs.Dims("sizes")
		if len(sizes) != x.nres {
			x.attrErrorf("sizes", "sizes has %s but the statement names %s", count(len(sizes), "entry"), count(x.nres, "result"))
			return nil, false
		}
		sum := dim.Const(0)
		for i, s := range sizes {
			if r := dim.Range(s, x.c.m.Bounds); r.Hi < 0 {
				x.attrErrorf("sizes", "size %d is negative (%s)", i, s)
				return nil, false
			}
			if sum, ok = x.arith(dim.Add, sum, s); !ok {
				return nil, false
			}
		}
		if !x.same(sum, d, fmt.Sprintf("sizes add up to axis %d of %s", ax, x.names[0])) {
			x.attrErrorf("sizes", "sizes add up to %s but axis %d of %s is %s", sum, ax, x.names[0], d)
			return nil, false
		}
	} else {
		n := dim.Const(int64(x.nres))
		part, ok := x.arith(dim.FloorDiv, d, n)
		if !ok {
			return nil, false
		}
		back, ok := x.arith(dim.Mul, part, n)
		if !ok {
			return nil, false
		}
		switch dim.EqualUnder(back, d, x.c.m.Bounds) {
		case dim.Never:
			x.errorf("axis %d of %s (%s) does not split evenly into %d results; give sizes=", ax, x.names[0], d, x.nres)
			return nil, false
		case dim.Unknown:
			x.c.constrain(x.s.OpPos, MustDivideEvenly, d, n, fmt.Sprintf("split: axis %d of %s splits evenly into %d", ax, x.names[0], x.nres))
		}
		for range x.nres {
			sizes = append(sizes, part)
		}
		x.attrs["sizes"] = sizes
	}
	out := make([]Type, len(sizes))
	for i, s := range sizes {
		sh := append([]dim.Expr(nil), x.args[0].Shape...)
		sh[ax] = s
		out[i] = Type{DType: x.args[0].DType, Shape: sh}
	}
	return out, true
}

func inferSlice(x *opCtx) ([]Type, bool) {
	rank := x.args[0].Rank()
	starts, ends := x.attrs.Dims("starts"), x.attrs.Dims("ends")
	n := len(starts)
	if len(ends) != n {
		x.attrErrorf("ends", "starts has %s but ends has %d", count(n, "entry"), len(ends))
		return nil, false
	}
	axesIn := x.attrs.Ints("axes")
	if !x.attrs.Has("axes") {
		for i := 0; i < n; i++ {
			axesIn = append(axesIn, int64(i))
		}
	}
	steps := x.attrs.Ints("steps")
	if !x.attrs.Has("steps") {
		for i := 0; i < n; i++ {
			steps = append(steps, 1)
		}
	}
	if len(axesIn) != n || len(steps) != n {
		x.attrErrorf("axes", "starts, ends, axes and steps must have one length, found %d, %d, %d and %d", n, len(ends), len(axesIn), len(steps))
		return nil, false
	}
	out := append([]dim.Expr(nil), x.args[0].Shape...)
	normAxes := make([]int64, n)
	seen := map[int]bool{}
	for i := 0; i < n; i++ {
		ax, ok := x.axis("axes", axesIn[i], rank)
		if !ok {
			return nil, false
		}
		if seen[ax] {
			x.attrErrorf("axes", "axes lists axis %d twice", ax)
			return nil, false
		}
		seen[ax] = true
		normAxes[i] = int64(ax)
		if steps[i] == 0 {
			x.attrErrorf("steps", "steps must not be 0")
			return nil, false
		}
		l, ok := x.sliceLen(ax, out[ax], starts[i], ends[i], steps[i])
		if !ok {
			return nil, false
		}
		out[ax] = l
	}
	x.attrs["axes"], x.attrs["steps"] = normAxes, steps
	return one(Type{DType: x.args[0].DType, Shape: out})
}

// sliceLen is the length of x[start:end:step] along a dim of size d, with
// NumPy's rules: negative indices count from the end, then indices clamp
// into range. A symbolic index whose clamp cannot be decided before binding
// is taken as written and the relation is left for specialization to check.
func (x *opCtx) sliceLen(ax int, d, start, end dim.Expr, step int64) (dim.Expr, bool) {
	var lo, hi dim.Expr // the clamp range of an index
	if step > 0 {
		lo, hi = dim.Const(0), d
	} else {
		var ok bool
		lo = dim.Const(-1)
		if hi, ok = x.arith(dim.Sub, d, dim.Const(1)); !ok {
			return hi, false
		}
	}
	norm := func(name string, v dim.Expr) (dim.Expr, bool) {
		// Negative counts from the end.
		switch dim.GreaterEqualUnder(v, dim.Const(0), x.c.m.Bounds) {
		case dim.Never:
			var ok bool
			if v, ok = x.arith(dim.Add, v, d); !ok {
				return v, false
			}
		case dim.Unknown:
			x.c.constrain(x.s.OpPos, MustBeAtLeast, v, dim.Const(0), fmt.Sprintf("slice: %s %s of axis %d is not negative", name, v, ax))
		}
		// Clamp into [lo, hi].
		switch dim.GreaterEqualUnder(v, lo, x.c.m.Bounds) {
		case dim.Never:
			v = lo
		case dim.Unknown:
			x.c.constrain(x.s.OpPos, MustBeAtLeast, v, lo, fmt.Sprintf("slice: %s %s of axis %d is within the dim", name, v, ax))
		}
		switch dim.GreaterEqualUnder(hi, v, x.c.m.Bounds) {
		case dim.Never:
			v = hi
		case dim.Unknown:
			x.c.constrain(x.s.OpPos, MustBeAtLeast, hi, v, fmt.Sprintf("slice: %s %s of axis %d does not pass the dim %s (bound the dim or write the end in terms of it)", name, v, ax, d))
		}
		return v, true
	}
	s, ok := norm("start", start)
	if !ok {
		return s, false
	}
	e, ok := norm("end", end)
	if !ok {
		return e, false
	}
	// length = max(0, ceil((e - s) / step)), written with floor division.
	a, b, st := e, s, step
	if step < 0 {
		a, b, st = s, e, -step
	}
	span, ok := x.arith(dim.Sub, a, b)
	if !ok {
		return span, false
	}
	switch dim.GreaterEqualUnder(span, dim.Const(0), x.c.m.Bounds) {
	case dim.Never:
		return dim.Const(0), true
	case dim.Unknown:
		x.c.constrain(x.s.OpPos, MustBeAtLeast, a, b, fmt.Sprintf("slice: axis %d is not empty", ax))
	}
	num, ok := x.arith(dim.Add, span, dim.Const(st-1))
	if !ok {
		return num, false
	}
	return x.arith(dim.FloorDiv, num, dim.Const(st))
}

func inferGather(x *opCtx) ([]Type, bool) {
	if !x.dtypeIn(1, func(d DType) bool { return d == I32 || d == I64 }, "i32 or i64") {
		return nil, false
	}
	xs := x.args[0].Shape
	ax, ok := x.axis("axis", x.attrs.Int("axis"), len(xs))
	if !ok {
		return nil, false
	}
	x.attrs["axis"] = int64(ax)
	out := append(append(append([]dim.Expr(nil), xs[:ax]...), x.args[1].Shape...), xs[ax+1:]...)
	return one(Type{DType: x.args[0].DType, Shape: out})
}

// inferScatter: x [N] with updates [M] written at indices [M] (i32 or
// i64); the result is x's type.
func inferScatter(x *opCtx) ([]Type, bool) {
	for i, what := range []string{"x", "idx", "updates"} {
		if !x.rankIs(i, 1, "["+map[string]string{"x": "N", "idx": "M", "updates": "M"}[what]+"]") {
			return nil, false
		}
	}
	if !x.dtypeIn(1, func(d DType) bool { return d == I32 || d == I64 }, "i32 or i64") || !x.sameDType(0, 2) {
		return nil, false
	}
	if !x.same(x.args[1].Shape[0], x.args[2].Shape[0], "as many updates as indices") {
		x.errorf("%s has %s indices but %s has %s updates", x.names[1], x.args[1].Shape[0], x.names[2], x.args[2].Shape[0])
		return nil, false
	}
	return one(x.args[0])
}

func inferExpand(x *opCtx) ([]Type, bool) {
	shape := x.attrs.Dims("shape")
	for i, d := range shape {
		if r := dim.Range(d, x.c.m.Bounds); r.Hi < 0 {
			x.attrErrorf("shape", "shape dim %d is negative (%s)", i, d)
			return nil, false
		}
	}
	out, ok := x.broadcastShapes([][]dim.Expr{x.args[0].Shape, shape}, []string{x.names[0], "shape"})
	if !ok {
		return nil, false
	}
	return one(Type{DType: x.args[0].DType, Shape: out})
}

func inferSqueeze(x *opCtx) ([]Type, bool) {
	axes, ok := x.axes("axes", x.attrs.Ints("axes"), x.args[0].Rank())
	if !ok {
		return nil, false
	}
	for _, ax := range axes {
		d := x.args[0].Shape[ax]
		if !x.same(d, dim.Const(1), fmt.Sprintf("squeezed axis %d of %s is 1", ax, x.names[0])) {
			x.attrErrorf("axes", "cannot squeeze axis %d of %s %s: its size is %s, not 1", ax, x.names[0], ShapeString(x.args[0].Shape), d)
			return nil, false
		}
	}
	x.attrs["axes"] = toInt64s(axes)
	return one(Type{DType: x.args[0].DType, Shape: reduceShape(x.args[0].Shape, axes, false)})
}

func inferUnsqueeze(x *opCtx) ([]Type, bool) {
	rank := x.args[0].Rank() + len(x.attrs.Ints("axes"))
	axes, ok := x.axes("axes", x.attrs.Ints("axes"), rank)
	if !ok {
		return nil, false
	}
	out := make([]dim.Expr, 0, rank)
	ins := map[int]bool{}
	for _, a := range axes {
		ins[a] = true
	}
	src := x.args[0].Shape
	for i := 0; i < rank; i++ {
		if ins[i] {
			out = append(out, dim.Const(1))
		} else {
			out = append(out, src[0])
			src = src[1:]
		}
	}
	x.attrs["axes"] = toInt64s(axes)
	return one(Type{DType: x.args[0].DType, Shape: out})
}

func inferFlatten(x *opCtx) ([]Type, bool) {
	rank := x.args[0].Rank()
	a := x.attrs.Int("axis")
	if a < -int64(rank) || a > int64(rank) {
		x.attrErrorf("axis", "axis %d is out of range for rank %d (want -%d to %d)", a, rank, rank, rank)
		return nil, false
	}
	if a < 0 {
		a += int64(rank)
	}
	x.attrs["axis"] = a
	outer, ok := x.product(x.args[0].Shape[:a])
	if !ok {
		return nil, false
	}
	inner, ok := x.product(x.args[0].Shape[a:])
	if !ok {
		return nil, false
	}
	return one(Type{DType: x.args[0].DType, Shape: []dim.Expr{outer, inner}})
}

func inferPad(x *opCtx) ([]Type, bool) {
	rank := x.args[0].Rank()
	pads := x.attrs.Dims("pads")
	if len(pads) != 2*rank {
		x.attrErrorf("pads", "pads wants 2 x rank = %d values (all begins, then all ends), found %d", 2*rank, len(pads))
		return nil, false
	}
	out := append([]dim.Expr(nil), x.args[0].Shape...)
	for i, p := range pads {
		if r := dim.Range(p, x.c.m.Bounds); r.Hi < 0 {
			x.attrErrorf("pads", "pads[%d] is negative (%s); pad only adds (use slice to crop)", i, p)
			return nil, false
		}
		var ok bool
		if out[i%rank], ok = x.arith(dim.Add, out[i%rank], p); !ok {
			return nil, false
		}
	}
	if v := x.attrs.Float("value"); !x.args[0].DType.IsFloat() && v != math.Trunc(v) {
		x.attrErrorf("value", "value %s is not an integer but %s is %s", formatFloat(v), x.names[0], x.args[0].DType)
		return nil, false
	}
	return one(Type{DType: x.args[0].DType, Shape: out})
}

// checkConstArgs checks const(VALUE, TYPE): a literal and a static type.
func (x *opCtx) checkConstArgs() bool {
	s := x.s
	if len(s.Args) != 2 {
		x.errorf("takes a value and a type, as in const(0.5, f32[]) or const([1, 2], i64[2]), found %s", count(len(s.Args), "operand"))
		return false
	}
	te, ok := s.Args[1].(*TypeExpr)
	if !ok {
		x.argErrorf(1, "the second operand must be a type such as f32[] or i64[3], found %s", describe(s.Args[1]))
		return false
	}
	t, ok := x.c.typeOf(te)
	if !ok {
		return false
	}
	for i, d := range t.Shape {
		if !d.IsConst() {
			x.c.errorf(PosOf(te.Dims[i]), "const: the type must have a static shape, found dim %s (use expand to a symbolic shape)", d)
			return false
		}
	}
	switch s.Args[0].(type) {
	case *IntLit, *FloatLit, *BoolLit, *ListLit:
	default:
		x.argErrorf(0, "the first operand must be a literal value, found %s", describe(s.Args[0]))
		return false
	}
	if !x.c.checkLiteral(s.Args[0], t, true, "const") {
		return false
	}
	x.args = []Type{t}
	return true
}

func inferConst(x *opCtx) ([]Type, bool) { return one(x.args[0]) }

func inferIota(x *opCtx) ([]Type, bool) {
	n := x.attrs.Dim("n")
	if r := dim.Range(n, x.c.m.Bounds); r.Hi < 0 {
		x.attrErrorf("n", "n is negative (%s)", n)
		return nil, false
	}
	if dt := x.attrs.DType("dtype"); !dt.IsNumeric() {
		x.attrErrorf("dtype", "dtype must be numeric, found %s", dt)
		return nil, false
	}
	return one(Type{DType: x.attrs.DType("dtype"), Shape: []dim.Expr{n}})
}
