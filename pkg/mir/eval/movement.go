package eval

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// reshape keeps the elements in order under a new shape.
func reshape(x *array, out []int64) (*array, error) {
	if numel(x.shape) != numel(out) {
		return nil, fmt.Errorf("cannot reshape %s to %s", tensor.ShapeString(x.shape), tensor.ShapeString(out))
	}
	return take(x, strideMap([]int64{int64(numel(out))}, []int{1}, 0), out), nil
}

// transpose permutes the axes: result axis k is input axis perm[k].
func transpose(attrs mir.Attrs, x *array) (*array, error) {
	rank := len(x.shape)
	perm := attrs.Ints("perm")
	if !attrs.Has("perm") {
		for k := rank - 1; k >= 0; k-- {
			perm = append(perm, int64(k))
		}
	}
	if len(perm) != rank {
		return nil, fmt.Errorf("perm %v does not fit rank %d", perm, rank)
	}
	inSt := strides(x.shape)
	out := make([]int64, rank)
	st := make([]int, rank)
	seen := make([]bool, rank)
	for k, p := range perm {
		ax, err := normAxis(p, rank)
		if err != nil || seen[ax] {
			return nil, fmt.Errorf("perm %v is not a permutation of 0..%d", perm, rank-1)
		}
		seen[ax] = true
		out[k], st[k] = x.shape[ax], inSt[ax]
	}
	return take(x, strideMap(out, st, 0), out), nil
}

// expand broadcasts x to the result shape.
func expand(x *array, out []int64) (*array, error) {
	m, err := broadcastMap(x.shape, out)
	if err != nil {
		return nil, err
	}
	return take(x, m, out), nil
}

// slice is NumPy/ONNX slicing: per listed axis, start:end:step with
// negative indices counted from the end, then clamped into range.
func (ev *evaluator) slice(attrs mir.Attrs, x *array) (*array, error) {
	rank := len(x.shape)
	starts, ends := attrs.Dims("starts"), attrs.Dims("ends")
	n := len(starts)
	axes, steps := attrs.Ints("axes"), attrs.Ints("steps")
	if !attrs.Has("axes") {
		axes = nil
		for k := 0; k < n; k++ {
			axes = append(axes, int64(k))
		}
	}
	if !attrs.Has("steps") {
		steps = nil
		for k := 0; k < n; k++ {
			steps = append(steps, 1)
		}
	}
	if len(ends) != n || len(axes) != n || len(steps) != n {
		return nil, fmt.Errorf("starts, ends, axes and steps have lengths %d, %d, %d and %d", n, len(ends), len(axes), len(steps))
	}
	out := append([]int64{}, x.shape...)
	inSt := strides(x.shape)
	st := append([]int{}, inSt...)
	base := 0
	seen := make([]bool, rank)
	for k := 0; k < n; k++ {
		ax, err := normAxis(axes[k], rank)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, fmt.Errorf("axes lists axis %d twice", ax)
		}
		seen[ax] = true
		s, err := starts[k].Eval(ev.binding)
		if err != nil {
			return nil, fmt.Errorf("start %s: %v", starts[k], err)
		}
		e, err := ends[k].Eval(ev.binding)
		if err != nil {
			return nil, fmt.Errorf("end %s: %v", ends[k], err)
		}
		start, length, err := sliceRange(s, e, steps[k], x.shape[ax])
		if err != nil {
			return nil, fmt.Errorf("axis %d: %v", ax, err)
		}
		out[ax] = length
		st[ax] = inSt[ax] * int(steps[k])
		if length > 0 {
			base += int(start) * inSt[ax]
		}
	}
	return take(x, strideMap(out, st, base), out), nil
}

// sliceRange is the first index and the length of start:end:step on an
// axis of size d (NumPy and ONNX Slice).
func sliceRange(start, end, step, d int64) (first, length int64, err error) {
	if step == 0 {
		return 0, 0, fmt.Errorf("step is 0")
	}
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	if step > 0 {
		start = min(max(start, 0), d)
		end = min(max(end, 0), d)
		if end <= start {
			return start, 0, nil
		}
		return start, (end - start + step - 1) / step, nil
	}
	start = min(max(start, -1), d-1)
	end = min(max(end, -1), d-1)
	if start <= end {
		return start, 0, nil
	}
	return start, (start - end - step - 1) / -step, nil
}

// concat joins the operands along "axis".
func concat(attrs mir.Attrs, args []*array) (*array, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("concat of nothing")
	}
	x0 := args[0]
	ax, err := normAxis(attrs.Int("axis"), len(x0.shape))
	if err != nil {
		return nil, err
	}
	out := append([]int64{}, x0.shape...)
	out[ax] = 0
	for i, a := range args {
		if a.dt != x0.dt || len(a.shape) != len(x0.shape) {
			return nil, fmt.Errorf("operand %d is %s%s, operand 0 %s%s", i, a.dt, tensor.ShapeString(a.shape), x0.dt, tensor.ShapeString(x0.shape))
		}
		for k := range a.shape {
			if k != ax && a.shape[k] != x0.shape[k] {
				return nil, fmt.Errorf("operand %d %s does not match operand 0 %s off axis %d", i, tensor.ShapeString(a.shape), tensor.ShapeString(x0.shape), ax)
			}
		}
		out[ax] += a.shape[ax]
	}
	res := newArray(x0.dt, out)
	outer, _, inner := split3(out, ax)
	pos := 0 // the offset along the axis where the next operand goes
	for _, a := range args {
		d := int(a.shape[ax])
		for o := 0; o < outer; o++ {
			for j := 0; j < d*inner; j++ {
				src := o*d*inner + j
				dst := o*int(out[ax])*inner + pos*inner + j
				if a.isFloat() {
					res.f[dst] = a.f[src]
				} else {
					res.i[dst] = a.i[src]
				}
			}
		}
		pos += d
	}
	return res, nil
}

// pad adds "pads" (all begins, then all ends) cells of the constant "value".
func (ev *evaluator) pad(attrs mir.Attrs, x *array) (*array, error) {
	rank := len(x.shape)
	pads := attrs.Dims("pads")
	if len(pads) != 2*rank {
		return nil, fmt.Errorf("pads has %d values, want %d", len(pads), 2*rank)
	}
	p := make([]int64, 2*rank)
	for k, e := range pads {
		v, err := e.Eval(ev.binding)
		if err != nil {
			return nil, fmt.Errorf("pad %s: %v", e, err)
		}
		if v < 0 {
			return nil, fmt.Errorf("pad %s is %d; pads must be >= 0", e, v)
		}
		p[k] = v
	}
	out := make([]int64, rank)
	for k := range out {
		out[k] = x.shape[k] + p[k] + p[rank+k]
	}
	res := newArray(x.dt, out)
	value := attrs.Float("value")
	for k := range res.f {
		res.f[k] = roundFloat(value, x.dt)
	}
	for k := range res.i {
		res.i[k] = floatToInt(value, x.dt)
	}
	// Copy x into the interior: input element at index idx goes to idx + begins.
	outSt := strides(out)
	base := 0
	for k := range out {
		base += int(p[k]) * outSt[k]
	}
	dst := strideMap(x.shape, outSt, base)
	for k, d := range dst {
		if x.isFloat() {
			res.f[d] = x.f[k]
		} else {
			res.i[d] = x.i[k]
		}
	}
	return res, nil
}

// gather picks along "axis" by i32 or i64 indices (negative ones count from
// the end): result shape x.shape[:axis] + idx.shape + x.shape[axis+1:].
func gather(attrs mir.Attrs, x, idx *array) (*array, error) {
	if idx.dt != tensor.I32 && idx.dt != tensor.I64 {
		return nil, fmt.Errorf("indices are %s, want i32 or i64", idx.dt)
	}
	ax, err := normAxis(attrs.Int("axis"), len(x.shape))
	if err != nil {
		return nil, err
	}
	outer, d, inner := split3(x.shape, ax)
	out := append(append(append([]int64{}, x.shape[:ax]...), idx.shape...), x.shape[ax+1:]...)
	res := newArray(x.dt, out)
	ni := len(idx.i)
	for p, v := range idx.i {
		if v < -int64(d) || v >= int64(d) {
			return nil, fmt.Errorf("index %d at %s of the indices is out of range for axis %d of size %d (valid: %d to %d)",
				v, position(idx.shape, p), ax, d, -d, d-1)
		}
		if v < 0 {
			v += int64(d)
		}
		for o := 0; o < outer; o++ {
			src := (o*d + int(v)) * inner
			dst := (o*ni + p) * inner
			for j := 0; j < inner; j++ {
				if x.isFloat() {
					res.f[dst+j] = x.f[src+j]
				} else {
					res.i[dst+j] = x.i[src+j]
				}
			}
		}
	}
	return res, nil
}

// scatter is x [N] with updates[k] written at idx[k] for k in order (a
// later update of an index wins); negative indices count from the end.
func scatter(x, idx, upd *array) (*array, error) {
	if idx.dt != tensor.I32 && idx.dt != tensor.I64 {
		return nil, fmt.Errorf("indices are %s, want i32 or i64", idx.dt)
	}
	if len(x.shape) != 1 || len(idx.shape) != 1 || len(upd.shape) != 1 || idx.shape[0] != upd.shape[0] || x.dt != upd.dt {
		return nil, fmt.Errorf("scatter of %s%s updates at %s indices into %s%s: want [M] updates of x's dtype at [M] indices into [N]",
			upd.dt, tensor.ShapeString(upd.shape), tensor.ShapeString(idx.shape), x.dt, tensor.ShapeString(x.shape))
	}
	n := int64(x.shape[0])
	res := newArray(x.dt, x.shape)
	copy(res.f, x.f)
	copy(res.i, x.i)
	for k, v := range idx.i {
		if v < -n || v >= n {
			return nil, fmt.Errorf("index %d at position %d of the indices is out of range for %d elements (valid: %d to %d)", v, k, n, -n, n-1)
		}
		if v < 0 {
			v += n
		}
		if x.isFloat() {
			res.f[v] = upd.f[k]
		} else {
			res.i[v] = upd.i[k]
		}
	}
	return res, nil
}

// position prints the multi-index of flat element k of shape: [1, 0, 2].
func position(shape []int64, k int) string {
	idx := make([]int64, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = int64(k) % shape[d]
			k /= int(shape[d])
		}
	}
	return tensor.ShapeString(idx)
}

// iota is [0, 1, ..., n-1] in the result dtype.
func (ev *evaluator) iota(attrs mir.Attrs, dt tensor.DType) (*array, error) {
	if !attrs.Has("n") {
		return nil, fmt.Errorf("no n")
	}
	n, err := attrs.Dim("n").Eval(ev.binding)
	if err != nil {
		return nil, fmt.Errorf("n %s: %v", attrs.Dim("n"), err)
	}
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("n is %d", n)
	}
	res := newArray(dt, []int64{n})
	for k := int64(0); k < n; k++ {
		if dt.IsFloat() {
			res.f[k] = intToFloat(k, dt)
		} else {
			res.i[k] = dt.Wrap(k)
		}
	}
	return res, nil
}
