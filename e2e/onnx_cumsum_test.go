package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// cumSumRef is CumSum along axis of a [d0, d1, d2] tensor, in float64.
func cumSumRef(x []float64, d [3]int64, axis int, exclusive, reverse bool) []float64 {
	out := make([]float64, len(x))
	strides := [3]int64{d[1] * d[2], d[2], 1}
	for i := range int64(len(x)) {
		pos := [3]int64{i / strides[0], i / strides[1] % d[1], i % d[2]}
		var s float64
		for j := range d[axis] {
			p := pos
			p[axis] = j
			in := j <= pos[axis]
			switch {
			case exclusive && !reverse:
				in = j < pos[axis]
			case !exclusive && reverse:
				in = j >= pos[axis]
			case exclusive && reverse:
				in = j > pos[axis]
			}
			if in {
				s += x[p[0]*strides[0]+p[1]*strides[1]+p[2]]
			}
		}
		out[i] = s
	}
	return out
}

// TestONNXCumSum: CumSum over each axis of a float and an int64 tensor
// whose middle dim is symbolic (two sizes), every exclusive and reverse
// combination, against the running sums computed here.
func TestONNXCumSum(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.F32, tensor.I64} {
		for axis := -1; axis < 3; axis++ {
			for _, mode := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				g := &graph{outs: []string{"y"}}
				elem := int32(1)
				if dt == tensor.I64 {
					elem = 7
				}
				g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: elem, HasShape: true,
					Shape: []onnxpb.Dim{{Value: 2, Known: true}, {Param: "s"}, {Value: 3, Known: true}}})
				g.initI64("axis", nil, []int64{int64(axis)})
				g.node("CumSum", []string{"x", "axis"}, []string{"y"}, ai("exclusive", b2i(mode[0])), ai("reverse", b2i(mode[1])))
				for _, s := range []int64{1, 5} {
					d := [3]int64{2, s, 3}
					n := 2 * s * 3
					xs := make([]float64, n)
					var in *tensor.Tensor
					if dt == tensor.F32 {
						f := seq(int(n), 2)
						for i, v := range f {
							xs[i] = float64(v)
						}
						in = tensor.FromF32(d[:], f)
					} else {
						v := make([]int64, n)
						for i := range v {
							v[i] = int64(i%7-3) * (1 << 40) // exact only in int64
							xs[i] = float64(v[i])
						}
						in = tensor.FromI64(d[:], v)
					}
					out, _ := runONNX(t, g, specialize.Binding{"s": s}, map[string]*tensor.Tensor{"x": in})
					a := axis
					if a < 0 {
						a += 3
					}
					want := cumSumRef(xs, d, a, mode[0], mode[1])
					what := fmt.Sprintf("CumSum %s axis=%d exclusive=%v reverse=%v s=%d", dt, axis, mode[0], mode[1], s)
					if dt == tensor.F32 {
						nearTol(t, what, out[0].F32(), want, 1e-6)
						continue
					}
					got := out[0].I64()
					for i := range want {
						if float64(got[i]) != want[i] {
							t.Fatalf("%s: element %d: %d, want %.0f", what, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestONNXCumSumLong: a float CumSum over a long static axis sums in
// blocks (the importer's blockedCumSum: 64 within a block, then the
// blocks' totals, themselves blocked past 128 blocks), every exclusive
// and reverse combination, over the last axis and a middle one, against
// the running sums computed here; and no mask over the whole axis (an
// iota of its length) is made.
func TestONNXCumSumLong(t *testing.T) {
	for _, c := range []struct {
		d    [3]int64
		axis int64
	}{{[3]int64{2, 3, 320}, 2}, {[3]int64{2, 256, 3}, 1}, {[3]int64{1, 1, 8192}, -1}} {
		for _, mode := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			g := &graph{outs: []string{"y"}}
			dims := make([]onnxpb.Dim, 3)
			for i, v := range c.d {
				dims[i] = onnxpb.Dim{Value: v, Known: true}
			}
			g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: 1, HasShape: true, Shape: dims})
			g.initI64("axis", nil, []int64{c.axis})
			g.node("CumSum", []string{"x", "axis"}, []string{"y"}, ai("exclusive", b2i(mode[0])), ai("reverse", b2i(mode[1])))
			n := c.d[0] * c.d[1] * c.d[2]
			f := seq(int(n), 3)
			xs := make([]float64, n)
			for i, v := range f {
				xs[i] = float64(v)
			}
			out, hir := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32(c.d[:], f)})
			a := int(c.axis)
			if a < 0 {
				a += 3
			}
			what := fmt.Sprintf("CumSum %v axis=%d exclusive=%v reverse=%v", c.d, c.axis, mode[0], mode[1])
			nearTol(t, what, out[0].F32(), cumSumRef(xs, c.d, a, mode[0], mode[1]), 1e-5)
			if iota := fmt.Sprintf("iota(n=%d", c.d[a]); strings.Contains(hir, iota) {
				t.Errorf("%s: the HIR makes a mask over the whole axis (%s):\n%s", what, iota, hir)
			}
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
