package onnx

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// symbolic evaluates shape arithmetic at import time: it reports whether it
// handled the node. Only nodes whose data inputs are all known integers are
// evaluated here (Shape reads its input's type instead).
func (im *importer) symbolic(n *onnxpb.Node) (bool, error) {
	allKnown := func() bool {
		for _, in := range n.Inputs {
			if in != "" && !im.isKnownInt(in) {
				return false
			}
		}
		return len(n.Inputs) > 0
	}
	set := func(v []dim.Expr, scalar bool) (bool, error) {
		if v == nil {
			v = []dim.Expr{} // an empty shape is known too: sym != nil marks it
		}
		im.vals[n.Outputs[0]] = &val{sym: v, scal: scalar}
		return true, nil
	}
	switch n.OpType {
	case "Shape":
		t, err := im.typeOf(n.Inputs[0])
		if err != nil {
			return true, err
		}
		r := int64(t.Rank())
		start, end := attrInt(n, "start", 0), attrInt(n, "end", r)
		start, end = clampAxis(start, r), clampAxis(end, r)
		if end < start {
			end = start
		}
		return set(append([]dim.Expr{}, t.Shape[start:end]...), false)
	case "Size":
		t, err := im.typeOf(n.Inputs[0])
		if err != nil {
			return true, err
		}
		p := dim.Const(1)
		for _, d := range t.Shape {
			if p, err = dim.Mul(p, d); err != nil {
				return true, err
			}
		}
		return set([]dim.Expr{p}, true)
	}
	if n.OpType == "Where" {
		return im.symWhere(n)
	}
	if len(n.Inputs) > 0 {
		if v := im.vals[n.Inputs[0]]; v != nil && v.sym != nil && v.nd != nil {
			return im.symND(n, v)
		}
	}
	if n.OpType == "Cast" && len(n.Inputs) == 1 {
		if v := im.vals[n.Inputs[0]]; v != nil && v.sym != nil {
			return im.symCast(n, v)
		}
	}
	if !allKnown() {
		return false, nil
	}
	in := func(i int) ([]dim.Expr, bool, error) { return im.symOf(n.Inputs[i]) }
	switch n.OpType {
	case "Identity":
		im.alias(n.Outputs[0], n.Inputs[0])
		return true, nil
	case "Cast":
		to := attrInt(n, "to", 0)
		if to != 7 && to != 6 {
			return false, nil // a constant to a float: folded
		}
		v, sc, err := in(0)
		if err != nil {
			return true, err
		}
		return set(v, sc)
	case "Gather":
		data, sc, err := in(0)
		if err != nil || sc {
			return false, err
		}
		idx, idxScalar, err := in(1)
		if err != nil {
			return true, err
		}
		var out []dim.Expr
		for _, i := range idx {
			c, ok := i.Const()
			if !ok {
				return false, nil
			}
			if c < 0 {
				c += int64(len(data))
			}
			if c < 0 || c >= int64(len(data)) {
				return true, fmt.Errorf("index %d is out of range for %d values", c, len(data))
			}
			out = append(out, data[c])
		}
		return set(out, idxScalar)
	case "Unsqueeze":
		v, sc, err := in(0)
		if err != nil {
			return true, err
		}
		if !sc {
			return false, nil // would become 2-D
		}
		return set(v, false)
	case "Squeeze":
		v, sc, err := in(0)
		if err != nil {
			return true, err
		}
		if sc || len(v) != 1 {
			return false, nil
		}
		return set(v, true)
	case "Reshape":
		v, _, err := in(0)
		if err != nil {
			return true, err
		}
		shape, _, err := in(1)
		if err != nil {
			return true, err
		}
		if len(shape) == 0 && len(v) == 1 {
			return set(v, true)
		}
		if len(shape) > 1 {
			return im.symReshape(n, v, nil)
		}
		return set(v, false)
	case "Concat":
		var out []dim.Expr
		for i := range n.Inputs {
			v, sc, err := in(i)
			if err != nil {
				return true, err
			}
			if sc {
				return false, nil
			}
			out = append(out, v...)
		}
		return set(out, false)
	case "Slice":
		v, sc, err := in(0)
		if err != nil || sc {
			return false, err
		}
		get := func(i int, def int64) (int64, error) {
			if i >= len(n.Inputs) || n.Inputs[i] == "" {
				return def, nil
			}
			s, _, err := in(i)
			if err != nil || len(s) != 1 {
				return 0, fmt.Errorf("slice of a shape needs one start, end and step")
			}
			c, ok := s[0].Const()
			if !ok {
				return 0, fmt.Errorf("slice of a shape with a symbolic index %s", s[0])
			}
			return c, nil
		}
		var start, end, step int64
		if im.opset < 10 {
			return false, nil
		}
		if start, err = get(1, 0); err != nil {
			return true, err
		}
		if end, err = get(2, int64(len(v))); err != nil {
			return true, err
		}
		if step, err = get(4, 1); err != nil {
			return true, err
		}
		if step == 0 {
			return true, fmt.Errorf("slice step 0")
		}
		var out []dim.Expr
		first, count := tensor.SliceRange(start, end, step, int64(len(v)))
		for k := int64(0); k < count; k++ {
			out = append(out, v[first+k*step])
		}
		return set(out, false)
	case "Add", "Sub", "Mul", "Div", "Mod", "Max", "Min":
		a, sa, err := in(0)
		if err != nil {
			return true, err
		}
		b, sb, err := in(1)
		if err != nil {
			return true, err
		}
		if len(a) != len(b) && len(a) != 1 && len(b) != 1 {
			return false, nil
		}
		nOut := max(len(a), len(b))
		out := make([]dim.Expr, nOut)
		for i := range out {
			x, y := a[min(i, len(a)-1)], b[min(i, len(b)-1)]
			var r dim.Expr
			switch n.OpType {
			case "Add":
				r, err = dim.Add(x, y)
			case "Sub":
				r, err = dim.Sub(x, y)
			case "Mul":
				r, err = dim.Mul(x, y)
			case "Div":
				r, err = dim.FloorDiv(x, y) // sizes are non-negative: truncation is floor
			case "Mod":
				r, err = dim.Mod(x, y)
			case "Max", "Min":
				xc, ok1 := x.Const()
				yc, ok2 := y.Const()
				if !ok1 || !ok2 {
					return false, nil
				}
				if n.OpType == "Max" {
					r = dim.Const(max(xc, yc))
				} else {
					r = dim.Const(min(xc, yc))
				}
			}
			if err != nil {
				return true, err
			}
			out[i] = r
		}
		return set(out, sa && sb)
	case "Expand", "Tile":
		// Only while the result stays 1-D: a shape value broadcast or
		// repeated ([-1] to [-1, -1, -1], [batch, 4] to [batch, 4, batch, 4]).
		v, sc, err := in(0)
		if err != nil {
			return true, err
		}
		arg, _, err := in(1)
		if err != nil {
			return true, err
		}
		if n.OpType == "Expand" && len(arg) == 0 {
			return set(v, sc) // expand to a scalar shape: unchanged
		}
		if len(arg) != 1 || sc && n.OpType == "Tile" {
			return false, nil // a 2-D result, or a malformed Tile for the converter
		}
		k, ok := arg[0].Const()
		if !ok {
			return false, nil
		}
		if k < 0 {
			return true, fmt.Errorf("%s to a negative size %d", n.OpType, k)
		}
		var out []dim.Expr
		switch {
		case n.OpType == "Tile":
			for i := int64(0); i < k; i++ {
				out = append(out, v...)
			}
		case len(v) == 1: // NumPy broadcasting: [x] to [k] repeats x
			for i := int64(0); i < k; i++ {
				out = append(out, v[0])
			}
		case k == 1 || k == int64(len(v)):
			out = v
		default:
			return true, fmt.Errorf("cannot expand %d values to %d", len(v), k)
		}
		return set(out, false)
	case "Equal":
		a, _, err := in(0)
		if err != nil {
			return true, err
		}
		b, _, err := in(1)
		if err != nil {
			return true, err
		}
		if len(a) != len(b) && len(a) != 1 && len(b) != 1 {
			return false, nil
		}
		nOut := max(len(a), len(b))
		res := tensor.New(tensor.Bool, int64(nOut))
		for i := 0; i < nOut; i++ {
			switch dim.EqualUnder(a[min(i, len(a)-1)], b[min(i, len(b)-1)], nil) {
			case dim.Always:
				res.Data[i] = 1
			case dim.Never:
			default:
				return false, nil
			}
		}
		im.vals[n.Outputs[0]] = &val{konst: res}
		return true, nil
	}
	return false, nil
}

func clampAxis(a, r int64) int64 {
	if a < 0 {
		a += r
	}
	return min(max(a, 0), r)
}

// symWhere selects between two shape values with a condition known at
// import (PyTorch's Where(Equal(shape, -1), 1, shape) before an Expand).
func (im *importer) symWhere(n *onnxpb.Node) (bool, error) {
	if len(n.Inputs) != 3 {
		return false, nil
	}
	c := im.vals[n.Inputs[0]]
	if c == nil || c.konst == nil || c.konst.DType != tensor.Bool || len(c.konst.Shape) > 1 || c.konst.Len() > 64 {
		return false, nil
	}
	if !im.isKnownInt(n.Inputs[1]) || !im.isKnownInt(n.Inputs[2]) {
		return false, nil
	}
	a, sa, err := im.symOf(n.Inputs[1])
	if err != nil {
		return true, err
	}
	b, sb, err := im.symOf(n.Inputs[2])
	if err != nil {
		return true, err
	}
	cond := c.konst.Data
	size := max(len(cond), len(a), len(b))
	for _, l := range []int{len(cond), len(a), len(b)} {
		if l != size && l != 1 {
			return false, nil // NumPy would fail too; the converter says so
		}
	}
	out := make([]dim.Expr, size)
	for i := range out {
		if cond[min(i, len(cond)-1)] != 0 {
			out[i] = a[min(i, len(a)-1)]
		} else {
			out[i] = b[min(i, len(b)-1)]
		}
	}
	im.vals[n.Outputs[0]] = &val{sym: out, scal: sa && sb && len(c.konst.Shape) == 0}
	return true, nil
}

// symCast casts shape arithmetic. To an integer it stays shape arithmetic
// (a float-tagged value holds integers, so back to an integer is exact).
// To a float type, a value with a symbolic element stays symbolic with the
// float dtype recorded (fdt): Range(0, float(seq), 1) is still an iota of
// seq, while the integer paths (isKnownInt) no longer take it for shape
// arithmetic, so float(seq)/2 is not floored. All-constant values fold.
func (im *importer) symCast(n *onnxpb.Node, v *val) (bool, error) {
	to, err := dtypeOf(int32(attrInt(n, "to", 0)))
	if err != nil {
		return false, nil // the converter reports it
	}
	switch {
	case to == tensor.I64 || to == tensor.I32:
		im.vals[n.Outputs[0]] = &val{sym: v.sym, scal: v.scal, nd: v.nd}
		return true, nil
	case to.IsFloat():
		if _, _, ok := symData(v.sym, v.scal); ok && v.fdt == tensor.InvalidDType {
			return false, nil // every value known: folded
		}
		im.vals[n.Outputs[0]] = &val{sym: v.sym, scal: v.scal, nd: v.nd, fdt: to}
		return true, nil
	}
	return false, nil
}
