package onnx

// Operators with no HIR op of their own, lowered here to existing HIR ops
// (iota, comparisons, where, layernorm, conv2d, pools, pad, reshape,
// slice, gather and elementwise arithmetic), so every target runs them
// without a kernel of its own.

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// tmpKey is the vals key of a value a lowering made, so typeOf finds its
// type; the NUL keeps it apart from every ONNX name.
func tmpKey(hirName string) string { return "\x00" + hirName }

// hirType is the checked type of a HIR value a lowering made.
func (im *importer) hirType(h string) (hir.Type, error) {
	k := tmpKey(h)
	if im.vals[k] == nil {
		im.vals[k] = &val{name: h}
	}
	return im.typeOf(k)
}

// constTensor materializes an import-time tensor (a param when large, an
// inline const when small) and returns its HIR name.
func (im *importer) constTensor(hint string, t *tensor.Tensor) (string, error) {
	k := tmpKey(hint)
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
			c, ok := s[0].Const()
			if !ok {
				return fmt.Errorf("Trilu input k is the symbolic value %s; rlx keeps shapes out of run time", s[0])
			}
			k = im.scalar(out+"_k", float64(c), tensor.I64)
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
	return func(im *importer, n *onnxpb.Node) error {
		t, err := im.typeOf(n.Inputs[0])
		if err != nil {
			return err
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
		if _, ok := t.Shape[2].Const(); ceil && !ok {
			return fmt.Errorf("attribute ceil_mode=1 needs a static length, found %s", t.Shape[2])
		}
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
}
