package e2e

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestONNXComposedActivations: PRelu, Elu, Selu, Celu, ThresholdedRelu
// and Shrink against their ONNX definitions computed here in float64.
func TestONNXComposedActivations(t *testing.T) {
	x := seq(24, 3)
	x[5], x[6] = 0, -0.4
	in := map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 3, 2, 2}, x)}
	slope := []float32{0.25, -1, 2}
	selu := func(v float64) float64 {
		const a, g = 1.67326319217681884765625, 1.05070102214813232421875
		if v > 0 {
			return g * v
		}
		return g * a * (math.Exp(v) - 1)
	}
	for _, c := range []struct {
		op    string
		attrs []float32 // alpha, or lambd and bias for Shrink
		f     func(i int, v float64) float64
	}{
		{"PRelu", nil, func(i int, v float64) float64 {
			if v < 0 {
				return v * float64(slope[(i/4)%3])
			}
			return v
		}},
		{"Elu", []float32{0.5}, func(_ int, v float64) float64 {
			if v > 0 {
				return v
			}
			return 0.5 * (math.Exp(v) - 1)
		}},
		{"Selu", nil, func(_ int, v float64) float64 { return selu(v) }},
		{"Celu", []float32{2}, func(_ int, v float64) float64 { return math.Max(0, v) + math.Min(0, 2*(math.Exp(v/2)-1)) }},
		{"ThresholdedRelu", []float32{0.3}, func(_ int, v float64) float64 {
			if v > 0.3 {
				return v
			}
			return 0
		}},
		{"Shrink", []float32{0.4, 0.1}, func(_ int, v float64) float64 {
			l, b := float64(float32(0.4)), float64(float32(0.1)) // the attributes are float32
			switch {
			case v < -l:
				return v + b
			case v > l:
				return v - b
			}
			return 0
		}},
	} {
		g := &graph{outs: []string{"y"}}
		g.input("x", 2, 3, 2, 2)
		ins := []string{"x"}
		var attrs []*onnxpb.Attr
		switch c.op {
		case "PRelu":
			g.init("slope", []int64{3, 1, 1}, slope)
			ins = append(ins, "slope")
		case "Shrink":
			attrs = append(attrs, af("lambd", c.attrs[0]), af("bias", c.attrs[1]))
		default:
			if c.attrs != nil {
				attrs = append(attrs, af("alpha", c.attrs[0]))
			}
		}
		g.node(c.op, ins, []string{"y"}, attrs...)
		out, _ := runONNX(t, g, specialize.Binding{}, in)
		want := make([]float64, len(x))
		for i, v := range x {
			want[i] = c.f(i, float64(v))
		}
		nearTol(t, c.op, out[0].F32(), want, 2e-6)
	}
}

// TestONNXIsNaNIsInfMean: the tests on special values, each detection
// setting of IsInf, and Mean of three broadcast inputs.
func TestONNXIsNaNIsInfMean(t *testing.T) {
	inf := float32(math.Inf(1))
	x := []float32{1, float32(math.NaN()), inf, -inf, 0, -2}
	for _, c := range []struct {
		op       string
		pos, neg int64
		want     []bool
	}{
		{"IsNaN", 1, 1, []bool{false, true, false, false, false, false}},
		{"IsInf", 1, 1, []bool{false, false, true, true, false, false}},
		{"IsInf", 1, 0, []bool{false, false, true, false, false, false}},
		{"IsInf", 0, 1, []bool{false, false, false, true, false, false}},
		{"IsInf", 0, 0, []bool{false, false, false, false, false, false}},
	} {
		g := &graph{outs: []string{"y"}}
		g.input("x", 6)
		attrs := []*onnxpb.Attr{}
		if c.op == "IsInf" {
			attrs = append(attrs, ai("detect_positive", c.pos), ai("detect_negative", c.neg))
		}
		g.node(c.op, []string{"x"}, []string{"y"}, attrs...)
		out, _ := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{6}, x)})
		if out[0].DType != tensor.Bool {
			t.Fatalf("%s: %s result", c.op, out[0].DType)
		}
		for i, w := range c.want {
			if (out[0].Data[i] != 0) != w {
				t.Errorf("%s(pos=%d, neg=%d) of %v: %v at %d", c.op, c.pos, c.neg, x[i], !w, i)
			}
		}
	}
	g := &graph{outs: []string{"y"}}
	g.input("x", 2, 3)
	g.init("b", []int64{3}, []float32{1, 2, 3})
	g.init("c", []int64{2, 1}, []float32{-6, 6})
	g.node("Mean", []string{"x", "b", "c"}, []string{"y"})
	xv := seq(6, 2)
	out, _ := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 3}, xv)})
	want := make([]float64, 6)
	for i := range want {
		want[i] = (float64(xv[i]) + float64(i%3+1) + []float64{-6, 6}[i/3]) / 3
	}
	near(t, "Mean", out[0].F32(), want)
}

// TestONNXNormReductions: ReduceL1, ReduceL2, ReduceSumSquare and
// ReduceLogSumExp over an axis, kept and not, against float64 sums
// (LogSumExp over values whose exponentials overflow float32).
func TestONNXNormReductions(t *testing.T) {
	x := seq(24, 4)
	x[7] = 100
	for _, op := range []string{"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"} {
		for _, keep := range []int64{0, 1} {
			g := &graph{outs: []string{"y"}}
			g.input("x", 2, 3, 4)
			g.node(op, []string{"x"}, []string{"y"}, ais("axes", 1), ai("keepdims", keep))
			out, _ := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 3, 4}, x)})
			want := make([]float64, 8)
			for a := range 2 {
				for k := range 4 {
					var s, m float64 = 0, math.Inf(-1)
					for j := range 3 {
						m = math.Max(m, float64(x[(a*3+j)*4+k]))
					}
					for j := range 3 {
						v := float64(x[(a*3+j)*4+k])
						switch op {
						case "ReduceL1":
							s += math.Abs(v)
						case "ReduceL2", "ReduceSumSquare":
							s += v * v
						case "ReduceLogSumExp":
							s += math.Exp(v - m)
						}
					}
					switch op {
					case "ReduceL2":
						s = math.Sqrt(s)
					case "ReduceLogSumExp":
						s = m + math.Log(s)
					}
					want[a*4+k] = s
				}
			}
			shape := []int{2, 4}
			if keep == 1 {
				shape = []int{2, 1, 4}
			}
			shapeIs(t, op, out[0], shape...)
			// float32 results: 4e-6 relative to the largest (the 100s).
			nearTol(t, fmt.Sprintf("%s keepdims=%d", op, keep), out[0].F32(), want, 4e-6*math.Max(1, maxAbs(want)))
		}
	}
}

// TestONNXPixelShuffle: DepthToSpace in DCR and CRD order and
// SpaceToDepth move every element where the ONNX definition says, over
// a symbolic batch.
func TestONNXPixelShuffle(t *testing.T) {
	const b = 2
	x := seq(2*8*2*3, 1)
	for _, mode := range []string{"DCR", "CRD"} {
		g := &graph{outs: []string{"y"}}
		g.input("x", "n", 8, 2, 3)
		g.node("DepthToSpace", []string{"x"}, []string{"y"}, ai("blocksize", b), as("mode", mode))
		out, _ := runONNX(t, g, specialize.Binding{"n": 2}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 8, 2, 3}, x)})
		shapeIs(t, "DepthToSpace", out[0], 2, 2, 4, 6)
		want := make([]float64, len(x))
		for n := range 2 {
			for c := range 2 {
				for h := range 4 {
					for w := range 6 {
						i, j := h%b, w%b
						ci := (i*b+j)*2 + c // DCR
						if mode == "CRD" {
							ci = c*b*b + i*b + j
						}
						want[((n*2+c)*4+h)*6+w] = float64(x[((n*8+ci)*2+h/b)*3+w/b])
					}
				}
			}
		}
		near(t, "DepthToSpace "+mode, out[0].F32(), want)
	}
	g := &graph{outs: []string{"y"}}
	g.input("x", "n", 2, 4, 6)
	g.node("SpaceToDepth", []string{"x"}, []string{"y"}, ai("blocksize", b))
	out, _ := runONNX(t, g, specialize.Binding{"n": 2}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 2, 4, 6}, x)})
	shapeIs(t, "SpaceToDepth", out[0], 2, 8, 2, 3)
	want := make([]float64, len(x))
	for n := range 2 {
		for co := range 8 {
			i, j, c := co/(b*2), (co/2)%b, co%2
			for h := range 2 {
				for w := range 3 {
					want[((n*8+co)*2+h)*3+w] = float64(x[((n*2+c)*4+h*b+i)*6+w*b+j])
				}
			}
		}
	}
	near(t, "SpaceToDepth", out[0].F32(), want)
}

// maxAbs is the largest magnitude in v.
func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// TestONNXLpNormalization: x over its L1 or L2 norm along an axis.
func TestONNXLpNormalization(t *testing.T) {
	x := seq(12, 2)
	for _, p := range []int64{1, 2} {
		for _, axis := range []int64{-1, 0} {
			g := &graph{outs: []string{"y"}}
			g.input("x", 3, 4)
			g.node("LpNormalization", []string{"x"}, []string{"y"}, ai("axis", axis), ai("p", p))
			out, _ := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{3, 4}, x)})
			norm := func(r, c int) float64 { // over the row (axis -1) or the column (axis 0)
				var s float64
				for k := range 4 - int(axis+1) { // 4 along axis -1, 3 along axis 0
					v := float64(x[r*4+k])
					if axis == 0 {
						v = float64(x[k*4+c])
					}
					if p == 1 {
						s += math.Abs(v)
					} else {
						s += v * v
					}
				}
				if p == 2 {
					s = math.Sqrt(s)
				}
				return s
			}
			want := make([]float64, 12)
			for r := range 3 {
				for c := range 4 {
					want[r*4+c] = float64(x[r*4+c]) / norm(r, c)
				}
			}
			nearTol(t, fmt.Sprintf("LpNormalization p=%d axis=%d", p, axis), out[0].F32(), want, 2e-6)
		}
	}
}

// TestONNXOneHot: each axis, negative indices counted from depth's end,
// and indices out of range all off.
func TestONNXOneHot(t *testing.T) {
	idx := []int64{0, 3, -1, 2, 7, -5}
	const depth = 4
	for _, axis := range []int64{-1, 0, 1} {
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "i", ElemType: 7, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 2, Known: true}, {Value: 3, Known: true}}})
		g.initI64("depth", nil, []int64{depth})
		g.init("values", []int64{2}, []float32{0.5, 2})
		g.node("OneHot", []string{"i", "depth", "values"}, []string{"y"}, ai("axis", axis))
		out, _ := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"i": tensor.FromI64([]int64{2, 3}, idx)})
		a := axis
		if a < 0 {
			a += 3
		}
		shape := []int{2, 3}
		shape = append(shape[:a], append([]int{depth}, shape[a:]...)...)
		shapeIs(t, "OneHot", out[0], shape...)
		want := make([]float64, 2*3*depth)
		for p := range 2 * 3 {
			r, c := p/3, p%3
			k := idx[p]
			if k < 0 {
				k += depth
			}
			for d := range int64(depth) {
				pos := []int64{int64(r), int64(c)}
				pos = append(pos[:a], append([]int64{d}, pos[a:]...)...)
				v := 0.5
				if d == k {
					v = 2
				}
				at := (pos[0]*int64(shape[1])+pos[1])*int64(shape[2]) + pos[2]
				want[at] = v
			}
		}
		near(t, fmt.Sprintf("OneHot axis=%d", axis), out[0].F32(), want)
	}
}
