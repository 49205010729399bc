package eval

import (
	"fmt"
	"math"
	"sort"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// normAxis checks an axis against a rank, counting a negative one from the
// end.
func normAxis(ax int64, rank int) (int, error) {
	if ax < -int64(rank) || ax >= int64(rank) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", ax, rank)
	}
	if ax < 0 {
		ax += int64(rank)
	}
	return int(ax), nil
}

// split3 views shape around axis as [outer, d, inner].
func split3(shape []int64, axis int) (outer, d, inner int) {
	return numel(shape[:axis]), int(shape[axis]), numel(shape[axis+1:])
}

// reduce is reduce_{sum,mean,max,min,prod} over attrs "axes".
func reduce(attrs mir.Attrs, x *array) (*array, error) {
	kind := attrs.String("kind")
	rank := len(x.shape)
	reduced := make([]bool, rank)
	if attrs.Has("axes") {
		for _, a := range attrs.Ints("axes") {
			ax, err := normAxis(a, rank)
			if err != nil {
				return nil, err
			}
			if reduced[ax] {
				return nil, fmt.Errorf("axes lists axis %d twice", ax)
			}
			reduced[ax] = true
		}
	} else {
		for k := range reduced {
			reduced[k] = true
		}
	}
	// The result shape, and for each input element the result element it
	// goes to: kept axes keep their stride, reduced ones have stride 0.
	var out []int64
	var kept []int64
	for k, d := range x.shape {
		switch {
		case !reduced[k]:
			out = append(out, d)
			kept = append(kept, d)
		case attrs.Bool("keepdims"):
			out = append(out, 1)
		}
	}
	keptSt := strides(kept)
	st := make([]int, rank)
	j := 0
	count := 1
	for k := range x.shape {
		if reduced[k] {
			count *= int(x.shape[k])
			continue
		}
		st[k] = keptSt[j]
		j++
	}
	m := strideMap(x.shape, st, 0)
	res := newArray(x.dt, out)

	if x.isFloat() {
		init := map[string]float64{"sum": 0, "mean": 0, "prod": 1, "max": math.Inf(-1), "min": math.Inf(1)}
		v, ok := init[kind]
		if !ok {
			return nil, fmt.Errorf("unknown reduction kind %q", kind)
		}
		for k := range res.f {
			res.f[k] = v
		}
		for k, o := range m {
			a, e := res.f[o], x.f[k]
			switch kind {
			case "sum", "mean":
				res.f[o] = a + e
			case "prod":
				res.f[o] = a * e
			case "max":
				if e > a || math.IsNaN(e) {
					res.f[o] = e // once NaN, no later e is > NaN
				}
			case "min":
				if e < a || math.IsNaN(e) {
					res.f[o] = e
				}
			}
		}
		if kind == "mean" {
			for k := range res.f {
				res.f[k] /= float64(count) // an empty mean is 0/0 = NaN
			}
		}
		return res.fit(), nil
	}

	if x.dt == tensor.Bool {
		return nil, fmt.Errorf("reduce_%s needs a numeric dtype, found bool", kind)
	}
	lo, hi := intRange(x.dt)
	init := map[string]int64{"sum": 0, "prod": 1, "max": lo, "min": hi}
	v, ok := init[kind]
	if !ok {
		if kind == "mean" {
			return nil, fmt.Errorf("reduce_mean needs a float dtype, found %s", x.dt)
		}
		return nil, fmt.Errorf("unknown reduction kind %q", kind)
	}
	for k := range res.i {
		res.i[k] = v
	}
	for k, o := range m {
		a, e := res.i[o], x.i[k]
		switch kind {
		case "sum":
			res.i[o] = a + e
		case "prod":
			res.i[o] = a * e
		case "max":
			res.i[o] = max(a, e)
		case "min":
			res.i[o] = min(a, e)
		}
	}
	return res.fit(), nil
}

// argreduce is argmax/argmin along "axis": the first index of the extreme,
// as i64. A NaN counts as the extreme (NumPy): the first NaN wins.
func argreduce(attrs mir.Attrs, x *array) (*array, error) {
	ax, err := normAxis(attrs.Int("axis"), len(x.shape))
	if err != nil {
		return nil, err
	}
	isMax := attrs.Bool("max")
	outer, d, inner := split3(x.shape, ax)
	if d == 0 && outer*inner > 0 {
		return nil, fmt.Errorf("arg%s over an empty axis %d", map[bool]string{true: "max", false: "min"}[isMax], ax)
	}
	var out []int64
	for k, n := range x.shape {
		switch {
		case k != ax:
			out = append(out, n)
		case attrs.Bool("keepdims"):
			out = append(out, 1)
		}
	}
	res := newArray(tensor.I64, out)
	better := func(a, b float64) bool { // a beats the best so far b
		if isMax {
			return a > b
		}
		return a < b
	}
	betterInt := func(a, b int64) bool {
		if isMax {
			return a > b
		}
		return a < b
	}
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			base := o*d*inner + in
			best := 0
			if x.isFloat() {
				bv := x.f[base]
				for j := 1; j < d && !math.IsNaN(bv); j++ {
					v := x.f[base+j*inner]
					if math.IsNaN(v) || better(v, bv) {
						best, bv = j, v
					}
				}
			} else {
				bv := x.i[base]
				for j := 1; j < d; j++ {
					if v := x.i[base+j*inner]; betterInt(v, bv) {
						best, bv = j, v
					}
				}
			}
			res.i[o*inner+in] = int64(best)
		}
	}
	return res, nil
}

// softmax is softmax or (with "log") log_softmax along "axis", computed as
// exp(x - max) / sum; a slice that is all -inf gives NaN.
func softmax(attrs mir.Attrs, x *array) (*array, error) {
	if !x.isFloat() {
		return nil, fmt.Errorf("needs a float dtype, found %s", x.dt)
	}
	ax, err := normAxis(attrs.Int("axis"), len(x.shape))
	if err != nil {
		return nil, err
	}
	outer, d, inner := split3(x.shape, ax)
	res := newArray(x.dt, x.shape)
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			at := func(j int) int { return o*d*inner + j*inner + in }
			m := math.Inf(-1)
			for j := 0; j < d; j++ {
				m = math.Max(m, x.f[at(j)])
			}
			sum := 0.0
			for j := 0; j < d; j++ {
				sum += math.Exp(x.f[at(j)] - m)
			}
			for j := 0; j < d; j++ {
				if attrs.Bool("log") {
					res.f[at(j)] = x.f[at(j)] - m - math.Log(sum)
				} else {
					res.f[at(j)] = math.Exp(x.f[at(j)]-m) / sum
				}
			}
		}
	}
	return res.fit(), nil
}

// layernorm normalizes x over the axes from "axis" to the last:
// (x - mean) / sqrt(var + eps) * scale + bias with the biased variance, or
// with "rms", x / sqrt(mean(x^2) + eps) * scale (+ bias). The result is not
// fitted to the dtype (the caller does).
func layernorm(attrs mir.Attrs, x, scale, bias *array) (*array, error) {
	if !x.isFloat() {
		return nil, fmt.Errorf("needs a float dtype, found %s", x.dt)
	}
	ax, err := normAxis(attrs.Int("axis"), len(x.shape))
	if err != nil {
		return nil, err
	}
	norm := x.shape[ax:]
	for _, p := range []struct {
		name string
		a    *array
	}{{"scale", scale}, {"bias", bias}} {
		if p.a == nil {
			continue
		}
		if p.a.dt != x.dt || !sameShape(p.a.shape, norm) {
			return nil, fmt.Errorf("%s is %s%s but the normalized shape is %s%s", p.name, p.a.dt, tensor.ShapeString(p.a.shape), x.dt, tensor.ShapeString(norm))
		}
	}
	eps := attrs.Float("eps")
	rms := attrs.Bool("rms")
	g := numel(norm)
	outer := numel(x.shape[:ax])
	res := newArray(x.dt, x.shape)
	for o := 0; o < outer; o++ {
		row := x.f[o*g : (o+1)*g]
		mean, div := 0.0, 0.0
		if rms {
			ss := 0.0
			for _, v := range row {
				ss += v * v
			}
			div = math.Sqrt(ss/float64(g) + eps)
		} else {
			for _, v := range row {
				mean += v
			}
			mean /= float64(g)
			ss := 0.0
			for _, v := range row {
				ss += (v - mean) * (v - mean)
			}
			div = math.Sqrt(ss/float64(g) + eps)
		}
		for k, v := range row {
			y := (v - mean) / div
			if scale != nil {
				y *= scale.f[k]
			}
			if bias != nil {
				y += bias.f[k]
			}
			res.f[o*g+k] = y
		}
	}
	return res, nil
}

// topk is the k first elements of each line along "axis" in descending
// order ("largest") or ascending, and their indices (i64); k is the
// results' length along the axis. The order is total: equal values by
// lower index first, and a NaN ranks above every number (PyTorch's topk),
// so NaNs lead the largest and trail the smallest. Each line is sorted
// whole: the reference spends time to be obviously right.
func topk(attrs mir.Attrs, x *array, resShape []int64) ([]*array, error) {
	ax, err := normAxis(attrs.Int("axis"), len(x.shape))
	if err != nil {
		return nil, err
	}
	outer, d, inner := split3(x.shape, ax)
	k := int(resShape[ax])
	if k < 1 || k > d {
		return nil, fmt.Errorf("k %d outside [1, %d] (axis %d)", k, d, ax)
	}
	largest := attrs.Bool("largest")
	vals, idx := newArray(x.dt, resShape), newArray(tensor.I64, resShape)
	// above reports whether value a ranks above value b (NaN highest).
	above := func(a, b float64) bool {
		return math.IsNaN(a) && !math.IsNaN(b) || a > b
	}
	line := make([]int, d)
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			at := func(j int) int { return (o*d+j)*inner + in }
			for j := range line {
				line[j] = j
			}
			sort.SliceStable(line, func(p, q int) bool {
				a, b := line[p], line[q]
				if x.isFloat() {
					va, vb := x.f[at(a)], x.f[at(b)]
					if largest {
						return above(va, vb)
					}
					return above(vb, va)
				}
				if largest {
					return x.i[at(a)] > x.i[at(b)]
				}
				return x.i[at(a)] < x.i[at(b)]
			})
			for r := 0; r < k; r++ {
				dst := (o*k+r)*inner + in
				idx.i[dst] = int64(line[r])
				if x.isFloat() {
					vals.f[dst] = x.f[at(line[r])]
				} else {
					vals.i[dst] = x.i[at(line[r])]
				}
			}
		}
	}
	return []*array{vals, idx}, nil
}
