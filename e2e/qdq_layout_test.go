package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/qgemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// qdqBlock is a quantized inverted-residual block as ONNX Runtime's
// quantizer writes it (QDQ form) over a 14x14 plane, where the cpu target
// runs convolutions channels last: an integer 1x1 expansion, requantized
// through ReLU6, a depthwise 3x3 (f32 arithmetic on the integers, as
// the importer spells it), requantized through ReLU6 again, an integer
// 1x1 projection, and the residual addition of the dequantized input.
func qdqBlock(t *testing.T) *graph {
	t.Helper()
	const c, e = 32, 64
	g := &graph{outs: []string{"y"}}
	g.input("x", 1, c, 14, 14)
	seed := uint32(7)
	next := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
	i8s := func(n int) []int8 {
		v := make([]int8, n)
		for i := range v {
			v[i] = int8(next()%255 - 127)
		}
		return v
	}
	scales := func(n int, base float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = base * (1 + float32(next()%100)/100)
		}
		return v
	}
	i32s := func(n int) []int32 {
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(next()%4001) - 2000
		}
		return v
	}
	g.init("zero", nil, []float32{0})
	g.init("six", nil, []float32{6})
	g.init("xs", nil, []float32{0.05})
	g.initU8("xzp", nil, []uint8{128})
	g.node("QuantizeLinear", []string{"x", "xs", "xzp"}, []string{"xq"})
	g.node("DequantizeLinear", []string{"xq", "xs", "xzp"}, []string{"xf"})
	// conv names a QDQ convolution of in (scale ins) into out, quantized
	// with scale os and zero point ozp: weights per output channel.
	conv := func(name, in string, ins float32, o, ci, k, groups int64, os float32, ozp uint8, out string) {
		ws := scales(int(o), 0.004)
		bs := make([]float32, o)
		for i := range bs {
			bs[i] = ins * ws[i]
		}
		g.initI8(name+"_w", []int64{o, ci, k, k}, i8s(int(o*ci*k*k)))
		g.init(name+"_ws", []int64{o}, ws)
		g.initI8(name+"_wzp", []int64{o}, make([]int8, o))
		g.initI32(name+"_b", []int64{o}, i32s(int(o)))
		g.init(name+"_bs", []int64{o}, bs)
		g.init(name+"_os", nil, []float32{os})
		g.initU8(name+"_ozp", nil, []uint8{ozp})
		g.node("DequantizeLinear", []string{name + "_w", name + "_ws", name + "_wzp"}, []string{name + "_wf"}, ai("axis", 0))
		g.node("DequantizeLinear", []string{name + "_b", name + "_bs"}, []string{name + "_bf"}, ai("axis", 0))
		g.node("Conv", []string{in, name + "_wf", name + "_bf"}, []string{name + "_yf"}, ais("pads", k/2, k/2, k/2, k/2), ai("group", groups))
		g.node("QuantizeLinear", []string{name + "_yf", name + "_os", name + "_ozp"}, []string{out})
	}
	// relu6 dequantizes q (scale s, zero point zp), clips to [0, 6] and
	// quantizes with 6/255, then dequantizes that for the next layer.
	relu6 := func(name, q string, s float32, zp uint8) (string, float32) {
		g.init(name+"_s", nil, []float32{s})
		g.initU8(name+"_zp", nil, []uint8{zp})
		g.init(name+"_rs", nil, []float32{6.0 / 255})
		g.initU8(name+"_rzp", nil, []uint8{0})
		g.node("DequantizeLinear", []string{q, name + "_s", name + "_zp"}, []string{name + "_f"})
		g.node("Clip", []string{name + "_f", "zero", "six"}, []string{name + "_c"})
		g.node("QuantizeLinear", []string{name + "_c", name + "_rs", name + "_rzp"}, []string{name + "_q"})
		g.node("DequantizeLinear", []string{name + "_q", name + "_rs", name + "_rzp"}, []string{name + "_o"})
		return name + "_o", 6.0 / 255
	}
	conv("expand", "xf", 0.05, e, c, 1, 1, 0.1, 120, "e_q")
	ef, es := relu6("r1", "e_q", 0.1, 120)
	conv("dw", ef, es, e, 1, 3, e, 0.08, 110, "d_q")
	df, ds := relu6("r2", "d_q", 0.08, 110)
	conv("project", df, ds, c, e, 1, 1, 0.06, 125, "p_q")
	g.init("ps", nil, []float32{0.06})
	g.initU8("pzp", nil, []uint8{125})
	g.init("ys", nil, []float32{0.07})
	g.initU8("yzp", nil, []uint8{127})
	g.node("DequantizeLinear", []string{"p_q", "ps", "pzp"}, []string{"pf"})
	g.node("Add", []string{"pf", "xf"}, []string{"sum"})
	g.node("QuantizeLinear", []string{"sum", "ys", "yzp"}, []string{"yq"})
	g.node("DequantizeLinear", []string{"yq", "ys", "yzp"}, []string{"y"})
	return g
}

// TestQDQBlockChannelsLast checks that a quantized block's small-plane
// convolutions run channels last with the requantizing regions between
// them (integer convolutions reading and writing NHWC, the depthwise one
// as dwconv_nhwc_taps, no relayout step), and that its output equals the
// reference interpreter's on the imported graph, portable and native.
func TestQDQBlockChannelsLast(t *testing.T) {
	res, err := onnx.Import(qdqBlock(t).model(13), onnx.Options{Module: "t", Source: "t.onnx"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := hir.ParseFile("t.hir", res.HIR)
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	ws := &lower.Weights{Named: res.Weights}
	gr, err := lower.ToMIR(m, "main", ws)
	if err != nil {
		t.Fatal(err)
	}
	ref := &reference{g: gr}
	b := specialize.Binding{}
	x := tensor.New(tensor.F32, 1, 32, 14, 14)
	xs := tensor.AsF32(x.Data)
	for i := range xs {
		xs[i] = float32((i*37)%301-150) * 0.045
	}
	inputs := map[string]*tensor.Tensor{"x": x}
	for _, cpu := range cpuConfigs(t) {
		t.Run(strings.Join(cpu, "+"), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "t.rlx")
			if _, err := build(t, "t.hir", res.HIR, out, driver.Options{Target: "cpu", CPU: cpu, Bindings: []specialize.Binding{b}, Params: res.Weights, Compiler: "test"}); err != nil {
				t.Fatalf("build: %v", err)
			}
			_, progs := artifactPrograms(t, out)
			counts := map[string]int{}
			for _, s := range progs[0].Steps {
				counts[string(s.Kind())]++
			}
			// Without integer kernels (purego, or a CPU without them), or
			// where sums of 32 terms are too short for them (AVX2's
			// Int8MinK), the products run in f32; the depthwise one is
			// channels last either way.
			k := qgemm.Int8Kernel()
			int8 := tuning.Int8Products(k) && tuning.Int8MinK(k) <= 32
			if cpu[0] == "portable" && int8 && (counts["conv2d_i8_nhwc"] != 2 || counts["dwconv_nhwc_taps"] != 1 || counts["nchw_to_nhwc"]+counts["nhwc_to_nchw"] != 0) {
				t.Errorf("steps %v: want both integer convolutions and the depthwise one channels last, no relayout", counts)
			}
			if cpu[0] == "portable" && !int8 && counts["dwconv_nhwc_taps"] != 1 {
				t.Errorf("steps %v: want the depthwise convolution channels last", counts)
			}
			mod, err := loader.Open(out, loader.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close()
			got, err := mod.Run(inputs)
			if err != nil {
				t.Fatal(err)
			}
			want := ref.run(t, b, inputs)
			if msg := compareTol(got[0].Tensor, want[0], 0); msg != "" {
				t.Errorf("output: %s", msg)
			}
		})
	}
}
