package onnx

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
)

// convTile repeats x along each axis, repeats known at import: a new axis
// before each axis (unsqueeze), expanded to its repeat, then a reshape that
// merges each pair ([r0, d0, r1, d1] to [r0*d0, r1*d1]). HIR needs no op of
// its own for it, and on constants the folder evaluates it like any node.
func convTile(im *importer, n *onnxpb.Node) error {
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	reps, err := im.dimsOf(1)
	if err != nil {
		return err
	}
	t, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	if len(reps) != t.Rank() {
		return fmt.Errorf("Tile with %d repeats for a rank-%d input", len(reps), t.Rank())
	}
	ones := true
	var axes []int64
	var wide, merged []dim.Expr
	for i, r := range reps {
		if c, ok := r.Const(); ok && c < 0 {
			return fmt.Errorf("Tile with a negative repeat %d", c)
		} else if !ok || c != 1 {
			ones = false
		}
		m, err := dim.Mul(r, t.Shape[i])
		if err != nil {
			return err
		}
		axes = append(axes, int64(2*i))
		wide = append(wide, r, t.Shape[i])
		merged = append(merged, m)
	}
	if ones {
		im.alias(n.Outputs[0], n.Inputs[0])
		return nil
	}
	out := n.Outputs[0]
	u := im.emitTmp(out+"_axes", "unsqueeze", []string{x}, "axes="+intList(axes))
	e := im.emitTmp(out+"_repeat", "expand", []string{u}, "shape="+dimList(wide))
	return im.emit(n.Outputs[:1], "reshape", []string{e}, "shape="+dimList(merged))
}
