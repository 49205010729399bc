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
	type operands struct {
		dt     tensor.DType
		elem   int32
		as, bs []float64
	}
	for _, c := range []operands{
		{tensor.F32, 1, []float64{-7.5, -3, -0.25, 0, 0.25, 3, 7.5, 5.25, -5.25, 6}, []float64{2, -2, 0.75}},
		{tensor.I64, 7, []float64{-7, -3, -1, 0, 1, 3, 7, 9, -9, 6}, []float64{2, -2, 5}},
	} {
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs,
			&onnxpb.ValueInfo{Name: "a", ElemType: c.elem, HasShape: true, Shape: []onnxpb.Dim{{Value: int64(len(c.as)), Known: true}, {Value: 1, Known: true}}},
			&onnxpb.ValueInfo{Name: "b", ElemType: c.elem, HasShape: true, Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: int64(len(c.bs)), Known: true}}})
		g.node("Mod", []string{"a", "b"}, []string{"y"}, ai("fmod", 1))
		in := map[string]*tensor.Tensor{"a": tensorOf(c.dt, c.as, int64(len(c.as)), 1), "b": tensorOf(c.dt, c.bs, 1, int64(len(c.bs)))}
		out, _ := runONNX(t, g, specialize.Binding{}, in)
		got := out[0].Float64s()
		for i, a := range c.as {
			for j, b := range c.bs {
				if g, want := got[i*len(c.bs)+j], math.Mod(a, b); math.Abs(g-want) > 1e-6 {
					t.Errorf("%s Mod fmod=1: %g mod %g = %g, want %g", c.dt, a, b, g, want)
				}
			}
		}
	}
}

// tensorOf is vs as an f32 or i64 tensor of the given shape.
func tensorOf(dt tensor.DType, vs []float64, shape ...int64) *tensor.Tensor {
	if dt == tensor.F32 {
		f := make([]float32, len(vs))
		for i, v := range vs {
			f[i] = float32(v)
		}
		return tensor.FromF32(shape, f)
	}
	n := make([]int64, len(vs))
	for i, v := range vs {
		n[i] = int64(v)
	}
	return tensor.FromI64(shape, n)
}
