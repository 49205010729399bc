package onnx

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Operators composed of HIR ops, as ops_lowered.go's: the activations
// older exports and other frameworks write (PRelu, Elu, Selu, Celu,
// ThresholdedRelu, Shrink), IsNaN and IsInf, Mean, the norm reductions
// (ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSumExp), the pixel
// shuffles (DepthToSpace, SpaceToDepth), GroupNormalization, LRN,
// Hardmax, CumSum, GatherElements and ScatterElements (Einsum: einsum.go). Each follows the ONNX definition
// op by op, so every target runs it and fusion fuses the elementwise ones.

// floatIn is input i's HIR name and dtype, which must be a float.
func (im *importer) floatIn(n *onnxpb.Node, i int) (string, tensor.DType, error) {
	t, err := im.typeOf(n.Inputs[i])
	if err != nil {
		return "", 0, err
	}
	if !t.DType.IsFloat() {
		return "", 0, fmt.Errorf("%s of %s: a float dtype is needed", n.OpType, t.DType)
	}
	x, err := im.rt(i)
	return x, t.DType, err
}

// convPRelu is x where x >= 0, slope·x elsewhere (slope broadcast to x).
func convPRelu(im *importer, n *onnxpb.Node) error {
	x, dt, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	slope, err := im.rt(1)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	neg := im.emitTmp(out+"_neg", "lt", []string{x, im.scalar(out+"_zero", 0, dt)})
	return im.emit(n.Outputs[:1], "where", []string{neg, im.emitTmp(out+"_scaled", "mul", []string{x, slope}), x})
}

// expBelow is where(x > 0, x, alpha·(e^x − 1)), Elu's form (Selu's with
// its alpha), named after out.
func (im *importer) expBelow(x, out string, alpha float64, dt tensor.DType) string {
	pos := im.emitTmp(out+"_pos", "gt", []string{x, im.scalar(out+"_zero", 0, dt)})
	e := im.emitTmp(out+"_exp", "exp", []string{x})
	e = im.emitTmp(out+"_em1", "sub", []string{e, im.scalar(out+"_one", 1, dt)})
	e = im.emitTmp(out+"_neg", "mul", []string{e, im.scalar(out+"_alpha", alpha, dt)})
	return im.emitTmp(out+"_elu", "where", []string{pos, x, e})
}

func convElu(im *importer, n *onnxpb.Node) error {
	x, dt, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	y := im.expBelow(x, n.Outputs[0], attrFloat(n, "alpha", 1), dt)
	im.vals[n.Outputs[0]] = &val{name: y}
	return nil
}

// convSelu is gamma·Elu(x) with Selu's alpha; the defaults are the
// float32 constants the ONNX definition gives.
func convSelu(im *importer, n *onnxpb.Node) error {
	x, dt, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	e := im.expBelow(x, out, attrFloat(n, "alpha", 1.67326319217681884765625), dt)
	return im.emit(n.Outputs[:1], "mul", []string{e, im.scalar(out+"_gamma", attrFloat(n, "gamma", 1.05070102214813232421875), dt)})
}

// convCelu is max(0, x) + min(0, alpha·(e^(x/alpha) − 1)).
func convCelu(im *importer, n *onnxpb.Node) error {
	x, dt, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	alpha := attrFloat(n, "alpha", 1)
	if alpha == 0 {
		return fmt.Errorf("Celu with alpha 0")
	}
	zero := im.scalar(out+"_zero", 0, dt)
	a := im.scalar(out+"_alpha", alpha, dt)
	e := im.emitTmp(out+"_exp", "exp", []string{im.emitTmp(out+"_scaled", "div", []string{x, a})})
	e = im.emitTmp(out+"_em1", "sub", []string{e, im.scalar(out+"_one", 1, dt)})
	e = im.emitTmp(out+"_neg", "min", []string{im.emitTmp(out+"_a", "mul", []string{e, a}), zero})
	return im.emit(n.Outputs[:1], "add", []string{im.emitTmp(out+"_pos", "max", []string{x, zero}), e})
}

// convThresholdedRelu is x where x > alpha, else 0.
func convThresholdedRelu(im *importer, n *onnxpb.Node) error {
	x, dt, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	above := im.emitTmp(out+"_above", "gt", []string{x, im.scalar(out+"_alpha", attrFloat(n, "alpha", 1), dt)})
	return im.emit(n.Outputs[:1], "where", []string{above, x, im.scalar(out+"_zero", 0, dt)})
}

// convShrink is x + bias below −lambd, x − bias above lambd, 0 between.
func convShrink(im *importer, n *onnxpb.Node) error {
	x, dt, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	lambd, bias := attrFloat(n, "lambd", 0.5), attrFloat(n, "bias", 0)
	below := im.emitTmp(out+"_below", "lt", []string{x, im.scalar(out+"_nl", -lambd, dt)})
	above := im.emitTmp(out+"_above", "gt", []string{x, im.scalar(out+"_l", lambd, dt)})
	b := im.scalar(out+"_bias", bias, dt)
	hi := im.emitTmp(out+"_hi", "where", []string{above, im.emitTmp(out+"_sub", "sub", []string{x, b}), im.scalar(out+"_zero", 0, dt)})
	return im.emit(n.Outputs[:1], "where", []string{below, im.emitTmp(out+"_add", "add", []string{x, b}), hi})
}

// convIsNaN is x ≠ x.
func convIsNaN(im *importer, n *onnxpb.Node) error {
	x, _, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "ne", []string{x, x})
}

// convIsInf compares x with ±infinity, as detect_positive and
// detect_negative ask.
func convIsInf(im *importer, n *onnxpb.Node) error {
	x, dt, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	pos, neg := attrInt(n, "detect_positive", 1) != 0, attrInt(n, "detect_negative", 1) != 0
	switch {
	case pos && neg:
		return im.emit(n.Outputs[:1], "eq", []string{im.emitTmp(out+"_abs", "abs", []string{x}), im.scalar(out+"_inf", math.Inf(1), dt)})
	case pos:
		return im.emit(n.Outputs[:1], "eq", []string{x, im.scalar(out+"_inf", math.Inf(1), dt)})
	case neg:
		return im.emit(n.Outputs[:1], "eq", []string{x, im.scalar(out+"_ninf", math.Inf(-1), dt)})
	}
	// Neither: all false (|x| < −1 holds for no x, NaN included).
	return im.emit(n.Outputs[:1], "lt", []string{im.emitTmp(out+"_abs", "abs", []string{x}), im.scalar(out+"_m1", -1, dt)})
}

// convMean is the sum of its inputs (broadcast) divided by their count.
func convMean(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) == 0 {
		return fmt.Errorf("Mean needs an input")
	}
	acc, dt, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	for i := 1; i < len(n.Inputs); i++ {
		x, err := im.rt(i)
		if err != nil {
			return err
		}
		acc = im.emitTmp(fmt.Sprintf("%s_sum%d", out, i), "add", []string{acc, x})
	}
	return im.emit(n.Outputs[:1], "div", []string{acc, im.scalar(out+"_n", float64(len(n.Inputs)), dt)})
}

// reduceAttrs are a Reduce* node's HIR attributes (keepdims and axes, from
// the attribute or, from opset 18, the input), or noop where the node
// reduces nothing (empty axes with noop_with_empty_axes).
func (im *importer) reduceAttrs(n *onnxpb.Node, keepdims bool) (attrs []string, noop bool, err error) {
	axes, hasAxes := attrInts(n, "axes")
	if !hasAxes && len(n.Inputs) > 1 {
		if axes, hasAxes, err = im.constInts(1); err != nil {
			return nil, false, err
		}
	}
	attrs = []string{fmt.Sprintf("keepdims=%v", keepdims)}
	if hasAxes && len(axes) > 0 {
		attrs = append(attrs, "axes="+intList(axes))
	} else if attrInt(n, "noop_with_empty_axes", 0) != 0 {
		return nil, true, nil
	}
	return attrs, false, nil
}

// normReduce is a reduction of f(x): ReduceL1 sums |x|, ReduceSumSquare
// x², ReduceL2 is the square root of that, ReduceLogSumExp is
// m + log Σ e^(x − m) with m the maximum (so that no term overflows).
func normReduce(im *importer, n *onnxpb.Node) error {
	x, _, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	keep := attrInt(n, "keepdims", 1) != 0
	attrs, noop, err := im.reduceAttrs(n, keep)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	switch n.OpType {
	case "ReduceL1":
		a := im.emitTmp(out+"_abs", "abs", []string{x})
		if noop {
			im.vals[out] = &val{name: a}
			return nil
		}
		return im.emit(n.Outputs[:1], "reduce_sum", []string{a}, attrs...)
	case "ReduceSumSquare", "ReduceL2":
		sq := im.emitTmp(out+"_sq", "mul", []string{x, x})
		if noop && n.OpType == "ReduceSumSquare" {
			im.vals[out] = &val{name: sq}
			return nil
		}
		if noop {
			im.vals[out] = &val{name: im.emitTmp(out+"_abs", "abs", []string{x})}
			return nil
		}
		if n.OpType == "ReduceSumSquare" {
			return im.emit(n.Outputs[:1], "reduce_sum", []string{sq}, attrs...)
		}
		s := im.emitTmp(out+"_sum", "reduce_sum", []string{sq}, attrs...)
		return im.emit(n.Outputs[:1], "sqrt", []string{s})
	case "ReduceLogSumExp":
		if noop {
			im.alias(out, n.Inputs[0])
			return nil
		}
		kept, _, err := im.reduceAttrs(n, true)
		if err != nil {
			return err
		}
		m := im.emitTmp(out+"_max", "reduce_max", []string{x}, kept...)
		e := im.emitTmp(out+"_exp", "exp", []string{im.emitTmp(out+"_shift", "sub", []string{x, m})})
		s := im.emitTmp(out+"_log", "log", []string{im.emitTmp(out+"_sum", "reduce_sum", []string{e}, attrs...)})
		if !keep {
			m = im.emitTmp(out+"_maxk", "reduce_max", []string{x}, attrs...)
		}
		return im.emit(n.Outputs[:1], "add", []string{s, m})
	}
	return fmt.Errorf("internal: normReduce of %s", n.OpType)
}

// convDepthToSpace moves blocks of channels into b×b spatial blocks
// (pixel shuffle): [N, C, H, W] to [N, C/b², H·b, W·b], channel index
// (i·b + j)·C' + c in DCR mode, c·b² + i·b + j in CRD mode, by a reshape,
// a transpose and a reshape.
func convDepthToSpace(im *importer, n *onnxpb.Node) error {
	return im.pixelShuffle(n, true)
}

// convSpaceToDepth is DepthToSpace's inverse in DCR order.
func convSpaceToDepth(im *importer, n *onnxpb.Node) error {
	return im.pixelShuffle(n, false)
}

func (im *importer) pixelShuffle(n *onnxpb.Node, toSpace bool) error {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if t.Rank() != 4 {
		return fmt.Errorf("%s needs a 4-D input [N, C, H, W], found rank %d", n.OpType, t.Rank())
	}
	b := attrInt(n, "blocksize", 0)
	if b < 1 {
		return fmt.Errorf("%s needs a blocksize of 1 or more, found %d", n.OpType, b)
	}
	c, ok := t.Shape[1].Const()
	if !ok {
		return fmt.Errorf("%s needs a static channel count, found %s", n.OpType, t.Shape[1])
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	N, H, W := t.Shape[0].String(), t.Shape[2].String(), t.Shape[3].String()
	shape := func(dims ...string) string { return "shape=[" + strings.Join(dims, ", ") + "]" }
	if toSpace {
		if c%(b*b) != 0 {
			return fmt.Errorf("DepthToSpace of %d channels by blocksize %d: not a multiple of %d", c, b, b*b)
		}
		cc := fmt.Sprint(c / (b * b))
		bs := fmt.Sprint(b)
		var r, perm string
		switch mode := attrString(n, "mode", "DCR"); mode {
		case "DCR":
			r, perm = shape(N, bs, bs, cc, H, W), "perm=[0, 3, 4, 1, 5, 2]"
		case "CRD":
			r, perm = shape(N, cc, bs, bs, H, W), "perm=[0, 1, 4, 2, 5, 3]"
		default:
			return fmt.Errorf("DepthToSpace mode %q is not supported (DCR or CRD)", mode)
		}
		y := im.emitTmp(out+"_blocks", "reshape", []string{x}, r)
		y = im.emitTmp(out+"_moved", "transpose", []string{y}, perm)
		return im.emit(n.Outputs[:1], "reshape", []string{y}, shape(N, cc, "("+H+")*"+bs, "("+W+")*"+bs))
	}
	h, okH := t.Shape[2].Const()
	w, okW := t.Shape[3].Const()
	if okH && okW && (h%b != 0 || w%b != 0) {
		return fmt.Errorf("SpaceToDepth of %dx%d by blocksize %d: not a multiple", h, w, b)
	}
	bs := fmt.Sprint(b)
	y := im.emitTmp(out+"_blocks", "reshape", []string{x}, shape(N, fmt.Sprint(c), "("+H+")/"+bs, bs, "("+W+")/"+bs, bs))
	y = im.emitTmp(out+"_moved", "transpose", []string{y}, "perm=[0, 3, 5, 1, 2, 4]")
	return im.emit(n.Outputs[:1], "reshape", []string{y}, shape(N, fmt.Sprint(c*b*b), "("+H+")/"+bs, "("+W+")/"+bs))
}

// convLpNormalization is x divided by its L1 (p = 1) or L2 (p = 2) norm
// along axis, the norm kept as a dim of 1 to broadcast.
func convLpNormalization(im *importer, n *onnxpb.Node) error {
	x, _, err := im.floatIn(n, 0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	axes := fmt.Sprintf("axes=[%d]", attrInt(n, "axis", -1))
	var norm string
	switch p := attrInt(n, "p", 2); p {
	case 1:
		norm = im.emitTmp(out+"_l1", "reduce_sum", []string{im.emitTmp(out+"_abs", "abs", []string{x})}, "keepdims=true", axes)
	case 2:
		s := im.emitTmp(out+"_ss", "reduce_sum", []string{im.emitTmp(out+"_sq", "mul", []string{x, x})}, "keepdims=true", axes)
		norm = im.emitTmp(out+"_l2", "sqrt", []string{s})
	default:
		return fmt.Errorf("LpNormalization with p=%d (1 or 2)", p)
	}
	return im.emit(n.Outputs[:1], "div", []string{x, norm})
}

// convOneHot compares the indices, unsqueezed at axis, with an iota over
// depth shaped to broadcast along it: values[1] where they match, values[0]
// elsewhere. Negative indices count from depth's end, as ONNX says; an
// index outside [-depth, depth) matches nothing (all off). depth must be
// known at import.
func convOneHot(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 3 {
		return fmt.Errorf("OneHot takes indices, depth and values, found %d inputs", len(n.Inputs))
	}
	it, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if it.DType != tensor.I64 && it.DType != tensor.I32 {
		return fmt.Errorf("OneHot indices of %s: int64 or int32 are supported", it.DType)
	}
	dt, ok := im.constOf(n.Inputs[1])
	if !ok || dt.Len() != 1 {
		return fmt.Errorf("OneHot's depth must be a constant scalar known at import")
	}
	depth := int64(dt.Float64s()[0])
	if depth < 1 {
		return fmt.Errorf("OneHot depth %d: must be at least 1", depth)
	}
	vt, err := im.typeOf(n.Inputs[2])
	if err != nil {
		return err
	}
	if vt.Rank() != 1 {
		return fmt.Errorf("OneHot values must be [off, on], found %s", vt)
	}
	r := int64(it.Rank()) + 1
	axis, err := axisIn(attrInt(n, "axis", -1), r, "OneHot", "a result")
	if err != nil {
		return err
	}
	idx, err := im.rt(0)
	if err != nil {
		return err
	}
	values, err := im.rt(2)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	idt := it.DType
	idx = im.wrapIndex(out, idx, im.scalar(out+"_depth", float64(depth), idt), im.scalar(out+"_zero", 0, idt))
	idx = im.emitTmp(out+"_at", "unsqueeze", []string{idx}, fmt.Sprintf("axes=[%d]", axis))
	pos := im.emitTmp(out+"_pos", "iota", nil, fmt.Sprintf("n=%d", depth), "dtype="+idt.String())
	shape := make([]string, r-axis)
	shape[0] = fmt.Sprint(depth)
	for i := 1; i < len(shape); i++ {
		shape[i] = "1"
	}
	pos = im.emitTmp(out+"_posr", "reshape", []string{pos}, "shape=["+strings.Join(shape, ", ")+"]")
	hit := im.emitTmp(out+"_hit", "eq", []string{idx, pos})
	off := im.emitTmp(out+"_off", "slice", []string{values}, "starts=[0]", "ends=[1]", "axes=[0]")
	on := im.emitTmp(out+"_on", "slice", []string{values}, "starts=[1]", "ends=[2]", "axes=[0]")
	off = im.emitTmp(out+"_off0", "squeeze", []string{off}, "axes=[0]")
	on = im.emitTmp(out+"_on0", "squeeze", []string{on}, "axes=[0]")
	return im.emit(n.Outputs[:1], "where", []string{hit, on, off})
}

// convGroupNorm imports GroupNormalization (opset 18 and 21): X [N, C,
// D...] in num_groups groups of channels, each normalized over its
// channels and spatial positions (a layernorm over the last axis of
// [N, G, C/G·D...], no scale), then scaled and shifted: per group
// ([G], opset 18) or per channel ([C], opset 21).
func convGroupNorm(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 3 {
		return fmt.Errorf("GroupNormalization takes X, scale and bias, found %d inputs", len(n.Inputs))
	}
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if t.Rank() < 3 {
		return fmt.Errorf("GroupNormalization needs an input [N, C, D1, ...] of rank >= 3, found rank %d", t.Rank())
	}
	groups := attrInt(n, "num_groups", 0)
	c, ok := t.Shape[1].Const()
	if !ok {
		return fmt.Errorf("GroupNormalization needs a static channel count, found %s", t.Shape[1])
	}
	if groups < 1 || c%groups != 0 {
		return fmt.Errorf("GroupNormalization num_groups=%d does not divide %d channels", groups, c)
	}
	perChannel := im.opset >= 21
	want := groups
	if perChannel {
		want = c
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	grouped := im.emitTmp(out+"_groups", "reshape", []string{x}, fmt.Sprintf("shape=[%s, %d, -1]", t.Shape[0], groups))
	norm := im.emitTmp(out+"_norm", "layernorm", []string{grouped}, "axis=2", "eps="+floatLit(attrFloat(n, "epsilon", 1e-5), 32))
	norm = im.emitTmp(out+"_ungroup", "reshape", []string{norm}, "shape="+dimList(t.Shape))
	var vecs [2]string
	for i := range vecs {
		vt, err := im.typeOf(n.Inputs[1+i])
		if err != nil {
			return err
		}
		if vt.Rank() != 1 || !dim.Equal(vt.Shape[0], dim.Const(want)) {
			return fmt.Errorf("GroupNormalization input %d is %s, want [%d] (opset %d: one per %s)", 1+i, vt, want, im.opset,
				map[bool]string{true: "channel", false: "group"}[perChannel])
		}
		v, err := im.rt(1 + i)
		if err != nil {
			return err
		}
		if !perChannel {
			// One value per group: repeated over its channels.
			v = im.emitTmp(fmt.Sprintf("%s_g%d", out, i), "reshape", []string{v}, fmt.Sprintf("shape=[%d, 1]", groups))
			v = im.emitTmp(fmt.Sprintf("%s_e%d", out, i), "expand", []string{v}, fmt.Sprintf("shape=[%d, %d]", groups, c/groups))
		}
		shape := []dim.Expr{dim.Const(c)}
		for range t.Shape[2:] {
			shape = append(shape, dim.Const(1))
		}
		vecs[i] = im.emitTmp(fmt.Sprintf("%s_v%d", out, i), "reshape", []string{v}, "shape="+dimList(shape))
	}
	scaled := im.emitTmp(out+"_scaled", "mul", []string{norm, vecs[0]})
	return im.emit(n.Outputs[:1], "add", []string{scaled, vecs[1]})
}

// convLRN imports LRN (AlexNet's and GoogLeNet's local response
// normalization across channels): y = x / (bias + alpha/size · Σ x²)^beta,
// the sum over channels [c − ⌊(size−1)/2⌋, c + ⌈(size−1)/2⌉] within the
// input. The sum is size times an average pool of x² over [N, 1, C, H·W]
// with a size x 1 window that counts the padding.
func convLRN(im *importer, n *onnxpb.Node) error {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if t.Rank() < 3 {
		return fmt.Errorf("LRN needs an input [N, C, D1, ...] of rank >= 3, found rank %d", t.Rank())
	}
	size := attrInt(n, "size", 0)
	if size < 1 {
		return fmt.Errorf("LRN needs size >= 1, found %d", size)
	}
	alpha, beta, bias := attrFloat(n, "alpha", 1e-4), attrFloat(n, "beta", 0.75), attrFloat(n, "bias", 1)
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	// A window wider than 2C−1 holds every channel wherever it is: the
	// pool takes 2C−1 (the same sum), not a kernel of size taps.
	k := size
	if c, ok := t.Shape[1].Const(); ok && size > 2*c-1 {
		k = 2*c - 1
	}
	sq := im.emitTmp(out+"_sq", "mul", []string{x, x})
	sq = im.emitTmp(out+"_planes", "reshape", []string{sq}, fmt.Sprintf("shape=[%s, 1, %s, -1]", t.Shape[0], t.Shape[1]))
	avg := im.emitTmp(out+"_avg", "avgpool2d", []string{sq}, fmt.Sprintf("kernel=[%d, 1]", k), "stride=[1, 1]",
		fmt.Sprintf("pad=[%d, 0, %d, 0]", (k-1)/2, k/2), "dilation=[1, 1]", "ceil_mode=false", "count_include_pad=true")
	avg = im.emitTmp(out+"_avgr", "reshape", []string{avg}, "shape="+dimList(t.Shape))
	// alpha/size · Σ = alpha·k/size · the average over the k-wide window.
	scaled := im.emitTmp(out+"_scaled", "mul", []string{avg, im.scalar(out+"_alpha", alpha*float64(k)/float64(size), t.DType)})
	base := im.emitTmp(out+"_base", "add", []string{scaled, im.scalar(out+"_bias", bias, t.DType)})
	den := im.emitTmp(out+"_den", "pow", []string{base, im.scalar(out+"_beta", beta, t.DType)})
	return im.emit(n.Outputs[:1], "div", []string{x, den})
}

// convHardmax imports Hardmax: 1 at the first maximum along axis, 0
// elsewhere (opset 13; before 13 the input is taken as 2-D, the axes from
// axis on flattened into one). It is argmax along the axis compared with
// an iota of the axis.
func convHardmax(im *importer, n *onnxpb.Node) error {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	r := int64(t.Rank())
	def := int64(-1)
	if im.opset < 13 {
		def = 1
	}
	axis, err := axisIn(attrInt(n, "axis", def), r, "Hardmax", "an input")
	if err != nil {
		return err
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	shape := t.Shape
	flat := im.opset < 13
	if flat {
		// [d0·…·d(axis−1), d(axis)·…]: the maximum over the axes from
		// axis on, which the iota numbers as one.
		x = im.emitTmp(out+"_flat", "flatten", []string{x}, fmt.Sprintf("axis=%d", axis))
		rows, err := dimProduct(t.Shape[:axis])
		if err != nil {
			return err
		}
		cols, err := dimProduct(t.Shape[axis:])
		if err != nil {
			return err
		}
		t.Shape, axis = []dim.Expr{rows, cols}, 1
	}
	at := im.emitTmp(out+"_at", "argmax", []string{x}, fmt.Sprintf("axis=%d", axis), "keepdims=true")
	pos := im.emitTmp(out+"_pos", "iota", nil, "n="+t.Shape[axis].String(), "dtype=i64")
	ps := []string{t.Shape[axis].String()}
	for range t.Shape[axis+1:] {
		ps = append(ps, "1")
	}
	pos = im.emitTmp(out+"_posr", "reshape", []string{pos}, "shape=["+strings.Join(ps, ", ")+"]")
	hit := im.emitTmp(out+"_hit", "eq", []string{at, pos})
	one, zero := im.scalar(out+"_one", 1, t.DType), im.scalar(out+"_zero", 0, t.DType)
	if flat {
		y := im.emitTmp(out+"_y", "where", []string{hit, one, zero})
		return im.emit(n.Outputs[:1], "reshape", []string{y}, "shape="+dimList(shape))
	}
	return im.emit(n.Outputs[:1], "where", []string{hit, one, zero})
}

// dimProduct is the product of ds (1 for none).
func dimProduct(ds []dim.Expr) (dim.Expr, error) {
	p := dim.Const(1)
	for _, d := range ds {
		var err error
		if p, err = dim.Mul(p, d); err != nil {
			return dim.Expr{}, err
		}
	}
	return p, nil
}

// convCumSum imports CumSum (opset 11, 14): the running sum along a
// constant axis, `exclusive` (each element's sum stops before it) and
// `reverse` (from the end). Sum i is Σ_j x_j·[j ≤ i] (< for exclusive,
// ≥ and > reversed), the mask an iota comparison over the axis (which
// may be symbolic): f32 as one product with the mask, the axis moved
// last (x·M), and every other dtype exactly in its own type, as a
// reduce_sum of the masked [..., L, L] broadcast.
func convCumSum(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 2 {
		return fmt.Errorf("CumSum takes x and axis, found %d inputs", len(n.Inputs))
	}
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	r := int64(t.Rank())
	at, ok := im.constOf(n.Inputs[1])
	if !ok || at.Len() != 1 {
		return fmt.Errorf("CumSum's axis must be a constant scalar known at import")
	}
	axis, err := axisIn(int64(at.Float64s()[0]), r, "CumSum", "an input")
	if err != nil {
		return err
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	l := t.Shape[axis].String()
	// perm moves the axis last (and back: it is its own inverse only
	// for a swap, so the way back is computed).
	perm, back := make([]int64, 0, r), make([]int64, r)
	for i := range r {
		if i != axis {
			perm = append(perm, i)
		}
	}
	perm = append(perm, axis)
	for i, p := range perm {
		back[p] = int64(i)
	}
	moved := axis != r-1
	if moved {
		x = im.emitTmp(out+"_last", "transpose", []string{x}, "perm="+intList(perm))
	}
	exclusive, reverse := attrInt(n, "exclusive", 0) != 0, attrInt(n, "reverse", 0) != 0
	var op string
	var args, attrs []string
	if L, ok := t.Shape[axis].Const(); ok && t.DType == tensor.F32 && L >= 2*cumSumBlock && L%cumSumBlock == 0 {
		// Leading dims of x, the axis now last.
		lead := make([]string, 0, r)
		for _, p := range perm[:r-1] {
			lead = append(lead, t.Shape[p].String())
		}
		y := im.blockedCumSum(out, x, lead, L, exclusive, reverse)
		if !moved {
			im.vals[out] = &val{name: y}
			return nil
		}
		return im.emit(n.Outputs[:1], "transpose", []string{y}, "perm="+intList(back))
	}
	mask := im.cumSumMask(out, l, exclusive, reverse)
	op, args = "matmul", []string{x, ""}
	if t.DType == tensor.F32 {
		args[1] = im.emitTmp(out+"_m", "where", []string{mask, im.scalar(out+"_one", 1, t.DType), im.scalar(out+"_zero", 0, t.DType)})
	} else {
		xe := im.emitTmp(out+"_col", "unsqueeze", []string{x}, fmt.Sprintf("axes=[%d]", r))
		op, attrs = "reduce_sum", []string{fmt.Sprintf("axes=[%d]", r-1)}
		args = []string{im.emitTmp(out+"_masked", "where", []string{mask, xe, im.scalar(out+"_zero", 0, t.DType)})}
	}
	if !moved {
		return im.emit(n.Outputs[:1], op, args, attrs...)
	}
	y := im.emitTmp(out+"_sum", op, args, attrs...)
	return im.emit(n.Outputs[:1], "transpose", []string{y}, "perm="+intList(back))
}

// cumSumBlock is the block a float CumSum over a long static axis sums
// within by one product (blockedCumSum): a constant of cumSumBlock²
// ones and zeros, where one product over the whole axis needs the
// axis's length squared (64 MB and 16.8 million multiply-adds a row at
// 4096).
const cumSumBlock = 64

// cumSumMask is the [l, l] bool matrix whose (j, i) says whether input j
// counts in output i: j <= i (or j < i exclusive; j >= i, j > i
// reversed).
func (im *importer) cumSumMask(hint, l string, exclusive, reverse bool) string {
	cmp := map[[2]bool]string{{false, false}: "le", {true, false}: "lt", {false, true}: "ge", {true, true}: "gt"}[[2]bool{exclusive, reverse}]
	j := im.emitTmp(hint+"_j", "iota", nil, "n="+l, "dtype=i64")
	j = im.emitTmp(hint+"_jc", "reshape", []string{j}, "shape=["+l+", 1]")
	i := im.emitTmp(hint+"_i", "iota", nil, "n="+l, "dtype=i64")
	return im.emitTmp(hint+"_mask", cmp, []string{j, i})
}

// blockedCumSum is a float CumSum of x [lead..., L] over its last axis,
// L a multiple of cumSumBlock: each block of cumSumBlock sums within
// itself by one product with a cumSumBlock² mask, and adds the sum of
// the blocks before it (after it, reversed), itself a CumSum, exclusive,
// of the blocks' totals over L/cumSumBlock.
func (im *importer) blockedCumSum(hint, x string, lead []string, L int64, exclusive, reverse bool) string {
	const b = cumSumBlock
	nb := L / b
	f32 := tensor.F32
	shape := func(dims ...string) string {
		return "shape=[" + strings.Join(append(append([]string(nil), lead...), dims...), ", ") + "]"
	}
	xb := im.emitTmp(hint+"_blocks", "reshape", []string{x}, shape(fmt.Sprint(nb), fmt.Sprint(b)))
	inner := im.emitTmp(hint+"_bm", "where", []string{im.cumSumMask(hint+"_b", fmt.Sprint(b), exclusive, reverse),
		im.scalar(hint+"_one", 1, f32), im.scalar(hint+"_zero", 0, f32)})
	local := im.emitTmp(hint+"_local", "matmul", []string{xb, inner})
	totals := im.emitTmp(hint+"_totals", "reduce_sum", []string{xb}, fmt.Sprintf("axes=[%d]", len(lead)+1))
	// The blocks before each one (after it, reversed): an exclusive CumSum
	// over nb, itself blocked where nb is long enough.
	var before string
	if nb >= 2*b && nb%b == 0 {
		before = im.blockedCumSum(hint+"_outer", totals, lead, nb, true, reverse)
	} else {
		outer := im.emitTmp(hint+"_om", "where", []string{im.cumSumMask(hint+"_o", fmt.Sprint(nb), true, reverse),
			im.scalar(hint+"_oone", 1, f32), im.scalar(hint+"_ozero", 0, f32)})
		before = im.emitTmp(hint+"_before", "matmul", []string{totals, outer})
	}
	before = im.emitTmp(hint+"_carry", "reshape", []string{before}, shape(fmt.Sprint(nb), "1"))
	sum := im.emitTmp(hint+"_bsum", "add", []string{local, before})
	return im.emitTmp(hint+"_flat", "reshape", []string{sum}, shape(fmt.Sprint(L)))
}

// wrapIndex counts a negative index from the end: idx + size where idx <
// zero (zero, a scalar of idx's dtype).
func (im *importer) wrapIndex(hint, idx, size, zero string) string {
	neg := im.emitTmp(hint+"_neg", "lt", []string{idx, zero})
	return im.emitTmp(hint+"_wrapped", "where", []string{neg, im.emitTmp(hint+"_plus", "add", []string{idx, size}), idx})
}

// axisIn is axis counted from 0 in a tensor of rank r (negative: from
// the end), or an error naming op and what (the tensor) where it is out
// of range.
func axisIn(axis, r int64, op, what string) (int64, error) {
	if r == 0 || axis < -r || axis >= r {
		return 0, fmt.Errorf("%s axis %d for %s of rank %d", op, axis, what, r)
	}
	if axis < 0 {
		axis += r
	}
	return axis, nil
}

// convGatherElements imports GatherElements (opset 11, 13; torch.gather):
// out[p] = data[p with p[axis] replaced by indices[p]], out shaped as
// indices. The data is flattened and one gather reads it at the flat
// index Σ_d coord_d·stride_d, coord being the output position (an iota
// per dim, broadcast) except along axis, where it is the index (negative
// counts from the end). An index outside the axis (or a position outside
// another of the data's dims, where the dims leave that open until the
// binding) becomes one past any flat index, so the gather fails at run
// time as ONNX says it must, instead of reading the next row.
func convGatherElements(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 2 {
		return fmt.Errorf("GatherElements takes data and indices, found %d inputs", len(n.Inputs))
	}
	e, err := im.elementsIndex(n)
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "gather", []string{e.data, e.flat}, "axis=0")
}

// elementsIndexing is GatherElements' and ScatterElements' addressing:
// the data flattened to [total] and, shaped as the indices, the flat index
// of each element they address.
type elementsIndexing struct {
	data, flat string
	total      dim.Expr
}

// elementsIndex computes the flat index Σ_d coord_d·stride_d of node n's
// indices (input 1) into its data (input 0) along attribute axis: coord
// is the index itself along axis (negative counts from the end) and the
// indices' own position on the other axes. An index outside the axis (or
// a position outside another of the data's dims, where the dims leave
// that open until the binding) becomes total, one past any flat index,
// so the gather or scatter fails at run time as ONNX says it must,
// instead of reaching the next row.
func (im *importer) elementsIndex(n *onnxpb.Node) (elementsIndexing, error) {
	var e elementsIndexing
	dt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return e, err
	}
	it, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return e, err
	}
	r := int64(dt.Rank())
	if int64(it.Rank()) != r {
		return e, fmt.Errorf("%s indices of rank %d for data of rank %d: the ranks must match", n.OpType, it.Rank(), r)
	}
	if it.DType != tensor.I64 && it.DType != tensor.I32 {
		return e, fmt.Errorf("%s indices of %s: int64 or int32 are supported", n.OpType, it.DType)
	}
	axis, err := axisIn(attrInt(n, "axis", 0), r, n.OpType, "data")
	if err != nil {
		return e, err
	}
	// checked[d]: the indices' dim d may pass the data's, which only the
	// binding tells; its positions are then checked at run time.
	checked := make([]bool, r)
	for d := range r {
		if d == axis || dim.Equal(it.Shape[d], dt.Shape[d]) {
			continue
		}
		i, iok := it.Shape[d].Const()
		x, xok := dt.Shape[d].Const()
		switch {
		case iok && xok && i > x:
			return e, fmt.Errorf("%s: indices dim %d (%d) must be at most data's (%d)", n.OpType, d, i, x)
		case !(iok && (i == 1 || xok)):
			checked[d] = true
		}
	}
	data, err := im.rt(0)
	if err != nil {
		return e, err
	}
	idx, err := im.rt(1)
	if err != nil {
		return e, err
	}
	out := n.Outputs[0]
	if it.DType == tensor.I32 {
		idx = im.emitTmp(out+"_i64", "cast", []string{idx}, "to=i64")
	}
	stride := func(d int64) (dim.Expr, error) { return dimProduct(dt.Shape[d+1:]) }
	size := im.dimScalar(dt.Shape[axis])
	zero := im.scalar(out+"_zero", 0, tensor.I64)
	idx = im.wrapIndex(out, idx, size, zero)
	bad := im.emitTmp(out+"_bad", "or", []string{
		im.emitTmp(out+"_below", "lt", []string{idx, zero}),
		im.emitTmp(out+"_above", "ge", []string{idx, size})})
	st, err := stride(axis)
	if err != nil {
		return e, err
	}
	flat := im.timesDim(out, idx, st)
	for d := range r {
		if c, ok := it.Shape[d].Const(); d == axis || ok && c == 1 {
			continue
		}
		pos := im.emitTmp(out+"_pos", "iota", nil, "n="+it.Shape[d].String(), "dtype=i64")
		shape := make([]string, r)
		for k := range shape {
			shape[k] = "1"
		}
		shape[d] = it.Shape[d].String()
		pos = im.emitTmp(out+"_posr", "reshape", []string{pos}, "shape=["+strings.Join(shape, ", ")+"]")
		if st, err = stride(d); err != nil {
			return e, err
		}
		flat = im.emitTmp(out+"_flat", "add", []string{flat, im.timesDim(out, pos, st)})
		if checked[d] {
			past := im.emitTmp(out+"_past", "ge", []string{pos, im.dimScalar(dt.Shape[d])})
			bad = im.emitTmp(out+"_bad", "or", []string{bad, past})
		}
	}
	if e.total, err = dimProduct(dt.Shape); err != nil {
		return e, err
	}
	e.flat = im.emitTmp(out+"_checked", "where", []string{bad, im.dimScalar(e.total), flat})
	e.data = im.emitTmp(out+"_data", "reshape", []string{data}, "shape=["+e.total.String()+"]")
	return e, nil
}

// timesDim multiplies the i64 value v by the dim d, skipping a factor of
// 1.
func (im *importer) timesDim(hint, v string, d dim.Expr) string {
	if c, ok := d.Const(); ok && c == 1 {
		return v
	}
	return im.emitTmp(hint+"_scaled", "mul", []string{v, im.dimScalar(d)})
}

// convScatterElements imports ScatterElements (opsets 11, 13, 16, 18;
// torch.scatter): data with updates[p] written at the element
// GatherElements would read for indices[p], in order (of two updates of
// one element the later wins). One scatter into the flattened data at the
// flat indices (elementsIndex). reduction none only.
func convScatterElements(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 3 {
		return fmt.Errorf("ScatterElements takes data, indices and updates, found %d inputs", len(n.Inputs))
	}
	if r := attrString(n, "reduction", "none"); r != "none" {
		return fmt.Errorf("ScatterElements with reduction %q is not supported (only none)", r)
	}
	dt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	it, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	ut, err := im.typeOf(n.Inputs[2])
	if err != nil {
		return err
	}
	if len(ut.Shape) != len(it.Shape) || !slices.EqualFunc(ut.Shape, it.Shape, dim.Equal) {
		return fmt.Errorf("ScatterElements updates %s and indices %s must have one shape", ut, it)
	}
	e, err := im.elementsIndex(n)
	if err != nil {
		return err
	}
	upd, err := im.rt(2)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	m, err := dimProduct(it.Shape)
	if err != nil {
		return err
	}
	flatIdx := im.emitTmp(out+"_idx", "reshape", []string{e.flat}, "shape=["+m.String()+"]")
	flatUpd := im.emitTmp(out+"_upd", "reshape", []string{upd}, "shape=["+m.String()+"]")
	y := im.emitTmp(out+"_scattered", "scatter", []string{e.data, flatIdx, flatUpd})
	return im.emit(n.Outputs[:1], "reshape", []string{y}, "shape="+dimList(dt.Shape))
}
