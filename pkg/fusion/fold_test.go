package fusion

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestFoldableSize: a node over constants folds at build time up to
// maxFoldBytes, and past it only where its result is no larger than its
// largest operand (a transposed weight, not an expanded scalar).
func TestFoldableSize(t *testing.T) {
	g := &mir.Graph{Name: "t"}
	// Far past the cap; the bytes are never touched, so the OS backs them lazily.
	const rows, cols = 8192, 4097
	w := g.NewConst("w", &tensor.Tensor{DType: tensor.F32, Shape: []int64{rows, cols}, Data: make([]byte, 4*rows*cols)})
	tr := g.Add(mir.OpTranspose, []*mir.Value{w}, mir.Attrs{"perm": []int64{1, 0}}, "t:1:1",
		mir.Type{DType: tensor.F32, Shape: []dim.Expr{dim.Const(cols), dim.Const(rows)}})
	if !foldable(tr) {
		t.Error("a transpose of a constant past the cap does not fold: it would move the whole weight every run")
	}
	one := g.NewConst("one", tensor.FromF32(nil, []float32{1}))
	ex := g.Add(mir.OpExpand, []*mir.Value{one}, mir.Attrs{"shape": []dim.Expr{dim.Const(rows), dim.Const(cols)}}, "t:2:1",
		mir.Type{DType: tensor.F32, Shape: []dim.Expr{dim.Const(rows), dim.Const(cols)}})
	if foldable(ex) {
		t.Error("an expand of a scalar past the cap folds: the artifact would hold the broadcast")
	}
	small := g.Add(mir.OpExpand, []*mir.Value{one}, mir.Attrs{"shape": []dim.Expr{dim.Const(4), dim.Const(4)}}, "t:3:1",
		mir.Type{DType: tensor.F32, Shape: []dim.Expr{dim.Const(4), dim.Const(4)}})
	if !foldable(small) {
		t.Error("a small expand of a constant does not fold")
	}
}
