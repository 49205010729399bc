package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestONNXScatterElements: ScatterElements along each axis of data whose
// middle dim is symbolic, with indices smaller than the data, negative
// and repeated (the later update wins), against the definition written
// here, on the cpu target and on vulkan.
func TestONNXScatterElements(t *testing.T) {
	for _, c := range []struct {
		axis int
		idx  [3]int // the indices' dims; 0 is the symbolic s
	}{{1, [3]int{3, 2, 4}}, {0, [3]int{2, 0, 4}}, {-1, [3]int{3, 0, 3}}, {2, [3]int{1, 1, 4}}} {
		t.Run(fmt.Sprintf("axis %d", c.axis), func(t *testing.T) {
			eachTarget(t, func(t *testing.T, target string) {
				g := &graph{outs: []string{"y"}}
				g.input("x", 3, "s", 4)
				dims := []onnxpb.Dim{}
				for _, d := range c.idx {
					if d == 0 {
						dims = append(dims, onnxpb.Dim{Param: "s"})
					} else {
						dims = append(dims, onnxpb.Dim{Value: int64(d), Known: true})
					}
				}
				g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "i", ElemType: 7, HasShape: true, Shape: dims})
				g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "u", ElemType: 1, HasShape: true, Shape: dims})
				g.node("ScatterElements", []string{"x", "i", "u"}, []string{"y"}, ai("axis", int64(c.axis)))
				a := (c.axis + 3) % 3
				for _, s := range []int64{2, 5} {
					d := [3]int64{3, s, 4}
					var id [3]int64
					for k, v := range c.idx {
						id[k] = int64(v)
						if v == 0 {
							id[k] = s
						}
					}
					n := id[0] * id[1] * id[2]
					x, u := seq(int(3*s*4), 1), seq(int(n)+5, 3)[5:]
					idx := make([]int64, n)
					for e := range idx {
						idx[e] = int64(e*3)%(2*d[a]) - d[a] // negative ones too, and repeats
					}
					want := make([]float64, len(x))
					for e, v := range x {
						want[e] = float64(v)
					}
					for e := range n { // in order: the later update wins
						p := [3]int64{e / (id[1] * id[2]), e / id[2] % id[1], e % id[2]}
						j := idx[e]
						if j < 0 {
							j += d[a]
						}
						p[a] = j
						want[(p[0]*d[1]+p[1])*d[2]+p[2]] = float64(u[e])
					}
					out := runONNXOn(t, g, 16, target, specialize.Binding{"s": s}, map[string]*tensor.Tensor{
						"x": tensor.FromF32(d[:], x), "i": tensor.FromI64(id[:], idx), "u": tensor.FromF32(id[:], u)})
					nearTol(t, fmt.Sprintf("ScatterElements axis=%d indices %v s=%d", c.axis, c.idx, s), out[0].F32(), want, 0)
				}
			})
		})
	}
}

// TestONNXScatterNDRunTime: ScatterND over run-time data, indices and
// updates: whole rows (k=1) and single elements (k=2), negative and
// repeated tuples, on the cpu target and on vulkan.
func TestONNXScatterNDRunTime(t *testing.T) {
	for _, k := range []int64{1, 2} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			eachTarget(t, func(t *testing.T, target string) {
				g := &graph{outs: []string{"y"}}
				g.input("x", "s", 4)
				g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "i", ElemType: 7, HasShape: true,
					Shape: []onnxpb.Dim{{Value: 3, Known: true}, {Value: k, Known: true}}})
				us := []onnxpb.Dim{{Value: 3, Known: true}}
				if k == 1 {
					us = append(us, onnxpb.Dim{Value: 4, Known: true})
				}
				g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "u", ElemType: 1, HasShape: true, Shape: us})
				g.node("ScatterND", []string{"x", "i", "u"}, []string{"y"})
				for _, s := range []int64{3, 6} {
					x := seq(int(s*4), 1)
					var tuples []int64
					if k == 1 {
						tuples = []int64{1, -1, 1} // row 1 twice: the later wins
					} else {
						tuples = []int64{0, 3, -1, -4, 0, 3}
					}
					n := int64(3)
					if k == 1 {
						n = 12
					}
					u := seq(int(n)+9, 2)[9:]
					want := make([]float64, len(x))
					for e, v := range x {
						want[e] = float64(v)
					}
					for q := range int64(3) {
						if k == 1 {
							r := tuples[q]
							if r < 0 {
								r += s
							}
							for c := range int64(4) {
								want[r*4+c] = float64(u[q*4+c])
							}
							continue
						}
						r, c := tuples[2*q], tuples[2*q+1]
						if r < 0 {
							r += s
						}
						if c < 0 {
							c += 4
						}
						want[r*4+c] = float64(u[q])
					}
					ud := []int64{3}
					if k == 1 {
						ud = []int64{3, 4}
					}
					out := runONNXOn(t, g, 16, target, specialize.Binding{"s": s}, map[string]*tensor.Tensor{
						"x": tensor.FromF32([]int64{s, 4}, x), "i": tensor.FromI64([]int64{3, k}, tuples), "u": tensor.FromF32(ud, u)})
					nearTol(t, fmt.Sprintf("ScatterND k=%d s=%d", k, s), out[0].F32(), want, 0)
				}
			})
		})
	}
}

// TestONNXScatterOutOfRange: on the cpu target an index outside the data
// is a run-time error, not a write past a row.
func TestONNXScatterOutOfRange(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", 2, 3)
	g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "i", ElemType: 7, HasShape: true,
		Shape: []onnxpb.Dim{{Value: 2, Known: true}, {Value: 1, Known: true}}})
	g.input("u", 2, 1)
	g.node("ScatterElements", []string{"x", "i", "u"}, []string{"y"}, ai("axis", 1))
	m := openImported(t, g, 16)
	x, u := tensor.FromF32([]int64{2, 3}, make([]float32, 6)), tensor.FromF32([]int64{2, 1}, []float32{1, 2})
	for _, bad := range [][]int64{{0, 3}, {-4, 0}} {
		_, err := m.Run(map[string]*tensor.Tensor{"x": x, "i": tensor.FromI64([]int64{2, 1}, bad), "u": u})
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("indices %v: got %v, want an out-of-range error", bad, err)
		}
	}
}
