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
