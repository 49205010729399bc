package e2e

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// activationInput is 64 values over [-120, 120] with the small ones
// dense, where softplus neither overflows nor underflows in f32 as long
// as it is computed in a stable form.
func activationInput() []float32 {
	x := make([]float32, 64)
	for i := range x {
		v := float64(i-32) / 4
		if i%5 == 0 {
			v *= 15
		}
		x[i] = float32(v)
	}
	return x
}

// TestONNXSoftplusHardSigmoid checks Softplus (stable for large |x|),
// HardSigmoid with its defaults and with alpha and beta, and that
// x * Tanh(Softplus(x)), PyTorch's nn.Mish before opset 18, imports as
// mish.
func TestONNXSoftplusHardSigmoid(t *testing.T) {
	x := activationInput()
	g := &graph{outs: []string{"sp", "hs", "hs2", "mish", "mish2"}}
	g.input("x", 4, 16)
	g.node("Softplus", []string{"x"}, []string{"sp"})
	g.node("HardSigmoid", []string{"x"}, []string{"hs"})
	g.node("HardSigmoid", []string{"x"}, []string{"hs2"}, af("alpha", 0.35), af("beta", 0.25))
	g.node("Softplus", []string{"x"}, []string{"sp_m"})
	g.node("Tanh", []string{"sp_m"}, []string{"t_m"})
	g.node("Mul", []string{"x", "t_m"}, []string{"mish"})
	g.node("Mul", []string{"t_m", "x"}, []string{"mish2"})
	softplus := func(v float64) float64 { return math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v))) }
	want := make([][]float64, 5)
	for _, v32 := range x {
		v := float64(v32)
		hs := func(a, b float64) float64 { return math.Min(1, math.Max(0, a*v+b)) }
		m := v * math.Tanh(softplus(v))
		want[0] = append(want[0], softplus(v))
		want[1] = append(want[1], hs(float64(float32(0.2)), float64(float32(0.5))))
		want[2] = append(want[2], hs(float64(float32(0.35)), float64(float32(0.25))))
		want[3] = append(want[3], m)
		want[4] = append(want[4], m)
	}
	hir := lowered(t, g, 17, nil, map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(4, 16), x)}, func(t *testing.T, out []*tensor.Tensor) {
		for i, name := range g.outs {
			shapeIs(t, name, out[i], 4, 16)
			near(t, name, out[i].F32(), want[i])
		}
	})
	if n := strings.Count(hir, "= mish(x)"); n != 2 {
		t.Errorf("%d mish(x), want 2 (x * Tanh(Softplus(x)) both ways):\n%s", n, hir)
	}
}

// TestONNXRangeEmpty checks that a Range whose limit lies on the wrong
// side of its start (for the sign of delta) is empty, as ONNX's count
// max(ceil((limit - start) / delta), 0) says, rather than an error; and
// that the count still rounds up for a non-empty one.
func TestONNXRangeEmpty(t *testing.T) {
	g := &graph{outs: []string{"r1", "r2", "r3", "r4", "y"}}
	g.input("x", 3)
	g.initI64("five", nil, []int64{5})
	g.initI64("two", nil, []int64{2})
	g.initI64("one", nil, []int64{1})
	g.initI64("mthree", nil, []int64{-3})
	g.inits = append(g.inits,
		&onnxpb.Tensor{Name: "f2", DataType: 1, FloatData: []float32{2}},
		&onnxpb.Tensor{Name: "f7", DataType: 1, FloatData: []float32{7}},
		&onnxpb.Tensor{Name: "fm1", DataType: 1, FloatData: []float32{-1}})
	g.node("Range", []string{"five", "two", "one"}, []string{"r1"})   // 5 > 2, delta 1: empty
	g.node("Range", []string{"f2", "f7", "fm1"}, []string{"r2"})      // 2 < 7, delta -1: empty
	g.node("Range", []string{"two", "two", "mthree"}, []string{"r3"}) // zero span: empty
	g.node("Range", []string{"five", "mthree", "mthree"}, []string{"r4"})
	g.node("Relu", []string{"x"}, []string{"y"})
	lowered(t, g, 17, nil, map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(3), []float32{-1, 0, 2})}, func(t *testing.T, out []*tensor.Tensor) {
		for i := 0; i < 3; i++ {
			shapeIs(t, g.outs[i], out[i], 0)
		}
		if got := out[3].I64(); len(got) != 3 || got[0] != 5 || got[1] != 2 || got[2] != -1 {
			t.Errorf("Range(5, -3, -3) = %v, want [5 2 -1]", got)
		}
		near(t, "y", out[4].F32(), []float64{0, 0, 2})
	})
}
