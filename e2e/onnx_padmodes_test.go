package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// padIndex is the input index that padded position i of an axis of size
// n with lo pads in front reads, by ONNX's definition of each mode.
func padIndex(mode string, i, lo, n int) int {
	j := i - lo
	switch mode {
	case "reflect":
		for j < 0 || j >= n {
			if j < 0 {
				j = -j
			}
			if j >= n {
				j = 2*(n-1) - j
			}
		}
	case "edge":
		j = min(max(j, 0), n-1)
	case "wrap":
		j = ((j % n) + n) % n
	}
	return j
}

// TestONNXPadModes: Pad's reflect, edge and wrap modes over H and W of an
// NCHW tensor (PyTorch's ReflectionPad2d, ReplicationPad2d and circular
// padding), uneven pads, one axis unpadded, and wrap's pads past the
// size, against the definition; a symbolic axis and reflect pads as
// large as the axis are refused with the reason.
func TestONNXPadModes(t *testing.T) {
	const c, h, w = 2, 5, 7
	for _, tc := range []struct {
		mode string
		pads []int64 // ONNX order: begins, then ends
	}{
		{"reflect", []int64{0, 0, 1, 3, 0, 0, 2, 1}},
		{"reflect", []int64{0, 0, 0, 6, 0, 0, 0, 6}},
		{"edge", []int64{0, 0, 2, 0, 0, 0, 3, 4}},
		{"wrap", []int64{0, 0, 6, 1, 0, 0, 2, 9}},
	} {
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: 1, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: c, Known: true}, {Value: h, Known: true}, {Value: w, Known: true}}})
		g.initI64("pads", []int64{8}, tc.pads)
		g.node("Pad", []string{"x", "pads"}, []string{"y"}, as("mode", tc.mode))
		in := seq(c*h*w, 3)
		out, _ := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{1, c, h, w}, in)})
		oh, ow := h+int(tc.pads[2]+tc.pads[6]), w+int(tc.pads[3]+tc.pads[7])
		what := fmt.Sprintf("Pad %s %v", tc.mode, tc.pads)
		shapeIs(t, what, out[0], 1, c, oh, ow)
		got := out[0].F32()
		for ch := range c {
			for y := range oh {
				for x := range ow {
					sy, sx := padIndex(tc.mode, y, int(tc.pads[2]), h), padIndex(tc.mode, x, int(tc.pads[3]), w)
					if g, want := got[(ch*oh+y)*ow+x], in[(ch*h+sy)*w+sx]; g != want {
						t.Fatalf("%s: [%d %d %d] = %g, want input [%d %d %d] = %g", what, ch, y, x, g, ch, sy, sx, want)
					}
				}
			}
		}
	}
	for _, tc := range []struct {
		h    onnxpb.Dim
		pads []int64
		want string
	}{
		{onnxpb.Dim{Param: "h"}, []int64{0, 0, 1, 1, 0, 0, 1, 1}, "symbolic size h: rlx takes it only over static sizes"},
		{onnxpb.Dim{Value: h, Known: true}, []int64{0, 0, h, 0, 0, 0, 0, 0}, "not below axis 2's size 5"},
	} {
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: 1, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: c, Known: true}, tc.h, {Value: w, Known: true}}})
		g.initI64("pads", []int64{8}, tc.pads)
		g.node("Pad", []string{"x", "pads"}, []string{"y"}, as("mode", "reflect"))
		_, err := onnx.Import(g.model(17), onnx.Options{Module: "t", Source: "t.onnx"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("reflect pads %v over h %+v: %v, want an error containing %q", tc.pads, tc.h, err, tc.want)
		}
	}
}
