package onnx

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// GridSample (opset 16; opset 20's names too) over X [N, C, H, W] at the
// points of grid [N, Ho, Wo, 2] (x then y, normalized to [-1, 1]): each
// point's coordinates are unnormalized (align_corners: -1 and 1 are the
// corner pixels' centres, else the corners' outer edges), clipped to the
// input for padding_mode=border, then bilinear interpolation weighs the
// four neighbours (nearest: the one rounded to, half to even), each read
// by one gather from X laid out [N·H·W, C] at n·H·W + y·W + x; a
// neighbour outside the input (padding_mode=zeros) weighs 0 and reads
// index 0. The result is transposed back to [N, C, Ho, Wo].

func convGridSample(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) != 2 {
		return fmt.Errorf("GridSample takes X and grid, found %d inputs", len(n.Inputs))
	}
	xt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	gt, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	if xt.Rank() != 4 || gt.Rank() != 4 {
		return fmt.Errorf("GridSample over X %s and grid %s: only 2-D sampling (X [N, C, H, W], grid [N, Ho, Wo, 2]) is supported", xt, gt)
	}
	if xt.DType != tensor.F32 || gt.DType != tensor.F32 {
		return fmt.Errorf("GridSample over %s X and a %s grid: float32 is supported", xt.DType, gt.DType)
	}
	if v, ok := gt.Shape[3].Const(); !ok || v != 2 {
		return fmt.Errorf("GridSample grid %s: its last dim must be 2 (x, y)", gt)
	}
	mode := attrString(n, "mode", "bilinear")
	switch mode {
	case "linear":
		mode = "bilinear"
	case "bilinear", "nearest":
	default:
		return fmt.Errorf("GridSample mode %q is not supported (bilinear or nearest)", mode)
	}
	pad := attrString(n, "padding_mode", "zeros")
	if pad != "zeros" && pad != "border" {
		return fmt.Errorf("GridSample padding_mode %q is not supported (zeros or border)", pad)
	}
	align := attrInt(n, "align_corners", 0) != 0
	x, err := im.rt(0)
	if err != nil {
		return err
	}
	grid, err := im.rt(1)
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	nd, c, h, w := xt.Shape[0], xt.Shape[1], xt.Shape[2], xt.Shape[3]
	ho, wo := gt.Shape[1], gt.Shape[2]
	f32 := func(hint string, v float64) string { return im.scalar(out+hint, v, tensor.F32) }
	tmp := func(hint, op string, args ...string) string { return im.emitTmp(out+hint, op, args) }
	dimF := func(hint string, d dim.Expr) string {
		return im.emitTmp(out+hint, "cast", []string{im.dimScalar(d)}, "to=f32")
	}
	// The grid's x and y, [N, Ho, Wo] each.
	coord := func(i int, size dim.Expr, tag string) (string, string) {
		g := im.emitTmp(out+"_g"+tag, "slice", []string{grid}, fmt.Sprintf("starts=[%d]", i), fmt.Sprintf("ends=[%d]", i+1), "axes=[3]")
		g = im.emitTmp(out+"_g"+tag+"s", "squeeze", []string{g}, "axes=[3]")
		sz := dimF("_size"+tag, size)
		one := f32("_one"+tag, 1)
		// align_corners: (g + 1)/2·(size − 1); else ((g + 1)·size − 1)/2.
		p := tmp("_p1"+tag, "add", g, one)
		if align {
			p = tmp("_p2"+tag, "mul", p, tmp("_sm1"+tag, "sub", sz, one))
		} else {
			p = tmp("_p3"+tag, "sub", tmp("_p2"+tag, "mul", p, sz), one)
		}
		p = tmp("_p"+tag, "mul", p, f32("_half"+tag, 0.5))
		hi := tmp("_hi"+tag, "sub", sz, one)
		if pad == "border" {
			p = tmp("_pc"+tag, "min", tmp("_pl"+tag, "max", p, f32("_zero"+tag, 0)), hi)
		}
		return p, hi
	}
	px, hx := coord(0, w, "x")
	py, hy := coord(1, h, "y")
	hw, err := dim.Mul(h, w)
	if err != nil {
		return err
	}
	// X as rows of C channels, [N·H·W, C], each point's neighbour one
	// gathered row; or, for a few channels (gridSamplePlanes), as
	// planes, [C, N·H·W], each neighbour one element of every plane, so
	// that an image's warp (C = 3) neither moves X channels last nor
	// gathers rows of 12 bytes (for N = 1 both transposes are views).
	cn, _ := c.Const()
	planes := cn >= 1 && cn <= gridSamplePlanes
	var rows string
	if planes {
		rows = im.emitTmp(out+"_nchw", "reshape", []string{x}, fmt.Sprintf("shape=[%s, %s, -1]", nd, c))
		rows = im.emitTmp(out+"_cnhw", "transpose", []string{rows}, "perm=[1, 0, 2]")
		rows = im.emitTmp(out+"_planes", "reshape", []string{rows}, fmt.Sprintf("shape=[%s, -1]", c))
	} else {
		rows = im.emitTmp(out+"_nhwc", "transpose", []string{x}, "perm=[0, 2, 3, 1]")
		rows = im.emitTmp(out+"_rows", "reshape", []string{rows}, fmt.Sprintf("shape=[-1, %s]", c))
	}
	base := im.emitTmp(out+"_n", "iota", nil, "n="+nd.String(), "dtype=i64")
	base = im.emitTmp(out+"_nb", "mul", []string{base, im.dimScalar(hw)})
	base = im.emitTmp(out+"_nr", "reshape", []string{base}, fmt.Sprintf("shape=[%s, 1, 1]", nd))
	wi := im.dimScalar(w)
	// sample reads the neighbour at integer-valued coordinates (cx, cy)
	// (f32), weighted by wt: wt zeroed where it lies outside the input,
	// its index clamped into it.
	k := 0
	sample := func(cx, cy, wt string) string {
		k++
		tag := fmt.Sprintf("_s%d", k)
		zero := f32(tag+"z", 0)
		inside := tmp(tag+"in", "and",
			tmp(tag+"in1", "and", tmp(tag+"gx0", "ge", cx, zero), tmp(tag+"lx", "le", cx, hx)),
			tmp(tag+"in2", "and", tmp(tag+"gy0", "ge", cy, zero), tmp(tag+"ly", "le", cy, hy)))
		wt = tmp(tag+"w", "where", inside, wt, zero)
		ix := im.emitTmp(out+tag+"ix", "cast", []string{tmp(tag+"cx", "min", tmp(tag+"mx", "max", cx, zero), hx)}, "to=i64")
		iy := im.emitTmp(out+tag+"iy", "cast", []string{tmp(tag+"cy", "min", tmp(tag+"my", "max", cy, zero), hy)}, "to=i64")
		idx := tmp(tag+"idx", "add", tmp(tag+"row", "add", base, tmp(tag+"yw", "mul", iy, wi)), ix)
		if planes { // [C, N, Ho, Wo]; the weights broadcast over C
			return tmp(tag+"wv", "mul", im.emitTmp(out+tag+"v", "gather", []string{rows, idx}, "axis=1"), wt)
		}
		v := im.emitTmp(out+tag+"v", "gather", []string{rows, idx}, "axis=0")
		wt = im.emitTmp(out+tag+"wu", "unsqueeze", []string{wt}, "axes=[3]")
		return tmp(tag+"wv", "mul", v, wt)
	}
	var acc string
	if mode == "nearest" {
		acc = sample(tmp("_rx", "round", px), tmp("_ry", "round", py), im.emitTmp(out+"_w1", "expand", []string{f32("_one", 1)},
			"shape="+dimList([]dim.Expr{nd, ho, wo})))
	} else {
		x0, y0 := tmp("_x0", "floor", px), tmp("_y0", "floor", py)
		one := f32("_one", 1)
		x1, y1 := tmp("_x1", "add", x0, one), tmp("_y1", "add", y0, one)
		fx, fy := tmp("_fx", "sub", px, x0), tmp("_fy", "sub", py, y0)
		gx, gy := tmp("_gx", "sub", one, fx), tmp("_gy", "sub", one, fy)
		acc = tmp("_a1", "add", sample(x0, y0, tmp("_w00", "mul", gx, gy)), sample(x1, y0, tmp("_w10", "mul", fx, gy)))
		acc = tmp("_a2", "add", acc, sample(x0, y1, tmp("_w01", "mul", gx, fy)))
		acc = tmp("_a3", "add", acc, sample(x1, y1, tmp("_w11", "mul", fx, fy)))
	}
	if planes {
		return im.emit(n.Outputs[:1], "transpose", []string{acc}, "perm=[1, 0, 2, 3]")
	}
	return im.emit(n.Outputs[:1], "transpose", []string{acc}, "perm=[0, 3, 1, 2]")
}

// gridSamplePlanes is the most channels for which GridSample gathers
// from X's planes rather than from its rows of channels: planes ran
// faster up to 8 channels, rows from 16, where a row of channels is one
// gather's worth (docs/perf/ops.md, "Large planes, tiny batched
// products, GridSample").
const gridSamplePlanes = 8
