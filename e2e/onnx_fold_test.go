package e2e

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// What the importer computes itself: constant folding and shape values
// through Where, Equal, Expand, ConstantOfShape and Tile. Each test checks
// both that nothing of it is left for run time (the HIR) and the numbers.

const int64Max = math.MaxInt64

// lacks fails the test for each op that occurs as a call in the HIR.
func lacks(t *testing.T, hirText string, ops ...string) {
	t.Helper()
	for _, op := range ops {
		if strings.Contains(hirText, " = "+op+"(") {
			t.Errorf("HIR computes %s at run time:\n%s", op, hirText)
		}
	}
}

func has(t *testing.T, hirText string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(hirText, w) {
			t.Errorf("HIR lacks %q:\n%s", w, hirText)
		}
	}
}

// TestONNXEmptyShapeValue: Shape(x)[3:] of a rank-3 x is an empty shape
// value, known at import like any other (encoder_legacy's
// nn.MultiheadAttention concatenates one into a Reshape's shape).
func TestONNXEmptyShapeValue(t *testing.T) {
	g := &graph{outs: []string{"r"}}
	g.input("x", "seq", "batch", 12)
	g.initI64("zero", []int64{1}, []int64{0})
	g.initI64("two", []int64{1}, []int64{2})
	g.initI64("three", []int64{1}, []int64{3})
	g.initI64("end", []int64{1}, []int64{int64Max})
	g.initI64("heads", []int64{2}, []int64{3, 4})
	g.node("Shape", []string{"x"}, []string{"s"})
	g.node("Slice", []string{"s", "zero", "two"}, []string{"lead"})
	g.node("Slice", []string{"s", "three", "end"}, []string{"rest"})
	g.node("Concat", []string{"lead", "heads", "rest"}, []string{"shape"}, ai("axis", 0))
	g.node("Reshape", []string{"x", "shape"}, []string{"r"})
	x := seq(5*2*12, 1)
	out, hirText := runONNX(t, g, specialize.Binding{"seq": 5, "batch": 2}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{5, 2, 12}, x)})
	has(t, hirText, "shape=[seq, batch, 3, 4]")
	if s := out[0].Shape; len(s) != 4 || s[0] != 5 || s[1] != 2 || s[2] != 3 || s[3] != 4 {
		t.Errorf("shape %v, want [5 2 3 4]", s)
	}
	want := make([]float64, len(x))
	for i, v := range x {
		want[i] = float64(v)
	}
	near(t, "Reshape", out[0].F32(), want)
}

