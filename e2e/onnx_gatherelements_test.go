package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// gatherElementsRef is GatherElements by its definition over [d0, d1, d2]
// data and [i0, i1, i2] indices.
func gatherElementsRef(x []float32, d [3]int64, idx []int64, id [3]int64, axis int) []float32 {
	out := make([]float32, len(idx))
	for e := range int64(len(idx)) {
		p := [3]int64{e / (id[1] * id[2]), e / id[2] % id[1], e % id[2]}
		j := idx[e]
		if j < 0 {
			j += d[axis]
		}
		p[axis] = j
		out[e] = x[(p[0]*d[1]+p[1])*d[2]+p[2]]
	}
	return out
}

// TestONNXGatherElements: GatherElements along each axis of data whose
// middle dim is symbolic (two sizes), with indices as large as the data,
// smaller on the other dims, negative, and int32, against the definition.
func TestONNXGatherElements(t *testing.T) {
	for _, c := range []struct {
		axis int
		idx  []any // the indices' dims: "s" is the symbolic one
		i32  bool
	}{
		{1, []any{3, 2, 4}, false},
		{0, []any{2, "s", 4}, false},
		{-1, []any{3, "s", 3}, true},
		{2, []any{1, 1, 4}, false},
		{2, []any{3, 2, 3}, false}, // dim 1 checked at run time: 2 <= s only the binding tells
		{1, []any{3, "s", 4}, true},
	} {
		g := &graph{outs: []string{"y"}}
		g.input("x", 3, "s", 4)
		elem := int32(7)
		if c.i32 {
			elem = 6
		}
		vi := &onnxpb.ValueInfo{Name: "i", ElemType: elem, HasShape: true}
		for _, d := range c.idx {
			if s, ok := d.(string); ok {
				vi.Shape = append(vi.Shape, onnxpb.Dim{Param: s})
			} else {
				vi.Shape = append(vi.Shape, onnxpb.Dim{Value: int64(d.(int)), Known: true})
			}
		}
		g.inputs = append(g.inputs, vi)
		g.node("GatherElements", []string{"x", "i"}, []string{"y"}, ai("axis", int64(c.axis)))
		res, err := onnx.Import(g.model(13), onnx.Options{Module: "t", Source: "t.onnx"})
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		a := (c.axis + 3) % 3
		for _, s := range []int64{2, 5} {
			d := [3]int64{3, s, 4}
			var id [3]int64
			for k, v := range c.idx {
				if _, ok := v.(string); ok {
					id[k] = s
				} else {
					id[k] = int64(v.(int))
				}
			}
			x := seq(int(3*s*4), 1)
			n := id[0] * id[1] * id[2]
			idx := make([]int64, n)
			for e := range idx {
				idx[e] = int64(e*5)%(2*d[a]) - d[a] // every index in [-d, d), negative ones too
			}
			in := tensor.FromI64(id[:], idx)
			if c.i32 {
				in = tensor.New(tensor.I32, id[:]...)
				v := tensor.AsI32(in.Data)
				for e := range v {
					v[e] = int32(idx[e])
				}
			}
			out := runImported(t, res, "cpu", specialize.Binding{"s": s}, map[string]*tensor.Tensor{"x": tensor.FromF32(d[:], x), "i": in})
			want := gatherElementsRef(x, d, idx, id, a)
			what := fmt.Sprintf("GatherElements axis=%d indices %v s=%d", c.axis, c.idx, s)
			got := out[0].F32()
			if len(got) != len(want) {
				t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
			}
			for e := range want {
				if got[e] != want[e] {
					t.Fatalf("%s: element %d: %v, want %v", what, e, got[e], want[e])
				}
			}
		}
	}
}

// openImported imports g at opset, builds it for the cpu target and
// opens it (closed when the test ends), for tests that look at Run's
// errors.
func openImported(t *testing.T, g *graph, opset int64) *loader.Model {
	t.Helper()
	res, err := onnx.Import(g.model(opset), onnx.Options{Module: "t", Source: "t.onnx"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "t.rlx")
	if _, err := build(t, "t.hir", res.HIR, out, driver.Options{Target: "cpu", Params: res.Weights, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	m, err := loader.Open(out, loader.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestONNXGatherElementsOutOfRange: an index past the axis is a run-time
// error, not a read of the next row; indices larger than the data on
// another dim are refused at import.
func TestONNXGatherElementsOutOfRange(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", 2, 3)
	g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "i", ElemType: 7, HasShape: true,
		Shape: []onnxpb.Dim{{Value: 2, Known: true}, {Value: 1, Known: true}}})
	g.node("GatherElements", []string{"x", "i"}, []string{"y"}, ai("axis", 1))
	m := openImported(t, g, 13)
	x := tensor.FromF32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	for _, bad := range [][]int64{{0, 3}, {-4, 0}} {
		_, err := m.Run(map[string]*tensor.Tensor{"x": x, "i": tensor.FromI64([]int64{2, 1}, bad)})
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("indices %v: got %v, want an out-of-range error", bad, err)
		}
	}

	g = &graph{outs: []string{"y"}}
	g.input("x", 2, 3)
	g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "i", ElemType: 7, HasShape: true,
		Shape: []onnxpb.Dim{{Value: 3, Known: true}, {Value: 1, Known: true}}})
	g.node("GatherElements", []string{"x", "i"}, []string{"y"}, ai("axis", 1))
	if _, err := onnx.Import(g.model(13), onnx.Options{Module: "t", Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), "indices dim 0 (3) must be at most data's (2)") {
		t.Errorf("indices larger than the data: got %v", err)
	}
}
