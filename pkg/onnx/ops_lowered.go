package onnx

// Operators with no HIR op of their own, lowered here to existing HIR ops
// (iota, comparisons, where, layernorm, conv2d, pools, pad, reshape,
// slice, gather and elementwise arithmetic), so every target runs them
// without a kernel of its own.

import (
	"fmt"
	"math"
	"slices"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// constTensor materializes an import-time tensor (a param when large, an
// inline const when small) and returns its HIR name.
func (im *importer) constTensor(hint string, t *tensor.Tensor) (string, error) {
	k := "\x00" + hint // a vals key no ONNX name has
	for im.vals[k] != nil {
		k += "_"
	}
	im.vals[k] = &val{konst: t}
	return im.runtime(k)
}

// scalar emits a scalar constant of dtype dt.
func (im *importer) scalar(hint string, v float64, dt tensor.DType) string {
	lit := fmt.Sprint(int64(v))
	switch {
	case dt == tensor.Bool:
		lit = "false"
		if v != 0 {
			lit = "true"
		}
	case dt.IsFloat():
		lit = floatLit(v, 64)
	}
	return im.emitTmp(hint, "const", nil, lit, dt.String()+"[]")
}

func staticInts(ds []dim.Expr) ([]int64, bool) {
	out := make([]int64, len(ds))
	for i, d := range ds {
		c, ok := d.Const()
		if !ok {
			return nil, false
		}
		out[i] = c
	}
	return out, true
}

// ---- Trilu ----

// convTrilu keeps the upper (upper=1, j - i >= k) or lower (j - i <= k)
// triangle of the last two axes: a mask from iota over rows and columns,
// then where(mask, x, 0).
func convTrilu(im *importer, n *onnxpb.Node) error {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	r := t.Rank()
	if r < 2 {
		return fmt.Errorf("Trilu needs an input of rank >= 2, found rank %d", r)
	}
	upper := attrInt(n, "upper", 1)
	if upper != 0 && upper != 1 {
		return fmt.Errorf("Trilu attribute upper=%d: want 0 or 1", upper)
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	var k string
	if len(n.Inputs) > 1 && n.Inputs[1] != "" {
		if im.isKnownInt(n.Inputs[1]) {
			s, _, err := im.symOf(n.Inputs[1])
			if err != nil {
				return err
			}
			if len(s) != 1 {
				return fmt.Errorf("Trilu input k has %d values, want one", len(s))
			}
			if c, ok := s[0].Const(); ok {
				k = im.scalar(out+"_k", float64(c), tensor.I64)
			} else {
				k = im.dimScalar(s[0]) // a dim as the diagonal, computed at run time
			}
		} else {
			kt, err := im.typeOf(n.Inputs[1])
			if err != nil {
				return err
			}
			if kt.DType != tensor.I64 || kt.Rank() > 1 {
				return fmt.Errorf("Trilu input k is %s, want an int64 scalar", kt)
			}
			if k, err = im.rt(1); err != nil {
				return err
			}
			if kt.Rank() == 1 {
				if c, ok := kt.Shape[0].Const(); !ok || c != 1 {
					return fmt.Errorf("Trilu input k is %s, want an int64 scalar", kt)
				}
				k = im.emitTmp(out+"_k", "reshape", []string{k}, "shape=[]")
			}
		}
	} else {
		k = im.scalar(out+"_k", 0, tensor.I64)
	}
	rows, cols := t.Shape[r-2], t.Shape[r-1]
	ri := im.emitTmp(out+"_row", "iota", nil, "n="+rows.String())
	ri = im.emitTmp(out+"_row2", "reshape", []string{ri}, "shape="+dimList([]dim.Expr{rows, dim.Const(1)}))
	ci := im.emitTmp(out+"_col", "iota", nil, "n="+cols.String())
	diag := im.emitTmp(out+"_diag", "sub", []string{ci, ri}) // j - i
	cmp := "le"
	if upper == 1 {
		cmp = "ge"
	}
	mask := im.emitTmp(out+"_mask", cmp, []string{diag, k})
	zero := im.scalar(out+"_zero", 0, t.DType)
	return im.emit(n.Outputs[:1], "where", []string{mask, x, zero})
}

// ---- InstanceNormalization ----

// convInstanceNorm normalizes each (n, c) plane over its spatial axes
// (layernorm over axes 2..end, no scale), then scales and shifts per
// channel. torch GroupNorm exports as Reshape -> InstanceNormalization ->
// Reshape -> Mul -> Add, which this covers.
func convInstanceNorm(im *importer, n *onnxpb.Node) error {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if t.Rank() < 3 {
		return fmt.Errorf("InstanceNormalization needs an input [N, C, D1, ...] of rank >= 3, found rank %d", t.Rank())
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	norm := im.emitTmp(out+"_norm", "layernorm", []string{x}, "axis=2", "eps="+floatLit(attrFloat(n, "epsilon", 1e-5), 32))
	shape := []dim.Expr{t.Shape[1]}
	for range t.Shape[2:] {
		shape = append(shape, dim.Const(1))
	}
	var vecs [2]string
	for i := range vecs {
		v, err := im.rt(1 + i)
		if err != nil {
			return fmt.Errorf("InstanceNormalization needs scale and B: %v", err)
		}
		vt, err := im.typeOf(n.Inputs[1+i])
		if err != nil {
			return err
		}
		if vt.Rank() != 1 {
			return fmt.Errorf("InstanceNormalization input %d is %s, want [C]", 1+i, vt)
		}
		vecs[i] = im.emitTmp(fmt.Sprintf("%s_v%d", out, i), "reshape", []string{v}, "shape="+dimList(shape))
	}
	scaled := im.emitTmp(out+"_scaled", "mul", []string{norm, vecs[0]})
	return im.emit(n.Outputs[:1], "add", []string{scaled, vecs[1]})
}

// ---- 1-D Conv, MaxPool, AveragePool through the 2-D ops ----

// window1D reads a 1-D window's strides, pads and dilations and resolves
// auto_pad against the input length l (SAME_* needs it static).
func window1D(n *onnxpb.Node, l dim.Expr, k int64) (stride, padBegin, padEnd, dil int64, err error) {
	one := func(name string, def int64) (int64, error) {
		v, ok := attrInts(n, name)
		if !ok {
			return def, nil
		}
		if len(v) != 1 || v[0] < 1 {
			return 0, fmt.Errorf("%s on a 1-D input: attribute %s=%v, want one positive value", n.OpType, name, v)
		}
		return v[0], nil
	}
	if stride, err = one("strides", 1); err != nil {
		return
	}
	if dil, err = one("dilations", 1); err != nil {
		return
	}
	if p, ok := attrInts(n, "pads"); ok {
		if len(p) != 2 || p[0] < 0 || p[1] < 0 {
			return 0, 0, 0, 0, fmt.Errorf("%s on a 1-D input: attribute pads=%v, want [begin, end] >= 0", n.OpType, p)
		}
		padBegin, padEnd = p[0], p[1]
	}
	switch ap := attrString(n, "auto_pad", "NOTSET"); ap {
	case "NOTSET":
	case "VALID":
		padBegin, padEnd = 0, 0
	case "SAME_UPPER", "SAME_LOWER":
		in, ok := l.Const()
		if !ok {
			return 0, 0, 0, 0, fmt.Errorf("attribute auto_pad=%s needs a static length, found %s", ap, l)
		}
		out := (in + stride - 1) / stride
		total := max(0, (out-1)*stride+(k-1)*dil+1-in)
		padBegin, padEnd = total/2, total-total/2
		if ap == "SAME_LOWER" {
			padBegin, padEnd = padEnd, padBegin
		}
	default:
		return 0, 0, 0, 0, fmt.Errorf("attribute auto_pad=%q is not supported", ap)
	}
	return stride, padBegin, padEnd, dil, nil
}

// convConvAny imports Conv: 2-D directly, 1-D ([N, C, L]) as a 2-D
// convolution over [N, C, 1, L].
func convConvAny(im *importer, n *onnxpb.Node) error {
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if t.Rank() == 5 {
		return conv3D(im, n, t)
	}
	if t.Rank() != 3 {
		return convConv(im, n)
	}
	if len(n.Inputs) < 2 || n.Inputs[1] == "" {
		return fmt.Errorf("Conv needs a weight input")
	}
	wt, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	if wt.Rank() != 3 {
		return fmt.Errorf("1-D Conv with a weight %s, want [O, C/group, k]", wt)
	}
	k, ok := wt.Shape[2].Const()
	if !ok {
		return fmt.Errorf("1-D Conv with a symbolic kernel size %s", wt.Shape[2])
	}
	if ks, ok := attrInts(n, "kernel_shape"); ok && (len(ks) != 1 || ks[0] != k) {
		return fmt.Errorf("attribute kernel_shape=%v does not match the weight %s", ks, wt)
	}
	s, pb, pe, d, err := window1D(n, t.Shape[2], k)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	var args []string
	for i := 0; i < len(n.Inputs) && i < 3; i++ {
		if n.Inputs[i] == "" {
			continue
		}
		a, err := im.rt(i)
		if err != nil {
			return err
		}
		if i < 2 {
			a = im.emitTmp(fmt.Sprintf("%s_in%d", out, i), "unsqueeze", []string{a}, "axes=[2]")
		}
		args = append(args, a)
	}
	y := im.emitTmp(out+"_2d", "conv2d", args, fmt.Sprintf("stride=[1, %d]", s), fmt.Sprintf("pad=[0, %d, 0, %d]", pb, pe),
		fmt.Sprintf("dilation=[1, %d]", d), fmt.Sprintf("groups=%d", attrInt(n, "group", 1)))
	return im.emit(n.Outputs[:1], "squeeze", []string{y}, "axes=[2]")
}

// poolAny imports MaxPool and AveragePool: 2-D directly, 1-D as a 2-D pool
// over [N, C, 1, L].
func poolAny(op string) converter {
	pool2D := pool(op)
	var conv converter
	conv = func(im *importer, n *onnxpb.Node) error {
		t, err := im.typeOf(n.Inputs[0])
		if err != nil {
			return err
		}
		if op == "maxpool2d" && (t.DType == tensor.U8 || t.DType == tensor.I8) {
			return im.bytePool(n, t.DType, conv)
		}
		if t.Rank() == 5 {
			return pool3D(im, n, t, op)
		}
		if t.Rank() != 3 {
			return pool2D(im, n)
		}
		if len(n.Outputs) > 1 && n.Outputs[1] != "" {
			return fmt.Errorf("MaxPool's Indices output is not supported")
		}
		if attrInt(n, "storage_order", 0) != 0 {
			return fmt.Errorf("attribute storage_order=1 is not supported")
		}
		kernel, ok := attrInts(n, "kernel_shape")
		if !ok || len(kernel) != 1 || kernel[0] < 1 {
			return fmt.Errorf("%s on a 1-D input: attribute kernel_shape=%v, want one positive value", n.OpType, kernel)
		}
		s, pb, pe, d, err := window1D(n, t.Shape[2], kernel[0])
		if err != nil {
			return err
		}
		if pb >= kernel[0] || pe >= kernel[0] {
			return fmt.Errorf("attribute pads=[%d, %d]: pads must be smaller than the kernel (%d)", pb, pe, kernel[0])
		}
		ceil := attrInt(n, "ceil_mode", 0) != 0
		x, err := im.rt(0)
		if err != nil {
			return err
		}
		out := n.Outputs[0]
		x = im.emitTmp(out+"_in", "unsqueeze", []string{x}, "axes=[2]")
		attrs := []string{fmt.Sprintf("kernel=[1, %d]", kernel[0]), fmt.Sprintf("stride=[1, %d]", s), fmt.Sprintf("pad=[0, %d, 0, %d]", pb, pe),
			fmt.Sprintf("dilation=[1, %d]", d), fmt.Sprintf("ceil_mode=%v", ceil)}
		if op == "avgpool2d" {
			attrs = append(attrs, fmt.Sprintf("count_include_pad=%v", attrInt(n, "count_include_pad", 0) != 0))
		}
		y := im.emitTmp(out+"_2d", op, []string{x}, attrs...)
		return im.emit(n.Outputs[:1], "squeeze", []string{y}, "axes=[2]")
	}
	return conv
}

// bytePool imports a MaxPool of uint8 or int8 values (opset 12; the
// QOperator models of ONNX Runtime's quantizer and the ONNX model zoo
// pool their quantized activations so) as the same MaxPool of the values
// cast to f32, cast back: every byte is exact in f32 and the maximum
// commutes with both casts, so the result is the bytes' own maximum.
// pool is the MaxPool converter, run over the cast input.
func (im *importer) bytePool(n *onnxpb.Node, dt tensor.DType, pool converter) error {
	if len(n.Outputs) > 1 && n.Outputs[1] != "" {
		return fmt.Errorf("MaxPool's Indices output is not supported")
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	y, err := im.convertOver(n, n.OpType, pool, out, im.emitTmp(out+"_f32", "cast", []string{x}, "to=f32"))
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "cast", []string{y}, "to="+dt.String())
}

// ---- ConvTranspose ----

// floorDiv2 is floor(v / 2), as ONNX's reference splits a total padding.
func floorDiv2(v int64) int64 {
	if v < 0 {
		return -((-v + 1) / 2)
	}
	return v / 2
}

// convConvTranspose lowers a 2-D (or 1-D, through the 2-D path)
// ConvTranspose. With dilation 1 and a weight known at import it is one
// conv2d by the phase decomposition (convTransposePhases). Otherwise it is
// a stride-1 conv2d: zeros are inserted between input
// pixels (stride - 1 per gap: unsqueeze, pad, reshape), the result is
// padded by dilation*(k-1) - pad (plus output_padding at the end; a
// negative amount crops with a slice) and convolved with the weight
// flipped spatially (gather with reversed indices) and transposed per group from [Cin, Cout/g, kh, kw]
// to [Cout, Cin/g, kh, kw] (weight-only ops, which rlxc folds at build
// time). It costs stride^2 more multiply-adds than a dedicated kernel.
func convConvTranspose(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) < 2 || n.Inputs[1] == "" {
		return fmt.Errorf("ConvTranspose needs a weight input")
	}
	xt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	wt, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	rank := xt.Rank()
	if rank != 3 && rank != 4 {
		return fmt.Errorf("ConvTranspose on a rank-%d input: only 1-D and 2-D (NCL, NCHW) are supported", rank)
	}
	if wt.Rank() != rank {
		return fmt.Errorf("ConvTranspose weight %s does not match the rank-%d input", wt, rank)
	}
	sp := rank - 2
	ws, ok := staticInts(wt.Shape)
	if !ok {
		return fmt.Errorf("ConvTranspose weight %s has a symbolic shape", wt)
	}
	for _, d := range ws {
		if d < 1 {
			return fmt.Errorf("ConvTranspose weight %s has an empty dim", wt)
		}
	}
	g := attrInt(n, "group", 1)
	if g < 1 || ws[0]%g != 0 {
		return fmt.Errorf("attribute group=%d does not divide the weight's %d input channels", g, ws[0])
	}
	if c, ok := xt.Shape[1].Const(); ok && c != ws[0] {
		return fmt.Errorf("input has %d channels, the weight %s expects %d", c, wt, ws[0])
	}
	cig, cog := ws[0]/g, ws[1]
	cout := cog * g
	k := ws[2:]
	if ks, ok := attrInts(n, "kernel_shape"); ok && fmt.Sprint(ks) != fmt.Sprint(k) {
		return fmt.Errorf("attribute kernel_shape=%v does not match the weight %s", ks, wt)
	}
	list := func(name string, def, lo int64, size int) ([]int64, error) {
		v, ok := attrInts(n, name)
		if !ok {
			v = make([]int64, size)
			for i := range v {
				v[i] = def
			}
			return v, nil
		}
		if len(v) != size {
			return nil, fmt.Errorf("attribute %s=%v, want %d values", name, v, size)
		}
		for _, e := range v {
			if e < lo {
				return nil, fmt.Errorf("attribute %s=%v, want values >= %d", name, v, lo)
			}
		}
		return v, nil
	}
	stride, err := list("strides", 1, 1, sp)
	if err != nil {
		return err
	}
	dil, err := list("dilations", 1, 1, sp)
	if err != nil {
		return err
	}
	outPad, err := list("output_padding", 0, 0, sp)
	if err != nil {
		return err
	}
	pads, err := list("pads", 0, -1<<40, 2*sp)
	if err != nil {
		return err
	}
	inDims := xt.Shape[2:]
	ap := attrString(n, "auto_pad", "NOTSET")
	split := func(i int, total int64) {
		if ap == "SAME_UPPER" {
			pads[i], pads[i+sp] = floorDiv2(total), total-floorDiv2(total)
		} else {
			pads[i], pads[i+sp] = total-floorDiv2(total), floorDiv2(total)
		}
	}
	switch ap {
	case "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER":
	default:
		return fmt.Errorf("attribute auto_pad=%q is not supported", ap)
	}
	if outShape, ok := attrInts(n, "output_shape"); ok {
		if len(outShape) == sp+2 {
			outShape = outShape[2:]
		}
		if len(outShape) != sp {
			return fmt.Errorf("attribute output_shape=%v, want %d spatial sizes", outShape, sp)
		}
		for i := 0; i < sp; i++ {
			l, ok := inDims[i].Const()
			if !ok {
				return fmt.Errorf("attribute output_shape needs static spatial input sizes, found %s", inDims[i])
			}
			split(i, stride[i]*(l-1)+outPad[i]+(k[i]-1)*dil[i]+1-outShape[i])
		}
	} else {
		switch ap {
		case "VALID":
			for i := range pads {
				pads[i] = 0
			}
		case "SAME_UPPER", "SAME_LOWER":
			// The output is input*stride: the total padding does not depend on the input size.
			for i := 0; i < sp; i++ {
				split(i, outPad[i]+(k[i]-1)*dil[i]+1-stride[i])
			}
		}
	}
	for i := 0; i < sp; i++ {
		if l, ok := inDims[i].Const(); ok && stride[i]*(l-1)+outPad[i]+(k[i]-1)*dil[i]+1-pads[i]-pads[i+sp] < 1 {
			return fmt.Errorf("attributes pads=%v, output_padding=%v: spatial axis %d of the output would be empty", pads, outPad, i)
		}
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	w, err := im.rt(1)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	xs := append([]dim.Expr(nil), xt.Shape...)
	kk := append([]int64(nil), k...)
	if sp == 1 {
		// 1-D: a unit H axis with a 1-tall window.
		x = im.emitTmp(out+"_x2d", "unsqueeze", []string{x}, "axes=[2]")
		w = im.emitTmp(out+"_w2d", "unsqueeze", []string{w}, "axes=[2]")
		xs = []dim.Expr{xs[0], xs[1], dim.Const(1), xs[2]}
		kk = []int64{1, k[0]}
		stride, dil, outPad = []int64{1, stride[0]}, []int64{1, dil[0]}, []int64{0, outPad[0]}
		pads = []int64{0, pads[0], 0, pads[1]}
	}
	var bias string
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		if bias, err = im.rt(2); err != nil {
			return err
		}
	}
	if _, known := im.constOf(n.Inputs[1]); known && dil[0] == 1 && dil[1] == 1 {
		last := func(op string, args []string, attrs ...string) error {
			if sp == 1 {
				y := im.emitTmp(out+"_2d", op, args, attrs...)
				return im.emit(n.Outputs[:1], "squeeze", []string{y}, "axes=[2]")
			}
			return im.emit(n.Outputs[:1], op, args, attrs...)
		}
		return im.convTransposePhases(out, x, w, bias, ctGeom{xs: xs, k: kk, stride: stride, outPad: outPad, pads: pads, g: g, cig: cig, cog: cog}, last)
	}
	// The weight: [Cin, Cout/g, kh, kw] -> [Cout, Cin/g, kh, kw], flipped.
	if g == 1 {
		w = im.emitTmp(out+"_wt", "transpose", []string{w}, "perm=[1, 0, 2, 3]")
	} else {
		w = im.emitTmp(out+"_wg", "reshape", []string{w}, "shape="+intList([]int64{g, cig, cog, kk[0], kk[1]}))
		w = im.emitTmp(out+"_wgt", "transpose", []string{w}, "perm=[0, 2, 1, 3, 4]")
		w = im.emitTmp(out+"_wt", "reshape", []string{w}, "shape="+intList([]int64{cout, cig, kk[0], kk[1]}))
	}
	// The flip is a gather with reversed indices: slice with step -1 needs
	// a negative end, which specialization does not take.
	for i := 0; i < 2; i++ {
		if kk[i] > 1 {
			rev := make([]int64, kk[i])
			for j := range rev {
				rev[j] = kk[i] - 1 - int64(j)
			}
			idx := im.emitTmp(fmt.Sprintf("%s_rev%d", out, i), "const", nil, intList(rev), fmt.Sprintf("i64[%d]", kk[i]))
			w = im.emitTmp(fmt.Sprintf("%s_wflip%d", out, i), "gather", []string{w, idx}, fmt.Sprintf("axis=%d", 2+i))
		}
	}
	// Zeros between input pixels: [N, C, H, 1, W, 1] padded to
	// [N, C, H, sh, W, sw] is [N, C, H*sh, W*sw] with each pixel followed by
	// stride-1 zeros (the trailing ones are cropped or counted below).
	cur := []dim.Expr{xs[2], xs[3]}
	if stride[0] > 1 || stride[1] > 1 {
		x = im.emitTmp(out+"_xu", "unsqueeze", []string{x}, "axes=[3, 5]")
		x = im.emitTmp(out+"_xz", "pad", []string{x}, "pads="+intList([]int64{0, 0, 0, 0, 0, 0, 0, 0, 0, stride[0] - 1, 0, stride[1] - 1}))
		for i := range cur {
			if cur[i], err = dim.Mul(cur[i], dim.Const(stride[i])); err != nil {
				return err
			}
		}
		x = im.emitTmp(out+"_xs", "reshape", []string{x}, "shape="+dimList([]dim.Expr{xs[0], xs[1], cur[0], cur[1]}))
	}
	var convPad [4]int64
	var starts, ends []dim.Expr
	var axes []int64
	for i := 0; i < 2; i++ {
		b := dil[i]*(kk[i]-1) - pads[i]
		tail := dil[i]*(kk[i]-1) - pads[i+2] + outPad[i] - (stride[i] - 1)
		start, end := int64(0), cur[i]
		if b < 0 {
			start = -b
		} else {
			convPad[i] = b
		}
		if tail < 0 {
			if end, err = dim.Add(cur[i], dim.Const(tail)); err != nil {
				return err
			}
		} else {
			convPad[i+2] = tail
		}
		if start != 0 || tail < 0 {
			starts, ends, axes = append(starts, dim.Const(start)), append(ends, end), append(axes, int64(2+i))
		}
	}
	if axes != nil {
		x = im.emitTmp(out+"_xc", "slice", []string{x}, "starts="+dimList(starts), "ends="+dimList(ends), "axes="+intList(axes))
	}
	args := []string{x, w}
	if bias != "" {
		args = append(args, bias)
	}
	attrs := []string{"stride=[1, 1]", "pad=" + intList(convPad[:]), "dilation=" + intList(dil), fmt.Sprintf("groups=%d", g)}
	if sp == 1 {
		y := im.emitTmp(out+"_2d", "conv2d", args, attrs...)
		return im.emit(n.Outputs[:1], "squeeze", []string{y}, "axes=[2]")
	}
	return im.emit(n.Outputs[:1], "conv2d", args, attrs...)
}

// ctGeom is a 2-D ConvTranspose's geometry, dilation 1: the input's dims
// [N, Cin, H, W], the kernel size, strides, output_padding, the pads
// [top, left, bottom, right] (auto_pad and output_shape resolved; they may
// be negative), the group count and the channels per group.
type ctGeom struct {
	xs                []dim.Expr
	k, stride, outPad []int64
	pads              []int64
	g, cig, cog       int64
}

// convTransposePhases lowers a 2-D ConvTranspose with dilation 1 to one
// stride-1 conv2d by the sub-pixel (phase) decomposition. Along one axis
// with stride s and kernel K, the uncropped output y (length s*(L-1)+K) is
//
//	y[t*s + a] = sum_j x[t - j] * w[j*s + a],  a < s, j < J = ceil(K/s)
//
// (w is zero past K): phase a is a stride-1 correlation of x with the
// sub-kernel w[a], w[s+a], ... reversed. So one conv2d of the original
// input, padded by J-1 on each side, with Cout*sh*sw output channels
// (co, a, b), co-major so each group's outputs stay contiguous, and the
// weight
//
//	Wc[(co,a,b), ci, mh, mw] = W[ci, co, (Jh-1-mh)*sh + a, (Jw-1-mw)*sw + b]
//
// gives every phase at t = 0 .. L+J-2; interleaving the phases (reshape,
// transpose, reshape) gives y with s*J - K trailing zeros, which is then
// cropped to ONNX's output: pad_begin onwards, s*(L-1)+output_padding+K-
// pad_begin-pad_end long. A negative pad_begin, or an output past the
// end of y (output_padding, negative pad_end), widens the conv's padding
// by whole phase steps, so the bias is everywhere and no pad is needed.
// The weight is rearranged by weight-only ops (pad, gather, reshape,
// transpose) that rlxc folds at build time; the multiply-adds are those of
// the transposed convolution plus the taps rounded up to J*s, where the
// zero-insertion lowering (convConvTranspose) multiplies s^2 times more.
func (im *importer) convTransposePhases(out, x, w, bias string, c ctGeom, last func(op string, args []string, attrs ...string) error) error {
	var j [2]int64
	var convPad [4]int64
	var starts, ends []dim.Expr
	var axes []int64
	phaseLen := make([]dim.Expr, 2)
	for i := 0; i < 2; i++ {
		s, k := c.stride[i], c.k[i]
		j[i] = (k + s - 1) / s
		pb, pe := c.pads[i], c.pads[i+2]
		var eb, ee int64
		if pb < 0 {
			eb = (-pb + s - 1) / s
		}
		// Trailing elements of the phase array past the output's end.
		tail := s*j[i] - c.outPad[i] - k + pe
		if tail < 0 {
			ee = (-tail + s - 1) / s
			tail += ee * s
		}
		lead := pb + eb*s
		convPad[i], convPad[i+2] = j[i]-1+eb, j[i]-1+ee
		l, err := dim.Add(c.xs[2+i], dim.Const(j[i]-1+eb+ee))
		if err != nil {
			return err
		}
		phaseLen[i] = l
		full, err := dim.Mul(l, dim.Const(s))
		if err != nil {
			return err
		}
		if lead != 0 || tail != 0 {
			end, err := dim.Add(full, dim.Const(-tail))
			if err != nil {
				return err
			}
			starts, ends, axes = append(starts, dim.Const(lead)), append(ends, end), append(axes, int64(2+i))
		}
	}
	sh, sw := c.stride[0], c.stride[1]
	ph := sh * sw
	cout := c.g * c.cog
	// The weight [Cin, Cog, Kh, Kw]: taps padded to J*s, then per axis a
	// gather ordering them (phase, reversed j), so axis 2 is (a, mh) and
	// axis 3 is (b, mw).
	if j[0]*sh > c.k[0] || j[1]*sw > c.k[1] {
		w = im.emitTmp(out+"_wpad", "pad", []string{w}, "pads="+intList([]int64{0, 0, 0, 0, 0, 0, j[0]*sh - c.k[0], j[1]*sw - c.k[1]}))
	}
	for i := 0; i < 2; i++ {
		s := c.stride[i]
		idx := make([]int64, s*j[i])
		identity := true
		for a := int64(0); a < s; a++ {
			for m := int64(0); m < j[i]; m++ {
				idx[a*j[i]+m] = (j[i]-1-m)*s + a
				identity = identity && idx[a*j[i]+m] == a*j[i]+m
			}
		}
		if !identity {
			ix := im.emitTmp(fmt.Sprintf("%s_wix%d", out, i), "const", nil, intList(idx), fmt.Sprintf("i64[%d]", len(idx)))
			w = im.emitTmp(fmt.Sprintf("%s_wperm%d", out, i), "gather", []string{w, ix}, fmt.Sprintf("axis=%d", 2+i))
		}
	}
	// [g, Cin/g, Cog*sh, Jh, sw, Jw] -> [g, Cog*sh, sw, Cin/g, Jh, Jw]
	// -> [Cout*sh*sw, Cin/g, Jh, Jw].
	w = im.emitTmp(out+"_wg", "reshape", []string{w}, "shape="+intList([]int64{c.g, c.cig, c.cog * sh, j[0], sw, j[1]}))
	w = im.emitTmp(out+"_wgt", "transpose", []string{w}, "perm=[0, 2, 4, 1, 3, 5]")
	w = im.emitTmp(out+"_wc", "reshape", []string{w}, "shape="+intList([]int64{cout * ph, c.cig, j[0], j[1]}))
	convAttrs := []string{"stride=[1, 1]", "pad=" + intList(convPad[:]), "dilation=[1, 1]", fmt.Sprintf("groups=%d", c.g)}
	if ph > 1 {
		if pads, ok := exactPhases(c, j); ok {
			return im.convTransposeExactPhases(out, x, w, bias, c, j, pads, last)
		}
	}
	var y string
	if ph > 1 && (j[0]*sh > c.k[0] || j[1]*sw > c.k[1]) && c.k[0] >= sh && c.k[1] >= sw {
		y = im.convTransposeEachPhase(out, x, w, bias, c, j, convPad)
	} else {
		args := []string{x, w}
		if bias != "" {
			if ph > 1 {
				bias = im.emitTmp(out+"_bu", "unsqueeze", []string{bias}, "axes=[1]")
				bias = im.emitTmp(out+"_be", "expand", []string{bias}, "shape="+intList([]int64{cout, ph}))
				bias = im.emitTmp(out+"_bc", "reshape", []string{bias}, "shape="+intList([]int64{cout * ph}))
			}
			args = append(args, bias)
		}
		if ph == 1 && axes == nil {
			return last("conv2d", args, convAttrs...)
		}
		y = im.emitTmp(out+"_phases", "conv2d", args, convAttrs...)
	}
	if ph > 1 {
		var full []dim.Expr
		var err error
		if y, full, err = im.interleavePhases(out, y, c, phaseLen); err != nil {
			return err
		}
		if axes == nil {
			return last("reshape", []string{y}, "shape="+dimList(full))
		}
		y = im.emitTmp(out+"_full", "reshape", []string{y}, "shape="+dimList(full))
	}
	return last("slice", []string{y}, "starts="+dimList(starts), "ends="+dimList(ends), "axes="+intList(axes))
}

// interleavePhases moves y's stride phases [N, Cout, sh·sw, H', W']
// (phase-major, n = [H', W']) into place: reshaped to [N·Cout, sh, sw,
// H', W'] and transposed to [N·Cout, H', sh, W', sw], leaving out a unit
// stride axis (a 1-D ConvTranspose's H). It returns the transposed value
// and the shape [N, Cout, H'·sh, W'·sw] that reshaping it to gives the
// interleaved output.
func (im *importer) interleavePhases(out, y string, c ctGeom, n []dim.Expr) (string, []dim.Expr, error) {
	sh, sw := c.stride[0], c.stride[1]
	cout := c.g * c.cog
	full := []dim.Expr{c.xs[0], dim.Const(cout), dim.Const(0), dim.Const(0)}
	for i := 0; i < 2; i++ {
		var err error
		if full[2+i], err = dim.Mul(n[i], dim.Const(c.stride[i])); err != nil {
			return "", nil, err
		}
	}
	nc, err := dim.Mul(c.xs[0], dim.Const(cout))
	if err != nil {
		return "", nil, err
	}
	src := []dim.Expr{nc, dim.Const(sh), dim.Const(sw), n[0], n[1]}
	var shape []dim.Expr
	pos := map[int]int64{}
	for a, d := range src {
		if (a == 1 && sh == 1) || (a == 2 && sw == 1) {
			continue
		}
		pos[a] = int64(len(shape))
		shape = append(shape, d)
	}
	var perm []int64
	for _, a := range []int{0, 3, 1, 4, 2} {
		if p, ok := pos[a]; ok {
			perm = append(perm, p)
		}
	}
	y = im.emitTmp(out+"_ph", "reshape", []string{y}, "shape="+dimList(shape))
	return im.emitTmp(out+"_pht", "transpose", []string{y}, "perm="+intList(perm)), full, nil
}

// exactPhases reports a ConvTranspose whose every phase can compute just
// the outputs ONNX keeps, and gives each phase's conv2d padding
// [axis][slot][begin, end] with the phases ordered by the output slot
// they fill (slot (a - pad_begin) mod s for phase a). It takes kernels a
// multiple of the stride (every phase has J taps), pads and
// output_padding that leave the output a multiple of the stride long
// (every phase as long: s*(L-1)+output_padding+K-pad_begin-pad_end =
// s*(L+d)), no negative conv2d padding, and more than one tap a phase
// on some axis (else nothing is dropped). ConvTranspose k4 s2 p1 (a
// DCGAN's, pix2pix's) is one: the single conv computes L+1 positions a
// phase where the output keeps L, a quarter more work at 8x8 and a
// cropping copy after.
func exactPhases(c ctGeom, j [2]int64) (pads [2][][2]int64, ok bool) {
	if j[0] == 1 && j[1] == 1 {
		// One tap a phase (k2 s2): the single conv computes no position
		// it drops.
		return pads, false
	}
	for i := 0; i < 2; i++ {
		s, k, pb, pe, op := c.stride[i], c.k[i], c.pads[i], c.pads[i+2], c.outPad[i]
		if k%s != 0 || pb < 0 || pe < op || (op+k-pb-pe)%s != 0 {
			return pads, false
		}
		d := (op+k-pb-pe)/s - 1 // each phase has L + d outputs
		pads[i] = make([][2]int64, s)
		for slot := int64(0); slot < s; slot++ {
			a := (slot + pb) % s
			t0 := (pb - a + s - 1) / s // the phase's first kept position, a multiple of s away
			begin := j[i] - 1 - t0
			end := d + j[i] - 1 - begin
			if begin < 0 || end < 0 {
				return pads, false
			}
			pads[i][slot] = [2]int64{begin, end}
		}
	}
	return pads, true
}

// convTransposeExactPhases is convTransposePhases where exactPhases
// holds: one conv2d per phase with its own padding, each giving just the
// outputs kept, stacked slot-major and interleaved (reshape, transpose,
// reshape) straight into the output, with no crop.
func (im *importer) convTransposeExactPhases(out, x, wc, bias string, c ctGeom, j [2]int64, pads [2][][2]int64,
	last func(op string, args []string, attrs ...string) error) error {
	sh, sw := c.stride[0], c.stride[1]
	cout := c.g * c.cog
	wr := im.emitTmp(out+"_wr", "reshape", []string{wc}, "shape="+intList([]int64{cout, sh, sw, c.cig, j[0], j[1]}))
	var phases []string
	for sa := int64(0); sa < sh; sa++ {
		for sb := int64(0); sb < sw; sb++ {
			a, b := (sa+c.pads[0])%sh, (sb+c.pads[1])%sw
			hint := fmt.Sprintf("%s_ph%d%d", out, a, b)
			ws := im.emitTmp(hint+"_w", "slice", []string{wr}, "starts="+intList([]int64{a, b}), "ends="+intList([]int64{a + 1, b + 1}), "axes=[1, 2]")
			ws = im.emitTmp(hint+"_wk", "reshape", []string{ws}, "shape="+intList([]int64{cout, c.cig, j[0], j[1]}))
			args := []string{x, ws}
			if bias != "" {
				args = append(args, bias)
			}
			pad := []int64{pads[0][sa][0], pads[1][sb][0], pads[0][sa][1], pads[1][sb][1]}
			y := im.emitTmp(hint, "conv2d", args, "stride=[1, 1]", "pad="+intList(pad), "dilation=[1, 1]", fmt.Sprintf("groups=%d", c.g))
			phases = append(phases, im.emitTmp(hint+"_u", "unsqueeze", []string{y}, "axes=[2]"))
		}
	}
	y := im.emitTmp(out+"_phases", "concat", phases, "axis=2")
	// Each phase is L + d long per axis: the output's length over s.
	n := make([]dim.Expr, 2)
	for i := 0; i < 2; i++ {
		var err error
		if n[i], err = dim.Add(c.xs[2+i], dim.Const((c.outPad[i]+c.k[i]-c.pads[i]-c.pads[i+2])/c.stride[i]-1)); err != nil {
			return err
		}
	}
	y, full, err := im.interleavePhases(out, y, c, n)
	if err != nil {
		return err
	}
	return last("reshape", []string{y}, "shape="+dimList(full))
}

// convTransposeEachPhase is convTransposePhases' conv2d where some
// phases have fewer taps than J (a kernel that is not a multiple of the
// stride: k3 s2 has phases of 2x2, 2x1, 1x2 and 1x1 taps): one conv2d per
// phase (a, b) with its own taps, which skips the zeros the padded
// sub-kernels multiply (16/9 of the work at k3 s2), stacked phase-major
// as [N, Cout, sh·sw, L, L'], the single conv's layout. Each phase's
// taps are the last J_a of the padded, reversed sub-kernel, so its
// padding before is J_a-1 (plus the widening), after as the single
// conv's: every phase gives the same L+J-1 outputs, aligned. wc is the
// rearranged weight [Cout·sh·sw, Cin/g, Jh, Jw]; every phase has a tap
// (kernel at least the stride on both axes).
func (im *importer) convTransposeEachPhase(out, x, wc, bias string, c ctGeom, j [2]int64, convPad [4]int64) string {
	sh, sw := c.stride[0], c.stride[1]
	cout := c.g * c.cog
	wr := im.emitTmp(out+"_wr", "reshape", []string{wc}, "shape="+intList([]int64{cout, sh, sw, c.cig, j[0], j[1]}))
	var phases []string
	for a := int64(0); a < sh; a++ {
		for b := int64(0); b < sw; b++ {
			ja, jb := (c.k[0]-a+sh-1)/sh, (c.k[1]-b+sw-1)/sw
			hint := fmt.Sprintf("%s_ph%d%d", out, a, b)
			ws := im.emitTmp(hint+"_w", "slice", []string{wr},
				"starts="+intList([]int64{a, b, j[0] - ja, j[1] - jb}), "ends="+intList([]int64{a + 1, b + 1, j[0], j[1]}), "axes=[1, 2, 4, 5]")
			ws = im.emitTmp(hint+"_wk", "reshape", []string{ws}, "shape="+intList([]int64{cout, c.cig, ja, jb}))
			args := []string{x, ws}
			if bias != "" {
				args = append(args, bias)
			}
			pad := []int64{convPad[0] - (j[0] - ja), convPad[1] - (j[1] - jb), convPad[2], convPad[3]}
			y := im.emitTmp(hint, "conv2d", args, "stride=[1, 1]", "pad="+intList(pad), "dilation=[1, 1]", fmt.Sprintf("groups=%d", c.g))
			phases = append(phases, im.emitTmp(hint+"_u", "unsqueeze", []string{y}, "axes=[2]"))
		}
	}
	return im.emitTmp(out+"_phases", "concat", phases, "axis=2")
}

// ---- Resize ----

// resizeSpec is what a Resize node asks for, read and validated at import.
type resizeSpec struct {
	mode, ctm, nearestMode string
	cubicA                 float64 // cubic_coeff_a
	excludeOutside         bool    // cubic: taps outside the input weigh 0, the rest renormalized
}

// convResize imports Resize (opset 11 and newer) of a 4-D NCHW input that
// resizes H and W only: nearest (every nearest_mode), linear and cubic
// (cubic_coeff_a, exclude_outside), with the
// coordinate_transformation_modes half_pixel, pytorch_half_pixel,
// align_corners, asymmetric and tf_half_pixel_for_nn. Each axis is a gather
// with source indices (linear: two gathers and a lerp; cubic: four gathers
// and their weighted sum); with static sizes
// the indices and weights are constants computed here, with symbolic ones
// they are computed from iota by ONNX's formulas.
func convResize(im *importer, n *onnxpb.Node) error {
	if im.opset < 11 {
		return convUpsample(im, n)
	}
	return im.resize(n)
}

// convUpsample imports Upsample (opsets 7 and 9) and opset 10's Resize,
// which mean the same: scales (an attribute before opset 9, else input
// 1), mode nearest or linear, the source coordinate x / scale
// (asymmetric), and nearest its floor (ONNX's Upsample:
// input(floor(y / scale))). Each becomes the opset-11 Resize that says
// so.
func convUpsample(im *importer, n *onnxpb.Node) error {
	scales := ""
	switch {
	case len(n.Inputs) > 1 && n.Inputs[1] != "":
		scales = n.Inputs[1]
	case n.Attr("scales") != nil:
		s := n.Attr("scales").Floats
		scales = "\x00" + n.Name + "_scales" // a vals key no ONNX name has
		im.vals[scales] = &val{konst: tensor.FromF32([]int64{int64(len(s))}, s)}
	default:
		return fmt.Errorf("%s needs scales (the attribute before opset 9, else input 1)", n.OpType)
	}
	mode := attrString(n, "mode", "nearest")
	switch mode {
	case "nearest", "linear":
	case "bilinear": // opset 7's spelling for 4-D linear
		mode = "linear"
	default:
		return fmt.Errorf("%s mode=%q is not supported (nearest and linear are)", n.OpType, mode)
	}
	r := &onnxpb.Node{Name: n.Name, OpType: "Resize", Inputs: []string{n.Inputs[0], "", scales}, Outputs: n.Outputs,
		Attrs: []*onnxpb.Attr{
			{Name: "mode", Type: onnxpb.AttrString, S: []byte(mode)},
			{Name: "coordinate_transformation_mode", Type: onnxpb.AttrString, S: []byte("asymmetric")},
			{Name: "nearest_mode", Type: onnxpb.AttrString, S: []byte("floor")},
		}}
	return im.resize(r)
}

// resize imports a Resize of opset 11 or later.
func (im *importer) resize(n *onnxpb.Node) error {
	sp := resizeSpec{
		mode:        attrString(n, "mode", "nearest"),
		ctm:         attrString(n, "coordinate_transformation_mode", "half_pixel"),
		nearestMode: attrString(n, "nearest_mode", "round_prefer_floor"),
		cubicA:      float64(float32(attrFloat(n, "cubic_coeff_a", -0.75))),
	}
	switch sp.mode {
	case "nearest", "linear", "cubic":
	default:
		return fmt.Errorf("attribute mode=%q is not supported (nearest, linear and cubic are)", sp.mode)
	}
	if a := attrInt(n, "antialias", 0); a != 0 {
		return fmt.Errorf("attribute antialias=%d is not supported", a)
	}
	switch a := attrInt(n, "exclude_outside", 0); {
	case a != 0 && sp.mode != "cubic":
		return fmt.Errorf("attribute exclude_outside=%d is supported with mode cubic only", a)
	case a != 0:
		sp.excludeOutside = true
	}
	switch sp.ctm {
	case "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn":
	default:
		return fmt.Errorf("attribute coordinate_transformation_mode=%q is not supported (half_pixel, pytorch_half_pixel, align_corners, asymmetric and tf_half_pixel_for_nn are)", sp.ctm)
	}
	if sp.mode == "nearest" {
		switch sp.nearestMode {
		case "round_prefer_floor", "round_prefer_ceil", "floor", "ceil":
		default:
			return fmt.Errorf("attribute nearest_mode=%q is not supported", sp.nearestMode)
		}
	}
	if p := attrString(n, "keep_aspect_ratio_policy", "stretch"); p != "stretch" {
		return fmt.Errorf("attribute keep_aspect_ratio_policy=%q is not supported (only stretch)", p)
	}
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if t.Rank() != 4 {
		return fmt.Errorf("Resize of a rank-%d input: only 4-D (NCHW) is supported", t.Rank())
	}
	if !t.DType.IsFloat() && sp.mode != "nearest" {
		// nearest picks elements (gathers) of any type; linear and cubic
		// interpolate, which for integers each runtime rounds its own way
		return fmt.Errorf("Resize of a %s input in mode %s: integer inputs are resized in mode nearest only", t.DType, sp.mode)
	}
	axes := []int64{0, 1, 2, 3}
	if a, ok := attrInts(n, "axes"); ok {
		axes = nil
		for _, ax := range a {
			if ax < 0 {
				ax += 4
			}
			if ax < 0 || ax > 3 {
				return fmt.Errorf("attribute axes=%v is out of range for a rank-4 input", a)
			}
			axes = append(axes, ax)
		}
	}
	present := func(i int) (*val, bool) {
		if i >= len(n.Inputs) || n.Inputs[i] == "" {
			return nil, false
		}
		v := im.vals[n.Inputs[i]]
		if v != nil && v.konst != nil && v.konst.Len() == 0 {
			return nil, false // an empty tensor stands for an absent input
		}
		return v, true
	}
	scaleV, hasScales := present(2)
	_, hasSizes := present(3)
	if hasScales == hasSizes {
		return fmt.Errorf("Resize needs exactly one of scales and sizes")
	}
	scale := []float64{1, 1, 1, 1}
	outDims := append([]dim.Expr(nil), t.Shape...)
	if hasScales {
		if scaleV == nil || scaleV.konst == nil || !scaleV.konst.DType.IsFloat() {
			return fmt.Errorf("Resize's scales must be a float tensor known at import time")
		}
		s := scaleV.konst.Float64s()
		if len(s) != len(axes) {
			return fmt.Errorf("Resize's scales has %d values for %d axes", len(s), len(axes))
		}
		for i, ax := range axes {
			scale[ax] = float64(float32(s[i]))
			if !(scale[ax] > 0) {
				return fmt.Errorf("Resize's scales %v: scales must be positive", s)
			}
		}
	} else {
		sizes, err := im.dimsOf(3)
		if err != nil {
			return err
		}
		if len(sizes) != len(axes) {
			return fmt.Errorf("Resize's sizes has %d values for %d axes", len(sizes), len(axes))
		}
		for i, ax := range axes {
			outDims[ax] = sizes[i]
		}
	}
	for ax := 0; ax < 2; ax++ {
		if hasScales && scale[ax] != 1 || !hasScales && !dim.Equal(outDims[ax], t.Shape[ax]) {
			return fmt.Errorf("Resize of axis %d (N or C): only H and W are resized", ax)
		}
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	for ax := 2; ax < 4; ax++ {
		in := t.Shape[ax]
		if hasScales {
			if outDims[ax], err = resizedDim(in, scale[ax]); err != nil {
				return err
			}
		}
		if x, err = im.resizeAxis(sp, x, fmt.Sprintf("%s_ax%d", out, ax), ax, in, outDims[ax], scale[ax], hasScales, t.DType); err != nil {
			return err
		}
	}
	im.vals[out] = &val{name: x}
	return nil
}

// resizedDim is ONNX's output size floor(in * scale): in float32 for a
// static size (as runtimes compute it), exactly for a symbolic one, which
// needs a scale that is a small fraction p/q.
func resizedDim(in dim.Expr, scale float64) (dim.Expr, error) {
	if c, ok := in.Const(); ok {
		return dim.Const(int64(math.Floor(float64(float32(c) * float32(scale))))), nil
	}
	for q := int64(1); q <= 64; q++ {
		p := math.Round(scale * float64(q))
		if p >= 1 && float32(p/float64(q)) == float32(scale) {
			m, err := dim.Mul(in, dim.Const(int64(p)))
			if err != nil {
				return dim.Expr{}, err
			}
			return dim.FloorDiv(m, dim.Const(q))
		}
	}
	return dim.Expr{}, fmt.Errorf("Resize's scale %g on the symbolic dim %s: the output size floor(%s*%g) needs a scale that is a fraction p/q with q <= 64", scale, in, in, scale)
}

// sourceCoord is ONNX's x_original for output index i; scale is the
// given scale, or out/in when sizes were given.
func sourceCoord(ctm string, i, scale, in, out float64) float64 {
	switch ctm {
	case "half_pixel":
		return (i+0.5)/scale - 0.5
	case "pytorch_half_pixel":
		if out > 1 {
			return (i+0.5)/scale - 0.5
		}
		return 0
	case "align_corners":
		if out == 1 {
			return 0
		}
		return i * (in - 1) / (out - 1)
	case "tf_half_pixel_for_nn":
		return (i + 0.5) / scale
	}
	return i / scale // asymmetric
}

// nearestIndex rounds a source coordinate by nearest_mode.
func nearestIndex(mode string, x float64) float64 {
	switch mode {
	case "round_prefer_ceil":
		return math.Floor(x + 0.5)
	case "floor":
		return math.Floor(x)
	case "ceil":
		return math.Ceil(x)
	}
	return math.Ceil(x - 0.5) // round_prefer_floor
}

// resizeAxis resizes axis ax of x from in to out.
func (im *importer) resizeAxis(sp resizeSpec, x, hint string, ax int, in, out dim.Expr, scale float64, fromScales bool, dt tensor.DType) (string, error) {
	inC, okIn := in.Const()
	outC, okOut := out.Const()
	if okIn && okOut {
		return im.resizeAxisStatic(sp, x, hint, ax, inC, outC, scale, fromScales, dt)
	}
	// Symbolic: the same formulas over iota, in f32.
	f32 := func(h string, v float64) string { return im.scalar(h, v, tensor.F32) }
	// dimLess1 is d - 1 as an f32 scalar: a constant, or the largest
	// element of iota(d).
	dimLess1 := func(h string, d dim.Expr) string {
		if c, ok := d.Const(); ok {
			return f32(h, float64(c-1))
		}
		it := im.emitTmp(h+"_iota", "iota", nil, "n="+d.String(), "dtype=f32")
		return im.emitTmp(h, "reduce_max", []string{it}, "axes=[0]")
	}
	one := f32(hint+"_one", 1)
	inM1 := dimLess1(hint+"_inm1", in)
	i := im.emitTmp(hint+"_i", "iota", nil, "n="+out.String(), "dtype=f32")
	// divScale is v / scale: v * in / out when sizes were given.
	divScale := func(v string) string {
		if fromScales {
			return im.emitTmp(hint+"_unscaled", "div", []string{v, f32(hint+"_scale", scale)})
		}
		inF := im.emitTmp(hint+"_inf", "add", []string{inM1, one})
		outF := im.emitTmp(hint+"_outf", "add", []string{dimLess1(hint+"_outm1", out), one})
		vin := im.emitTmp(hint+"_vin", "mul", []string{v, inF})
		return im.emitTmp(hint+"_unscaled", "div", []string{vin, outF})
	}
	// outMoreThan1 selects v where out > 1 and 0 where out == 1.
	outMoreThan1 := func(v string, outM1 string) string {
		if c, ok := out.Const(); ok {
			if c > 1 {
				return v
			}
			return im.emitTmp(hint+"_zeros", "mul", []string{i, f32(hint+"_zero", 0)}) // [out] zeros
		}
		cond := im.emitTmp(hint+"_big", "gt", []string{outM1, f32(hint+"_zero", 0)})
		return im.emitTmp(hint+"_sel", "where", []string{cond, v, f32(hint+"_zero2", 0)})
	}
	half := f32(hint+"_half", 0.5)
	var src string
	switch sp.ctm {
	case "asymmetric":
		src = divScale(i)
	case "tf_half_pixel_for_nn":
		src = divScale(im.emitTmp(hint+"_ih", "add", []string{i, half}))
	case "half_pixel", "pytorch_half_pixel":
		src = im.emitTmp(hint+"_src", "sub", []string{divScale(im.emitTmp(hint+"_ih", "add", []string{i, half})), half})
		if sp.ctm == "pytorch_half_pixel" {
			src = outMoreThan1(src, dimLess1(hint+"_outm1b", out))
		}
	case "align_corners":
		outM1 := dimLess1(hint+"_outm1c", out)
		num := im.emitTmp(hint+"_num", "mul", []string{i, inM1})
		src = outMoreThan1(im.emitTmp(hint+"_src", "div", []string{num, outM1}), outM1)
	}
	if sp.mode == "cubic" {
		return im.cubicAxisSym(sp, x, hint, ax, out, src, inM1, dt), nil
	}
	zero := f32(hint+"_zero3", 0)
	clampIdx := func(v string) string {
		v = im.emitTmp(hint+"_lo", "max", []string{v, zero})
		return im.emitTmp(hint+"_hi", "min", []string{v, inM1})
	}
	toIdx := func(v string) string { return im.emitTmp(hint+"_idx", "cast", []string{v}, "to=i64") }
	if sp.mode == "nearest" {
		var r string
		switch sp.nearestMode {
		case "round_prefer_ceil":
			r = im.emitTmp(hint+"_round", "floor", []string{im.emitTmp(hint+"_up", "add", []string{src, half})})
		case "floor":
			r = im.emitTmp(hint+"_round", "floor", []string{src})
		case "ceil":
			r = im.emitTmp(hint+"_round", "ceil", []string{src})
		default:
			r = im.emitTmp(hint+"_round", "ceil", []string{im.emitTmp(hint+"_down", "sub", []string{src, half})})
		}
		return im.emitTmp(hint, "gather", []string{x, toIdx(clampIdx(r))}, fmt.Sprintf("axis=%d", ax)), nil
	}
	xc := clampIdx(src)
	i0 := im.emitTmp(hint+"_i0", "floor", []string{xc})
	w := im.emitTmp(hint+"_w", "sub", []string{xc, i0})
	i1 := im.emitTmp(hint+"_i1", "min", []string{im.emitTmp(hint+"_next", "add", []string{i0, one}), inM1})
	if ax == 2 {
		w = im.emitTmp(hint+"_wcol", "reshape", []string{w}, "shape="+dimList([]dim.Expr{out, dim.Const(1)}))
	}
	if dt != tensor.F32 {
		w = im.emitTmp(hint+"_wcast", "cast", []string{w}, "to="+dt.String())
	}
	w0 := im.emitTmp(hint+"_w0", "sub", []string{im.scalar(hint+"_one_dt", 1, dt), w})
	return im.lerp(x, hint, ax, toIdx(i0), toIdx(i1), w0, w), nil
}

// lerp is gather(x, i0)*w0 + gather(x, i1)*w1 along axis ax.
func (im *importer) lerp(x, hint string, ax int, i0, i1, w0, w1 string) string {
	axis := fmt.Sprintf("axis=%d", ax)
	g0 := im.emitTmp(hint+"_g0", "gather", []string{x, i0}, axis)
	g1 := im.emitTmp(hint+"_g1", "gather", []string{x, i1}, axis)
	a := im.emitTmp(hint+"_a", "mul", []string{g0, w0})
	b := im.emitTmp(hint+"_b", "mul", []string{g1, w1})
	return im.emitTmp(hint, "add", []string{a, b})
}

// cubicTaps are ONNX's cubic interpolation taps for source coordinate
// src on an axis of length in: the input indices first-1 .. first+2, where
// first = ceil(src) - 1 (the pixel at or left of src, the left one when
// src is integral), and their weights for r = src - first in (0, 1] with
// the kernel of coefficient a (Keys; -0.75 as PyTorch, -0.5 as
// TensorFlow). Indices outside the input are returned as they are; the
// caller clamps them (edge) or, with exclude_outside, zeroes their
// weights and renormalizes.
func cubicTaps(src, a float64) (first int64, w [4]float64) {
	f := math.Ceil(src) - 1
	r := src - f
	w = [4]float64{cubicOuter(r+1, a), cubicInner(r, a), cubicInner(1-r, a), cubicOuter(2-r, a)}
	return int64(f) - 1, w
}

// cubicInner and cubicOuter are the cubic kernel at distance d in [0, 1]
// and [1, 2].
func cubicInner(d, a float64) float64 { return ((a+2)*d-(a+3))*d*d + 1 }
func cubicOuter(d, a float64) float64 { return ((a*d-5*a)*d+8*a)*d - 4*a }

// cubicAxisStatic resizes axis ax with cubic interpolation: four gathers
// with constant indices, weighted by constant weights.
func (im *importer) cubicAxisStatic(sp resizeSpec, x, hint string, ax int, in, out int64, scale float64, dt tensor.DType) (string, error) {
	var idx [4][]int64
	var ws [4][]float32
	single := true // every output one input pixel with weight 1
	for k := range idx {
		idx[k], ws[k] = make([]int64, out), make([]float32, out)
	}
	for i := int64(0); i < out; i++ {
		first, w := cubicTaps(sourceCoord(sp.ctm, float64(i), scale, float64(in), float64(out)), sp.cubicA)
		if sp.excludeOutside {
			sum := 0.0
			for k := range w {
				if j := first + int64(k); j < 0 || j >= in {
					w[k] = 0
				}
				sum += w[k]
			}
			for k := range w {
				w[k] /= sum
			}
		}
		ones := 0
		for k := range w {
			idx[k][i] = min(max(first+int64(k), 0), in-1)
			ws[k][i] = float32(w[k])
			if ws[k][i] == 1 {
				ones++
				idx[0][i], idx[k][i] = idx[k][i], idx[0][i]
				ws[0][i], ws[k][i] = ws[k][i], ws[0][i]
			} else if ws[k][i] != 0 {
				single = false
			}
		}
		single = single && ones == 1
	}
	axis := fmt.Sprintf("axis=%d", ax)
	wshape := []int64{out}
	if ax == 2 {
		wshape = []int64{out, 1}
	}
	var sum string
	for k := range idx {
		ih, err := im.constTensor(fmt.Sprintf("%s_i%d", hint, k), tensor.FromI64([]int64{out}, idx[k]))
		if err != nil {
			return "", err
		}
		if single {
			return im.emitTmp(hint, "gather", []string{x, ih}, axis), nil
		}
		wh, err := im.constTensor(fmt.Sprintf("%s_w%d", hint, k), tensor.FromF32(wshape, ws[k]))
		if err != nil {
			return "", err
		}
		if dt != tensor.F32 {
			wh = im.emitTmp(fmt.Sprintf("%s_w%dcast", hint, k), "cast", []string{wh}, "to="+dt.String())
		}
		g := im.emitTmp(fmt.Sprintf("%s_g%d", hint, k), "gather", []string{x, ih}, axis)
		term := im.emitTmp(fmt.Sprintf("%s_t%d", hint, k), "mul", []string{g, wh})
		if sum == "" {
			sum = term
		} else {
			sum = im.emitTmp(fmt.Sprintf("%s_s%d", hint, k), "add", []string{sum, term})
		}
	}
	return sum, nil
}

// cubicAxisSym is cubicAxisStatic for a symbolic size: src is the f32
// source coordinate per output index, inM1 the input length - 1 (f32
// scalar); the taps' indices and weights are computed at run time by
// cubicTaps' formulas.
func (im *importer) cubicAxisSym(sp resizeSpec, x, hint string, ax int, out dim.Expr, src, inM1 string, dt tensor.DType) string {
	f32 := func(h string, v float64) string { return im.scalar(h, v, tensor.F32) }
	op := func(h, o string, args ...string) string { return im.emitTmp(hint+"_"+h, o, args) }
	a := sp.cubicA
	one := f32(hint+"_c1", 1)
	first := op("first", "sub", op("ceil", "ceil", src), one)
	r := op("r", "sub", src, first)
	// inner(d) = ((a+2)*d - (a+3))*d*d + 1, outer(d) = ((a*d - 5a)*d + 8a)*d - 4a.
	inner := func(h, d string) string {
		p := op(h+"_p", "sub", op(h+"_m", "mul", d, f32(hint+"_"+h+"_a2", a+2)), f32(hint+"_"+h+"_a3", a+3))
		p = op(h+"_pd", "mul", p, d)
		p = op(h+"_pdd", "mul", p, d)
		return op(h, "add", p, one)
	}
	outer := func(h, d string) string {
		p := op(h+"_p", "sub", op(h+"_m", "mul", d, f32(hint+"_"+h+"_a", a)), f32(hint+"_"+h+"_5a", 5*a))
		p = op(h+"_pd", "add", op(h+"_q", "mul", p, d), f32(hint+"_"+h+"_8a", 8*a))
		p = op(h+"_pdd", "mul", p, d)
		return op(h, "sub", p, f32(hint+"_"+h+"_4a", 4*a))
	}
	oneMinusR := op("r1", "sub", one, r)
	w := []string{
		outer("c0", op("d0", "add", r, one)),
		inner("c1", r),
		inner("c2", oneMinusR),
		outer("c3", op("d3", "add", oneMinusR, one)),
	}
	zero := f32(hint+"_c0z", 0)
	idx := make([]string, 4)
	for k := range idx {
		j := op(fmt.Sprintf("j%d", k), "add", first, f32(fmt.Sprintf("%s_k%d", hint, k), float64(k-1)))
		if sp.excludeOutside {
			in := op(fmt.Sprintf("in%d", k), "and", op(fmt.Sprintf("ge%d", k), "ge", j, zero), op(fmt.Sprintf("le%d", k), "le", j, inM1))
			w[k] = im.emitTmp(fmt.Sprintf("%s_x%d", hint, k), "where", []string{in, w[k], zero})
		}
		j = op(fmt.Sprintf("lo%d", k), "max", j, zero)
		j = op(fmt.Sprintf("hi%d", k), "min", j, inM1)
		idx[k] = im.emitTmp(fmt.Sprintf("%s_idx%d", hint, k), "cast", []string{j}, "to=i64")
	}
	if sp.excludeOutside {
		sum := op("wsum", "add", op("wsum01", "add", w[0], w[1]), op("wsum23", "add", w[2], w[3]))
		for k := range w {
			w[k] = op(fmt.Sprintf("wn%d", k), "div", w[k], sum)
		}
	}
	axis := fmt.Sprintf("axis=%d", ax)
	var acc string
	for k := range w {
		wk := w[k]
		if ax == 2 {
			wk = im.emitTmp(fmt.Sprintf("%s_wcol%d", hint, k), "reshape", []string{wk}, "shape="+dimList([]dim.Expr{out, dim.Const(1)}))
		}
		if dt != tensor.F32 {
			wk = im.emitTmp(fmt.Sprintf("%s_wcast%d", hint, k), "cast", []string{wk}, "to="+dt.String())
		}
		g := im.emitTmp(fmt.Sprintf("%s_g%d", hint, k), "gather", []string{x, idx[k]}, axis)
		t := im.emitTmp(fmt.Sprintf("%s_t%d", hint, k), "mul", []string{g, wk})
		if acc == "" {
			acc = t
		} else {
			acc = im.emitTmp(fmt.Sprintf("%s_s%d", hint, k), "add", []string{acc, t})
		}
	}
	return acc
}

// maxResized bounds a static output size, so a malformed model cannot make
// the importer allocate without limit.
const maxResized = 1 << 24

// resizeAxisStatic computes the source indices and weights here and
// gathers with them as constants.
func (im *importer) resizeAxisStatic(sp resizeSpec, x, hint string, ax int, in, out int64, scale float64, fromScales bool, dt tensor.DType) (string, error) {
	if out < 1 || in < 1 || out > maxResized {
		return "", fmt.Errorf("Resize of axis %d from %d to %d: sizes must be positive and at most %d", ax, in, out, maxResized)
	}
	if !fromScales {
		scale = float64(out) / float64(in)
	}
	if sp.mode == "cubic" {
		return im.cubicAxisStatic(sp, x, hint, ax, in, out, scale, dt)
	}
	clamp := func(v float64) float64 { return math.Max(0, math.Min(v, float64(in-1))) }
	i0 := make([]int64, out)
	i1 := make([]int64, out)
	w1 := make([]float32, out)
	w0 := make([]float32, out)
	identity, lerped := in == out, false
	for i := range i0 {
		src := sourceCoord(sp.ctm, float64(i), scale, float64(in), float64(out))
		if sp.mode == "nearest" {
			i0[i] = int64(clamp(nearestIndex(sp.nearestMode, src)))
		} else {
			c := clamp(src)
			f := math.Floor(c)
			i0[i], i1[i] = int64(f), int64(math.Min(f+1, float64(in-1)))
			w1[i] = float32(c - f)
			w0[i] = float32(1 - (c - f))
			lerped = lerped || w1[i] != 0
		}
		identity = identity && i0[i] == int64(i)
	}
	if identity && !lerped {
		return x, nil
	}
	idx0, err := im.constTensor(hint+"_i0", tensor.FromI64([]int64{out}, i0))
	if err != nil {
		return "", err
	}
	if !lerped {
		return im.emitTmp(hint, "gather", []string{x, idx0}, fmt.Sprintf("axis=%d", ax)), nil
	}
	idx1, err := im.constTensor(hint+"_i1", tensor.FromI64([]int64{out}, i1))
	if err != nil {
		return "", err
	}
	wshape := []int64{out}
	if ax == 2 {
		wshape = []int64{out, 1}
	}
	ws := [2]string{}
	for j, w := range [][]float32{w0, w1} {
		h, err := im.constTensor(fmt.Sprintf("%s_w%d", hint, j), tensor.FromF32(wshape, w))
		if err != nil {
			return "", err
		}
		if dt != tensor.F32 {
			h = im.emitTmp(fmt.Sprintf("%s_w%dcast", hint, j), "cast", []string{h}, "to="+dt.String())
		}
		ws[j] = h
	}
	return im.lerp(x, hint, ax, idx0, idx1, ws[0], ws[1]), nil
}

// convScatterND imports ScatterND where its data, indices and updates are
// all known at import: Swin's shifted-window attention mask is written
// region by region into zeros, from the shapes alone, and a fold is all it
// needs. rlx has no scatter kernel: with an operand computed at run time
// the error says which one.
func convScatterND(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 3 {
		return fmt.Errorf("takes 3 inputs (data, indices, updates), found %d", len(n.Inputs))
	}
	if r := attrString(n, "reduction", "none"); r != "none" {
		return fmt.Errorf("reduction %q is not supported (only none)", r)
	}
	var ts [3]*tensor.Tensor
	for i := range ts {
		t, ok := im.constOf(n.Inputs[i])
		if !ok {
			return im.scatterND(n)
		}
		ts[i] = t
	}
	out, err := scatterND(ts[0], ts[1], ts[2])
	if err != nil {
		return err
	}
	im.vals[n.Outputs[0]] = &val{konst: out}
	return nil
}

// scatterND imports a ScatterND with an operand computed at run time:
// the k-tuples of indices [..., k] address slices of S = the product of
// data's dims from k on; each tuple's flat start Σ_j idx_j·stride_j (a
// negative component counted from the end; one outside its dim makes the
// start one past the data, so the scatter fails at run time as ONNX
// requires), plus 0..S-1, is one scatter of the flattened updates into
// the flattened data.
func (im *importer) scatterND(n *onnxpb.Node) error {
	dt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	it, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	if it.DType != tensor.I64 && it.DType != tensor.I32 {
		return fmt.Errorf("ScatterND indices of %s: int64 or int32 are supported", it.DType)
	}
	if it.Rank() == 0 {
		return fmt.Errorf("ScatterND indices are a scalar, want rank 1 or more")
	}
	k, ok := it.Shape[it.Rank()-1].Const()
	if !ok || k < 1 || k > int64(dt.Rank()) {
		return fmt.Errorf("ScatterND index tuples of %s for data of rank %d", it.Shape[it.Rank()-1], dt.Rank())
	}
	q, err := dimProduct(it.Shape[:it.Rank()-1])
	if err != nil {
		return err
	}
	slice, err := dimProduct(dt.Shape[k:])
	if err != nil {
		return err
	}
	total, err := dimProduct(dt.Shape)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	var names [3]string
	for i := range names {
		if names[i], err = im.rt(i); err != nil {
			return err
		}
	}
	idx := im.emitTmp(out+"_tuples", "reshape", []string{names[1]}, "shape="+dimList([]dim.Expr{q, dim.Const(k)}))
	if it.DType == tensor.I32 {
		idx = im.emitTmp(out+"_i64", "cast", []string{idx}, "to=i64")
	}
	start, err := im.tupleIndex(out, idx, q, dt.Shape[:k], slice, total)
	if err != nil {
		return err
	}
	start = im.emitTmp(out+"_col", "reshape", []string{start}, "shape="+dimList([]dim.Expr{q, dim.Const(1)}))
	within := im.emitTmp(out+"_within", "iota", nil, "n="+slice.String(), "dtype=i64")
	within = im.emitTmp(out+"_row", "reshape", []string{within}, "shape="+dimList([]dim.Expr{dim.Const(1), slice}))
	m, err := dim.Mul(q, slice)
	if err != nil {
		return err
	}
	elems := im.emitTmp(out+"_elems", "reshape", []string{im.emitTmp(out+"_addr", "add", []string{start, within})}, "shape=["+m.String()+"]")
	upd := im.emitTmp(out+"_upd", "reshape", []string{names[2]}, "shape=["+m.String()+"]")
	data := im.emitTmp(out+"_data", "reshape", []string{names[0]}, "shape=["+total.String()+"]")
	y := im.emitTmp(out+"_scattered", "scatter", []string{data, elems, upd})
	return im.emit(n.Outputs[:1], "reshape", []string{y}, "shape="+dimList(dt.Shape))
}

// tupleIndex is the flat index of q tuples idx [q, k] (i64) into dims
// (k of them) whose every position holds inner elements: Σ_j c_j ·
// (dims after j)·inner, a negative component counted from the end of its
// dim, and past (one past the data: the gather or scatter then fails at
// run time, as ONNX requires) for a tuple with a component outside its
// dim.
func (im *importer) tupleIndex(out, idx string, q dim.Expr, dims []dim.Expr, inner, past dim.Expr) (string, error) {
	zero := im.scalar(out+"_zero", 0, tensor.I64)
	start, bad := "", ""
	for j := range dims {
		c := im.emitTmp(out+"_c", "slice", []string{idx}, fmt.Sprintf("starts=[%d]", j), fmt.Sprintf("ends=[%d]", j+1), "axes=[1]")
		c = im.emitTmp(out+"_comp", "reshape", []string{c}, "shape=["+q.String()+"]")
		size := im.dimScalar(dims[j])
		c = im.wrapIndex(out, c, size, zero)
		b := im.emitTmp(out+"_bad", "or", []string{
			im.emitTmp(out+"_below", "lt", []string{c, zero}),
			im.emitTmp(out+"_above", "ge", []string{c, size})})
		st, err := dimProduct(append(slices.Clone(dims[j+1:]), inner))
		if err != nil {
			return "", err
		}
		term := im.timesDim(out, c, st)
		if j == 0 {
			start, bad = term, b
			continue
		}
		start = im.emitTmp(out+"_start", "add", []string{start, term})
		bad = im.emitTmp(out+"_bad", "or", []string{bad, b})
	}
	return im.emitTmp(out+"_checked", "where", []string{bad, im.dimScalar(past), start}), nil
}

// convGatherND imports GatherND (opsets 11-13, batch_dims from 12): for
// each k-tuple of indices (the last axis), the slice of data it addresses
// after the batch_dims leading dims the two share. One gather of rows:
// data as [batches·rows, slice] (rows the product of the k addressed
// dims), the rows tupleIndex computes plus each batch's first row.
func convGatherND(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 2 {
		return fmt.Errorf("takes 2 inputs (data, indices), found %d", len(n.Inputs))
	}
	dt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	it, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	if it.DType != tensor.I64 && it.DType != tensor.I32 {
		return fmt.Errorf("GatherND indices of %s: int64 or int32 are supported", it.DType)
	}
	r, qr := int64(dt.Rank()), int64(it.Rank())
	b := attrInt(n, "batch_dims", 0)
	if qr == 0 || b < 0 || b >= qr || b >= r {
		return fmt.Errorf("GatherND batch_dims %d for data of rank %d and indices of rank %d", b, r, qr)
	}
	k, ok := it.Shape[qr-1].Const()
	if !ok || k < 1 || k > r-b {
		return fmt.Errorf("GatherND index tuples of %s for data of rank %d after %d batch dims", it.Shape[qr-1], r, b)
	}
	for d := range b {
		if !dim.Equal(dt.Shape[d], it.Shape[d]) {
			return fmt.Errorf("GatherND batch dim %d: data's is %s, the indices' %s (they must be equal)", d, dt.Shape[d], it.Shape[d])
		}
	}
	batches, err := dimProduct(dt.Shape[:b])
	if err != nil {
		return err
	}
	q, err := dimProduct(it.Shape[b : qr-1])
	if err != nil {
		return err
	}
	rows, err := dimProduct(dt.Shape[b : b+k])
	if err != nil {
		return err
	}
	slice, err := dimProduct(dt.Shape[b+k:])
	if err != nil {
		return err
	}
	allRows, err := dim.Mul(batches, rows)
	if err != nil {
		return err
	}
	bq, err := dim.Mul(batches, q)
	if err != nil {
		return err
	}
	data, err := im.rt(0)
	if err != nil {
		return err
	}
	idx, err := im.rt(1)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	idx = im.emitTmp(out+"_tuples", "reshape", []string{idx}, "shape="+dimList([]dim.Expr{bq, dim.Const(k)}))
	if it.DType == tensor.I32 {
		idx = im.emitTmp(out+"_i64", "cast", []string{idx}, "to=i64")
	}
	row, err := im.tupleIndex(out, idx, bq, dt.Shape[b:b+k], dim.Const(1), allRows)
	if err != nil {
		return err
	}
	if c, ok := batches.Const(); !ok || c != 1 {
		// each batch's first row: iota over the batches times rows
		first := im.emitTmp(out+"_batch", "iota", nil, "n="+batches.String(), "dtype=i64")
		first = im.timesDim(out, im.emitTmp(out+"_batchcol", "reshape", []string{first}, "shape="+dimList([]dim.Expr{batches, dim.Const(1)})), rows)
		row = im.emitTmp(out+"_perbatch", "reshape", []string{row}, "shape="+dimList([]dim.Expr{batches, q}))
		row = im.emitTmp(out+"_rows", "reshape", []string{im.emitTmp(out+"_inbatch", "add", []string{row, first})}, "shape=["+bq.String()+"]")
	}
	table := im.emitTmp(out+"_table", "reshape", []string{data}, "shape="+dimList([]dim.Expr{allRows, slice}))
	y := im.emitTmp(out+"_gathered", "gather", []string{table, row}, "axis=0")
	shape := append(slices.Clone(it.Shape[:qr-1]), dt.Shape[b+k:]...)
	return im.emit(n.Outputs[:1], "reshape", []string{y}, "shape="+dimList(shape))
}

// scatterND is ONNX ScatterND without reduction: a copy of data with
// the slice data[indices[i]] replaced by updates[i] for each index tuple
// i, in order (a later tuple wins where two are equal).
func scatterND(data, indices, updates *tensor.Tensor) (*tensor.Tensor, error) {
	if indices.DType != tensor.I64 && indices.DType != tensor.I32 {
		return nil, fmt.Errorf("indices are %s, want i64 or i32", indices.DType)
	}
	if updates.DType != data.DType {
		return nil, fmt.Errorf("updates are %s, data %s", updates.DType, data.DType)
	}
	is := indices.Shape
	if len(is) == 0 {
		return nil, fmt.Errorf("indices are a scalar, want rank 1 or more")
	}
	k := is[len(is)-1]
	if k < 1 || k > int64(len(data.Shape)) {
		return nil, fmt.Errorf("index tuples of %d for data of rank %d", k, len(data.Shape))
	}
	want := append(append([]int64{}, is[:len(is)-1]...), data.Shape[k:]...)
	if tensor.ShapeString(updates.Shape) != tensor.ShapeString(want) {
		return nil, fmt.Errorf("updates are %s, want %s", tensor.ShapeString(updates.Shape), tensor.ShapeString(want))
	}
	var idx []int64
	if indices.DType == tensor.I64 {
		idx = indices.I64()
	} else {
		for _, v := range indices.I32() {
			idx = append(idx, int64(v))
		}
	}
	size := int64(data.DType.Size())
	slice := tensor.NumElements(data.Shape[k:]) * size // bytes one tuple replaces
	out := &tensor.Tensor{DType: data.DType, Shape: append([]int64(nil), data.Shape...), Data: append([]byte(nil), data.Data...)}
	strides := tensor.Strides(data.Shape)
	for t := int64(0); t*k < int64(len(idx)); t++ {
		at := int64(0)
		for j := range k {
			v := idx[t*k+j]
			d := data.Shape[j]
			if v < -d || v >= d {
				return nil, fmt.Errorf("index %d of tuple %d is out of range for dim %d of size %d", v, t, j, d)
			}
			if v < 0 {
				v += d
			}
			at += v * strides[j]
		}
		copy(out.Data[at*size:at*size+slice], updates.Data[t*slice:(t+1)*slice])
	}
	return out, nil
}

// conv3D imports a 3-D Conv (x [N, C, T, H, W], a video model's) as KT
// 2-D convolutions over the frames, one per temporal tap, summed: the
// input padded along T and transposed to [N, T, C, H, W]; for tap kt its
// frames kt·DT, kt·DT + ST, ... (OT of them) as a batch of N·OT images
// through conv2d with the weight's plane kt (W[:, :, kt], sliced by
// weight-only ops that rlxc folds at build time), the bias with tap 0;
// the sum reshaped to [N, OT, O, OH, OW] and transposed back. Every
// multiply-add is the 3-D convolution's (a tap reads only the frames its
// outputs need); the cost beyond it is the two transposes and one strided
// copy of the input per tap. Each later tap's add is a residual epilogue of
// its conv2d.
func conv3D(im *importer, n *onnxpb.Node, t hir.Type) error {
	if len(n.Inputs) < 2 || n.Inputs[1] == "" {
		return fmt.Errorf("Conv needs a weight input")
	}
	wt, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	if wt.Rank() != 5 {
		return fmt.Errorf("3-D Conv with a weight %s, want [O, C/group, kt, kh, kw]", wt)
	}
	var k [3]int64
	for i := range k {
		c, ok := wt.Shape[2+i].Const()
		if !ok {
			return fmt.Errorf("3-D Conv with a symbolic kernel size %s", wt.Shape[2+i])
		}
		k[i] = c
	}
	if ks, ok := attrInts(n, "kernel_shape"); ok && (len(ks) != 3 || ks[0] != k[0] || ks[1] != k[1] || ks[2] != k[2]) {
		return fmt.Errorf("attribute kernel_shape=%v does not match the weight %s", ks, wt)
	}
	st, dl, pd, err := window3D(n)
	if err != nil {
		return err
	}
	nd, c, td, h, w := t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3], t.Shape[4]
	ot, err := windowOut(td, k[0], st[0], pd[0], pd[3], dl[0])
	if err != nil {
		return err
	}
	oh, err := windowOut(h, k[1], st[1], pd[1], pd[4], dl[1])
	if err != nil {
		return err
	}
	ow, err := windowOut(w, k[2], st[2], pd[2], pd[5], dl[2])
	if err != nil {
		return err
	}
	for _, d := range []dim.Expr{ot, oh, ow} {
		if v, ok := d.Const(); ok && v < 1 {
			return fmt.Errorf("3-D Conv: the output would be empty (%s by %s by %s)", ot, oh, ow)
		}
	}
	out := n.Outputs[0]
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	wv, err := im.rt(1)
	if err != nil {
		return err
	}
	bias := ""
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		if bias, err = im.rt(2); err != nil {
			return err
		}
	}
	if k[1] == 1 && k[2] == 1 && st[1] == 1 && st[2] == 1 && pd[1] == 0 && pd[2] == 0 && pd[4] == 0 && pd[5] == 0 {
		// A kernel along T alone (S3D's and R(2+1)D's kt x 1 x 1, every
		// 1 x 1 x 1) is a 2-D convolution over the plane [T, H·W] with a
		// kt x 1 kernel: no frames to move, one step.
		hw, err := dim.Mul(h, w)
		if err != nil {
			return err
		}
		x4 := im.emitTmp(out+"_thw", "reshape", []string{x}, "shape="+dimList([]dim.Expr{nd, c, td, hw}))
		w4 := im.emitTmp(out+"_wt", "reshape", []string{wv}, "shape="+dimList([]dim.Expr{wt.Shape[0], wt.Shape[1], dim.Const(k[0]), dim.Const(1)}))
		args := []string{x4, w4}
		if bias != "" {
			args = append(args, bias)
		}
		y := im.emitTmp(out+"_2d", "conv2d", args, fmt.Sprintf("stride=[%d, 1]", st[0]), fmt.Sprintf("pad=[%d, 0, %d, 0]", pd[0], pd[3]),
			fmt.Sprintf("dilation=[%d, 1]", dl[0]), fmt.Sprintf("groups=%d", attrInt(n, "group", 1)))
		return im.emit(n.Outputs[:1], "reshape", []string{y}, "shape="+dimList([]dim.Expr{nd, wt.Shape[0], ot, oh, ow}))
	}
	if pd[0] != 0 || pd[3] != 0 {
		x = im.emitTmp(out+"_padt", "pad", []string{x}, fmt.Sprintf("pads=[0, 0, %d, 0, 0, 0, 0, %d, 0, 0]", pd[0], pd[3]))
	}
	frames := im.emitTmp(out+"_frames", "transpose", []string{x}, "perm=[0, 2, 1, 3, 4]")
	// The last frame tap kt reads: kt·DT + (OT-1)·ST, one past it the end.
	last, err := dim.Sub(ot, dim.Const(1))
	if err != nil {
		return err
	}
	span, err := dim.Mul(last, dim.Const(st[0]))
	if err != nil {
		return err
	}
	var acc string
	for kt := range k[0] {
		end, err := dim.Add(span, dim.Const(kt*dl[0]+1))
		if err != nil {
			return err
		}
		xs := im.emitTmp(fmt.Sprintf("%s_t%d", out, kt), "slice", []string{frames},
			fmt.Sprintf("starts=[%d]", kt*dl[0]), "ends=["+end.String()+"]", "axes=[1]", fmt.Sprintf("steps=[%d]", st[0]))
		x4 := im.emitTmp(fmt.Sprintf("%s_x%d", out, kt), "reshape", []string{xs}, "shape="+dimList([]dim.Expr{dim.Const(-1), c, h, w}))
		ws := im.emitTmp(fmt.Sprintf("%s_wk%d", out, kt), "slice", []string{wv}, fmt.Sprintf("starts=[%d]", kt), fmt.Sprintf("ends=[%d]", kt+1), "axes=[2]")
		w4 := im.emitTmp(fmt.Sprintf("%s_w%d", out, kt), "squeeze", []string{ws}, "axes=[2]")
		args := []string{x4, w4}
		if kt == 0 && bias != "" {
			args = append(args, bias)
		}
		y := im.emitTmp(fmt.Sprintf("%s_y%d", out, kt), "conv2d", args, fmt.Sprintf("stride=[%d, %d]", st[1], st[2]),
			fmt.Sprintf("pad=[%d, %d, %d, %d]", pd[1], pd[2], pd[4], pd[5]), fmt.Sprintf("dilation=[%d, %d]", dl[1], dl[2]),
			fmt.Sprintf("groups=%d", attrInt(n, "group", 1)))
		if acc == "" {
			acc = y
		} else {
			acc = im.emitTmp(fmt.Sprintf("%s_sum%d", out, kt), "add", []string{acc, y})
		}
	}
	y5 := im.emitTmp(out+"_5d", "reshape", []string{acc}, "shape="+dimList([]dim.Expr{nd, ot, wt.Shape[0], oh, ow}))
	return im.emit(n.Outputs[:1], "transpose", []string{y5}, "perm=[0, 2, 1, 3, 4]")
}

// windowOut is the output length of a window of k taps, dilation d and
// stride s over a length in padded by pb and pe: (in + pb + pe -
// d·(k-1) - 1) / s + 1, as a dim expression.
func windowOut(in dim.Expr, k, s, pb, pe, d int64) (dim.Expr, error) {
	e, err := dim.Add(in, dim.Const(pb+pe-d*(k-1)-1))
	if err != nil {
		return dim.Expr{}, err
	}
	if e, err = dim.FloorDiv(e, dim.Const(s)); err != nil {
		return dim.Expr{}, err
	}
	return dim.Add(e, dim.Const(1))
}

// pool3D imports a 3-D MaxPool or AveragePool ([N, C, T, H, W], video
// models) as two 2-D pools, which is exact because both are separable: a
// box's maximum is the maximum over frames of each frame's window
// maximum, and its average the average of averages (the divisor, the
// window's cells or only those inside the input, is a product of the
// axes' counts). The spatial pool runs over [N, C·T, H, W], then the
// temporal one over [N, C, T, H'·W'] with a kt x 1 window.
func pool3D(im *importer, n *onnxpb.Node, t hir.Type, op string) error {
	if len(n.Outputs) > 1 && n.Outputs[1] != "" {
		return fmt.Errorf("MaxPool's Indices output is not supported")
	}
	if attrInt(n, "storage_order", 0) != 0 {
		return fmt.Errorf("attribute storage_order=1 is not supported")
	}
	k, ok := attrInts(n, "kernel_shape")
	if !ok || len(k) != 3 || min(k[0], k[1], k[2]) < 1 {
		return fmt.Errorf("3-D %s: attribute kernel_shape=%v, want three positive values", n.OpType, k)
	}
	st, dl, pd, err := window3D(n)
	if err != nil {
		return err
	}
	ceil := attrInt(n, "ceil_mode", 0) != 0
	var outs [3]dim.Expr
	for i := range 3 {
		if pd[i] >= k[i] || pd[3+i] >= k[i] {
			return fmt.Errorf("3-D %s: attribute pads=%v: pads must be smaller than the kernel %v", n.OpType, pd, k)
		}
		if outs[i], err = poolOut(t.Shape[2+i], k[i], st[i], pd[i], pd[3+i], dl[i], ceil); err != nil {
			return fmt.Errorf("3-D %s: %v", n.OpType, err)
		}
		if v, ok := outs[i].Const(); ok && v < 1 {
			return fmt.Errorf("3-D %s: the output would be empty along axis %d", n.OpType, 2+i)
		}
	}
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	nd, c, td, h, w := t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3], t.Shape[4]
	extra := func() []string {
		if op == "avgpool2d" {
			return []string{fmt.Sprintf("count_include_pad=%v", attrInt(n, "count_include_pad", 0) != 0)}
		}
		return nil
	}
	frames := im.emitTmp(out+"_frames", "reshape", []string{x}, fmt.Sprintf("shape=[%s, -1, %s, %s]", nd, h, w))
	sp := im.emitTmp(out+"_hw", op, []string{frames}, append([]string{fmt.Sprintf("kernel=[%d, %d]", k[1], k[2]),
		fmt.Sprintf("stride=[%d, %d]", st[1], st[2]), fmt.Sprintf("pad=[%d, %d, %d, %d]", pd[1], pd[2], pd[4], pd[5]),
		fmt.Sprintf("dilation=[%d, %d]", dl[1], dl[2]), fmt.Sprintf("ceil_mode=%v", ceil)}, extra()...)...)
	sp = im.emitTmp(out+"_planes", "reshape", []string{sp}, fmt.Sprintf("shape=[%s, %s, %s, -1]", nd, c, td))
	tp := im.emitTmp(out+"_t", op, []string{sp}, append([]string{fmt.Sprintf("kernel=[%d, 1]", k[0]),
		fmt.Sprintf("stride=[%d, 1]", st[0]), fmt.Sprintf("pad=[%d, 0, %d, 0]", pd[0], pd[3]),
		fmt.Sprintf("dilation=[%d, 1]", dl[0]), fmt.Sprintf("ceil_mode=%v", ceil)}, extra()...)...)
	return im.emit(n.Outputs[:1], "reshape", []string{tp}, "shape="+dimList([]dim.Expr{nd, c, outs[0], outs[1], outs[2]}))
}

// poolOut is a pool's output length along an axis of length in. With
// ceil_mode the last window must start inside the input or its leading
// padding; a symbolic length is taken where that always holds (stride
// at most the window's span less the end pad), as the 2-D pools do.
func poolOut(in dim.Expr, k, s, pb, pe, d int64, ceil bool) (dim.Expr, error) {
	if !ceil {
		return windowOut(in, k, s, pb, pe, d)
	}
	if v, ok := in.Const(); ok {
		o := (v+pb+pe-d*(k-1)-1+s-1)/s + 1
		if (o-1)*s >= v+pb {
			o--
		}
		return dim.Const(o), nil
	}
	if s > d*(k-1)+1-pe {
		return dim.Expr{}, fmt.Errorf("ceil_mode over a symbolic length %s with stride %d needs a static length", in, s)
	}
	return windowOut(in, k, s, pb, pe+s-1, d)
}

// window3D reads a 3-D Conv's or pool's strides, dilations (three
// positive values each, default 1), pads (six non-negative, default 0)
// and auto_pad (NOTSET, or VALID: no padding).
func window3D(n *onnxpb.Node) (st, dl, pd []int64, err error) {
	ints := func(name string, def []int64, least int64) ([]int64, error) {
		v, ok := attrInts(n, name)
		if !ok {
			return def, nil
		}
		if len(v) != len(def) {
			return nil, fmt.Errorf("3-D %s: attribute %s=%v, want %d values", n.OpType, name, v, len(def))
		}
		for _, x := range v {
			if x < least {
				return nil, fmt.Errorf("3-D %s: attribute %s=%v out of range", n.OpType, name, v)
			}
		}
		return v, nil
	}
	if st, err = ints("strides", []int64{1, 1, 1}, 1); err != nil {
		return
	}
	if dl, err = ints("dilations", []int64{1, 1, 1}, 1); err != nil {
		return
	}
	if pd, err = ints("pads", []int64{0, 0, 0, 0, 0, 0}, 0); err != nil {
		return
	}
	switch ap := attrString(n, "auto_pad", "NOTSET"); ap {
	case "NOTSET":
	case "VALID":
		pd = []int64{0, 0, 0, 0, 0, 0}
	default:
		return nil, nil, nil, fmt.Errorf("3-D %s: auto_pad %q is not supported (NOTSET or VALID)", n.OpType, ap)
	}
	return st, dl, pd, nil
}
