package e2e

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Small ONNX graphs, one per operator family, checked against ONNX's
// semantics written out plainly here.

type graph struct {
	nodes  []*onnxpb.Node
	inits  []*onnxpb.Tensor
	inputs []*onnxpb.ValueInfo
	outs   []string
}

func (g *graph) node(op string, in, out []string, attrs ...*onnxpb.Attr) {
	g.nodes = append(g.nodes, &onnxpb.Node{Name: "/" + op + "_" + out[0], OpType: op, Inputs: in, Outputs: out, Attrs: attrs})
}

func (g *graph) init(name string, dims []int64, f []float32) {
	g.inits = append(g.inits, &onnxpb.Tensor{Name: name, DataType: 1, Dims: dims, FloatData: f})
}

func (g *graph) initI64(name string, dims []int64, v []int64) {
	g.inits = append(g.inits, &onnxpb.Tensor{Name: name, DataType: 7, Dims: dims, Int64Data: v})
}

// input declares a float input; a negative dim is a named dynamic dim.
func (g *graph) input(name string, dims ...any) {
	vi := &onnxpb.ValueInfo{Name: name, ElemType: 1, HasShape: true}
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			vi.Shape = append(vi.Shape, onnxpb.Dim{Value: int64(d), Known: true})
		case string:
			vi.Shape = append(vi.Shape, onnxpb.Dim{Param: d})
		}
	}
	g.inputs = append(g.inputs, vi)
}

func ai(name string, v int64) *onnxpb.Attr { return &onnxpb.Attr{Name: name, Type: 2, I: v} }
func af(name string, v float32) *onnxpb.Attr {
	return &onnxpb.Attr{Name: name, Type: 1, F: v}
}
func ais(name string, v ...int64) *onnxpb.Attr { return &onnxpb.Attr{Name: name, Type: 7, Ints: v} }

func (g *graph) model(opset int64) *onnxpb.Model {
	var outs []*onnxpb.ValueInfo
	for _, o := range g.outs {
		outs = append(outs, &onnxpb.ValueInfo{Name: o})
	}
	return &onnxpb.Model{IRVersion: 8, Opsets: map[string]int64{"": opset},
		Graph: &onnxpb.Graph{Name: "g", Nodes: g.nodes, Initializers: g.inits, Inputs: g.inputs, Outputs: outs}}
}

// runONNX imports, builds for binding and runs; it returns the outputs and
// the HIR text.
func runONNX(t *testing.T, g *graph, b specialize.Binding, inputs map[string]*tensor.Tensor) ([]*tensor.Tensor, string) {
	t.Helper()
	res, err := onnx.Import(g.model(17), onnx.Options{Module: "t", Source: "t.onnx"})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return runImported(t, res, "cpu", b, inputs), string(res.HIR)
}

// runImported builds an imported graph for target at binding b and runs
// it on inputs.
func runImported(t *testing.T, res *onnx.Result, target string, b specialize.Binding, inputs map[string]*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	out := filepath.Join(t.TempDir(), "t.rlx")
	if _, err := build(t, "t.hir", res.HIR, out, driver.Options{Target: target, Bindings: []specialize.Binding{b}, Params: res.Weights, Compiler: "test"}); err != nil {
		t.Fatalf("build: %v\n%s", err, res.HIR)
	}
	m, err := loader.Open(out, loader.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, err := m.Run(inputs)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, res.HIR)
	}
	var ts []*tensor.Tensor
	for _, o := range got {
		ts = append(ts, o.Tensor)
	}
	return ts
}

func seq(n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Sin(float64(i)*1.3)) * scale
	}
	return v
}

func near(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.IsInf(want[i], 0) && float64(got[i]) == want[i] {
			continue
		}
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-5*math.Max(1, math.Abs(want[i]))) {
			t.Fatalf("%s: element %d = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func TestONNXGemm(t *testing.T) {
	// Y = 0.5 * A' · B' + 2 * C with transA and transB.
	g := &graph{outs: []string{"y"}}
	g.input("a", 3, 2)
	a := seq(6, 1)
	g.init("b", []int64{4, 3}, seq(12, 0.5))
	g.init("c", []int64{4}, []float32{1, 2, 3, 4})
	g.node("Gemm", []string{"a", "b", "c"}, []string{"y"}, ai("transA", 1), ai("transB", 1), af("alpha", 0.5), af("beta", 2))
	out, _ := runONNX(t, g, nil, map[string]*tensor.Tensor{"a": tensor.FromF32([]int64{3, 2}, a)})
	b := seq(12, 0.5)
	var want []float64
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			s := 0.0
			for k := 0; k < 3; k++ {
				s += float64(a[k*2+i]) * float64(b[j*3+k])
			}
			want = append(want, 0.5*s+2*float64(j+1))
		}
	}
	near(t, "Gemm", out[0].F32(), want)
}

// TestONNXConvPool: grouped, strided, padded Conv with bias, then BatchNorm,
// Clip (ReLU6), MaxPool and AveragePool(count_include_pad=1), checked stage
// by stage against plain loops.
func TestONNXConvPool(t *testing.T) {
	const N, C, H, W, O, G = 1, 4, 5, 6, 4, 2
	x := seq(N*C*H*W, 1)
	wt := seq(O*(C/G)*3*3, 0.3)
	bias := []float32{0.1, -0.2, 0.3, -0.4}
	g := &graph{outs: []string{"conv", "bn", "clip", "mp", "ap"}}
	g.input("x", N, C, H, W)
	g.init("w", []int64{O, C / G, 3, 3}, wt)
	g.init("bias", []int64{O}, bias)
	g.init("scale", []int64{O}, []float32{1, 2, 0.5, 1.5})
	g.init("shift", []int64{O}, []float32{0, 1, -1, 0.5})
	g.init("mean", []int64{O}, []float32{0.1, 0, -0.1, 0.2})
	g.init("var", []int64{O}, []float32{1, 0.5, 2, 0.25})
	g.init("lo", nil, []float32{0})
	g.init("hi", nil, []float32{0.6})
	g.node("Conv", []string{"x", "w", "bias"}, []string{"conv"}, ais("kernel_shape", 3, 3), ais("pads", 1, 0, 1, 2), ais("strides", 2, 1), ai("group", G))
	g.node("BatchNormalization", []string{"conv", "scale", "shift", "mean", "var"}, []string{"bn"}, af("epsilon", 1e-5))
	g.node("Clip", []string{"bn", "lo", "hi"}, []string{"clip"})
	g.node("MaxPool", []string{"clip"}, []string{"mp"}, ais("kernel_shape", 2, 2), ais("pads", 1, 1, 1, 1), ais("strides", 2, 2))
	g.node("AveragePool", []string{"clip"}, []string{"ap"}, ais("kernel_shape", 2, 2), ais("pads", 1, 1, 1, 1), ais("strides", 2, 2), ai("count_include_pad", 1))
	out, _ := runONNX(t, g, nil, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{N, C, H, W}, x)})

	OH, OW := (H+1+1-3)/2+1, (W+0+2-3)/1+1
	conv := make([]float64, O*OH*OW)
	for o := 0; o < O; o++ {
		grp := o / (O / G)
		for oh := 0; oh < OH; oh++ {
			for ow := 0; ow < OW; ow++ {
				s := float64(bias[o])
				for ci := 0; ci < C/G; ci++ {
					for kh := 0; kh < 3; kh++ {
						for kw := 0; kw < 3; kw++ {
							ih, iw := oh*2-1+kh, ow-0+kw
							if ih < 0 || ih >= H || iw < 0 || iw >= W {
								continue
							}
							c := grp*(C/G) + ci
							s += float64(x[(c*H+ih)*W+iw]) * float64(wt[((o*(C/G)+ci)*3+kh)*3+kw])
						}
					}
				}
				conv[(o*OH+oh)*OW+ow] = s
			}
		}
	}
	near(t, "Conv", out[0].F32(), conv)
	scale, shift, mean, vr := []float64{1, 2, 0.5, 1.5}, []float64{0, 1, -1, 0.5}, []float64{0.1, 0, -0.1, 0.2}, []float64{1, 0.5, 2, 0.25}
	bn, clip := make([]float64, len(conv)), make([]float64, len(conv))
	for i := range conv {
		o := i / (OH * OW)
		bn[i] = (conv[i]-mean[o])/math.Sqrt(vr[o]+1e-5)*scale[o] + shift[o]
		clip[i] = math.Min(math.Max(bn[i], 0), 0.6)
	}
	near(t, "BatchNormalization", out[1].F32(), bn)
	near(t, "Clip", out[2].F32(), clip)
	PH, PW := (OH+2-2)/2+1, (OW+2-2)/2+1
	var mp, ap []float64
	for o := 0; o < O; o++ {
		for ph := 0; ph < PH; ph++ {
			for pw := 0; pw < PW; pw++ {
				m, s := math.Inf(-1), 0.0
				for kh := 0; kh < 2; kh++ {
					for kw := 0; kw < 2; kw++ {
						ih, iw := ph*2-1+kh, pw*2-1+kw
						if ih < 0 || ih >= OH || iw < 0 || iw >= OW {
							continue
						}
						v := clip[(o*OH+ih)*OW+iw]
						m, s = math.Max(m, v), s+v
					}
				}
				mp, ap = append(mp, m), append(ap, s/4) // padding counts: always 4 cells
			}
		}
	}
	near(t, "MaxPool", out[3].F32(), mp)
	near(t, "AveragePool", out[4].F32(), ap)
}

// TestONNXShapeArithmetic: the Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape chain PyTorch exports for x.view(x.size(0), -1, 2) becomes a
// reshape with a symbolic shape, and Split sizes, Slice with a computed end
// and Range over a dim become attributes.
func TestONNXShapeArithmetic(t *testing.T) {
	g := &graph{outs: []string{"r", "s1", "s2", "sl", "pos"}}
	g.input("x", "batch", 6)
	g.initI64("zero", nil, []int64{0})
	g.initI64("one", []int64{1}, []int64{1})
	g.initI64("minus1", []int64{1}, []int64{-1})
	g.initI64("two", []int64{1}, []int64{2})
	g.initI64("ax0", []int64{1}, []int64{0})
	g.initI64("sizes", []int64{2}, []int64{2, 4})
	g.node("Shape", []string{"x"}, []string{"shape"})
	g.node("Gather", []string{"shape", "zero"}, []string{"b"}, ai("axis", 0))
	g.node("Unsqueeze", []string{"b", "ax0"}, []string{"b1"})
	g.node("Concat", []string{"b1", "minus1", "two"}, []string{"newshape"}, ai("axis", 0))
	g.node("Reshape", []string{"x", "newshape"}, []string{"r"})
	g.node("Split", []string{"x", "sizes"}, []string{"s1", "s2"}, ai("axis", 1))
	// x[:, 1:batch] along axis 1: an end computed from the shape.
	g.node("Slice", []string{"x", "one", "b1", "one"}, []string{"sl"})
	g.initI64("start", nil, []int64{0})
	g.initI64("step", nil, []int64{1})
	g.node("Range", []string{"start", "b", "step"}, []string{"pos"})
	x := seq(3*6, 1)
	out, hirText := runONNX(t, g, specialize.Binding{"batch": 3}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{3, 6}, x)})
	for _, want := range []string{"shape=[batch, -1, 2]", "sizes=[2, 4]", "ends=[batch]", "iota(n=batch"} {
		if !strings.Contains(hirText, want) {
			t.Errorf("HIR lacks %q:\n%s", want, hirText)
		}
	}
	if s := out[0].Shape; len(s) != 3 || s[0] != 3 || s[1] != 3 || s[2] != 2 {
		t.Errorf("reshape: shape %v", s)
	}
	var w1, w2, wsl []float64
	for r := 0; r < 3; r++ {
		for c := 0; c < 6; c++ {
			v := float64(x[r*6+c])
			if c < 2 {
				w1 = append(w1, v)
			} else {
				w2 = append(w2, v)
			}
			if c >= 1 && c < 3 {
				wsl = append(wsl, v)
			}
		}
	}
	near(t, "Split 1", out[1].F32(), w1)
	near(t, "Split 2", out[2].F32(), w2)
	near(t, "Slice", out[3].F32(), wsl)
	if p := out[4].I64(); len(p) != 3 || p[0] != 0 || p[2] != 2 {
		t.Errorf("Range: %v", p)
	}
}

// TestONNXCausalMask: the mask PyTorch builds from a bool constant with
// Not, Where and -inf, then Softmax: rows see only the past.
func TestONNXCausalMask(t *testing.T) {
	g := &graph{outs: []string{"p"}}
	g.input("s", 4, 4)
	tri := &onnxpb.Tensor{Name: "tri", DataType: 9, Dims: []int64{4, 4}}
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			v := int32(0)
			if j <= i {
				v = 1
			}
			tri.Int32Data = append(tri.Int32Data, v)
		}
	}
	g.inits = append(g.inits, tri)
	g.init("neginf", nil, []float32{float32(math.Inf(-1))})
	g.node("Not", []string{"tri"}, []string{"future"})
	g.node("Where", []string{"future", "neginf", "s"}, []string{"masked"})
	g.node("Softmax", []string{"masked"}, []string{"p"}, ai("axis", -1))
	s := seq(16, 1)
	out, _ := runONNX(t, g, nil, map[string]*tensor.Tensor{"s": tensor.FromF32([]int64{4, 4}, s)})
	var want []float64
	for i := 0; i < 4; i++ {
		sum := 0.0
		for j := 0; j <= i; j++ {
			sum += math.Exp(float64(s[i*4+j]))
		}
		for j := 0; j < 4; j++ {
			if j <= i {
				want = append(want, math.Exp(float64(s[i*4+j]))/sum)
			} else {
				want = append(want, 0)
			}
		}
	}
	near(t, "masked softmax", out[0].F32(), want)
}

// TestONNXErrors: an unsupported operator or dtype is one error naming the
// node, its op type and the opset (and every other operator the model
// uses that does not import); an unnamed dynamic dim gets a name and a
// warning.
func TestONNXErrors(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", 2, 2)
	g.node("NonMaxSuppression", []string{"x"}, []string{"y"})
	_, err := onnx.Import(g.model(17), onnx.Options{Source: "t.onnx"})
	if err == nil || !strings.Contains(err.Error(), `node 0 "/NonMaxSuppression_y" (NonMaxSuppression, opset 17): operator NonMaxSuppression is not supported; docs/onnx.md`) {
		t.Errorf("unsupported op: %v", err)
	}
	// Every other unsupported operator is listed in the one error.
	g.node("RoiAlign", []string{"y"}, []string{"r1"})
	g.node("RoiAlign", []string{"r1"}, []string{"r2"})
	g.node("Bernoulli", []string{"r2"}, []string{"r3"})
	g.node("NonMaxSuppression", []string{"r3"}, []string{"r4"})
	_, err = onnx.Import(g.model(17), onnx.Options{Source: "t.onnx"})
	if err == nil || !strings.Contains(err.Error(), "operator NonMaxSuppression is not supported; the model also uses Bernoulli (1 node), RoiAlign (2 nodes); docs/onnx.md") {
		t.Errorf("several unsupported ops: %v", err)
	}
	g = &graph{outs: []string{"y"}}
	g.input("x", 2)
	g.node("Cast", []string{"x"}, []string{"y"}, ai("to", 8))
	if _, err := onnx.Import(g.model(17), onnx.Options{Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), "STRING is not supported") {
		t.Errorf("unsupported dtype: %v", err)
	}
	g = &graph{outs: []string{"y"}}
	g.input("x", "", 3)
	g.node("Relu", []string{"x"}, []string{"y"})
	res, err := onnx.Import(g.model(13), onnx.Options{Source: "t.onnx"})
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(string(res.HIR), "dim x_d0") {
		t.Errorf("unnamed dim: %v %v\n%s", err, res.Warnings, res.HIR)
	}
}
