package e2e

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// topKRef is TopK along axis of a [d0, d1, d2] tensor by its definition:
// each line's indices sorted stably by value, largest (or smallest) first,
// a NaN above every number; the first k values and indices.
func topKRef(x []float64, d [3]int64, axis, k int, largest bool) ([]float64, []int64) {
	od := d
	od[axis] = int64(k)
	n := od[0] * od[1] * od[2]
	vals, idx := make([]float64, n), make([]int64, n)
	for i := range d[0] * d[1] * d[2] {
		pos := [3]int64{i / (d[1] * d[2]), i / d[2] % d[1], i % d[2]}
		if pos[axis] != 0 {
			continue // one line per position with 0 along the axis
		}
		at := func(j int64) int64 { p := pos; p[axis] = j; return (p[0]*d[1]+p[1])*d[2] + p[2] }
		line := make([]int64, d[axis])
		for j := range line {
			line[j] = int64(j)
		}
		sort.SliceStable(line, func(p, q int) bool {
			a, b := x[at(line[p])], x[at(line[q])]
			if math.IsNaN(a) != math.IsNaN(b) {
				return math.IsNaN(a) == largest
			}
			if largest {
				return a > b
			}
			return a < b
		})
		for r := range k {
			p := pos
			p[axis] = int64(r)
			o := (p[0]*od[1]+p[1])*od[2] + p[2]
			vals[o], idx[o] = x[at(line[r])], line[r]
		}
	}
	return vals, idx
}

// TestONNXTopK: TopK over each axis of a float tensor (with a NaN) and an
// int64 one (with ties) whose middle dim is symbolic, largest and
// smallest, K from an initializer, from the shape (K = s: a whole sort)
// and from opset 1's attribute, against the definition computed here.
func TestONNXTopK(t *testing.T) {
	type kind int
	const (
		kInit kind = iota
		kShape
		kAttr
	)
	for _, dt := range []tensor.DType{tensor.F32, tensor.I64} {
		for axis := -1; axis < 3; axis++ {
			for _, kk := range []kind{kInit, kShape, kAttr} {
				for _, largest := range []bool{true, false} {
					a := (axis + 3) % 3
					if kk == kShape && a != 1 {
						continue
					}
					k := int64(2)
					g := &graph{outs: []string{"v", "i"}}
					elem := int32(1)
					if dt == tensor.I64 {
						elem = 7
					}
					g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: elem, HasShape: true,
						Shape: []onnxpb.Dim{{Value: 3, Known: true}, {Param: "s"}, {Value: 4, Known: true}}})
					attrs := []*onnxpb.Attr{ai("axis", int64(axis)), ai("largest", b2i(largest))}
					opset := int64(17)
					switch kk {
					case kInit:
						g.initI64("k", []int64{1}, []int64{k})
						g.node("TopK", []string{"x", "k"}, []string{"v", "i"}, attrs...)
					case kShape:
						g.initI64("ax1", []int64{1}, []int64{1})
						g.node("Shape", []string{"x"}, []string{"shp"})
						g.node("Gather", []string{"shp", "ax1"}, []string{"k"}, ai("axis", 0))
						g.node("TopK", []string{"x", "k"}, []string{"v", "i"}, attrs...)
					case kAttr:
						opset = 9 // k is an attribute before opset 10 (and largest, ignored there, absent)
						g.node("TopK", []string{"x"}, []string{"v", "i"}, ai("axis", int64(axis)), ai("k", k))
						if !largest {
							continue
						}
					}
					res, err := onnx.Import(g.model(opset), onnx.Options{Module: "t", Source: "t.onnx"})
					if err != nil {
						t.Fatalf("import: %v", err)
					}
					for _, s := range []int64{2, 5} {
						d := [3]int64{3, s, 4}
						n := 3 * s * 4
						xs := make([]float64, n)
						var in *tensor.Tensor
						if dt == tensor.F32 {
							f := seq(int(n), 2)
							f[n/2] = float32(math.NaN())
							for i, v := range f {
								xs[i] = float64(v)
							}
							in = tensor.FromF32(d[:], f)
						} else {
							v := make([]int64, n)
							for i := range v {
								v[i] = int64((i*7)%5-2) << 40 // ties, and exact only in int64
								xs[i] = float64(v[i])
							}
							in = tensor.FromI64(d[:], v)
						}
						kval := k
						if kk == kShape {
							kval = s // a whole sort of the axis
						}
						out := runImported(t, res, "cpu", specialize.Binding{"s": s}, map[string]*tensor.Tensor{"x": in})
						wantV, wantI := topKRef(xs, d, a, int(kval), largest)
						what := fmt.Sprintf("TopK %s axis=%d k=%d largest=%v s=%d", dt, axis, kval, largest, s)
						gotI := out[1].I64()
						if len(gotI) != len(wantI) {
							t.Fatalf("%s: %d indices, want %d", what, len(gotI), len(wantI))
						}
						for e := range wantI {
							var gv float64
							if dt == tensor.F32 {
								gv = float64(out[0].F32()[e])
							} else {
								gv = float64(out[0].I64()[e])
							}
							same := gv == wantV[e] || math.IsNaN(gv) && math.IsNaN(wantV[e])
							if gotI[e] != wantI[e] || !same {
								t.Fatalf("%s: element %d: (%v, %d), want (%v, %d)", what, e, gv, gotI[e], wantV[e], wantI[e])
							}
						}
					}
				}
			}
		}
	}
}

// TestONNXTopKErrors: a K computed from data, or past the axis, fails
// with a message that says so.
func TestONNXTopKErrors(t *testing.T) {
	g := &graph{outs: []string{"v", "i"}}
	g.input("x", 3, 4)
	g.input("kf", 1)
	g.node("Cast", []string{"kf"}, []string{"k"}, ai("to", 7))
	g.node("TopK", []string{"x", "k"}, []string{"v", "i"})
	if _, err := onnx.Import(g.model(17), onnx.Options{Module: "t", Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), "K known at import") {
		t.Errorf("K from data: got %v", err)
	}
	g = &graph{outs: []string{"v", "i"}}
	g.input("x", 3, 4)
	g.initI64("k", []int64{1}, []int64{5})
	g.node("TopK", []string{"x", "k"}, []string{"v", "i"})
	if _, err := onnx.Import(g.model(17), onnx.Options{Module: "t", Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), "larger than axis 1") {
		t.Errorf("K past the axis: got %v", err)
	}
}
