// Package eval is rlx's reference interpreter for MIR: the oracle that
// kernels and compiler passes are tested against.
//
// It is written to be obviously correct rather than fast: every node is
// evaluated on its own by plain loops, with no code shared with the
// optimized CPU kernels. Float values are held and computed in float64 and
// each node's results are rounded once to their dtype (round to nearest,
// ties to even, for f32, f16 and bf16 alike); integer values are held as
// int64 and computed exactly, then wrapped to their dtype (two's
// complement). A fused epilogue (matmul, conv2d) is computed in float64 and
// rounded once at its end.
//
// Semantics are those of docs/hir.md (NumPy and ONNX). Where those leave
// room, this package decides:
//   - div on integers truncates toward zero (C, ONNX Div), it is not
//     NumPy's floor division; mod is floored on integers and floats (NumPy
//     mod: the result has the divisor's sign). Integer div or mod by zero,
//     and 0 to a negative integer power, are errors; other negative
//     integer powers truncate (2**-1 is 0, (-1)**-3 is -1).
//   - Integer add, sub, mul, neg, abs, pow and sums wrap in the dtype.
//   - cast: float to integer truncates toward zero and saturates at the
//     dtype's range (NaN gives 0); integer to integer wraps; to bool is
//     v != 0 (NaN is true); bool to a number is 0 or 1; float to float
//     and integer to float round to nearest even, overflowing to ±inf.
//   - NaN propagates through max, min, relu, clamp, reduce_max/min and
//     maxpool; argmax/argmin return the first NaN if there is one (NumPy),
//     else the first index of the extreme.
//   - reductions over no elements give the identity: sum 0, prod 1, max
//     -inf (integer: the dtype's minimum), min +inf (the maximum), mean
//     NaN; argmax over an empty axis is an error.
//   - scatter writes its updates in order, so of two at one index the
//     later wins; an index outside the axis is an error.
//   - topk orders equal values by lower index and ranks a NaN above every
//     number (PyTorch's topk): NaNs lead the largest, trail the smallest.
//   - softmax of a row that is all -inf, and attention for a query whose
//     every key is masked (or that has no keys), give NaN, as PyTorch.
//   - add_layernorm rounds s = a + b to the dtype (it is results[1]) and
//     normalizes that rounded s.
//   - clamp on integers with a fractional bound clamps to the nearest
//     integer inside the bound (min 1.5 clamps to 2).
package eval

import (
	"fmt"
	"runtime/debug"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// maxElements bounds the size of one value, so that a huge binding is an
// error rather than an allocation the machine cannot make.
const maxElements = 1 << 31

// Run evaluates g with every symbolic dim bound and returns the outputs in
// order. It checks each input's dtype and shape against the graph, and
// reports (never panics on) bad data such as a gather index out of range.
func Run(g *mir.Graph, binding map[string]int64, inputs []*tensor.Tensor) (outs []*tensor.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			outs, err = nil, fmt.Errorf("eval: internal error: %v\n%s", r, debug.Stack())
		}
	}()
	if g == nil {
		return nil, fmt.Errorf("eval: nil graph")
	}
	ev := &evaluator{binding: binding}
	if len(inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("eval: graph %s takes %d inputs, found %d", g.Name, len(g.Inputs), len(inputs))
	}
	args := make([]*array, len(inputs))
	for i, v := range g.Inputs {
		t := inputs[i]
		name := fmt.Sprintf("input %d (%s)", i, v.Name)
		if t == nil {
			return nil, fmt.Errorf("eval: %s is nil", name)
		}
		want, err := ev.shape(v)
		if err != nil {
			return nil, fmt.Errorf("eval: %s: %v", name, err)
		}
		if t.DType != v.Type.DType || !sameShape(t.Shape, want) {
			return nil, fmt.Errorf("eval: %s is %s%s, want %s%s", name, t.DType, tensor.ShapeString(t.Shape), v.Type.DType, tensor.ShapeString(want))
		}
		if args[i], err = fromTensor(t); err != nil {
			return nil, fmt.Errorf("eval: %s: %v", name, err)
		}
	}
	res, err := ev.graph(g, args)
	if err != nil {
		return nil, fmt.Errorf("eval: %v", err)
	}
	outs = make([]*tensor.Tensor, len(res))
	for i, a := range res {
		outs[i] = toTensor(a)
	}
	return outs, nil
}

type evaluator struct {
	binding map[string]int64
}

// shape evaluates a value's symbolic shape under the binding.
func (ev *evaluator) shape(v *mir.Value) ([]int64, error) {
	out := make([]int64, len(v.Type.Shape))
	total := int64(1)
	for k, d := range v.Type.Shape {
		n, err := d.Eval(ev.binding)
		if err != nil {
			return nil, fmt.Errorf("dim %d (%s) of %s: %v", k, d, v, err)
		}
		if n < 0 {
			return nil, fmt.Errorf("dim %d (%s) of %s is %d", k, d, v, n)
		}
		if n > 0 && total > maxElements/n {
			return nil, fmt.Errorf("%s has more than %d elements", v, int64(maxElements))
		}
		total *= n
		out[k] = n
	}
	return out, nil
}

// graph evaluates a graph (a function or a fused region) on its inputs.
func (ev *evaluator) graph(g *mir.Graph, inputs []*array) ([]*array, error) {
	if len(inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("graph %s takes %d inputs, found %d", g.Name, len(g.Inputs), len(inputs))
	}
	env := map[*mir.Value]*array{}
	for i, v := range g.Inputs {
		want, err := ev.shape(v)
		if err != nil {
			return nil, fmt.Errorf("graph %s: input %d: %v", g.Name, i, err)
		}
		if a := inputs[i]; a.dt != v.Type.DType || !sameShape(a.shape, want) {
			return nil, fmt.Errorf("graph %s: input %d (%s) is %s%s, want %s%s", g.Name, i, v, a.dt, tensor.ShapeString(a.shape), v.Type.DType, tensor.ShapeString(want))
		}
		env[v] = inputs[i]
	}
	for idx, n := range g.Nodes {
		where := n.Src
		if where == "" {
			where = fmt.Sprintf("%s: node %d", g.Name, idx)
		}
		args := make([]*array, len(n.Args))
		for i, v := range n.Args {
			a, err := ev.lookup(env, v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: operand %d: %v", where, n.Op, i, err)
			}
			args[i] = a
		}
		res, err := ev.node(n, args)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", where, n.Op, err)
		}
		for i, r := range n.Results {
			env[r] = res[i]
		}
	}
	outs := make([]*array, len(g.Outputs))
	for i, v := range g.Outputs {
		a, err := ev.lookup(env, v)
		if err != nil {
			return nil, fmt.Errorf("graph %s: output %d: %v", g.Name, i, err)
		}
		outs[i] = a
	}
	return outs, nil
}

// lookup finds a value: computed already, or a constant (decoded once).
func (ev *evaluator) lookup(env map[*mir.Value]*array, v *mir.Value) (*array, error) {
	if v == nil {
		return nil, fmt.Errorf("nil value")
	}
	if a, ok := env[v]; ok {
		return a, nil
	}
	if v.Const == nil {
		return nil, fmt.Errorf("%s is used before it is defined", v)
	}
	a, err := fromTensor(v.Const)
	if err != nil {
		return nil, fmt.Errorf("constant %s: %v", v, err)
	}
	want, err := ev.shape(v)
	if err != nil {
		return nil, err
	}
	if a.dt != v.Type.DType || !sameShape(a.shape, want) {
		return nil, fmt.Errorf("constant %s holds %s%s but is typed %s%s", v, a.dt, tensor.ShapeString(a.shape), v.Type.DType, tensor.ShapeString(want))
	}
	env[v] = a
	return a, nil
}

// node evaluates one node and checks that its results have the dtypes and
// shapes that the node declares.
func (ev *evaluator) node(n *mir.Node, args []*array) ([]*array, error) {
	if len(n.Results) == 0 {
		return nil, fmt.Errorf("node has no results")
	}
	shapes := make([][]int64, len(n.Results))
	for i, r := range n.Results {
		s, err := ev.shape(r)
		if err != nil {
			return nil, err
		}
		shapes[i] = s
	}
	out, dt := shapes[0], n.Results[0].Type.DType
	one := func(a *array, err error) ([]*array, error) {
		if err != nil {
			return nil, err
		}
		return []*array{a}, nil
	}
	arg := func(k int) (*array, error) {
		if len(args) != k {
			return nil, fmt.Errorf("takes %d operand(s), found %d", k, len(args))
		}
		return args[0], nil
	}
	var res []*array
	var err error
	switch {
	case mir.IsElementwise(n.Op):
		res, err = one(elementwise(n.Op, n.Attrs, args, dt, out))
	case n.Op == mir.OpFused:
		if n.Region == nil {
			return nil, fmt.Errorf("fused node without a region")
		}
		res, err = ev.graph(n.Region, args)
		if err == nil && len(res) != len(n.Results) {
			err = fmt.Errorf("region has %d outputs for %d results", len(res), len(n.Results))
		}
	case n.Op == mir.OpMatMul:
		res, err = one(matmul(n.Attrs, args, out))
	case n.Op == mir.OpConv2D:
		res, err = one(conv2d(n.Attrs, args, out))
	case n.Op == mir.OpAttention:
		res, err = one(attention(n.Attrs, args, out))
	case n.Op == mir.OpAddLayerNorm:
		res, err = ev.addLayerNorm(n, args, shapes)
	case n.Op == mir.OpLayerNorm:
		res, err = one(layerNormNode(n.Attrs, args))
	case n.Op == mir.OpRecurrent:
		res, err = recurrent(n, args)
	case n.Op == mir.OpIota:
		if len(args) != 0 {
			return nil, fmt.Errorf("takes no operands, found %d", len(args))
		}
		res, err = one(ev.iota(n.Attrs, dt))
	default:
		var x *array
		if n.Op == mir.OpGather {
			if len(args) != 2 {
				return nil, fmt.Errorf("takes x and indices, found %d operands", len(args))
			}
			res, err = one(gather(n.Attrs, args[0], args[1]))
			break
		}
		if n.Op == mir.OpScatter {
			if len(args) != 3 {
				return nil, fmt.Errorf("takes x, indices and updates, found %d operands", len(args))
			}
			res, err = one(scatter(args[0], args[1], args[2]))
			break
		}
		if n.Op == mir.OpConcat {
			res, err = one(concat(n.Attrs, args))
			break
		}
		if x, err = arg(1); err != nil {
			return nil, err
		}
		switch n.Op {
		case mir.OpMaxPool2D, mir.OpAvgPool2D:
			res, err = one(pool2d(n.Op, n.Attrs, x, out))
		case mir.OpReduce:
			res, err = one(reduce(n.Attrs, x))
		case mir.OpArgReduce:
			res, err = one(argreduce(n.Attrs, x))
		case mir.OpTopK:
			res, err = topk(n.Attrs, x, shapes[0])
		case mir.OpSoftmax:
			res, err = one(softmax(n.Attrs, x))
		case mir.OpReshape:
			res, err = one(reshape(x, out))
		case mir.OpTranspose:
			res, err = one(transpose(n.Attrs, x))
		case mir.OpExpand:
			res, err = one(expand(x, out))
		case mir.OpSlice:
			res, err = one(ev.slice(n.Attrs, x))
		case mir.OpPad:
			res, err = one(ev.pad(n.Attrs, x))
		case mir.OpCopy:
			res, err = one(reshape(x, x.shape))
		default:
			return nil, fmt.Errorf("unknown op %q", n.Op)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(res) != len(n.Results) {
		return nil, fmt.Errorf("gives %d results, the node has %d", len(res), len(n.Results))
	}
	for i, a := range res {
		if a.dt != n.Results[i].Type.DType || !sameShape(a.shape, shapes[i]) {
			return nil, fmt.Errorf("result %d is %s%s but the node declares %s%s", i, a.dt, tensor.ShapeString(a.shape), n.Results[i].Type.DType, tensor.ShapeString(shapes[i]))
		}
	}
	return res, nil
}

// normArgs splits layernorm operands after the first `lead` ones into scale
// and bias per the "scale" and "bias" flags.
func normArgs(attrs mir.Attrs, args []*array, lead int) (scale, bias *array, err error) {
	want := lead
	if attrs.Bool("scale") {
		want++
	}
	if attrs.Bool("bias") {
		want++
	}
	if len(args) != want {
		return nil, nil, fmt.Errorf("takes %d operands (scale %v, bias %v), found %d", want, attrs.Bool("scale"), attrs.Bool("bias"), len(args))
	}
	k := lead
	if attrs.Bool("scale") {
		scale = args[k]
		k++
	}
	if attrs.Bool("bias") {
		bias = args[k]
	}
	return scale, bias, nil
}

func layerNormNode(attrs mir.Attrs, args []*array) (*array, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("takes x, found no operands")
	}
	scale, bias, err := normArgs(attrs, args, 1)
	if err != nil {
		return nil, err
	}
	y, err := layernorm(attrs, args[0], scale, bias)
	if err != nil {
		return nil, err
	}
	return y.fit(), nil
}

// addLayerNorm is s = a + b (rounded to the dtype), layernorm(s), giving
// layernorm(s) and, when the node has a second result, s.
func (ev *evaluator) addLayerNorm(n *mir.Node, args []*array, shapes [][]int64) ([]*array, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("takes a, b, [scale], [bias], found %d operands", len(args))
	}
	if len(n.Results) > 2 {
		return nil, fmt.Errorf("has %d results, want 1 or 2", len(n.Results))
	}
	scale, bias, err := normArgs(n.Attrs, args, 2)
	if err != nil {
		return nil, err
	}
	s, err := elementwise("add", nil, args[:2], args[0].dt, shapes[0])
	if err != nil {
		return nil, err
	}
	y, err := layernorm(n.Attrs, s, scale, bias)
	if err != nil {
		return nil, err
	}
	res := []*array{y.fit()}
	if len(n.Results) == 2 {
		res = append(res, s)
	}
	return res, nil
}
