package e2e

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestONNXQLinearAddMul: com.microsoft QLinearAdd (same shapes, as a
// residual addition) and QLinearMul (B per channel, broadcast, as a
// squeeze-excitation scale), uint8, against their definition computed in
// float32, exactly, on every target.
func TestONNXQLinearAddMul(t *testing.T) {
	const c, h, w = 3, 4, 5
	for _, op := range []string{"QLinearAdd", "QLinearMul"} {
		t.Run(op, func(t *testing.T) {
			g := &graph{outs: []string{"y"}}
			g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "a", ElemType: 2, HasShape: true,
				Shape: []onnxpb.Dim{{Param: "n"}, {Value: c, Known: true}, {Value: h, Known: true}, {Value: w, Known: true}}})
			bShape := []int64{1, c, h, w}
			if op == "QLinearMul" {
				bShape = []int64{1, c, 1, 1}
			}
			bn := int64(1)
			for _, d := range bShape {
				bn *= d
			}
			bv := make([]uint8, bn)
			for i := range bv {
				bv[i] = uint8(i*37%256 + 3)
			}
			g.initU8("b", bShape, bv)
			g.init("as", nil, []float32{0.05})
			g.initU8("az", nil, []uint8{120})
			g.init("bs", nil, []float32{0.03})
			g.initU8("bz", nil, []uint8{7})
			g.init("cs", nil, []float32{0.11})
			g.initU8("cz", nil, []uint8{90})
			g.node(op, []string{"a", "as", "az", "b", "bs", "bz", "cs", "cz"}, []string{"y"})
			g.nodes[0].Domain = "com.microsoft"
			eachTarget(t, func(t *testing.T, target string) {
				const n = 2
				a := tensor.New(tensor.U8, n, c, h, w)
				for i := range a.Data {
					a.Data[i] = byte(i * 89 % 256)
				}
				got := ints(runONNXOn(t, g, 13, target, specialize.Binding{"n": n}, map[string]*tensor.Tensor{"a": a})[0])
				inside := 0
				for i := range got {
					ci, pix := i/(h*w)%c, i%(h*w)
					bi := ci*h*w + pix
					if op == "QLinearMul" {
						bi = ci
					}
					av := float32(int(a.Data[i])-120) * 0.05
					bf := float32(int(bv[bi])-7) * 0.03
					v := av + bf
					if op == "QLinearMul" {
						v = av * bf
					}
					want := quantize(v, 0.11, 90, 0, 255)
					if want > 0 && want < 255 {
						inside++
					}
					if got[i] != want {
						t.Fatalf("%s y[%d] = %v, want %v", target, i, got[i], want)
					}
				}
				if 2*inside < len(got) {
					t.Fatalf("%d of %d results inside uint8's range, want most", inside, len(got))
				}
			})
		})
	}
}

// TestONNXQLinearGlobalAveragePool: com.microsoft's quantized global
// average pool (int8, NCHW), with scales that keep every sum and mean
// exact in float32, so the result is its definition exactly.
func TestONNXQLinearGlobalAveragePool(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: 3, HasShape: true,
		Shape: []onnxpb.Dim{{Value: 2, Known: true}, {Value: 6, Known: true}, {Value: 4, Known: true}, {Value: 4, Known: true}}})
	g.init("xs", nil, []float32{0.25})
	g.initI8("xz", nil, []int8{-3})
	g.init("ys", nil, []float32{0.5})
	g.initI8("yz", nil, []int8{10})
	g.node("QLinearGlobalAveragePool", []string{"x", "xs", "xz", "ys", "yz"}, []string{"y"})
	g.nodes[0].Domain = "com.microsoft"
	eachTarget(t, func(t *testing.T, target string) {
		x := tensor.New(tensor.I8, 2, 6, 4, 4)
		for i := range x.Data {
			x.Data[i] = byte(i*53%256 - 128)
		}
		got := ints(runONNXOn(t, g, 13, target, specialize.Binding{}, map[string]*tensor.Tensor{"x": x})[0])
		if len(got) != 12 {
			t.Fatalf("%d results, want 2x6", len(got))
		}
		for p := range 12 {
			sum := 0.0
			for k := range 16 {
				sum += float64(int(int8(x.Data[p*16+k]))+3) * 0.25
			}
			want := math.Max(-128, math.Min(127, math.RoundToEven(sum/16/0.5)+10))
			if got[p] != want {
				t.Fatalf("%s y[%d] = %v, want %v", target, p, got[p], want)
			}
		}
	})
}

// TestONNXQOperatorErrors: what the QOperator operators do not support
// says so.
func TestONNXQOperatorErrors(t *testing.T) {
	for _, c := range []struct {
		op   string
		edit func(g *graph)
		want string
	}{
		{"QLinearAdd", func(g *graph) { g.nodes[0].Domain = "" }, "com.microsoft domain"},
		{"QLinearAdd", func(g *graph) { g.nodes[0].Inputs = g.nodes[0].Inputs[:6] }, "found 6 inputs"},
		{"QLinearAdd", func(g *graph) { g.init("as", []int64{2}, []float32{1, 2}) }, "per-tensor scale"},
		{"QLinearGlobalAveragePool", func(g *graph) { g.nodes[0].Attrs = append(g.nodes[0].Attrs, ai("channels_last", 1)) }, "channels_last"},
		{"QLinearAveragePool", func(g *graph) { g.nodes[0].Attrs = append(g.nodes[0].Attrs, ai("channels_last", 1)) }, "channels_last"},
		{"QLinearSigmoid", func(g *graph) { g.nodes[0].Inputs = g.nodes[0].Inputs[:3] }, "found 3 inputs"},
		{"QLinearConcat", func(g *graph) { g.nodes[0].Inputs = g.nodes[0].Inputs[:4] }, "a triple X, X_scale, X_zero_point per operand, found 4 inputs"},
		{"QLinearConcat", func(g *graph) { g.nodes[0].Domain = "" }, "com.microsoft domain"},
	} {
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "a", ElemType: 2, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: 2, Known: true}, {Value: 3, Known: true}, {Value: 3, Known: true}}})
		g.init("as", nil, []float32{0.05})
		g.initU8("az", nil, []uint8{120})
		switch c.op {
		case "QLinearAdd":
			g.node(c.op, []string{"a", "as", "az", "a", "as", "az", "as", "az"}, []string{"y"})
		case "QLinearConcat":
			g.node(c.op, []string{"as", "az", "a", "as", "az"}, []string{"y"})
		case "QLinearAveragePool":
			g.node(c.op, []string{"a", "as", "az", "as", "az"}, []string{"y"}, ais("kernel_shape", 2, 2))
		default:
			g.node(c.op, []string{"a", "as", "az", "as", "az"}, []string{"y"})
		}
		g.nodes[0].Domain = "com.microsoft"
		c.edit(g)
		_, err := onnx.Import(g.model(13), onnx.Options{Module: "t", Source: "t.onnx"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.op, err, c.want)
		}
	}
}

// qopInput declares a uint8 input of shape [n, c, h, w] (n symbolic).
func qopInput(g *graph, name string, c, h, w int64) {
	g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: name, ElemType: 2, HasShape: true,
		Shape: []onnxpb.Dim{{Param: "n"}, {Value: c, Known: true}, {Value: h, Known: true}, {Value: w, Known: true}}})
}

// qopBytes is a uint8 tensor of the given shape with values spread over
// the whole range.
func qopBytes(seed int, shape ...int64) *tensor.Tensor {
	x := tensor.New(tensor.U8, shape...)
	for i := range x.Data {
		x.Data[i] = byte(i*seed + 11)
	}
	return x
}

// TestONNXQLinearConcat: com.microsoft QLinearConcat of two uint8 operands
// with their own scales and zero points along the channels, against
// QuantizeLinear of each dequantized byte (ONNX Runtime's lookup tables)
// computed here in float32, exactly, on every target.
func TestONNXQLinearConcat(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	qopInput(g, "a", 2, 3, 4)
	qopInput(g, "b", 3, 3, 4)
	g.init("ys", nil, []float32{0.07})
	g.initU8("yz", nil, []uint8{100})
	g.init("as", nil, []float32{0.05})
	g.initU8("az", nil, []uint8{120})
	g.init("bs", nil, []float32{0.1})
	g.initU8("bz", nil, []uint8{30})
	g.node("QLinearConcat", []string{"ys", "yz", "a", "as", "az", "b", "bs", "bz"}, []string{"y"}, ai("axis", 1))
	g.nodes[0].Domain = "com.microsoft"
	eachTarget(t, func(t *testing.T, target string) {
		a, b := qopBytes(89, 2, 2, 3, 4), qopBytes(53, 2, 3, 3, 4)
		got := ints(runONNXOn(t, g, 13, target, specialize.Binding{"n": 2}, map[string]*tensor.Tensor{"a": a, "b": b})[0])
		if len(got) != 2*5*12 {
			t.Fatalf("%d results, want 2x5x3x4", len(got))
		}
		for i := range got {
			n, ch, p := i/60, i/12%5, i%12
			var v float32
			if ch < 2 {
				v = float32(int(a.Data[(n*2+ch)*12+p])-120) * 0.05
			} else {
				v = float32(int(b.Data[(n*3+ch-2)*12+p])-30) * 0.1
			}
			if want := quantize(v, 0.07, 100, 0, 255); got[i] != want {
				t.Fatalf("%s y[%d] = %v, want %v", target, i, got[i], want)
			}
		}
	})
}

// TestONNXQLinearUnary: com.microsoft QLinearLeakyRelu (exactly its
// definition in float32 on the cpu target) and QLinearSigmoid (within a
// quantum of the definition in float64, and mostly on it: ONNX Runtime's
// logistic is its own approximation) over every byte value. These scales
// put some quotients of QuantizeLinear within an ulp of a rounding tie,
// and a Vulkan shader's division is not correctly rounded (SPIR-V allows
// 2.5 ulp), so there both are within a quantum, at a few bytes.
func TestONNXQLinearUnary(t *testing.T) {
	for _, op := range []string{"QLinearLeakyRelu", "QLinearSigmoid"} {
		t.Run(op, func(t *testing.T) {
			g := &graph{outs: []string{"y"}}
			qopInput(g, "x", 4, 8, 8)
			g.init("xs", nil, []float32{0.06})
			g.initU8("xz", nil, []uint8{128})
			ys, yz := float32(0.04), uint8(110)
			if op == "QLinearSigmoid" {
				ys, yz = 1.0/256, 0
			}
			g.init("ys", nil, []float32{ys})
			g.initU8("yz", nil, []uint8{yz})
			g.node(op, []string{"x", "xs", "xz", "ys", "yz"}, []string{"y"})
			g.nodes[0].Domain = "com.microsoft"
			if op == "QLinearLeakyRelu" {
				g.nodes[0].Attrs = append(g.nodes[0].Attrs, af("alpha", 0.1))
			}
			eachTarget(t, func(t *testing.T, target string) {
				x := tensor.New(tensor.U8, 1, 4, 8, 8)
				for i := range x.Data {
					x.Data[i] = byte(i) // every byte once
				}
				got := ints(runONNXOn(t, g, 13, target, specialize.Binding{"n": 1}, map[string]*tensor.Tensor{"x": x})[0])
				off := 0
				for i := range got {
					v := float32(int(x.Data[i])-128) * 0.06
					var want float64
					if op == "QLinearLeakyRelu" {
						if v < 0 {
							v *= 0.1
						}
						want = quantize(v, ys, float64(yz), 0, 255)
					} else {
						want = math.Max(0, math.Min(255, math.RoundToEven(1/(1+math.Exp(-float64(v)))*256)))
					}
					if d := math.Abs(got[i] - want); d > 1 || d == 1 && op == "QLinearLeakyRelu" && target == "cpu" {
						t.Fatalf("%s %s y[%d] = %v, want %v", target, op, i, got[i], want)
					} else if d == 1 {
						off++
					}
				}
				if off > 4 {
					t.Fatalf("%s: %d of 256 results a quantum off", target, off)
				}
			})
		})
	}
}

// TestONNXQLinearAveragePool: com.microsoft QLinearAveragePool, 3x3
// windows at stride 2 with padding (not counted), against the mean of the
// dequantized bytes in float64 quantized: within a quantum, and mostly on
// it (ONNX Runtime's order of summing is its own).
func TestONNXQLinearAveragePool(t *testing.T) {
	const c, h, w = 3, 7, 7
	g := &graph{outs: []string{"y"}}
	qopInput(g, "x", c, h, w)
	g.init("xs", nil, []float32{0.05})
	g.initU8("xz", nil, []uint8{128})
	g.init("ys", nil, []float32{0.03})
	g.initU8("yz", nil, []uint8{120})
	g.node("QLinearAveragePool", []string{"x", "xs", "xz", "ys", "yz"}, []string{"y"}, ais("kernel_shape", 3, 3), ais("strides", 2, 2), ais("pads", 1, 1, 1, 1))
	g.nodes[0].Domain = "com.microsoft"
	eachTarget(t, func(t *testing.T, target string) {
		x := qopBytes(97, 1, c, h, w)
		got := ints(runONNXOn(t, g, 13, target, specialize.Binding{"n": 1}, map[string]*tensor.Tensor{"x": x})[0])
		const o = 4
		if len(got) != c*o*o {
			t.Fatalf("%d results, want 3x4x4", len(got))
		}
		off := 0
		for i := range got {
			ch, oy, ox := i/(o*o), i/o%o, i%o
			sum, cnt := 0.0, 0
			for ky := range 3 {
				for kx := range 3 {
					iy, ix := oy*2+ky-1, ox*2+kx-1
					if iy >= 0 && iy < h && ix >= 0 && ix < w {
						sum += float64(int(x.Data[(ch*h+iy)*w+ix])-128) * 0.05
						cnt++
					}
				}
			}
			want := math.Max(0, math.Min(255, math.RoundToEven(sum/float64(cnt)/0.03)+120))
			if d := math.Abs(got[i] - want); d > 1 {
				t.Fatalf("%s y[%d] = %v, want %v", target, i, got[i], want)
			} else if d == 1 {
				off++
			}
		}
		if 8*off > len(got) {
			t.Fatalf("%s: %d of %d results a quantum off", target, off, len(got))
		}
	})
}
