package lower_test

import (
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// run lowers src's main and evaluates it with the reference interpreter.
func run(t *testing.T, src string, inputs ...*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	m, err := hir.ParseFile("t.hir", []byte(src))
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	g, err := lower.ToMIR(m, "main", &lower.Weights{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := eval.Run(g, nil, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func expect(t *testing.T, what string, got []float32, want ...float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s: element %d = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// The decompositions lowering makes, checked against values worked out by
// hand from the HIR definitions.
func TestDecompositions(t *testing.T) {
	out := run(t, `hir 1
module t
param s : f32[2] = [2, 0.5]
param b : f32[2] = [1, -1]
param mu : f32[2] = [1, 2]
param var : f32[2] = [4, 0.25]
param w : f32[2, 3] = [[1, 2, 3], [4, 5, 6]]
param bias : f32[3] = [0.5, 0, -0.5]
func main(x: f32[1, 2, 1, 2], v: f32[2]) -> (bn: f32[1, 2, 1, 2], lin: f32[3], mv: f32[3], a: f32[1, 2, 1, 1], c: f32[1, 2, 1, 1]) {
  bn = batchnorm(x, s, b, mu, var, eps=0)
  lin = linear(v, w, bias)
  mv = matmul(v, w)
  a, c = split(bn, axis=3, sizes=[1, 1])
  return bn, lin, mv, a, c
}
`, tensor.FromF32([]int64{1, 2, 1, 2}, []float32{3, 5, 2, 4}), tensor.FromF32([]int64{2}, []float32{1, -1}))
	// (x - mean)/sqrt(var)*scale + bias per channel.
	// Channel 0: mean 1, sd 2, scale 2, bias 1; channel 1: mean 2, sd 0.5,
	// scale 0.5, bias -1.
	bn := func(x, mean, sd, scale, bias float64) float64 { return (x-mean)/sd*scale + bias }
	expect(t, "batchnorm", out[0].F32(), bn(3, 1, 2, 2, 1), bn(5, 1, 2, 2, 1), bn(2, 2, 0.5, 0.5, -1), bn(4, 2, 0.5, 0.5, -1))
	// v·w + bias with v = [1, -1].
	expect(t, "linear", out[1].F32(), 1-4+0.5, 2-5, 3-6-0.5)
	expect(t, "matmul of a vector", out[2].F32(), -3, -3, -3)
	if len(out[3].Shape) != 4 || out[3].Shape[3] != 1 || out[3].F32()[0] != 3 {
		t.Errorf("split: first part %v %v", out[3].Shape, out[3].F32())
	}
}
