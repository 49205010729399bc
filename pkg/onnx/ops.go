package onnx

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

type converter func(im *importer, n *onnxpb.Node) error

// converters maps each supported ONNX operator to its HIR lowering. It is
// built once and never modified; docs/onnx.md lists the same set.
var converters = map[string]converter{
	"Identity": func(im *importer, n *onnxpb.Node) error { im.alias(n.Outputs[0], n.Inputs[0]); return nil },
	"Dropout":  convDropout,
	"Constant": convConstant,

	"Add": binary("add"), "Sub": binary("sub"), "Mul": convMul, "Div": binary("div"),
	"Pow": binary("pow"), "Max": variadic("max"), "Min": variadic("min"), "Sum": variadic("add"),
	"Mod":   convMod,
	"Equal": binary("eq"), "Less": binary("lt"), "LessOrEqual": binary("le"),
	"Greater": binary("gt"), "GreaterOrEqual": binary("ge"),
	"And": binary("and"), "Or": binary("or"), "Xor": binary("xor"),
	"Where": convWhere,

	"Neg": unary("neg"), "Abs": unary("abs"), "Exp": unary("exp"), "Log": unary("log"),
	"Sqrt": unary("sqrt"), "Reciprocal": unary("recip"), "Tanh": unary("tanh"), "Sigmoid": unary("sigmoid"),
	"Relu": unary("relu"), "Erf": unary("erf"), "Sin": unary("sin"), "Cos": unary("cos"),
	"Floor": unary("floor"), "Ceil": unary("ceil"), "Round": unary("round"), "Sign": unary("sign"),
	"Softsign":  unary("softsign"),
	"Not":       unary("not"),
	"LeakyRelu": convLeakyRelu, "Clip": convClip, "Cast": convCast, "CastLike": convCastLike, "Gelu": convGelu,
	"HardSigmoid": convHardSigmoid, "HardSwish": unary("hardswish"), "Mish": unary("mish"),
	"Softplus": convSoftplus,

	"MatMul": convMatMul, "Gemm": convGemm,
	"Softmax": convSoftmax("softmax"), "LogSoftmax": convSoftmax("log_softmax"),
	"LayerNormalization": convLayerNorm, "RMSNormalization": convRMSNorm, "BatchNormalization": convBatchNorm,
	"ReduceMean": reduce("reduce_mean"), "ReduceSum": reduce("reduce_sum"), "ReduceMax": reduce("reduce_max"),
	"ReduceMin": reduce("reduce_min"), "ReduceProd": reduce("reduce_prod"),
	"ArgMax": argReduce("argmax"), "ArgMin": argReduce("argmin"),
	"TopK":           topK,
	"QuantizeLinear": convQuantizeLinear, "DequantizeLinear": convDequantizeLinear,
	"QLinearMatMul": convQLinearMatMul, "QLinearConv": convQLinearConv, "QGemm": convQGemm,
	"QLinearAdd": convQLinearBinary("add"), "QLinearMul": convQLinearBinary("mul"), "QLinearGlobalAveragePool": convQLinearGlobalAveragePool,
	"QLinearConcat": convQLinearConcat, "QLinearSigmoid": convQLinearUnary("sigmoid"), "QLinearLeakyRelu": convQLinearUnary("leaky_relu"),
	"QLinearAveragePool":    convQLinearAveragePool,
	"DynamicQuantizeLinear": convDynamicQuantizeLinear, "MatMulInteger": convMatMulInteger, "ConvInteger": convConvInteger,

	"Conv": convConvAny, "MaxPool": poolAny("maxpool2d"), "AveragePool": poolAny("avgpool2d"),
	"GlobalAveragePool": convGlobalAvgPool, "GlobalMaxPool": convGlobalMaxPool, "Flatten": convFlatten,

	"Reshape": convReshape, "Transpose": convTranspose, "Concat": convConcat, "Split": convSplit,
	"Slice": convSlice, "Gather": convGather, "GatherElements": convGatherElements, "ScatterElements": convScatterElements, "Squeeze": convSqueeze, "Unsqueeze": convUnsqueeze,
	"Expand": convExpand, "Pad": convPad, "Range": convRange, "ConstantOfShape": convConstantOfShape,
	"Tile": convTile,

	// Lowered to existing HIR ops (ops_lowered.go).
	"Trilu": convTrilu, "InstanceNormalization": convInstanceNorm, "ConvTranspose": convConvTranspose,
	"Resize": convResize, "Upsample": convUpsample, "Attention": convAttention, "ScatterND": convScatterND, "GatherND": convGatherND,

	// Composed of HIR ops (ops_composed.go).
	"PRelu": convPRelu, "Elu": convElu, "Selu": convSelu, "Celu": convCelu,
	"ThresholdedRelu": convThresholdedRelu, "Shrink": convShrink, "IsNaN": convIsNaN, "IsInf": convIsInf,
	"Mean": convMean, "ReduceL1": normReduce, "ReduceL2": normReduce, "ReduceSumSquare": normReduce,
	"ReduceLogSumExp": normReduce, "DepthToSpace": convDepthToSpace, "SpaceToDepth": convSpaceToDepth,
	"LpNormalization": convLpNormalization, "OneHot": convOneHot,
	"GroupNormalization": convGroupNorm, "LRN": convLRN, "Hardmax": convHardmax, "CumSum": convCumSum, "Einsum": convEinsum, "GridSample": convGridSample,

	// Recurrent layers (rnn.go).
	"LSTM": convRNN("lstm"), "GRU": convRNN("gru"), "RNN": convRNN("rnn"),
}

func (im *importer) importNode(n *onnxpb.Node) error {
	if handled, err := im.symbolic(n); handled || err != nil {
		return err
	}
	if handled, err := im.fold(n); handled || err != nil {
		return err
	}
	if n.OpType == "If" {
		return convIf(im, n) // not in converters: it imports nodes itself
	}
	c, ok := converters[n.OpType]
	if !ok {
		msg := fmt.Sprintf("operator %s is not supported", n.OpType)
		if others := im.unsupported(n.OpType); others != "" {
			msg += "; the model also uses " + others
		}
		return im.errf("%s; docs/onnx.md lists the supported operators", msg)
	}
	for _, a := range n.Attrs {
		if a.HasGraph && n.OpType != "If" {
			return im.errf("attribute %s holds a subgraph; control flow (Loop, Scan) is not supported", a.Name)
		}
	}
	return c(im, n)
}

// unsupported lists the model's other operators that do not import, with
// their node counts ("RoiAlign (2 nodes), TopK (1 node)"), so that one
// error tells what a model needs; "" when there are none. If branches
// are searched too.
func (im *importer) unsupported(except string) string {
	counts := map[string]int{}
	var walk func(g *onnxpb.Graph)
	walk = func(g *onnxpb.Graph) {
		for _, n := range g.Nodes {
			_, ok := converters[n.OpType]
			if !ok && n.OpType != except && n.OpType != "If" && n.OpType != "Shape" && n.OpType != "Size" {
				counts[n.OpType]++
			}
			for _, a := range n.Attrs {
				if a.G != nil {
					walk(a.G)
				}
			}
		}
	}
	walk(im.m.Graph)
	ops := make([]string, 0, len(counts))
	for op := range counts {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	for i, op := range ops {
		ops[i] = fmt.Sprintf("%s (%d node%s)", op, counts[op], map[bool]string{true: "s"}[counts[op] > 1])
	}
	return strings.Join(ops, ", ")
}

// convIf imports an If whose condition is known at import (a constant,
// or computed from static shapes, as TorchScript exports of shape checks
// are): the taken branch's initializers and nodes are imported in place
// and its outputs become the If's. HIR has no control flow, so a
// condition computed at run time is refused, naming it.
func convIf(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 1 {
		return fmt.Errorf("If takes one input (cond), found %d", len(n.Inputs))
	}
	c, ok := im.constOf(n.Inputs[0])
	if !ok || c.Len() != 1 {
		return fmt.Errorf("its condition %q is computed at run time: only an If whose condition is known at import (a constant, or computed from static shapes) is supported (HIR has no control flow)", n.Inputs[0])
	}
	branch := "else_branch"
	if c.Float64s()[0] != 0 {
		branch = "then_branch"
	}
	a := n.Attr(branch)
	if a == nil || a.G == nil {
		return fmt.Errorf("If has no %s graph", branch)
	}
	g := a.G
	if len(g.Outputs) != len(n.Outputs) {
		return fmt.Errorf("If's %s has %d outputs for the node's %d", branch, len(g.Outputs), len(n.Outputs))
	}
	for _, t := range g.Initializers {
		data, err := t.ToTensor()
		if err != nil {
			return fmt.Errorf("%s initializer %q: %v", branch, t.Name, err)
		}
		im.vals[t.Name] = &val{konst: data}
	}
	outer := im.node
	defer func() { im.node = outer }()
	for i, bn := range g.Nodes {
		im.node = bn
		if len(bn.Outputs) == 0 {
			return fmt.Errorf("%s node %d %q has no outputs", branch, i, bn.Name)
		}
		if err := im.importNode(bn); err != nil {
			return fmt.Errorf("%s node %d %q (%s): %v", branch, i, bn.Name, bn.OpType, err)
		}
	}
	for i, o := range g.Outputs {
		v := im.vals[o.Name]
		if v == nil {
			return fmt.Errorf("If's %s output %q is not produced by any node", branch, o.Name)
		}
		if n.Outputs[i] != "" {
			im.vals[n.Outputs[i]] = v
		}
	}
	return nil
}

func unary(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		x, err := im.rt(0)
		if err != nil {
			return err
		}
		return im.emit(n.Outputs[:1], op, []string{x})
	}
}

func binary(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		a, err := im.rt(0)
		if err != nil {
			return err
		}
		b, err := im.rt(1)
		if err != nil {
			return err
		}
		return im.emit(n.Outputs[:1], op, []string{a, b})
	}
}

func variadic(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		acc, err := im.rt(0)
		if err != nil {
			return err
		}
		if len(n.Inputs) == 1 {
			im.alias(n.Outputs[0], n.Inputs[0])
			return nil
		}
		for i := 1; i < len(n.Inputs)-1; i++ {
			b, err := im.rt(i)
			if err != nil {
				return err
			}
			acc = im.emitTmp(n.Outputs[0]+"_part", op, []string{acc, b})
		}
		b, err := im.rt(len(n.Inputs) - 1)
		if err != nil {
			return err
		}
		return im.emit(n.Outputs[:1], op, []string{acc, b})
	}
}

// convMod imports Mod. HIR's mod is floored (the sign of the divisor);
// fmod=1 asks for C's remainder (the sign of the dividend), which is the
// floored one less the divisor where the two signs differ and the
// remainder is not zero.
func convMod(im *importer, n *onnxpb.Node) error {
	if attrInt(n, "fmod", 0) == 0 {
		return binary("mod")(im, n)
	}
	if len(n.Inputs) != 2 {
		return fmt.Errorf("Mod takes 2 inputs, found %d", len(n.Inputs))
	}
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	a, b, err := im.rt2()
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	zero := im.scalar(out+"_zero", 0, t.DType)
	r := im.emitTmp(out+"_floored", "mod", []string{a, b})
	signs := im.emitTmp(out+"_signs", "xor", []string{im.emitTmp(out+"_rneg", "lt", []string{r, zero}), im.emitTmp(out+"_aneg", "lt", []string{a, zero})})
	fix := im.emitTmp(out+"_fix", "and", []string{im.emitTmp(out+"_nz", "ne", []string{r, zero}), signs})
	return im.emit(n.Outputs[:1], "where", []string{fix, im.emitTmp(out+"_less", "sub", []string{r, b}), r})
}

func convWhere(im *importer, n *onnxpb.Node) error {
	var args []string
	for i := 0; i < 3; i++ {
		a, err := im.rt(i)
		if err != nil {
			return err
		}
		args = append(args, a)
	}
	return im.emit(n.Outputs[:1], "where", args)
}

// convDropout imports Dropout as the identity it is at inference. A
// model exported in training mode (training_mode true, opset 12 on) is
// still the identity where its ratio is 0 (Swin's attention dropout);
// with a ratio above 0 it would drop at random, which no deployed model
// means: the error says to export in eval mode. The mask output is
// refused only where something reads it.
func convDropout(im *importer, n *onnxpb.Node) error {
	scalar := func(i int, what string) (float64, bool, error) {
		if i >= len(n.Inputs) || n.Inputs[i] == "" {
			return 0, false, nil
		}
		t, ok := im.constOf(n.Inputs[i])
		if !ok || t.Len() != 1 {
			return 0, false, fmt.Errorf("Dropout's %s must be a constant scalar", what)
		}
		return t.Float64s()[0], true, nil
	}
	training, _, err := scalar(2, "training_mode")
	if err != nil {
		return err
	}
	if training != 0 {
		ratio, given, err := scalar(1, "ratio")
		if err != nil {
			return err
		}
		if !given {
			ratio = 0.5
		}
		if ratio != 0 {
			return fmt.Errorf("Dropout in training mode with ratio %g drops at random; export the model in eval mode (model.eval())", ratio)
		}
	}
	if len(n.Outputs) > 1 && n.Outputs[1] != "" && im.isRead(n.Outputs[1]) {
		return fmt.Errorf("Dropout's mask output is not supported (inference only)")
	}
	im.alias(n.Outputs[0], n.Inputs[0])
	return nil
}

func convConstant(im *importer, n *onnxpb.Node) error {
	var t *tensor.Tensor
	switch {
	case n.Attr("value") != nil:
		if n.Attr("value").T == nil {
			return fmt.Errorf("Constant's value attribute holds no tensor")
		}
		var err error
		if t, err = n.Attr("value").T.ToTensor(); err != nil {
			return err
		}
	case n.Attr("value_float") != nil:
		t = tensor.FromF32(nil, []float32{n.Attr("value_float").F})
	case n.Attr("value_floats") != nil:
		f := n.Attr("value_floats").Floats
		t = tensor.FromF32([]int64{int64(len(f))}, f)
	case n.Attr("value_int") != nil:
		t = tensor.FromI64(nil, []int64{n.Attr("value_int").I})
	case n.Attr("value_ints") != nil:
		v := n.Attr("value_ints").Ints
		t = tensor.FromI64([]int64{int64(len(v))}, v)
	default:
		return fmt.Errorf("Constant without a supported value attribute (value, value_float(s), value_int(s))")
	}
	im.vals[n.Outputs[0]] = &val{konst: t}
	return nil
}

func convLeakyRelu(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "leaky_relu", []string{x}, "alpha="+floatLit(attrFloat(n, "alpha", 0.01), 32))
}

func convClip(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	var attrs []string
	bound := func(i int, attr, hirName string) error {
		if im.opset < 11 {
			if a := n.Attr(attr); a != nil {
				attrs = append(attrs, hirName+"="+floatLit(float64(a.F), 32))
			}
			return nil
		}
		if i >= len(n.Inputs) || n.Inputs[i] == "" {
			return nil
		}
		v := im.vals[n.Inputs[i]]
		if v == nil || v.konst == nil || v.konst.Len() != 1 {
			return fmt.Errorf("Clip's %s must be a constant scalar", attr)
		}
		attrs = append(attrs, hirName+"="+scalarLit(v.konst))
		return nil
	}
	if err := bound(1, "min", "min"); err != nil {
		return err
	}
	if err := bound(2, "max", "max"); err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "clamp", []string{x}, attrs...)
}

func scalarLit(t *tensor.Tensor) string {
	s := elemString(t, 0)
	switch s {
	case "true":
		return "1"
	case "false":
		return "0"
	}
	return s
}

func convCast(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	dt, err := dtypeOf(int32(attrInt(n, "to", 0)))
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "cast", []string{x}, "to="+dt.String())
}

// convCastLike imports CastLike (opset 15): a cast to the dtype of
// input 1, whose values are not read.
func convCastLike(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 2 {
		return fmt.Errorf("CastLike takes input and target_type, found %d inputs", len(n.Inputs))
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	t, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "cast", []string{x}, "to="+t.DType.String())
}

func convGelu(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	op := "gelu"
	if attrString(n, "approximate", "none") == "tanh" {
		op = "gelu_tanh"
	}
	return im.emit(n.Outputs[:1], op, []string{x})
}

// HardSigmoid is max(0, min(1, alpha*x + beta)). (HardSwish, x*HardSigmoid(x)
// with alpha 1/6 and beta 1/2, is the op hardswish.)
func (im *importer) hardSigmoid(x, hint string, alpha, beta float64) string {
	dt := im.dtype(x)
	a := im.emitTmp(hint+"_alpha", "const", nil, floatLit(alpha, 32), dt+"[]")
	b := im.emitTmp(hint+"_beta", "const", nil, floatLit(beta, 32), dt+"[]")
	ax := im.emitTmp(hint+"_ax", "mul", []string{x, a})
	axb := im.emitTmp(hint+"_axb", "add", []string{ax, b})
	return im.emitTmp(hint+"_hs", "clamp", []string{axb}, "min=0", "max=1")
}

func (im *importer) dtype(hirName string) string {
	if t, ok := im.typed[hirName]; ok {
		return t.DType.String()
	}
	for name, v := range im.vals {
		if v.name == hirName {
			if t, err := im.typeOf(name); err == nil {
				return t.DType.String()
			}
		}
	}
	return "f32"
}

func convHardSigmoid(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	hs := im.hardSigmoid(x, n.Outputs[0], attrFloat(n, "alpha", 0.2), attrFloat(n, "beta", 0.5))
	im.vals[n.Outputs[0]] = &val{name: hs}
	return nil
}

// convSoftplus is log(1 + exp(x)) in the form that neither overflows nor
// loses the small values: relu(x) + log(1 + exp(-|x|)).
func convSoftplus(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if !t.DType.IsFloat() {
		return fmt.Errorf("Softplus of %s: a float dtype is needed", t.DType)
	}
	out := n.Outputs[0]
	pos := im.emitTmp(out+"_pos", "relu", []string{x})
	a := im.emitTmp(out+"_abs", "abs", []string{x})
	a = im.emitTmp(out+"_nabs", "neg", []string{a})
	e := im.emitTmp(out+"_exp", "exp", []string{a})
	e = im.emitTmp(out+"_1p", "add", []string{e, im.scalar(out+"_one", 1, t.DType)})
	l := im.emitTmp(out+"_log", "log", []string{e})
	return im.emit(n.Outputs[:1], "add", []string{pos, l})
}

// convMul is Mul, or mish(x) for x * Tanh(Softplus(x)) (either order), as
// PyTorch exports nn.Mish before opset 18: the canonicalization pass
// (fusion.FuseMish) knows Softplus written out, not the stable form
// convSoftplus emits, whose statements dead-code elimination removes when
// nothing else uses them.
func convMul(im *importer, n *onnxpb.Node) error {
	for i := 0; i < 2 && len(n.Inputs) == 2; i++ {
		x, th := n.Inputs[i], n.Inputs[1-i]
		tn := im.producer(th)
		if tn == nil || tn.OpType != "Tanh" || len(tn.Inputs) != 1 {
			continue
		}
		if sn := im.producer(tn.Inputs[0]); sn != nil && sn.OpType == "Softplus" && len(sn.Inputs) == 1 && sn.Inputs[0] == x {
			xr, err := im.runtime(x)
			if err != nil {
				return err
			}
			return im.emit(n.Outputs[:1], "mish", []string{xr})
		}
	}
	return binary("mul")(im, n)
}

// producer returns the graph's node with output name, nil for a graph
// input, an initializer or an unknown name.
func (im *importer) producer(name string) *onnxpb.Node {
	if im.producers == nil {
		im.producers = map[string]*onnxpb.Node{}
		for _, n := range im.m.Graph.Nodes {
			for _, o := range n.Outputs {
				if o != "" {
					im.producers[o] = n
				}
			}
		}
	}
	return im.producers[name]
}

func convMatMul(im *importer, n *onnxpb.Node) error {
	return binary("matmul")(im, n)
}

// Gemm is alpha*A'·B' + beta*C with optional transposes; the common case
// (alpha = beta = 1, a bias vector) is a linear layer.
func convGemm(im *importer, n *onnxpb.Node) error {
	a, err := im.rt(0)
	if err != nil {
		return err
	}
	b, err := im.rt(1)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	if attrInt(n, "transA", 0) != 0 {
		a = im.emitTmp(out+"_aT", "transpose", []string{a}, "perm=[1, 0]")
	}
	if attrInt(n, "transB", 0) != 0 {
		// A transpose of a weight is folded at build time.
		b = im.emitTmp(out+"_wT", "transpose", []string{b}, "perm=[1, 0]")
	}
	alpha, beta := attrFloat(n, "alpha", 1), attrFloat(n, "beta", 1)
	hasC := len(n.Inputs) > 2 && n.Inputs[2] != ""
	if alpha == 1 && (beta == 1 || !hasC) {
		args := []string{a, b}
		if hasC {
			ct, err := im.typeOf(n.Inputs[2])
			if err != nil {
				return err
			}
			c, err := im.rt(2)
			if err != nil {
				return err
			}
			if ct.Rank() == 1 {
				return im.emit(n.Outputs[:1], "linear", append(args, c))
			}
			ab := im.emitTmp(out+"_ab", "matmul", args)
			return im.emit(n.Outputs[:1], "add", []string{ab, c})
		}
		return im.emit(n.Outputs[:1], "matmul", args)
	}
	dt := im.dtype(a)
	ab := im.emitTmp(out+"_ab", "matmul", []string{a, b})
	if alpha != 1 {
		k := im.emitTmp(out+"_alpha", "const", nil, floatLit(alpha, 32), dt+"[]")
		ab = im.emitTmp(out+"_scaled", "mul", []string{ab, k})
	}
	if !hasC || beta == 0 {
		im.vals[out] = &val{name: ab}
		return nil
	}
	c, err := im.rt(2)
	if err != nil {
		return err
	}
	if beta != 1 {
		k := im.emitTmp(out+"_beta", "const", nil, floatLit(beta, 32), dt+"[]")
		c = im.emitTmp(out+"_cb", "mul", []string{c, k})
	}
	return im.emit(n.Outputs[:1], "add", []string{ab, c})
}

func convSoftmax(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		x, err := im.rt(0)
		if err != nil {
			return err
		}
		if im.opset < 13 {
			// Before opset 13, softmax flattened to 2-D at axis (default 1).
			t, err := im.typeOf(n.Inputs[0])
			if err != nil {
				return err
			}
			ax := attrInt(n, "axis", 1)
			if ax < 0 {
				ax += int64(t.Rank())
			}
			if ax != int64(t.Rank())-1 {
				return fmt.Errorf("%s before opset 13 with axis %d (not the last axis) is not supported", n.OpType, ax)
			}
			return im.emit(n.Outputs[:1], op, []string{x}, "axis=-1")
		}
		return im.emit(n.Outputs[:1], op, []string{x}, fmt.Sprintf("axis=%d", attrInt(n, "axis", -1)))
	}
}

func convLayerNorm(im *importer, n *onnxpb.Node) error {
	if len(n.Outputs) > 1 && (n.Outputs[1] != "" || len(n.Outputs) > 2 && n.Outputs[2] != "") {
		for _, o := range n.Outputs[1:] {
			if o != "" {
				im.warnings = append(im.warnings, fmt.Sprintf("node %q: LayerNormalization's mean and inverse-std outputs are not produced", n.Name))
				break
			}
		}
	}
	var args []string
	for i := 0; i < len(n.Inputs) && i < 3; i++ {
		if n.Inputs[i] == "" {
			if i == 1 {
				return fmt.Errorf("LayerNormalization without a scale is not supported")
			}
			continue
		}
		a, err := im.rt(i)
		if err != nil {
			return err
		}
		args = append(args, a)
	}
	return im.emit(n.Outputs[:1], "layernorm", args, fmt.Sprintf("axis=%d", attrInt(n, "axis", -1)), "eps="+floatLit(attrFloat(n, "epsilon", 1e-5), 32))
}

// convRMSNorm imports RMSNormalization (opset 23): x / sqrt(mean(x², over
// the axes from axis on) + epsilon) * scale, HIR's rmsnorm. A scale that
// only broadcasts to the normalized shape is expanded to it.
func convRMSNorm(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 2 {
		return fmt.Errorf("RMSNormalization takes X and scale, found %d inputs", len(n.Inputs))
	}
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	st, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	axis, err := axisIn(attrInt(n, "axis", -1), int64(t.Rank()), "RMSNormalization", "X")
	if err != nil {
		return err
	}
	x, scale, err := im.rt2()
	if err != nil {
		return err
	}
	norm := t.Shape[axis:]
	if len(st.Shape) != len(norm) || !slices.EqualFunc(st.Shape, norm, dim.Equal) {
		scale = im.emitTmp(n.Outputs[0]+"_scale", "expand", []string{scale}, "shape="+dimList(norm))
	}
	return im.emit(n.Outputs[:1], "rmsnorm", []string{x, scale}, fmt.Sprintf("axis=%d", axis), "eps="+floatLit(attrFloat(n, "epsilon", 1e-5), 32))
}

func convBatchNorm(im *importer, n *onnxpb.Node) error {
	if attrInt(n, "training_mode", 0) != 0 {
		return fmt.Errorf("BatchNormalization in training mode is not supported (export with model.eval())")
	}
	var args []string
	for i := 0; i < 5; i++ {
		a, err := im.rt(i)
		if err != nil {
			return err
		}
		args = append(args, a)
	}
	return im.emit(n.Outputs[:1], "batchnorm", args, "eps="+floatLit(attrFloat(n, "epsilon", 1e-5), 32))
}

func reduce(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		x, err := im.rt(0)
		if err != nil {
			return err
		}
		axes, hasAxes := attrInts(n, "axes")
		if !hasAxes && len(n.Inputs) > 1 {
			axes, hasAxes, err = im.constInts(1)
			if err != nil {
				return err
			}
		}
		attrs := []string{fmt.Sprintf("keepdims=%v", attrInt(n, "keepdims", 1) != 0)}
		if hasAxes && len(axes) > 0 {
			attrs = append(attrs, "axes="+intList(axes))
		} else if attrInt(n, "noop_with_empty_axes", 0) != 0 {
			im.alias(n.Outputs[0], n.Inputs[0])
			return nil
		}
		return im.emit(n.Outputs[:1], op, []string{x}, attrs...)
	}
}

func argReduce(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		if attrInt(n, "select_last_index", 0) != 0 {
			return fmt.Errorf("%s with select_last_index=1 is not supported (HIR returns the first index)", n.OpType)
		}
		x, err := im.rt(0)
		if err != nil {
			return err
		}
		return im.emit(n.Outputs[:1], op, []string{x}, fmt.Sprintf("axis=%d", attrInt(n, "axis", 0)), fmt.Sprintf("keepdims=%v", attrInt(n, "keepdims", 1) != 0))
	}
}

// topK imports TopK: k from the attribute (opset 1) or the K input, which
// must be known at import: a constant or a dim computed from the shapes.
// sorted=0 allows any order, so the sorted one serves it too.
func topK(im *importer, n *onnxpb.Node) error {
	if len(n.Outputs) != 2 {
		return fmt.Errorf("TopK has %d outputs, want 2 (Values, Indices)", len(n.Outputs))
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	var k dim.Expr
	if len(n.Inputs) > 1 {
		ks, _, err := im.symOf(n.Inputs[1])
		if err != nil {
			return fmt.Errorf("K: %v (rlx needs K known at import: a constant, or computed from the shapes)", err)
		}
		if len(ks) != 1 {
			return fmt.Errorf("K has %d elements, want 1", len(ks))
		}
		k = ks[0]
	} else {
		kv := attrInt(n, "k", -1)
		if kv < 1 {
			return fmt.Errorf("TopK needs k (the attribute, opset 1) or the K input")
		}
		k = dim.Const(kv)
	}
	return im.emit(n.Outputs[:2], "topk", []string{x}, fmt.Sprintf("k=%s", k), fmt.Sprintf("axis=%d", attrInt(n, "axis", -1)),
		fmt.Sprintf("largest=%v", attrInt(n, "largest", 1) != 0))
}

// windowAttrs reads kernel, strides, pads and dilations of a 2-D Conv or
// pool, resolving auto_pad for static spatial dims.
func (im *importer) windowAttrs(n *onnxpb.Node, kernel []int64) (stride, pad, dil []int64, err error) {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return nil, nil, nil, err
	}
	if t.Rank() != 4 {
		return nil, nil, nil, fmt.Errorf("%s on a rank-%d input: only 2-D (NCHW) is supported", n.OpType, t.Rank())
	}
	stride, ok := attrInts(n, "strides")
	if !ok {
		stride = []int64{1, 1}
	}
	dil, ok = attrInts(n, "dilations")
	if !ok {
		dil = []int64{1, 1}
	}
	pad, ok = attrInts(n, "pads")
	if !ok {
		pad = []int64{0, 0, 0, 0}
	}
	switch ap := attrString(n, "auto_pad", "NOTSET"); ap {
	case "NOTSET", "VALID":
		if ap == "VALID" {
			pad = []int64{0, 0, 0, 0}
		}
	case "SAME_UPPER", "SAME_LOWER":
		pad = make([]int64, 4)
		for i := 0; i < 2; i++ {
			in, ok := t.Shape[2+i].Const()
			if !ok {
				return nil, nil, nil, fmt.Errorf("auto_pad %s needs a static spatial size, found %s", ap, t.Shape[2+i])
			}
			out := (in + stride[i] - 1) / stride[i]
			total := max(0, (out-1)*stride[i]+(kernel[i]-1)*dil[i]+1-in)
			small, big := total/2, total-total/2
			if ap == "SAME_UPPER" {
				pad[i], pad[i+2] = small, big
			} else {
				pad[i], pad[i+2] = big, small
			}
		}
	default:
		return nil, nil, nil, fmt.Errorf("auto_pad %q is not supported", ap)
	}
	return stride, pad, dil, nil
}

func convConv(im *importer, n *onnxpb.Node) error {
	wt, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	if wt.Rank() != 4 {
		return fmt.Errorf("Conv with a rank-%d kernel: only 2-D convolution is supported", wt.Rank())
	}
	kernel, ok := attrInts(n, "kernel_shape")
	if !ok {
		kh, _ := wt.Shape[2].Const()
		kw, _ := wt.Shape[3].Const()
		kernel = []int64{kh, kw}
	}
	stride, pad, dil, err := im.windowAttrs(n, kernel)
	if err != nil {
		return err
	}
	var args []string
	for i := 0; i < len(n.Inputs) && i < 3; i++ {
		if n.Inputs[i] == "" {
			continue
		}
		a, err := im.rt(i)
		if err != nil {
			return err
		}
		args = append(args, a)
	}
	return im.emit(n.Outputs[:1], "conv2d", args, "stride="+intList(stride), "pad="+intList(pad), "dilation="+intList(dil), fmt.Sprintf("groups=%d", attrInt(n, "group", 1)))
}

func pool(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		if len(n.Outputs) > 1 && n.Outputs[1] != "" {
			return fmt.Errorf("MaxPool's Indices output is not supported")
		}
		if attrInt(n, "storage_order", 0) != 0 {
			return fmt.Errorf("storage_order=1 is not supported")
		}
		kernel, ok := attrInts(n, "kernel_shape")
		if !ok || len(kernel) != 2 {
			return fmt.Errorf("%s needs a 2-D kernel_shape", n.OpType)
		}
		stride, pad, dil, err := im.windowAttrs(n, kernel)
		if err != nil {
			return err
		}
		x, err := im.rt(0)
		if err != nil {
			return err
		}
		attrs := []string{"kernel=" + intList(kernel), "stride=" + intList(stride), "pad=" + intList(pad), "dilation=" + intList(dil),
			fmt.Sprintf("ceil_mode=%v", attrInt(n, "ceil_mode", 0) != 0)}
		if op == "avgpool2d" {
			attrs = append(attrs, fmt.Sprintf("count_include_pad=%v", attrInt(n, "count_include_pad", 0) != 0))
		}
		return im.emit(n.Outputs[:1], op, []string{x}, attrs...)
	}
}

func convGlobalAvgPool(im *importer, n *onnxpb.Node) error { return unary("global_avgpool")(im, n) }

// convGlobalMaxPool imports GlobalMaxPool [N, C, D1, ...] as the maximum
// over every spatial axis, kept as 1s.
func convGlobalMaxPool(im *importer, n *onnxpb.Node) error {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if t.Rank() < 3 {
		return fmt.Errorf("GlobalMaxPool needs an input [N, C, D1, ...] of rank >= 3, found rank %d", t.Rank())
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	var axes []int64
	for a := 2; a < t.Rank(); a++ {
		axes = append(axes, int64(a))
	}
	return im.emit(n.Outputs[:1], "reduce_max", []string{x}, "keepdims=true", "axes="+intList(axes))
}

func convFlatten(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "flatten", []string{x}, fmt.Sprintf("axis=%d", attrInt(n, "axis", 1)))
}

// dimsOf reads a shape-like input known at import time as dims.
func (im *importer) dimsOf(i int) ([]dim.Expr, error) {
	n := im.node
	if i >= len(n.Inputs) || n.Inputs[i] == "" {
		return nil, fmt.Errorf("input %d is missing", i)
	}
	s, _, err := im.symOf(n.Inputs[i])
	return s, err
}

func convReshape(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	shape, err := im.dimsOf(1)
	if err != nil {
		return err
	}
	allowZero := attrInt(n, "allowzero", 0) != 0
	var in hir.Type
	for i, d := range shape {
		if c, ok := d.Const(); ok && c == 0 && !allowZero {
			// ONNX: 0 copies the input's dim.
			if in.DType == 0 {
				if in, err = im.typeOf(n.Inputs[0]); err != nil {
					return err
				}
			}
			if i >= in.Rank() {
				return fmt.Errorf("shape entry %d is 0 (copy) but the input has rank %d", i, in.Rank())
			}
			shape[i] = in.Shape[i]
		}
	}
	return im.emit(n.Outputs[:1], "reshape", []string{x}, "shape="+dimList(shape))
}

func convTranspose(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	if perm, ok := attrInts(n, "perm"); ok {
		return im.emit(n.Outputs[:1], "transpose", []string{x}, "perm="+intList(perm))
	}
	return im.emit(n.Outputs[:1], "transpose", []string{x})
}

func convConcat(im *importer, n *onnxpb.Node) error {
	var args []string
	for i, in := range n.Inputs {
		if in == "" {
			continue
		}
		a, err := im.rt(i)
		if err != nil {
			return err
		}
		args = append(args, a)
	}
	return im.emit(n.Outputs[:1], "concat", args, fmt.Sprintf("axis=%d", attrInt(n, "axis", 0)))
}

func convSplit(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	attrs := []string{fmt.Sprintf("axis=%d", attrInt(n, "axis", 0))}
	sizes, ok := attrInts(n, "split")
	if !ok && len(n.Inputs) > 1 && n.Inputs[1] != "" {
		ds, err := im.dimsOf(1)
		if err != nil {
			return err
		}
		attrs = append(attrs, "sizes="+dimList(ds))
	} else if ok {
		attrs = append(attrs, "sizes="+intList(sizes))
	} else if k := attrInt(n, "num_outputs", 0); k > 0 && k != int64(len(n.Outputs)) {
		return fmt.Errorf("Split with num_outputs=%d and %d outputs", k, len(n.Outputs))
	}
	return im.emit(n.Outputs, "split", []string{x}, attrs...)
}

func convSlice(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	var starts, ends []dim.Expr
	var axes, steps []int64
	if im.opset < 10 {
		s, _ := attrInts(n, "starts")
		e, _ := attrInts(n, "ends")
		starts, ends = constDims(s), constDims(e)
		axes, _ = attrInts(n, "axes")
	} else {
		if starts, err = im.dimsOf(1); err != nil {
			return err
		}
		if ends, err = im.dimsOf(2); err != nil {
			return err
		}
		if axes, _, err = im.constInts(3); err != nil {
			return err
		}
		if steps, _, err = im.constInts(4); err != nil {
			return err
		}
	}
	attrs := []string{"starts=" + dimList(starts), "ends=" + dimList(ends)}
	if axes != nil {
		attrs = append(attrs, "axes="+intList(axes))
	}
	if steps != nil {
		attrs = append(attrs, "steps="+intList(steps))
	}
	return im.emit(n.Outputs[:1], "slice", []string{x}, attrs...)
}

func convGather(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	idx, err := im.rt(1)
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "gather", []string{x, idx}, fmt.Sprintf("axis=%d", attrInt(n, "axis", 0)))
}

// axesArg reads axes from the attribute (before opset 13) or the input.
func (im *importer) axesArg(n *onnxpb.Node) ([]int64, bool, error) {
	if a, ok := attrInts(n, "axes"); ok {
		return a, true, nil
	}
	return im.constInts(1)
}

func convSqueeze(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	axes, ok, err := im.axesArg(n)
	if err != nil {
		return err
	}
	if !ok {
		// Squeeze every static 1.
		t, err := im.typeOf(n.Inputs[0])
		if err != nil {
			return err
		}
		for i, d := range t.Shape {
			if c, ok := d.Const(); ok && c == 1 {
				axes = append(axes, int64(i))
			} else if !ok {
				return fmt.Errorf("Squeeze without axes on a symbolic dim %s: give axes", d)
			}
		}
	}
	return im.emit(n.Outputs[:1], "squeeze", []string{x}, "axes="+intList(axes))
}

func convUnsqueeze(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	axes, ok, err := im.axesArg(n)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("Unsqueeze needs axes")
	}
	return im.emit(n.Outputs[:1], "unsqueeze", []string{x}, "axes="+intList(axes))
}

func convExpand(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	shape, err := im.dimsOf(1)
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "expand", []string{x}, "shape="+dimList(shape))
}

func convPad(im *importer, n *onnxpb.Node) error {
	mode := attrString(n, "mode", "constant")
	switch mode {
	case "constant", "reflect", "edge", "wrap":
	default:
		return fmt.Errorf("Pad mode %q is not one of constant, reflect, edge, wrap", mode)
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	var pads []dim.Expr
	if im.opset < 11 {
		p, _ := attrInts(n, "pads")
		pads = constDims(p)
	} else if pads, err = im.dimsOf(1); err != nil {
		return err
	}
	if len(n.Inputs) > 3 && n.Inputs[3] != "" {
		return fmt.Errorf("Pad with axes is not supported")
	}
	if mode != "constant" {
		return im.padByIndex(n, x, mode, pads)
	}
	attrs := []string{"pads=" + dimList(pads)}
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		v := im.vals[n.Inputs[2]]
		if v == nil || v.konst == nil || v.konst.Len() != 1 {
			return fmt.Errorf("Pad's constant_value must be a constant scalar")
		}
		attrs = append(attrs, "value="+scalarLit(v.konst))
	}
	return im.emit(n.Outputs[:1], "pad", []string{x}, attrs...)
}

// padByIndex imports Pad's reflect, edge and wrap modes: along each
// padded axis one gather of the input with constant indices (reflect:
// ..., 2, 1, 0, 1, ..., n-1, n-2, ...; edge: 0, ..., 0, 1, ..., n-1,
// ..., n-1; wrap: ..., n-1, 0, ..., n-1, 0, ...), which needs the pads
// known at import; an axis of symbolic size goes to padBySlices. Reflect
// needs pads below the size (ONNX leaves larger ones undefined; PyTorch
// refuses them).
func (im *importer) padByIndex(n *onnxpb.Node, x, mode string, pads []dim.Expr) error {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	r := len(t.Shape)
	if len(pads) != 2*r {
		return fmt.Errorf("Pad has %d pads for a tensor of rank %d, want %d", len(pads), r, 2*r)
	}
	out := n.Outputs[0]
	for ax := range r {
		lo, ok1 := pads[ax].Const()
		hi, ok2 := pads[r+ax].Const()
		if !ok1 || !ok2 {
			return fmt.Errorf("Pad mode %q needs pads known at import", mode)
		}
		if lo == 0 && hi == 0 {
			continue
		}
		size, ok := t.Shape[ax].Const()
		switch {
		case lo < 0 || hi < 0:
			return fmt.Errorf("Pad mode %q with negative pads (%d, %d)", mode, lo, hi)
		case !ok:
			x = im.padBySlices(out, x, mode, ax, lo, hi, t.Shape[ax])
			continue
		case mode == "reflect" && (lo >= size || hi >= size):
			return fmt.Errorf("Pad mode reflect with pads (%d, %d) not below axis %d's size %d", lo, hi, ax, size)
		}
		idx := make([]int64, lo+size+hi)
		for i := range idx {
			j := int64(i) - lo
			switch mode {
			case "reflect":
				if j < 0 {
					j = -j
				}
				if j >= size {
					j = 2*(size-1) - j
				}
			case "edge":
				j = min(max(j, 0), size-1)
			case "wrap":
				j = ((j % size) + size) % size
			}
			idx[i] = j
		}
		c := im.emitTmp(fmt.Sprintf("%s_pad%d_idx", out, ax), "const", nil, intList(idx), fmt.Sprintf("i64[%d]", len(idx)))
		x = im.emitTmp(fmt.Sprintf("%s_pad%d", out, ax), "gather", []string{x, c}, fmt.Sprintf("axis=%d", ax))
	}
	im.vals[out] = &val{name: x}
	return nil
}

// padBySlices pads an axis whose size is known only at binding: the
// gather of padByIndex needs the size in its indices, so the padding is
// cut from the input instead, by slices counted from either end, and
// concatenated around it. Reflect: x[lo], ..., x[1] before and x[n-2],
// ..., x[n-1-hi] after (slices of step -1); edge: the first and last
// element repeated (a gather of zeros from a slice of one); wrap: the
// last lo and the first hi elements. A size too small for the pads is an
// error at the binding, where the slices' lengths are checked (reflect
// needs pads below the size, wrap pads up to it).
func (im *importer) padBySlices(out, x, mode string, ax int, lo, hi int64, size dim.Expr) string {
	tag := func(s string) string { return fmt.Sprintf("%s_pad%d_%s", out, ax, s) }
	slice := func(name string, start, end dim.Expr, step int64) string {
		return im.emitTmp(tag(name), "slice", []string{x}, "starts="+dimList([]dim.Expr{start}),
			"ends="+dimList([]dim.Expr{end}), fmt.Sprintf("axes=[%d]", ax), fmt.Sprintf("steps=[%d]", step))
	}
	repeat := func(name, one string, k int64) string {
		c := im.emitTmp(tag(name+"_idx"), "const", nil, intList(make([]int64, k)), fmt.Sprintf("i64[%d]", k))
		return im.emitTmp(tag(name), "gather", []string{one, c}, fmt.Sprintf("axis=%d", ax))
	}
	c := dim.Const
	var parts []string
	if lo > 0 {
		switch mode {
		case "reflect":
			parts = append(parts, slice("lo", c(lo), c(0), -1))
		case "edge":
			parts = append(parts, repeat("lo", slice("first", c(0), c(1), 1), lo))
		case "wrap":
			parts = append(parts, slice("lo", c(-lo), size, 1))
		}
	}
	parts = append(parts, x)
	if hi > 0 {
		switch mode {
		case "reflect":
			parts = append(parts, slice("hi", c(-2), c(-2-hi), -1))
		case "edge":
			parts = append(parts, repeat("hi", slice("last", c(-1), size, 1), hi))
		case "wrap":
			parts = append(parts, slice("hi", c(0), c(hi), 1))
		}
	}
	return im.emitTmp(tag("cat"), "concat", parts, fmt.Sprintf("axis=%d", ax))
}

// Range(start, limit, delta) with values known at import becomes iota, then
// a scale and shift when start != 0 or delta != 1.
// convRange makes Range an iota of a count known at import: start, limit
// and delta are shape arithmetic or constants, and the limit may be a dim
// cast to a float (Range(0.0, float(seq), 1.0), rotary positions). The
// count ceil((limit-start)/delta) is computed over dims, which needs a
// constant delta and, for a float Range, integral start and delta; the
// values are iota*delta + start in the Range's dtype, with a symbolic start
// computed at run time.
func convRange(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 3 {
		return fmt.Errorf("Range has %d inputs, want 3", len(n.Inputs))
	}
	var v [3]dim.Expr
	dt := tensor.InvalidDType
	for i := range v {
		e, t, err := im.rangeArg(n.Inputs[i])
		if err != nil {
			return fmt.Errorf("Range needs start, limit and delta known at import time (%v)", err)
		}
		if dt == tensor.InvalidDType || t != tensor.I64 {
			dt = t
		}
		v[i] = e
	}
	delta, ok := v[2].Const()
	if !ok || delta == 0 {
		return fmt.Errorf("Range needs a constant, non-zero delta")
	}
	span, err := dim.Sub(v[1], v[0])
	if err != nil {
		return err
	}
	if delta < 0 {
		if span, err = dim.Neg(span); err != nil {
			return err
		}
	}
	ad := delta
	if ad < 0 {
		ad = -ad
	}
	num, err := dim.Add(span, dim.Const(ad-1))
	if err != nil {
		return err
	}
	count, err := dim.FloorDiv(num, dim.Const(ad))
	if err != nil {
		return err
	}
	if c, ok := count.Const(); ok && c < 0 {
		// max(ceil((limit - start) / delta), 0): limit on the wrong side
		// of start is an empty range.
		count = dim.Const(0)
	}
	out := n.Outputs[0]
	s0, start0 := v[0].Const()
	if start0 && s0 == 0 && delta == 1 {
		return im.emit(n.Outputs[:1], "iota", nil, "n="+count.String(), "dtype="+dt.String())
	}
	idx := im.emitTmp(out+"_iota", "iota", nil, "n="+count.String(), "dtype="+dt.String())
	d := im.emitTmp(out+"_delta", "const", nil, rangeLit(delta, dt), dt.String()+"[]")
	scaled := im.emitTmp(out+"_scaled", "mul", []string{idx, d})
	var st string
	if start0 {
		st = im.emitTmp(out+"_start", "const", nil, rangeLit(s0, dt), dt.String()+"[]")
	} else {
		// A symbolic start, computed at run time in the Range's dtype.
		if st, err = im.runtime(n.Inputs[0]); err != nil {
			return err
		}
		if t, err := im.typeOf(n.Inputs[0]); err != nil {
			return err
		} else if t.Rank() != 0 || t.DType != dt {
			st = im.emitTmp(out+"_start", "reshape", []string{st}, "shape=[]")
			if t.DType != dt {
				st = im.emitTmp(out+"_start", "cast", []string{st}, "to="+dt.String())
			}
		}
	}
	return im.emit(n.Outputs[:1], "add", []string{scaled, st})
}

func rangeLit(v int64, dt tensor.DType) string {
	if dt.IsFloat() {
		return floatLit(float64(v), 64)
	}
	return fmt.Sprint(v)
}

// rangeArg reads one of Range's inputs as a dim and its dtype: shape
// arithmetic (possibly cast to a float), or a constant scalar or 1-element
// tensor, integral when it is a float.
func (im *importer) rangeArg(name string) (dim.Expr, tensor.DType, error) {
	v := im.vals[name]
	if v == nil {
		return dim.Expr{}, 0, fmt.Errorf("value %q is not defined before its use", name)
	}
	if v.sym != nil {
		if len(v.sym) != 1 {
			return dim.Expr{}, 0, fmt.Errorf("value %q has %d values, want one", name, len(v.sym))
		}
		if v.fdt != tensor.InvalidDType {
			return v.sym[0], v.fdt, nil
		}
		return v.sym[0], tensor.I64, nil
	}
	if t := v.konst; t != nil && t.DType.IsFloat() {
		if t.Len() != 1 || len(t.Shape) > 1 {
			return dim.Expr{}, 0, fmt.Errorf("value %q has %d values, want one", name, t.Len())
		}
		f := t.Float64s()[0]
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return dim.Expr{}, 0, fmt.Errorf("value %q is %v; a float Range over a symbolic dim needs integral start and delta", name, f)
		}
		return dim.Const(int64(f)), t.DType, nil
	}
	s, _, err := im.symOf(name)
	if err != nil {
		return dim.Expr{}, 0, err
	}
	if len(s) != 1 {
		return dim.Expr{}, 0, fmt.Errorf("value %q has %d values, want one", name, len(s))
	}
	dt := tensor.I64
	if v.konst != nil {
		dt = v.konst.DType
	}
	return s[0], dt, nil
}

func convConstantOfShape(im *importer, n *onnxpb.Node) error {
	shape, err := im.dimsOf(0)
	if err != nil {
		return err
	}
	value := tensor.FromF32(nil, []float32{0})
	if a := n.Attr("value"); a != nil {
		if a.T == nil {
			return fmt.Errorf("ConstantOfShape's value attribute holds no tensor")
		}
		if value, err = a.T.ToTensor(); err != nil {
			return err
		}
		if value.Len() != 1 {
			return fmt.Errorf("ConstantOfShape's value must hold one element, found %d", value.Len())
		}
	}
	static := true
	var cs []int64
	for _, d := range shape {
		c, ok := d.Const()
		static = static && ok
		cs = append(cs, c)
	}
	if static {
		t := tensor.New(value.DType, cs...)
		for i := 0; i < t.Len(); i++ {
			copy(t.Data[i*value.DType.Size():], value.Data[:value.DType.Size()])
		}
		im.vals[n.Outputs[0]] = &val{konst: t}
		return nil
	}
	out := n.Outputs[0]
	lit := elemString(value, 0)
	k := im.emitTmp(out+"_value", "const", nil, lit, value.DType.String()+"[]")
	return im.emit(n.Outputs[:1], "expand", []string{k}, "shape="+dimList(shape))
}
