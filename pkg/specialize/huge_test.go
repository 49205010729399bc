package specialize

import (
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestHugeShapesAreRefused: a binding whose tensors would overflow a byte
// count (or pass any real memory by far) is an error naming the value,
// not a plan with negative sizes.
func TestHugeShapesAreRefused(t *testing.T) {
	for _, n := range []int64{1 << 48, 4611686018427387905, 9223372036854775807} {
		g := &mir.Graph{Name: "huge"}
		x := g.NewValue("x", mir.Type{DType: tensor.F32, Shape: []dim.Expr{dim.Sym("batch"), dim.Const(4)}})
		g.Inputs = []*mir.Value{x}
		y := g.Add("relu", []*mir.Value{x}, nil, "huge.hir:1:1 relu", x.Type).Results[0]
		g.Outputs = []*mir.Value{y}
		_, err := Specialize(g, Binding{"batch": n})
		if err == nil || !strings.Contains(err.Error(), "would take more than 1 PiB") {
			t.Errorf("batch=%d: got %v", n, err)
		}
	}
	if !fits([]int64{1 << 20, 1 << 20}, 4) || fits([]int64{1 << 30, 1 << 30}, 4) || !fits([]int64{0, 1 << 62}, 4) {
		t.Error("fits is wrong at the edges")
	}
}
