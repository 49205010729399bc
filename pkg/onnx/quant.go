package onnx

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Quantized models (QDQ: QuantizeLinear and DequantizeLinear around float
// operators; QOperator: QLinearMatMul, QLinearConv) run in float32 with
// the quantization's arithmetic spelled out: a quantized value is cast to
// f32 and its zero point subtracted, which is exact; products of such
// integer values are exact in f32 while a sum stays below 2^24 (255·255·K:
// K up to 258 without rounding, and beyond that an error of one part in
// 2^24 before the requantization's rounding); requantization is ONNX
// Runtime's: multiplier a_scale·b_scale/y_scale in f32, the accumulator
// times it rounded half to even, plus the zero point, saturated, cast.
// So results equal ONNX Runtime's integer kernels except where an
// accumulator past 2^24, or a Winograd convolution's rounding, lands a
// value on the other side of a rounding boundary: one quantum.
// Weight-only dequantization of an initializer folds at build time.

// quantRange is the saturation range of a quantized dtype.
func quantRange(dt tensor.DType) (lo, hi float64, ok bool) {
	switch dt {
	case tensor.U8:
		return 0, 255, true
	case tensor.I8:
		return -128, 127, true
	case tensor.I16:
		return -32768, 32767, true
	case tensor.I32:
		return -2147483648, 2147483647, true
	}
	return 0, 0, false
}

// qParam returns input i (a scale or zero point) as an f32 operand that
// broadcasts along axis of a rank-r tensor: a scalar as it is, a 1-D one
// of more than one element reshaped to [C, 1, ..., 1].
func (im *importer) qParam(hint string, i int, r, axis int64) (string, error) {
	n := im.node
	t, err := im.typeOf(n.Inputs[i])
	if err != nil {
		return "", err
	}
	v, err := im.rt(i)
	if err != nil {
		return "", err
	}
	if t.DType != tensor.F32 {
		v = im.emitTmp(hint+"_f32", "cast", []string{v}, "to=f32")
	}
	switch {
	case t.Rank() == 0:
		return v, nil
	case t.Rank() == 1:
		if c, ok := t.Shape[0].Const(); ok && c == 1 {
			return im.emitTmp(hint+"_scalar", "reshape", []string{v}, "shape=[]"), nil
		}
		shape := []string{t.Shape[0].String()}
		for range r - 1 - axis {
			shape = append(shape, "1")
		}
		return im.emitTmp(hint+"_axis", "reshape", []string{v}, "shape=["+strings.Join(shape, ", ")+"]"), nil
	}
	return "", fmt.Errorf("%s input %d has rank %d: a scalar or 1-D (per-axis) is supported (not blocked quantization)", n.OpType, i, t.Rank())
}

// dequant emits (cast(x) - zero point) as f32 for input x of the node with
// the zero point at input zp (absent: 0), along axis.
func (im *importer) dequant(hint string, x, zp int, axis int64) (string, error) {
	n := im.node
	t, err := im.typeOf(n.Inputs[x])
	if err != nil {
		return "", err
	}
	if _, _, ok := quantRange(t.DType); !ok {
		return "", fmt.Errorf("%s input %d is %s: int8, uint8, int16 or int32 are supported", n.OpType, x, t.DType)
	}
	v, err := im.rt(x)
	if err != nil {
		return "", err
	}
	v = im.emitTmp(hint+"_f32", "cast", []string{v}, "to=f32")
	if zp < len(n.Inputs) && n.Inputs[zp] != "" {
		z, err := im.qParam(hint+"_zp", zp, int64(t.Rank()), axis)
		if err != nil {
			return "", err
		}
		v = im.emitTmp(hint+"_centered", "sub", []string{v, z})
	}
	return v, nil
}

// requant emits y = saturate(round(acc · multiplier) + zero point) cast to
// the zero point's dtype; multiplier is an f32 operand. acc is rounded to
// an integer first: it is one (a sum of integer products), so that
// recovers it from a float path's small error, and a conv's result then
// feeds a round, not a multiply, which fusion would fold into the
// weights (FoldConvAffine: conv(x, w)·a = conv(x, w·a), inexact here).
func (im *importer) requant(out []string, acc, multiplier string, zp int, r, axis int64) error {
	n := im.node
	zt, err := im.typeOf(n.Inputs[zp])
	if err != nil {
		return err
	}
	lo, hi, ok := quantRange(zt.DType)
	if !ok || zt.DType == tensor.I32 {
		return fmt.Errorf("%s output zero point is %s: int8, uint8 or int16 are supported", n.OpType, zt.DType)
	}
	hint := out[0]
	acc = im.emitTmp(hint+"_int", "round", []string{acc})
	q := im.emitTmp(hint+"_q", "round", []string{im.emitTmp(hint+"_scaled", "mul", []string{acc, multiplier})})
	z, err := im.qParam(hint+"_zp", zp, r, axis)
	if err != nil {
		return err
	}
	q = im.emitTmp(hint+"_shifted", "add", []string{q, z})
	q = im.emitTmp(hint+"_sat", "clamp", []string{q}, "min="+floatLit(lo, 64), "max="+floatLit(hi, 64))
	return im.emit(out, "cast", []string{q}, "to="+zt.DType.String())
}

// qdqShape checks a QuantizeLinear or DequantizeLinear node's inputs (x,
// a float32 scale, an optional zero point; no block_size) and returns x's
// type and rank and the axis the parameters run along (0 for per tensor).
func (im *importer) qdqShape(n *onnxpb.Node) (xt hir.Type, r, axis int64, err error) {
	if attrInt(n, "block_size", 0) != 0 {
		return xt, 0, 0, fmt.Errorf("%s with block_size (blocked quantization) is not supported", n.OpType)
	}
	if len(n.Inputs) < 2 {
		return xt, 0, 0, fmt.Errorf("%s takes x, a scale and an optional zero point, found %d inputs", n.OpType, len(n.Inputs))
	}
	if xt, err = im.typeOf(n.Inputs[0]); err != nil {
		return xt, 0, 0, err
	}
	st, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return xt, 0, 0, err
	}
	if st.DType != tensor.F32 {
		return xt, 0, 0, fmt.Errorf("%s with a %s scale: float32 scales are supported", n.OpType, st.DType)
	}
	r = int64(xt.Rank())
	if st.Rank() == 1 && r > 0 {
		axis, err = axisIn(attrInt(n, "axis", 1), r, n.OpType, "x")
	}
	return xt, r, axis, err
}

// convDequantizeLinear imports DequantizeLinear (opsets 10, 13, 19, 21):
// y = (x - x_zero_point) · x_scale, per tensor or per axis.
func convDequantizeLinear(im *importer, n *onnxpb.Node) error {
	_, r, axis, err := im.qdqShape(n)
	if err != nil {
		return err
	}
	x, err := im.dequant(n.Outputs[0], 0, 2, axis)
	if err != nil {
		return err
	}
	s, err := im.qParam(n.Outputs[0]+"_scale", 1, r, axis)
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "mul", []string{x, s})
}

// convQuantizeLinear imports QuantizeLinear (opsets 10, 13, 19, 21):
// y = saturate(round(x / y_scale) + y_zero_point), rounding half to even,
// in the zero point's dtype (uint8 without one, or opset 21's
// output_dtype).
func convQuantizeLinear(im *importer, n *onnxpb.Node) error {
	xt, r, axis, err := im.qdqShape(n)
	if err != nil {
		return err
	}
	if xt.DType != tensor.F32 {
		return fmt.Errorf("QuantizeLinear of a %s input: float32 is supported", xt.DType)
	}
	to := tensor.U8
	hasZP := len(n.Inputs) > 2 && n.Inputs[2] != ""
	if hasZP {
		zt, err := im.typeOf(n.Inputs[2])
		if err != nil {
			return err
		}
		to = zt.DType
	} else if od := attrInt(n, "output_dtype", 0); od != 0 {
		if to, err = dtypeOf(int32(od)); err != nil {
			return err
		}
	}
	lo, hi, ok := quantRange(to)
	if !ok || to == tensor.I32 {
		return fmt.Errorf("QuantizeLinear to %s: int8, uint8 and int16 are supported", to)
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	return im.quantize(x, 1, 2, to, lo, hi, r, axis)
}

// quantize emits the node's output as saturate(round(v / scale) + zero
// point) in dtype (clamped into [lo, hi]), the scale and zero point (an
// absent one 0) the node's inputs at scale and zp, along axis of a
// rank-r tensor.
func (im *importer) quantize(v string, scale, zp int, dtype tensor.DType, lo, hi float64, r, axis int64) error {
	n := im.node
	out := n.Outputs[0]
	s, err := im.qParam(out+"_scale", scale, r, axis)
	if err != nil {
		return err
	}
	q := im.emitTmp(out+"_q", "round", []string{im.emitTmp(out+"_div", "div", []string{v, s})})
	if zp < len(n.Inputs) && n.Inputs[zp] != "" {
		z, err := im.qParam(out+"_zp", zp, r, axis)
		if err != nil {
			return err
		}
		q = im.emitTmp(out+"_shifted", "add", []string{q, z})
	}
	q = im.emitTmp(out+"_sat", "clamp", []string{q}, "min="+floatLit(lo, 64), "max="+floatLit(hi, 64))
	return im.emit(n.Outputs[:1], "cast", []string{q}, "to="+dtype.String())
}

// multiplier emits alpha·a_scale·b_scale/y_scale in f32 (ONNX Runtime's
// requantization multiplier, in its order of operations) from the node's
// scale inputs, b's along axis bAxis of a rank-r result; alpha 1 adds
// nothing, and ys < 0 (no y_scale) leaves the division out.
func (im *importer) multiplier(hint string, as, bs, ys int, r, bAxis int64, alpha float64) (string, error) {
	a, err := im.qParam(hint+"_as", as, r, r-1)
	if err != nil {
		return "", err
	}
	if alpha != 1 {
		k := im.emitTmp(hint+"_alpha", "const", nil, floatLit(alpha, 32), "f32[]")
		a = im.emitTmp(hint+"_alpha_as", "mul", []string{k, a})
	}
	b, err := im.qParam(hint+"_bs", bs, r, bAxis)
	if err != nil {
		return "", err
	}
	ab := im.emitTmp(hint+"_ab", "mul", []string{a, b})
	if ys < 0 {
		return ab, nil
	}
	y, err := im.qParam(hint+"_ys", ys, r, r-1)
	if err != nil {
		return "", err
	}
	return im.emitTmp(hint+"_mult", "div", []string{ab, y}), nil
}

// convQLinearMatMul imports QLinearMatMul (opsets 10, 21): the product of
// the centered operands, requantized. a's scale and zero point are per
// tensor; b's per tensor or per column (1-D over N).
func convQLinearMatMul(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 8 {
		return fmt.Errorf("QLinearMatMul takes 8 inputs, found %d", len(n.Inputs))
	}
	bt, err := im.typeOf(n.Inputs[3])
	if err != nil {
		return err
	}
	at, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if at.Rank() < 2 || bt.Rank() < 2 {
		return fmt.Errorf("QLinearMatMul of ranks %d and %d: both at least 2 are supported", at.Rank(), bt.Rank())
	}
	for _, i := range []int{1, 2} {
		if t, err := im.typeOf(n.Inputs[i]); err != nil || t.Rank() > 1 || t.Rank() == 1 && !isOne(t.Shape[0]) {
			return fmt.Errorf("QLinearMatMul's a_scale and a_zero_point must be per tensor")
		}
	}
	out := n.Outputs[0]
	a, err := im.dequant(out+"_a", 0, 2, int64(at.Rank())-1)
	if err != nil {
		return err
	}
	b, err := im.dequant(out+"_b", 3, 5, int64(bt.Rank())-1)
	if err != nil {
		return err
	}
	acc := im.emitTmp(out+"_acc", "matmul", []string{a, b})
	r := int64(max(at.Rank(), bt.Rank()))
	mult, err := im.multiplier(out, 1, 4, 6, r, r-1, 1)
	if err != nil {
		return err
	}
	return im.requant(n.Outputs[:1], acc, mult, 7, r, r-1)
}

// convQGemm imports QGemm of ONNX Runtime's com.microsoft domain (what it
// fuses a QDQ group around Gemm into; fuseQDQ does the same): the product
// of the centered operands (B per tensor or per output column, transposed
// where transB), plus C, an int32 bias in the product's scale,
// requantized. alpha 1, transA 0 and a quantized output only.
func convQGemm(im *importer, n *onnxpb.Node) error {
	if err := msOnly(n); err != nil {
		return err
	}
	if len(n.Inputs) < 6 {
		return fmt.Errorf("QGemm takes A, B, their scales and zero points (6 inputs) and optional C, y_scale and y_zero_point, found %d inputs", len(n.Inputs))
	}
	input := func(i int) bool { return i < len(n.Inputs) && n.Inputs[i] != "" }
	if attrInt(n, "transA", 0) != 0 {
		return fmt.Errorf("QGemm with transA is not supported")
	}
	transB := attrInt(n, "transB", 0) != 0
	for _, i := range []int{0, 3} {
		if t, err := im.typeOf(n.Inputs[i]); err != nil || t.Rank() != 2 {
			return fmt.Errorf("QGemm takes matrices A and B (rank 2)")
		}
	}
	out := n.Outputs[0]
	a, err := im.dequant(out+"_a", 0, 2, 1)
	if err != nil {
		return err
	}
	bAxis := int64(1) // B's scale and zero point run along the output columns
	if transB {
		bAxis = 0
	}
	b, err := im.dequant(out+"_b", 3, 5, bAxis)
	if err != nil {
		return err
	}
	if transB {
		b = im.emitTmp(out+"_bt", "transpose", []string{b}, "perm=[1, 0]")
	}
	acc := im.emitTmp(out+"_acc", "matmul", []string{a, b})
	if input(6) {
		ct, err := im.typeOf(n.Inputs[6])
		if err != nil {
			return err
		}
		if ct.DType != tensor.I32 {
			return fmt.Errorf("QGemm's C is %s, want int32", ct.DType)
		}
		c, err := im.rt(6)
		if err != nil {
			return err
		}
		acc = im.emitTmp(out+"_biased", "add", []string{acc, im.emitTmp(out+"_c", "cast", []string{c}, "to=f32")})
	}
	// The product's scale as ONNX Runtime computes it, alpha times A's
	// times B's (per output column), divided by y_scale where there is
	// one; with a y_zero_point the result is requantized, without one it
	// is the float32 sums times that scale.
	ys := -1
	if input(7) {
		ys = 7
	}
	scale, err := im.multiplier(out, 1, 4, ys, 2, 1, attrFloat(n, "alpha", 1))
	if err != nil {
		return err
	}
	if !input(8) {
		return im.emit(n.Outputs[:1], "mul", []string{acc, scale})
	}
	return im.requant(n.Outputs[:1], acc, scale, 8, 2, 1)
}

// msDomain is ONNX Runtime's contrib operators' domain.
const msDomain = "com.microsoft"

// msOps are the operators of msDomain rlx imports: those of ONNX
// Runtime's quantized formats (QDQ groups fused, and QOperator models'
// elementwise and pooling operators).
var msOps = map[string]bool{"QGemm": true, "QLinearAdd": true, "QLinearMul": true, "QLinearGlobalAveragePool": true,
	"QLinearConcat": true, "QLinearSigmoid": true, "QLinearLeakyRelu": true, "QLinearAveragePool": true}

// msOnly refuses node n unless it is of msDomain (its ops are not ONNX's).
func msOnly(n *onnxpb.Node) error {
	if n.Domain != msDomain {
		return fmt.Errorf("%s is an operator of the %s domain, not %q", n.OpType, msDomain, n.Domain)
	}
	return nil
}

// perTensor checks that the node's inputs at is are scalars (per-tensor
// scales and zero points).
func (im *importer) perTensor(is ...int) error {
	n := im.node
	for _, i := range is {
		if i >= len(n.Inputs) || n.Inputs[i] == "" {
			continue
		}
		t, err := im.typeOf(n.Inputs[i])
		if err != nil {
			return err
		}
		if t.Rank() > 1 || t.Rank() == 1 && !isOne(t.Shape[0]) {
			return fmt.Errorf("%s input %d has shape %v: a per-tensor scale or zero point (one element) is supported", n.OpType, i, t.Shape)
		}
	}
	return nil
}

// dequantScaled emits (x - zero point) · scale as f32 for the node's
// inputs x, zp (absent: 0) and scale, per tensor.
func (im *importer) dequantScaled(hint string, x, scale, zp int) (string, error) {
	v, err := im.dequant(hint, x, zp, 0)
	if err != nil {
		return "", err
	}
	s, err := im.qParam(hint+"_s", scale, 0, 0)
	if err != nil {
		return "", err
	}
	return im.emitTmp(hint+"_dq", "mul", []string{v, s}), nil
}

// quantizeOut emits the node's output as QuantizeLinear of v into dtype,
// scale and zero point (absent: 0) per tensor at inputs scale and zp.
func (im *importer) quantizeOut(v string, scale, zp int, dtype tensor.DType) error {
	lo, hi, ok := quantRange(dtype)
	if !ok || dtype == tensor.I32 || dtype == tensor.I16 {
		return fmt.Errorf("%s of %s: uint8 and int8 are supported", im.node.OpType, dtype)
	}
	return im.quantize(v, scale, zp, dtype, lo, hi, 0, 0)
}

// convQLinearBinary imports com.microsoft QLinearAdd and QLinearMul (the
// QOperator format's residual additions and products): C =
// QuantizeLinear(DequantizeLinear(A) op DequantizeLinear(B)), with
// broadcasting, every scale and zero point per tensor (absent zero
// points 0). ONNX Runtime's kernels approximate the rescaling in fixed
// point, so its results can be a quantum away from this arithmetic.
func convQLinearBinary(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		if err := msOnly(n); err != nil {
			return err
		}
		if len(n.Inputs) < 7 {
			return fmt.Errorf("%s takes A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale and C_zero_point, found %d inputs", n.OpType, len(n.Inputs))
		}
		if err := im.perTensor(1, 2, 4, 5, 6, 7); err != nil {
			return err
		}
		at, err := im.typeOf(n.Inputs[0])
		if err != nil {
			return err
		}
		bt, err := im.typeOf(n.Inputs[3])
		if err != nil {
			return err
		}
		if bt.DType != at.DType {
			return fmt.Errorf("%s of %s and %s: A and B must have one type", n.OpType, at.DType, bt.DType)
		}
		out := n.Outputs[0]
		a, err := im.dequantScaled(out+"_a", 0, 1, 2)
		if err != nil {
			return err
		}
		b, err := im.dequantScaled(out+"_b", 3, 4, 5)
		if err != nil {
			return err
		}
		return im.quantizeOut(im.emitTmp(out+"_f", op, []string{a, b}), 6, 7, at.DType)
	}
}

// convQLinearGlobalAveragePool imports com.microsoft
// QLinearGlobalAveragePool over NCHW (channels_last 0): the mean of the
// dequantized input over each plane, quantized with y_scale and
// y_zero_point.
func convQLinearGlobalAveragePool(im *importer, n *onnxpb.Node) error {
	if err := msOnly(n); err != nil {
		return err
	}
	if attrInt(n, "channels_last", 0) != 0 {
		return fmt.Errorf("QLinearGlobalAveragePool with channels_last is not supported (NCHW only)")
	}
	if len(n.Inputs) < 4 {
		return fmt.Errorf("QLinearGlobalAveragePool takes X, x_scale, x_zero_point, y_scale and y_zero_point, found %d inputs", len(n.Inputs))
	}
	if err := im.perTensor(1, 2, 3, 4); err != nil {
		return err
	}
	xt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if xt.Rank() < 3 {
		return fmt.Errorf("QLinearGlobalAveragePool of rank %d: N, C and at least one spatial dim are needed", xt.Rank())
	}
	out := n.Outputs[0]
	x, err := im.dequantScaled(out+"_x", 0, 1, 2)
	if err != nil {
		return err
	}
	return im.quantizeOut(im.emitTmp(out+"_mean", "global_avgpool", []string{x}), 3, 4, xt.DType)
}

// convQLinearConcat imports com.microsoft QLinearConcat (the QOperator
// format's concatenations: SqueezeNet's, Inception's): inputs Y_scale,
// Y_zero_point, then X, X_scale, X_zero_point per operand; Y =
// QuantizeLinear(Concat(DequantizeLinear(X_i))) along axis, as ONNX
// Runtime's lookup tables compute it (each byte dequantized, then
// quantized with Y's scale and zero point), every scale and zero point
// per tensor.
func convQLinearConcat(im *importer, n *onnxpb.Node) error {
	if err := msOnly(n); err != nil {
		return err
	}
	if len(n.Inputs) < 5 || (len(n.Inputs)-2)%3 != 0 {
		return fmt.Errorf("QLinearConcat takes Y_scale, Y_zero_point and a triple X, X_scale, X_zero_point per operand, found %d inputs", len(n.Inputs))
	}
	out := n.Outputs[0]
	var dt tensor.DType
	var parts []string
	for i := 2; i < len(n.Inputs); i += 3 {
		if err := im.perTensor(i+1, i+2); err != nil {
			return err
		}
		t, err := im.typeOf(n.Inputs[i])
		if err != nil {
			return err
		}
		if i == 2 {
			dt = t.DType
		} else if t.DType != dt {
			return fmt.Errorf("QLinearConcat of %s and %s: every operand must have one type", dt, t.DType)
		}
		v, err := im.dequantScaled(fmt.Sprintf("%s_x%d", out, i/3), i, i+1, i+2)
		if err != nil {
			return err
		}
		parts = append(parts, v)
	}
	if err := im.perTensor(0, 1); err != nil {
		return err
	}
	return im.quantizeOut(im.emitTmp(out+"_f", "concat", parts, fmt.Sprintf("axis=%d", attrInt(n, "axis", 0))), 0, 1, dt)
}

// convQLinearUnary imports com.microsoft QLinearSigmoid and
// QLinearLeakyRelu (X, X_scale, X_zero_point, Y_scale, Y_zero_point):
// QuantizeLinear(op(DequantizeLinear(X))), per tensor. ONNX Runtime
// computes each byte's result in a lookup table with its own logistic
// function, so a sigmoid can land a quantum away where the exact value is
// near a rounding boundary.
func convQLinearUnary(op string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		if err := msOnly(n); err != nil {
			return err
		}
		x, out, dt, err := im.qlinearIn(n)
		if err != nil {
			return err
		}
		var attrs []string
		if op == "leaky_relu" {
			attrs = append(attrs, "alpha="+floatLit(attrFloat(n, "alpha", 0.01), 32))
		}
		return im.quantizeOut(im.emitTmp(out+"_f", op, []string{x}, attrs...), 3, 4, dt)
	}
}

// qlinearIn checks a QOperator unary operator's inputs (X, X_scale,
// X_zero_point, Y_scale, Y_zero_point; per tensor) and dequantizes X.
func (im *importer) qlinearIn(n *onnxpb.Node) (x, out string, dt tensor.DType, err error) {
	if len(n.Inputs) < 4 {
		return "", "", 0, fmt.Errorf("%s takes X, X_scale, X_zero_point, Y_scale and Y_zero_point, found %d inputs", n.OpType, len(n.Inputs))
	}
	if err := im.perTensor(1, 2, 3, 4); err != nil {
		return "", "", 0, err
	}
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return "", "", 0, err
	}
	out = n.Outputs[0]
	x, err = im.dequantScaled(out+"_x", 0, 1, 2)
	return x, out, t.DType, err
}

// convQLinearAveragePool imports com.microsoft QLinearAveragePool over
// NCHW (channels_last 0): AveragePool, with every attribute it takes, of
// the dequantized input, quantized with y_scale and y_zero_point. ONNX
// Runtime averages in its own order, so a result can be a quantum away.
func convQLinearAveragePool(im *importer, n *onnxpb.Node) error {
	if err := msOnly(n); err != nil {
		return err
	}
	if attrInt(n, "channels_last", 0) != 0 {
		return fmt.Errorf("QLinearAveragePool with channels_last is not supported (NCHW only)")
	}
	x, out, dt, err := im.qlinearIn(n)
	if err != nil {
		return err
	}
	y, err := im.convertOver(n, "AveragePool", poolAny("avgpool2d"), out, x)
	if err != nil {
		return err
	}
	return im.quantizeOut(y, 3, 4, dt)
}

// convQLinearConv imports QLinearConv (opset 10): Conv over the centered
// input and weights (per tensor, or per output channel), plus the int32
// bias, requantized per output channel.
func convQLinearConv(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) < 8 {
		return fmt.Errorf("QLinearConv takes 8 or 9 inputs, found %d", len(n.Inputs))
	}
	xt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	r := int64(xt.Rank())
	out := n.Outputs[0]
	x, err := im.dequant(out+"_x", 0, 2, 1)
	if err != nil {
		return err
	}
	w, err := im.dequant(out+"_w", 3, 5, 0)
	if err != nil {
		return err
	}
	bias := ""
	if len(n.Inputs) > 8 && n.Inputs[8] != "" {
		b, err := im.rt(8)
		if err != nil {
			return err
		}
		bias = im.emitTmp(out+"_bias", "cast", []string{b}, "to=f32")
	}
	acc, err := im.floatConv(n, out, x, w, bias)
	if err != nil {
		return err
	}
	mult, err := im.multiplier(out, 1, 4, 6, r, 1, 1)
	if err != nil {
		return err
	}
	return im.requant(n.Outputs[:1], acc, mult, 7, r, 1)
}

// convDynamicQuantizeLinear imports DynamicQuantizeLinear (opset 11): x
// into uint8 by a scale and zero point computed from x's range (extended
// to include 0), the three outputs as ONNX's definition: scale (max -
// min) / 255 (1/255 when max = min), zero point round(clamp(-min /
// scale, 0, 255)), y saturate(round(x / scale) + zero point).
func convDynamicQuantizeLinear(im *importer, n *onnxpb.Node) error {
	xt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if xt.DType != tensor.F32 {
		return fmt.Errorf("DynamicQuantizeLinear of a %s input: float32 is supported", xt.DType)
	}
	if len(n.Outputs) != 3 {
		return fmt.Errorf("DynamicQuantizeLinear has %d outputs, want 3 (y, y_scale, y_zero_point)", len(n.Outputs))
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	zero := im.scalar(out+"_zero", 0, tensor.F32)
	mx := im.emitTmp(out+"_max", "max", []string{im.emitTmp(out+"_rmax", "reduce_max", []string{x}), zero})
	mn := im.emitTmp(out+"_min", "min", []string{im.emitTmp(out+"_rmin", "reduce_min", []string{x}), zero})
	span := im.emitTmp(out+"_span", "where", []string{im.emitTmp(out+"_flat", "eq", []string{mx, mn}),
		im.scalar(out+"_one", 1, tensor.F32), im.emitTmp(out+"_range", "sub", []string{mx, mn})})
	scale := im.emitTmp(out+"_scale", "div", []string{span, im.scalar(out+"_levels", 255, tensor.F32)})
	zp := im.emitTmp(out+"_zp0", "neg", []string{im.emitTmp(out+"_minsc", "div", []string{mn, scale})})
	zp = im.emitTmp(out+"_zpf", "round", []string{im.emitTmp(out+"_zpc", "clamp", []string{zp}, "min=0", "max=255")})
	q := im.emitTmp(out+"_q", "round", []string{im.emitTmp(out+"_div", "div", []string{x, scale})})
	q = im.emitTmp(out+"_sat", "clamp", []string{im.emitTmp(out+"_shifted", "add", []string{q, zp})}, "min=0", "max=255")
	if err := im.emit(n.Outputs[:1], "cast", []string{q}, "to=u8"); err != nil {
		return err
	}
	if n.Outputs[1] != "" {
		im.vals[n.Outputs[1]] = &val{name: scale}
	}
	if n.Outputs[2] != "" {
		return im.emit(n.Outputs[2:3], "cast", []string{zp}, "to=u8")
	}
	return nil
}

// convMatMulInteger imports MatMulInteger (opset 10): the int32 product
// of the operands less their zero points (a's per tensor or per row, b's
// per tensor or per column), computed in float32: exact while a sum stays
// below 2^24, within f32 rounding of the integer beyond.
func convMatMulInteger(im *importer, n *onnxpb.Node) error {
	at, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	bt, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	if at.Rank() < 2 || bt.Rank() < 2 {
		return fmt.Errorf("MatMulInteger of ranks %d and %d: both at least 2 are supported", at.Rank(), bt.Rank())
	}
	out := n.Outputs[0]
	a, err := im.dequant(out+"_a", 0, 2, int64(at.Rank())-2)
	if err != nil {
		return err
	}
	b, err := im.dequant(out+"_b", 1, 3, int64(bt.Rank())-1)
	if err != nil {
		return err
	}
	acc := im.emitTmp(out+"_acc", "matmul", []string{a, b})
	return im.emit(n.Outputs[:1], "cast", []string{im.emitTmp(out+"_int", "round", []string{acc})}, "to=i32")
}

// convConvInteger imports ConvInteger (opset 10): the int32 Conv of the
// input and weights less their zero points (the weights' per tensor or
// per output channel), in float32 like MatMulInteger.
func convConvInteger(im *importer, n *onnxpb.Node) error {
	out := n.Outputs[0]
	x, err := im.dequant(out+"_x", 0, 2, 1)
	if err != nil {
		return err
	}
	w, err := im.dequant(out+"_w", 1, 3, 0)
	if err != nil {
		return err
	}
	acc, err := im.floatConv(n, out, x, w, "")
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "cast", []string{im.emitTmp(out+"_int", "round", []string{acc})}, "to=i32")
}

// floatConv runs Conv's importer, with n's attributes, over the HIR values
// x and w (and bias, "" for none), and returns the result's HIR name.
func (im *importer) floatConv(n *onnxpb.Node, hint, x, w, bias string) (string, error) {
	args := []string{x, w}
	if bias != "" {
		args = append(args, bias)
	}
	return im.convertOver(n, "Conv", convConvAny, hint, args...)
}

// convertOver runs converter conv of ONNX operator opType, with n's
// attributes, over the HIR values args as its inputs, and returns the HIR
// name of its one result: a quantized operator's float operator over the
// dequantized operands.
func (im *importer) convertOver(n *onnxpb.Node, opType string, conv converter, hint string, args ...string) (string, error) {
	key := func(s string) string { return "\x00" + hint + "_" + s } // vals keys no ONNX name has
	f := &onnxpb.Node{Name: n.Name, OpType: opType, Outputs: []string{key("y")}, Attrs: n.Attrs}
	for i, a := range args {
		k := key(fmt.Sprint(i))
		im.vals[k] = &val{name: a}
		f.Inputs = append(f.Inputs, k)
	}
	outer := im.node
	im.node = f
	err := conv(im, f)
	im.node = outer
	if err != nil {
		return "", err
	}
	return im.runtime(key("y"))
}
