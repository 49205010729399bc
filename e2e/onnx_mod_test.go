package e2e

import (
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestONNXModFmod: Mod with fmod=1 (C's remainder, the dividend's sign)
// over floats and int64, against math.Mod: dividends of both signs,
// exact multiples (a zero remainder keeps no sign fix), divisors of both
// signs broadcast per column.
func TestONNXModFmod(t *testing.T) {
	as := []float64{-7.5, -3, -0.25, 0, 0.25, 3, 7.5, 5.25, -5.25, 6}
	bs := []float64{2, -2, 0.75}
	for _, dt := range []tensor.DType{tensor.F32, tensor.I64} {
		g := &graph{outs: []string{"y"}}
		elem := int32(1)
		if dt == tensor.I64 {
			elem = 7
		}
		g.inputs = append(g.inputs,
			&onnxpb.ValueInfo{Name: "a", ElemType: elem, HasShape: true, Shape: []onnxpb.Dim{{Value: int64(len(as)), Known: true}, {Value: 1, Known: true}}},
			&onnxpb.ValueInfo{Name: "b", ElemType: elem, HasShape: true, Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: int64(len(bs)), Known: true}}})
		g.node("Mod", []string{"a", "b"}, []string{"y"}, ai("fmod", 1))
		av, bv := as, bs
		var in map[string]*tensor.Tensor
		if dt == tensor.F32 {
			fa, fb := make([]float32, len(av)), make([]float32, len(bv))
			for i, v := range av {
				fa[i] = float32(v)
			}
			for i, v := range bv {
				fb[i] = float32(v)
			}
			in = map[string]*tensor.Tensor{"a": tensor.FromF32([]int64{int64(len(av)), 1}, fa), "b": tensor.FromF32([]int64{1, int64(len(bv))}, fb)}
		} else {
			av, bv = []float64{-7, -3, -1, 0, 1, 3, 7, 9, -9, 6}, []float64{2, -2, 5}
			ia, ib := make([]int64, len(av)), make([]int64, len(bv))
			for i, v := range av {
				ia[i] = int64(v)
			}
			for i, v := range bv {
				ib[i] = int64(v)
			}
			in = map[string]*tensor.Tensor{"a": tensor.FromI64([]int64{int64(len(av)), 1}, ia), "b": tensor.FromI64([]int64{1, int64(len(bv))}, ib)}
		}
		out, _ := runONNX(t, g, specialize.Binding{}, in)
		for i, a := range av {
			for j, b := range bv {
				want := math.Mod(a, b)
				var got float64
				if dt == tensor.F32 {
					got = float64(out[0].F32()[i*len(bv)+j])
				} else {
					got = float64(out[0].I64()[i*len(bv)+j])
				}
				if math.Abs(got-want) > 1e-6 {
					t.Errorf("%s Mod fmod=1: %g mod %g = %g, want %g", dt, a, b, got, want)
				}
			}
		}
	}
}
