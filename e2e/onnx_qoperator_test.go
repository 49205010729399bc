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
	} {
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "a", ElemType: 2, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: 2, Known: true}, {Value: 3, Known: true}, {Value: 3, Known: true}}})
		g.init("as", nil, []float32{0.05})
		g.initU8("az", nil, []uint8{120})
		if c.op == "QLinearAdd" {
			g.node(c.op, []string{"a", "as", "az", "a", "as", "az", "as", "az"}, []string{"y"})
		} else {
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
