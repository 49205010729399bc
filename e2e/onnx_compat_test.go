package e2e

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Operators that older and newer exporters write for what rlx already
// has: Upsample (opsets 7-9) and opset 10's Resize, CastLike (15),
// RMSNormalization (23). Each is checked against its definition.

// upsampleRef is ONNX's Upsample of x [1, c, h, w] by integer scales:
// nearest input(floor(y / s)), linear the bilinear blend at y / s with the
// neighbour past the edge clamped to it.
func upsampleRef(x []float32, c, h, w, sh, sw int, linear bool) []float64 {
	oh, ow := h*sh, w*sw
	out := make([]float64, c*oh*ow)
	at := func(ch, y, x0 int) float64 { return float64(x[(ch*h+y)*w+x0]) }
	for ch := range c {
		for y := range oh {
			for x0 := range ow {
				fy, fx := float64(y)/float64(sh), float64(x0)/float64(sw)
				y0, x1 := int(math.Floor(fy)), int(math.Floor(fx))
				v := at(ch, y0, x1)
				if linear {
					y1, x2 := min(y0+1, h-1), min(x1+1, w-1)
					dy, dx := fy-float64(y0), fx-float64(x1)
					v = (1-dy)*((1-dx)*at(ch, y0, x1)+dx*at(ch, y0, x2)) + dy*((1-dx)*at(ch, y1, x1)+dx*at(ch, y1, x2))
				}
				out[(ch*oh+y)*ow+x0] = v
			}
		}
	}
	return out
}

// TestONNXUpsample: Upsample with scales as opset 7's attribute and opset
// 9's input, and opset 10's Resize, nearest and linear, against the
// definition.
func TestONNXUpsample(t *testing.T) {
	const c, h, w = 2, 3, 4
	x := seq(c*h*w, 1)
	for _, opset := range []int64{7, 9, 10} {
		for _, mode := range []string{"nearest", "linear"} {
			for _, sc := range [][2]int{{2, 2}, {3, 1}} {
				g := &graph{outs: []string{"y"}}
				g.input("x", 1, c, h, w)
				scales := []float32{1, 1, float32(sc[0]), float32(sc[1])}
				op := "Upsample"
				if opset == 10 {
					op = "Resize"
				}
				attrs := []*onnxpb.Attr{as("mode", mode)}
				if opset == 7 {
					attrs = append(attrs, &onnxpb.Attr{Name: "scales", Type: onnxpb.AttrFloats, Floats: scales})
					g.node(op, []string{"x"}, []string{"y"}, attrs...)
				} else {
					g.init("scales", []int64{4}, scales)
					g.node(op, []string{"x", "scales"}, []string{"y"}, attrs...)
				}
				out := runONNXAt(t, g, opset, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{1, c, h, w}, x)})
				want := upsampleRef(x, c, h, w, sc[0], sc[1], mode == "linear")
				nearTol(t, fmt.Sprintf("%s opset %d %s scales %v", op, opset, mode, sc), out[0].F32(), want, 1e-6)
			}
		}
	}
}

// TestONNXCastLike: the dtype comes from the second input.
func TestONNXCastLike(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", 4)
	g.initI64("like", []int64{1}, []int64{0})
	g.node("CastLike", []string{"x", "like"}, []string{"y"})
	out := runONNXAt(t, g, 15, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{4}, []float32{-2.7, -0.5, 0.5, 3.9})})
	if out[0].DType != tensor.I64 {
		t.Fatalf("CastLike to int64 gave %s", out[0].DType)
	}
	if got, want := out[0].I64(), []int64{-2, 0, 0, 3}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CastLike: %v, want %v (truncation toward zero)", got, want)
	}
}

// TestONNXRMSNormalization: over the last axis and the last two, with a
// scale of the normalized shape and one that broadcasts to it, with a
// symbolic leading dim.
func TestONNXRMSNormalization(t *testing.T) {
	for _, c := range []struct {
		axis  int64
		scale []int64
	}{{-1, []int64{6}}, {1, []int64{4, 6}}, {-2, []int64{1, 6}}} {
		g := &graph{outs: []string{"y"}}
		g.input("x", "b", 4, 6)
		n := c.scale[0] * c.scale[len(c.scale)-1]
		if len(c.scale) == 1 {
			n = c.scale[0]
		}
		sv := seq(int(n), 0.7)
		for i := range sv {
			sv[i] += 1
		}
		g.init("s", c.scale, sv)
		g.node("RMSNormalization", []string{"x", "s"}, []string{"y"}, ai("axis", c.axis), af("epsilon", 1e-3))
		for _, b := range []int64{1, 3} {
			x := seq(int(b*24), 2)
			out := runONNXAt(t, g, 23, specialize.Binding{"b": b}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{b, 4, 6}, x)})
			// rows of the normalized size; the scale indexed within a row
			rowLen := 6
			if c.axis == 1 || c.axis == -2 {
				rowLen = 24
			}
			want := make([]float64, len(x))
			for r := 0; r < len(x)/rowLen; r++ {
				var ss float64
				for j := range rowLen {
					v := float64(x[r*rowLen+j])
					ss += v * v
				}
				inv := 1 / math.Sqrt(ss/float64(rowLen)+float64(float32(1e-3)))
				for j := range rowLen {
					want[r*rowLen+j] = float64(x[r*rowLen+j]) * inv * float64(sv[j%len(sv)]) // [1, 6] repeats per row of 6
				}
			}
			nearTol(t, fmt.Sprintf("RMSNormalization axis=%d scale %v b=%d", c.axis, c.scale, b), out[0].F32(), want, 1e-5)
		}
	}
}
