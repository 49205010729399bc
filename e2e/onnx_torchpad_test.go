package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// torchPad adds PyTorch's export of F.pad(x, torch) for a rank-4 x: the
// torch-ordered pads (last dim first, a (begin, end) pair each) padded
// with zeros to 8, reshaped to [-1, 2], the rows reversed, transposed and
// flattened into ONNX's order (all begins, then all ends), then Pad.
// torch's entries are value names (shape arithmetic or constants).
func (g *graph) torchPad(x, out string, torch []string) {
	var parts []string
	for i, p := range torch {
		u := fmt.Sprintf("%s_p%d", out, i)
		g.node("Unsqueeze", []string{p, out + "_ax0"}, []string{u})
		parts = append(parts, u)
	}
	g.initI64(out+"_ax0", []int64{1}, []int64{0})
	g.initI64(out+"_zeros", []int64{int64(8 - len(torch))}, make([]int64, 8-len(torch)))
	g.initI64(out+"_pairs", []int64{2}, []int64{-1, 2})
	g.initI64(out+"_st", []int64{1}, []int64{-1})
	g.initI64(out+"_en", []int64{1}, []int64{-9223372036854775807})
	g.initI64(out+"_axes", []int64{1}, []int64{0})
	g.initI64(out+"_step", []int64{1}, []int64{-1})
	g.initI64(out+"_flat", []int64{1}, []int64{-1})
	g.node("Concat", append(parts, out+"_zeros"), []string{out + "_list"}, ai("axis", 0))
	g.node("Reshape", []string{out + "_list", out + "_pairs"}, []string{out + "_2d"})
	g.node("Slice", []string{out + "_2d", out + "_st", out + "_en", out + "_axes", out + "_step"}, []string{out + "_rev"})
	g.node("Transpose", []string{out + "_rev"}, []string{out + "_t"}, ais("perm", 1, 0))
	g.node("Reshape", []string{out + "_t", out + "_flat"}, []string{out + "_pads"})
	g.node("Cast", []string{out + "_pads"}, []string{out + "_i64"}, ai("to", 7))
	g.node("Pad", []string{x, out + "_i64"}, []string{out})
}

// TestONNXTorchPad: F.pad with pads computed from the input's shape (as
// Swin pads to a multiple of its window) imports with the pads in ONNX's
// order, whether the dims are numbers or symbols, and pads as PyTorch
// does: here (w % 3) columns at the right, 1 at the left, (h % 2) rows at
// the bottom.
func TestONNXTorchPad(t *testing.T) {
	for _, static := range []bool{false, true} {
		for _, hw := range [][2]int64{{5, 7}, {4, 9}} {
			h, w := hw[0], hw[1]
			g := &graph{outs: []string{"y"}}
			if static {
				g.input("x", 1, 2, int(h), int(w))
			} else {
				g.input("x", 1, 2, "h", "w")
			}
			g.seqOf("x", 2, "hd")
			g.seqOf("x", 3, "wd")
			g.initI64("two", nil, []int64{2})
			g.initI64("three", nil, []int64{3})
			g.initI64("one", nil, []int64{1})
			g.initI64("zero", nil, []int64{0})
			g.node("Mod", []string{"hd", "two"}, []string{"ph"})
			g.node("Mod", []string{"wd", "three"}, []string{"pw"})
			g.torchPad("x", "y", []string{"one", "pw", "zero", "ph"})
			x := seq(int(2*h*w), 1)
			b := specialize.Binding{"h": h, "w": w}
			if static {
				b = specialize.Binding{}
			}
			out, hirText := runONNX(t, g, b, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{1, 2, h, w}, x)})
			lacks(t, hirText, "transpose", "slice")
			ph, pw := h%2, w%3
			oh, ow := h+ph, w+1+pw
			shapeIs(t, "Pad", out[0], 1, 2, int(oh), int(ow))
			want := make([]float64, 2*oh*ow)
			for c := range int64(2) {
				for i := range h {
					for j := range w {
						want[(c*oh+i)*ow+j+1] = float64(x[(c*h+i)*w+j])
					}
				}
			}
			near(t, fmt.Sprintf("F.pad static=%v %dx%d", static, h, w), out[0].F32(), want)
		}
	}
}

// TestONNXDropoutModes: Dropout is the identity at inference, in
// training mode too where its ratio is 0; a training-mode ratio above 0
// and a mask something reads are refused with what to do.
func TestONNXDropoutModes(t *testing.T) {
	dropout := func(ratio float32, training bool, readMask bool) *graph {
		g := &graph{outs: []string{"y"}}
		g.input("x", 2, 3)
		g.init("ratio", nil, []float32{ratio})
		tm := int32(0)
		if training {
			tm = 1
		}
		g.inits = append(g.inits, &onnxpb.Tensor{Name: "training", DataType: 9, Int32Data: []int32{tm}})
		g.node("Dropout", []string{"x", "ratio", "training"}, []string{"d", "mask"})
		g.node("Relu", []string{"d"}, []string{"y"})
		if readMask {
			g.outs = append(g.outs, "mask")
		}
		return g
	}
	x := seq(6, 1)
	want := make([]float64, 6)
	for i, v := range x {
		want[i] = float64(max(v, 0))
	}
	for _, c := range []struct {
		ratio    float32
		training bool
	}{{0, true}, {0.1, false}, {0, false}} {
		out, _ := runONNX(t, dropout(c.ratio, c.training, false), specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 3}, x)})
		near(t, fmt.Sprintf("Dropout ratio=%v training=%v", c.ratio, c.training), out[0].F32(), want)
	}
	if e := importErr(dropout(0.1, true, false), 17); !strings.Contains(e, "training mode with ratio 0.1") || !strings.Contains(e, "eval mode") {
		t.Errorf("training-mode dropout: error %q", e)
	}
	if e := importErr(dropout(0, false, true), 17); !strings.Contains(e, "mask output is not supported") {
		t.Errorf("dropout with its mask read: error %q", e)
	}
}

// TestONNXScatterND: a ScatterND over constants (Swin's shifted-window
// mask) folds at import, later tuples winning; one over a value computed
// at run time is refused naming that operand.
func TestONNXScatterND(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", 3, 4)
	g.init("data", []int64{3, 4}, make([]float32, 12))
	g.initI64("rows", []int64{3, 1}, []int64{2, 0, -1})
	g.init("upd", []int64{3, 4}, []float32{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3})
	g.node("ScatterND", []string{"data", "rows", "upd"}, []string{"m"})
	g.initI64("cells", []int64{2, 2}, []int64{1, 3, 0, 0})
	g.init("cellv", []int64{2}, []float32{7, 9})
	g.node("ScatterND", []string{"m", "cells", "cellv"}, []string{"m2"})
	g.node("Add", []string{"x", "m2"}, []string{"y"})
	x := seq(12, 1)
	out, hirText := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{3, 4}, x)})
	lacks(t, hirText, "scatter")
	// Row 2 then row 0 then row -1 (= 2 again, which wins), then the cells.
	m := []float64{9, 2, 2, 2, 0, 0, 0, 7, 3, 3, 3, 3}
	want := make([]float64, 12)
	for i := range want {
		want[i] = float64(x[i]) + m[i]
	}
	near(t, "ScatterND", out[0].F32(), want)

	r := &graph{outs: []string{"y"}}
	r.input("x", 3, 4)
	r.initI64("rows", []int64{1, 1}, []int64{1})
	r.init("upd", []int64{1, 4}, []float32{1, 2, 3, 4})
	r.node("ScatterND", []string{"x", "rows", "upd"}, []string{"y"})
	// Over an input: a run-time scatter of the row.
	out, hirText = runONNX(t, r, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{3, 4}, x)})
	if !strings.Contains(hirText, "scatter(") {
		t.Errorf("ScatterND over an input is not a scatter:\n%s", hirText)
	}
	for i := range want {
		want[i] = float64(x[i])
		if i/4 == 1 {
			want[i] = float64(i%4 + 1)
		}
	}
	near(t, "ScatterND over an input", out[0].F32(), want)
}
