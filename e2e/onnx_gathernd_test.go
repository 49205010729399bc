package e2e

import (
	"fmt"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestONNXGatherND: GatherND's slices by index tuples of every length,
// negative components, int32 indices, batch_dims 1, over a symbolic
// leading dim, against gatherNDRef (ONNX's definition).
func TestONNXGatherND(t *testing.T) {
	cases := []struct {
		name   string
		ishape []int64
		tuples []int64
		batch  int64
		i32    bool
	}{
		{"pairs", []int64{2, 2}, []int64{0, 2, -1, -3}, 0, false},
		{"rows, int32", []int64{2, 1, 1}, []int64{1, -1}, 0, true},
		{"elements", []int64{3, 3}, []int64{0, 0, 0, -1, 2, 3, 1, 1, -2}, 0, false},
		{"batch_dims 1", []int64{2, 2, 1}, []int64{2, 0, -1, 1}, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachTarget(t, func(t *testing.T, target string) {
				g := &graph{outs: []string{"y"}}
				lead := any("s")
				if c.batch > 0 {
					lead = 2 // batch dims must match the indices'
				}
				g.input("x", lead, 3, 4)
				et := int32(7)
				if c.i32 {
					et = 6
				}
				vi := &onnxpb.ValueInfo{Name: "i", ElemType: et, HasShape: true}
				for _, d := range c.ishape {
					vi.Shape = append(vi.Shape, onnxpb.Dim{Value: d, Known: true})
				}
				g.inputs = append(g.inputs, vi)
				g.node("GatherND", []string{"x", "i"}, []string{"y"}, ai("batch_dims", c.batch))
				for _, s := range []int64{2, 5} {
					if c.batch > 0 && s != 2 {
						continue
					}
					dshape := []int64{s, 3, 4}
					x := seq(int(s*12), 1)
					idx := tensor.FromI64(c.ishape, c.tuples)
					if c.i32 {
						idx = tensor.New(tensor.I32, c.ishape...)
						for j, u := range c.tuples {
							tensor.AsI32(idx.Data)[j] = int32(u)
						}
					}
					want := gatherNDRef(x, dshape, c.tuples, c.ishape, c.batch)
					bind := specialize.Binding{"s": s}
					if c.batch > 0 {
						bind = specialize.Binding{}
					}
					out := runONNXOn(t, g, 13, target, bind, map[string]*tensor.Tensor{
						"x": tensor.FromF32(dshape, x), "i": idx})
					nearTol(t, fmt.Sprintf("GatherND %s s=%d", c.name, s), out[0].F32(), want, 0)
				}
			})
		})
	}
}

// gatherNDRef is ONNX GatherND: for each index tuple (the indices' last
// axis, negative components from the end of their dim), the slice of
// data it addresses within its batch (the first b dims).
func gatherNDRef(data []float32, dshape []int64, tuples []int64, ishape []int64, b int64) []float64 {
	k := ishape[len(ishape)-1]
	prod := func(s []int64) int64 {
		p := int64(1)
		for _, d := range s {
			p *= d
		}
		return p
	}
	slice := prod(dshape[b+k:])
	perBatch := prod(dshape[b:])
	q := prod(ishape[b : len(ishape)-1])
	var out []float64
	for t := range prod(ishape[:len(ishape)-1]) {
		start := (t / q) * perBatch
		for j := range k {
			c := tuples[t*k+j]
			if c < 0 {
				c += dshape[b+j]
			}
			start += c * prod(dshape[b+j+1:])
		}
		for e := range slice {
			out = append(out, float64(data[start+e]))
		}
	}
	return out
}
