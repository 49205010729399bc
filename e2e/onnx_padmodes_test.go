package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/onnx"
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
// size, against the definition: over static sizes (a gather of constant
// indices per axis) and over symbolic H and W (slices from either end,
// concatenated) at two bindings, on the cpu target and on vulkan where
// this machine has it. Reflect pads as large as the axis are refused at
// import over a static size and at the binding over a symbolic one, as
// are wrap pads past a symbolic size.
func TestONNXPadModes(t *testing.T) {
	const c = 2
	for _, tc := range []struct {
		mode     string
		pads     []int64 // ONNX order: begins, then ends
		symbolic bool
	}{
		{"reflect", []int64{0, 0, 1, 3, 0, 0, 2, 1}, false},
		{"reflect", []int64{0, 0, 0, 6, 0, 0, 0, 6}, false},
		{"edge", []int64{0, 0, 2, 0, 0, 0, 3, 4}, false},
		{"wrap", []int64{0, 0, 6, 1, 0, 0, 2, 9}, false},
		{"reflect", []int64{0, 0, 1, 3, 0, 0, 2, 1}, true},
		{"reflect", []int64{0, 0, 0, 4, 0, 0, 0, 4}, true},
		{"edge", []int64{0, 0, 2, 0, 0, 0, 3, 4}, true},
		{"wrap", []int64{0, 0, 3, 1, 0, 0, 2, 5}, true},
	} {
		for _, hw := range [][2]int{{5, 7}, {3, 5}} {
			if !tc.symbolic && hw[0] != 5 {
				continue
			}
			h, w := hw[0], hw[1]
			g := &graph{outs: []string{"y"}}
			b := specialize.Binding{}
			if tc.symbolic {
				g.input("x", 1, c, "h", "w")
				b = specialize.Binding{"h": int64(h), "w": int64(w)}
			} else {
				g.input("x", 1, c, h, w)
			}
			g.initI64("pads", []int64{8}, tc.pads)
			g.node("Pad", []string{"x", "pads"}, []string{"y"}, as("mode", tc.mode))
			in := seq(c*h*w, 3)
			oh, ow := h+int(tc.pads[2]+tc.pads[6]), w+int(tc.pads[3]+tc.pads[7])
			what := fmt.Sprintf("Pad %s %v over %dx%d (symbolic %v)", tc.mode, tc.pads, h, w, tc.symbolic)
			lowered(t, g, 17, b, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{1, c, int64(h), int64(w)}, in)}, func(t *testing.T, out []*tensor.Tensor) {
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
			})
		}
	}
	const h, w = 5, 7
	g := &graph{outs: []string{"y"}}
	g.input("x", 1, c, h, w)
	g.initI64("pads", []int64{8}, []int64{0, 0, h, 0, 0, 0, 0, 0})
	g.node("Pad", []string{"x", "pads"}, []string{"y"}, as("mode", "reflect"))
	if err, want := importErr(g, 17), "not below axis 2's size 5"; !strings.Contains(err, want) {
		t.Errorf("reflect pads of the size: %q, want an error containing %q", err, want)
	}
	for _, tc := range []struct {
		mode string
		pads []int64
	}{
		{"reflect", []int64{0, 0, 3, 0, 0, 0, 0, 0}},
		{"reflect", []int64{0, 0, 0, 0, 0, 0, 3, 0}},
		{"wrap", []int64{0, 0, 0, 0, 0, 0, 4, 0}},
	} {
		g := &graph{outs: []string{"y"}}
		g.input("x", 1, c, "h", w)
		g.initI64("pads", []int64{8}, tc.pads)
		g.node("Pad", []string{"x", "pads"}, []string{"y"}, as("mode", tc.mode))
		res, err := onnx.Import(g.model(17), onnx.Options{Module: "t", Source: "t.onnx"})
		if err != nil {
			t.Fatalf("%s %v: import: %v", tc.mode, tc.pads, err)
		}
		out := filepath.Join(t.TempDir(), "t.rlx")
		_, err = build(t, "t.hir", res.HIR, out, driver.Options{Target: "cpu", Bindings: []specialize.Binding{{"h": 3}}, Params: res.Weights, Compiler: "test"})
		if err == nil || !strings.Contains(err.Error(), "h=3") {
			t.Errorf("%s pads %v over h=3: %v, want an error at the binding h=3", tc.mode, tc.pads, err)
		}
	}
}
