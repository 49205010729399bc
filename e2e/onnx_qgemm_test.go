package e2e

import (
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// The quantized Gemm of TestONNXQGemm: A [m, qgK] uint8, B int8 with a
// scale per output column, an int32 bias, into uint8. K = 128 sums are
// long enough for the integer kernels on every CPU that has one.
const qgK, qgN = 128, 6

var qgWS = []float32{0.002, 0.001, 0.004, 0.003, 0.0015, 0.0025}

// qgemmW is B's value at row k (of K), column j (of N).
func qgemmW(k, j int) int8 { return int8((k*31+j*17)%255 - 127) }

// TestONNXQGemm: a QDQ group around Gemm (as ONNX Runtime's quantizer
// writes it, B as [K, N] or transposed) imports as com.microsoft QGemm,
// and so does such a node itself; every result exactly QGemm's definition
// (the integer product plus bias, requantized with one multiplier), over
// a symbolic row count. A Gemm with alpha other than 1 keeps its float
// group.
func TestONNXQGemm(t *testing.T) {
	for _, c := range []struct {
		name        string
		transB, qdq bool
		alpha       float32
		fused       bool
	}{
		{"QDQ group", false, true, 1, true},
		{"QDQ group, transB", true, true, 1, true},
		{"QGemm node, transB", true, false, 1, true},
		{"QDQ group, alpha 0.5", false, true, 0.5, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := qgemmGraph(c.transB, c.qdq, c.alpha)
			res, err := onnx.Import(g.model(13), onnx.Options{Module: "t", Source: "t.onnx"})
			if err != nil {
				t.Fatal(err)
			}
			if fused := strings.Contains(string(res.HIR), "y_mult"); fused != c.fused {
				t.Fatalf("imported as QGemm %v, want %v\n%s", fused, c.fused, res.HIR)
			}
			if !c.fused {
				return
			}
			eachTarget(t, func(t *testing.T, target string) {
				for _, m := range []int64{3, 17} {
					x := tensor.New(tensor.U8, m, qgK)
					for i := range x.Data {
						x.Data[i] = byte(i * 89 % 256)
					}
					got := ints(runONNXOn(t, g, 13, target, specialize.Binding{"m": m}, map[string]*tensor.Tensor{"x": x})[0])
					inside := 0
					for i := range m {
						for j := range qgN {
							acc := int64(qgemmBias[j])
							for k := range qgK {
								acc += (int64(x.Data[i*qgK+int64(k)]) - 120) * int64(qgemmW(k, j))
							}
							mult := float32(0.05) * qgWS[j] / float32(0.5)
							want := quantize(float32(acc)*mult, 1, 100, 0, 255)
							if want > 0 && want < 255 {
								inside++
							}
							if at := i*qgN + int64(j); got[at] != want {
								t.Fatalf("%s m=%d y[%d][%d] = %v, want %v (acc %d)", target, m, i, j, got[at], want, acc)
							}
						}
					}
					if 2*inside < int(m)*qgN {
						t.Fatalf("m=%d: %d of %d results inside uint8's range, want most", m, inside, m*qgN)
					}
				}
			})
		})
	}
}

var qgemmBias = []int32{1000, -2000, 0, 555, -77, 3000}

// qgemmGraph is y = QGemm(x, B, bias) as a QDQ group around Gemm, or as a
// com.microsoft QGemm node.
func qgemmGraph(transB, qdq bool, alpha float32) *graph {
	g := &graph{outs: []string{"y"}}
	g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: 2, HasShape: true,
		Shape: []onnxpb.Dim{{Param: "m"}, {Value: qgK, Known: true}}})
	w := make([]int8, qgK*qgN)
	dims := []int64{qgK, qgN}
	for k := range qgK {
		for j := range qgN {
			if transB {
				w[j*qgK+k] = qgemmW(k, j)
			} else {
				w[k*qgN+j] = qgemmW(k, j)
			}
		}
	}
	axis := int64(1)
	if transB {
		dims, axis = []int64{qgN, qgK}, 0
	}
	g.init("xs", nil, []float32{0.05})
	g.initU8("xzp", nil, []uint8{120})
	g.initI8("w", dims, w)
	g.init("ws", []int64{qgN}, qgWS)
	g.initI8("wzp", []int64{qgN}, make([]int8, qgN))
	g.initI32("b", []int64{qgN}, qgemmBias)
	g.init("ys", nil, []float32{0.5})
	g.initU8("yzp", nil, []uint8{100})
	var attrs []*onnxpb.Attr
	if transB {
		attrs = append(attrs, ai("transB", 1))
	}
	if !qdq {
		g.node("QGemm", []string{"x", "xs", "xzp", "w", "ws", "wzp", "b", "ys", "yzp"}, []string{"y"}, attrs...)
		g.nodes[len(g.nodes)-1].Domain = "com.microsoft"
		return g
	}
	bs := make([]float32, qgN)
	for j := range bs {
		bs[j] = 0.05 * qgWS[j]
	}
	g.init("bs", []int64{qgN}, bs)
	if alpha != 1 {
		attrs = append(attrs, af("alpha", alpha))
	}
	g.node("DequantizeLinear", []string{"x", "xs", "xzp"}, []string{"xf"})
	g.node("DequantizeLinear", []string{"w", "ws", "wzp"}, []string{"wf"}, ai("axis", axis))
	g.node("DequantizeLinear", []string{"b", "bs"}, []string{"bf"}, ai("axis", 0))
	g.node("Gemm", []string{"xf", "wf", "bf"}, []string{"yf"}, attrs...)
	g.node("QuantizeLinear", []string{"yf", "ys", "yzp"}, []string{"y"})
	return g
}

// TestONNXQGemmErrors: what QGemm does not support says so.
func TestONNXQGemmErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(n *onnxpb.Node)
		want string
	}{
		{func(n *onnxpb.Node) { n.Inputs = n.Inputs[:5] }, "6 inputs"},
		{func(n *onnxpb.Node) { n.Attrs = append(n.Attrs, ai("transA", 1)) }, "transA"},
		{func(n *onnxpb.Node) { n.Domain = "" }, "com.microsoft domain"},
		{func(n *onnxpb.Node) { n.Domain = "com.example" }, `domain "com.example" is not supported`},
	} {
		g := qgemmGraph(false, false, 1)
		c.edit(g.nodes[len(g.nodes)-1])
		_, err := onnx.Import(g.model(13), onnx.Options{Module: "t", Source: "t.onnx"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

// TestONNXQGemmFloatAndAlpha: a QGemm node without y_zero_point has a
// float32 result, the int32 sums (C added) times alpha·a_scale·b_scale
// (divided by y_scale where there is one), as ONNX Runtime's QGemm
// computes it; with one, alpha scales the requantization. Both equal
// that arithmetic in float32 exactly, on every target.
func TestONNXQGemmFloatAndAlpha(t *testing.T) {
	for _, c := range []struct {
		name          string
		alpha         float32
		keepYS, float bool
	}{
		{"float result", 1, false, true},
		{"float result, alpha 0.25", 0.25, false, true},
		{"float result over y_scale", 1, true, true},
		{"requantized, alpha 3", 3, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := qgemmGraph(true, false, 1)
			n := g.nodes[len(g.nodes)-1]
			if c.alpha != 1 {
				n.Attrs = append(n.Attrs, af("alpha", c.alpha))
			}
			if c.float {
				n.Inputs = n.Inputs[:7]
				if c.keepYS {
					n.Inputs = append(n.Inputs, "ys")
				}
			}
			eachTarget(t, func(t *testing.T, target string) {
				const m = 5
				x := tensor.New(tensor.U8, m, qgK)
				for i := range x.Data {
					x.Data[i] = byte(i * 89 % 256)
				}
				y := runONNXOn(t, g, 13, target, specialize.Binding{"m": m}, map[string]*tensor.Tensor{"x": x})[0]
				for i := range int64(m) {
					for j := range qgN {
						acc := int64(qgemmBias[j])
						for k := range qgK {
							acc += (int64(x.Data[i*qgK+int64(k)]) - 120) * int64(qgemmW(k, j))
						}
						scale := c.alpha * float32(0.05) * qgWS[j]
						if c.keepYS {
							scale /= 0.5
						}
						at := i*qgN + int64(j)
						if !c.float {
							if got, want := ints(y)[at], quantize(float32(acc)*scale, 1, 100, 0, 255); got != want {
								t.Fatalf("%s y[%d][%d] = %v, want %v (acc %d)", target, i, j, got, want, acc)
							}
							continue
						}
						if y.DType != tensor.F32 {
							t.Fatalf("result is %s, want f32", y.DType)
						}
						if got, want := y.F32()[at], float32(acc)*scale; got != want {
							t.Fatalf("%s y[%d][%d] = %v, want %v (acc %d)", target, i, j, got, want, acc)
						}
					}
				}
			})
		})
	}
}
