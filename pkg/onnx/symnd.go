package onnx

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Shape arithmetic of more than one dim.
//
// PyTorch exports F.pad with pads computed from the input's shape (Swin's
// padding to a multiple of its window, "same" padding) as its own pads
// list reshaped to [-1, 2], its rows reversed, transposed and flattened:
// torch orders pads by dim from the last, a (begin, end) pair each, and
// ONNX all begins first, then all ends. Such a value stays symbolic here
// with its shape (val.nd), so that the pads are known at import when the
// dims are numbers and computed from the dims when they are not. Only
// Reshape, Transpose, Slice, Cast and Identity take such a value
// symbolically; every other operator sees it as data.

// symTensor is the data of a symbolic value whose every element is a
// number, in its shape; false where one is symbolic.
func (v *val) symTensor() (*tensor.Tensor, bool) {
	t, _, ok := symData(v.sym, v.scal)
	if ok && v.nd != nil {
		t.Shape = append([]int64(nil), v.nd...)
	}
	return t, ok
}

// setSym records output 0 of n as the symbolic values data of shape
// shape (row-major): 1-D or a scalar as before, else with its shape.
func (im *importer) setSym(n *onnxpb.Node, data []dim.Expr, shape []int64, fdt tensor.DType) (bool, error) {
	if data == nil {
		data = []dim.Expr{}
	}
	v := &val{sym: data, fdt: fdt}
	switch len(shape) {
	case 0:
		v.scal = true
	case 1:
	default:
		v.nd = append([]int64(nil), shape...)
	}
	im.vals[n.Outputs[0]] = v
	return true, nil
}

// symND evaluates n over the symbolic value v of two or more dims, its
// first operand, where n is one of the operators listed above with
// constant attributes and operands; false leaves n to the converters,
// which see v as data.
func (im *importer) symND(n *onnxpb.Node, v *val) (bool, error) {
	if len(n.Outputs) == 0 {
		return false, nil
	}
	switch n.OpType {
	case "Identity":
		im.alias(n.Outputs[0], n.Inputs[0])
		return true, nil
	case "Cast":
		if len(n.Inputs) != 1 {
			return false, nil
		}
		return im.symCast(n, v)
	case "Reshape":
		if v.fdt != tensor.InvalidDType || len(n.Inputs) < 2 || !im.isKnownInt(n.Inputs[1]) {
			return false, nil
		}
		return im.symReshape(n, v.sym, v.nd)
	case "Transpose":
		return im.symTranspose(n, v)
	case "Slice":
		return im.symSlice(n, v)
	}
	return false, nil
}

// symReshape reshapes the symbolic values data of shape in (nil: 1-D) to
// n's constant target shape.
func (im *importer) symReshape(n *onnxpb.Node, data []dim.Expr, in []int64) (bool, error) {
	if in == nil {
		in = []int64{int64(len(data))}
	}
	target, ok, err := im.constInts(1)
	if err != nil || !ok {
		return false, nil // a symbolic target: the converter's reshape
	}
	out, err := reshapeTarget(in, target, attrInt(n, "allowzero", 0) != 0)
	if err != nil {
		return true, err
	}
	return im.setSym(n, data, out, tensor.InvalidDType)
}

// reshapeTarget resolves an ONNX Reshape's target for an input of shape
// in: 0 copies the input's dim (unless allowzero), one -1 takes what is
// left.
func reshapeTarget(in, target []int64, allowZero bool) ([]int64, error) {
	total := tensor.NumElements(in)
	out := append([]int64(nil), target...)
	infer, known := -1, int64(1)
	for i, d := range out {
		switch {
		case d == 0 && !allowZero:
			if i >= len(in) {
				return nil, fmt.Errorf("shape entry %d is 0 (copy) but the input has rank %d", i, len(in))
			}
			out[i] = in[i]
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("shape %v has more than one -1", target)
			}
			infer = i
			continue
		case d < 0:
			return nil, fmt.Errorf("shape %v has a negative entry %d", target, d)
		}
		if out[i] > 0 && known > total/out[i] {
			// More values than the input has (and no overflow below).
			return nil, fmt.Errorf("cannot reshape %v (%d values) to %v", in, total, target)
		}
		known *= out[i]
	}
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			return nil, fmt.Errorf("cannot reshape %d values to %v", total, target)
		}
		out[infer] = total / known
	} else if known != total {
		return nil, fmt.Errorf("cannot reshape %v (%d values) to %v", in, total, target)
	}
	return out, nil
}

// symTranspose permutes the dims of v by n's perm (default: reversed).
func (im *importer) symTranspose(n *onnxpb.Node, v *val) (bool, error) {
	in := v.nd
	r := len(in)
	perm, ok := attrInts(n, "perm")
	if !ok {
		perm = make([]int64, r)
		for i := range perm {
			perm[i] = int64(r - 1 - i)
		}
	}
	out, err := tensor.PermutedShape(in, perm)
	if err != nil {
		return true, err
	}
	inStrides := tensor.Strides(in)
	data := symGather(v.sym, out, func(idx []int64) (src int64) {
		for i, p := range perm {
			src += idx[i] * inStrides[p]
		}
		return src
	})
	return im.setSym(n, data, out, v.fdt)
}

// symSlice slices v by n's constant starts, ends, axes and steps.
func (im *importer) symSlice(n *onnxpb.Node, v *val) (bool, error) {
	if im.opset < 10 || len(n.Inputs) < 3 {
		return false, nil
	}
	for _, in := range n.Inputs[1:] {
		if in != "" && !im.isKnownInt(in) {
			return false, nil
		}
	}
	in := v.nd
	r := int64(len(in))
	starts, _, err := im.constInts(1)
	if err != nil {
		return false, nil
	}
	ends, _, err := im.constInts(2)
	if err != nil || len(ends) != len(starts) {
		return false, nil
	}
	axes, hasAxes, err := im.constInts(3)
	if err != nil {
		return false, nil
	}
	if !hasAxes {
		axes = filled(len(starts), func(i int) int64 { return int64(i) })
	}
	steps, hasSteps, err := im.constInts(4)
	if err != nil {
		return false, nil
	}
	if !hasSteps {
		steps = filled(len(starts), func(int) int64 { return 1 })
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return true, fmt.Errorf("slice with %d starts, %d ends, %d axes and %d steps", len(starts), len(ends), len(axes), len(steps))
	}
	first := make([]int64, r)
	step := make([]int64, r)
	out := append([]int64(nil), in...)
	for i := range step {
		step[i] = 1
	}
	for i, a := range axes {
		if a < 0 {
			a += r
		}
		if a < 0 || a >= r {
			return true, fmt.Errorf("slice axis %d for a value of rank %d", axes[i], r)
		}
		if steps[i] == 0 {
			return true, fmt.Errorf("slice step 0")
		}
		first[a], out[a] = tensor.SliceRange(starts[i], ends[i], steps[i], in[a])
		step[a] = steps[i]
	}
	inStrides := tensor.Strides(in)
	data := symGather(v.sym, out, func(idx []int64) (src int64) {
		for i := range idx {
			src += (first[i] + idx[i]*step[i]) * inStrides[i]
		}
		return src
	})
	return im.setSym(n, data, out, v.fdt)
}

// symGather is the values of shape out, in row-major order, whose element
// at index idx is data[at(idx)].
func symGather(data []dim.Expr, out []int64, at func(idx []int64) int64) []dim.Expr {
	res := make([]dim.Expr, tensor.NumElements(out))
	idx := make([]int64, len(out))
	for k := range res {
		res[k] = data[at(idx)]
		for i := len(out) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < out[i] {
				break
			}
			idx[i] = 0
		}
	}
	return res
}

// filled is n values, f(i) the i-th: an omitted Slice input's default.
func filled(n int, f func(i int) int64) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}
