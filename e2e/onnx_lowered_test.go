package e2e

import (
	"fmt"
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

// The operators the importer lowers to other HIR ops (pkg/onnx/
// ops_lowered.go), each checked against ONNX's definition written out
// here as plain loops, on the cpu target and, where this machine has a
// Vulkan device, the vulkan target, at static and symbolic shapes.

// lowered imports g at opset, builds it for each target, runs it on inputs
// and hands the outputs to check in a subtest per target. It returns the
// imported HIR.
func lowered(t *testing.T, g *graph, opset int64, b specialize.Binding, inputs map[string]*tensor.Tensor, check func(t *testing.T, out []*tensor.Tensor)) string {
	t.Helper()
	res, err := onnx.Import(g.model(opset), onnx.Options{Module: "t", Source: "t.onnx"})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	for _, target := range []string{"cpu", "vulkan"} {
		t.Run(target, func(t *testing.T) {
			if target == "vulkan" {
				needTool(t, "glslangValidator")
				needVulkan(t)
			}
			out := filepath.Join(t.TempDir(), "t.rlx")
			if _, err := driver.Build("t.hir", res.HIR, out, driver.Options{Target: target, Bindings: []specialize.Binding{b}, Params: res.Weights, Compiler: "test"}); err != nil {
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
			if len(ts) != len(g.outs) {
				t.Fatalf("%d outputs, want %d", len(ts), len(g.outs))
			}
			check(t, ts)
		})
	}
	return string(res.HIR)
}

// importErr imports g and returns the error text ("" when it imports).
func importErr(g *graph, opset int64) string {
	_, err := onnx.Import(g.model(opset), onnx.Options{Module: "t", Source: "t.onnx"})
	if err == nil {
		return ""
	}
	return err.Error()
}

// shapeIs fails unless out has shape want.
func shapeIs(t *testing.T, what string, out *tensor.Tensor, want ...int) {
	t.Helper()
	ok := len(out.Shape) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = out.Shape[i] == int64(want[i])
	}
	if !ok {
		t.Fatalf("%s: shape %v, want %v", what, out.Shape, want)
	}
}

func i64s(v ...int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// sym declares dims for graph.input: each dim whose name is in names is a
// named dynamic dim (that name), the others static.
func dimsOf(shape []int, names ...string) []any {
	out := make([]any, len(shape))
	for i, d := range shape {
		out[i] = d
		if i < len(names) && names[i] != "" {
			out[i] = names[i]
		}
	}
	return out
}

// ---- Trilu ----

func triluRef(x []float32, shape []int, upper bool, k int) []float64 {
	r, c := shape[len(shape)-2], shape[len(shape)-1]
	out := make([]float64, len(x))
	for idx := range x {
		i, j := idx/c%r, idx%c
		if upper && j-i >= k || !upper && j-i <= k {
			out[idx] = float64(x[idx])
		}
	}
	return out
}

func TestLoweredTrilu(t *testing.T) {
	shape := []int{2, 3, 4, 5}
	x := seq(2*3*4*5, 1)
	type tc struct {
		upper   int64 // -1: attribute absent (upper)
		k       int   // used when hasK
		hasK    bool
		runtime bool // k is a graph input
	}
	cases := []tc{{upper: -1}, {upper: 0}, {upper: 1, k: 1, hasK: true}, {upper: 0, k: -1, hasK: true},
		{upper: 1, k: -2, hasK: true}, {upper: 0, k: 2, hasK: true}, {upper: 1, k: 9, hasK: true}, {upper: 0, k: -9, hasK: true},
		{upper: 1, k: 2, hasK: true, runtime: true}, {upper: 0, k: -1, hasK: true, runtime: true}}
	for _, names := range [][]string{nil, {"b", "", "rows", "cols"}} {
		t.Run(fmt.Sprintf("symbolic=%v", names != nil), func(t *testing.T) {
			g := &graph{}
			g.input("x", dimsOf(shape, names...)...)
			inputs := map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(shape...), x)}
			for i, c := range cases {
				out := fmt.Sprintf("y%d", i)
				in := []string{"x"}
				switch {
				case c.runtime:
					g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: out + "_k", ElemType: 7, HasShape: true})
					in = append(in, out+"_k")
					inputs[out+"_k"] = tensor.FromI64(nil, []int64{int64(c.k)})
				case c.hasK:
					g.initI64(out+"_k", nil, []int64{int64(c.k)})
					in = append(in, out+"_k")
				}
				var attrs []*onnxpb.Attr
				if c.upper >= 0 {
					attrs = append(attrs, ai("upper", c.upper))
				}
				g.node("Trilu", in, []string{out}, attrs...)
				g.outs = append(g.outs, out)
			}
			var b specialize.Binding
			if names != nil {
				b = specialize.Binding{"b": 2, "rows": 4, "cols": 5}
			}
			hirText := lowered(t, g, 14, b, inputs, func(t *testing.T, out []*tensor.Tensor) {
				for i, c := range cases {
					shapeIs(t, g.outs[i], out[i], shape...)
					near(t, fmt.Sprintf("Trilu %+v", c), out[i].F32(), triluRef(x, shape, c.upper != 0, c.k))
				}
			})
			if !strings.Contains(hirText, "iota(") || !strings.Contains(hirText, "where(") {
				t.Errorf("Trilu is not an iota mask and a where:\n%s", hirText)
			}
		})
	}
	g := &graph{outs: []string{"y"}}
	g.input("x", 4)
	g.node("Trilu", []string{"x"}, []string{"y"})
	if err := importErr(g, 14); !strings.Contains(err, `"/Trilu_y" (Trilu, opset 14): Trilu needs an input of rank >= 2`) {
		t.Errorf("rank-1 Trilu: %q", err)
	}
}

// ---- InstanceNormalization ----

// instanceNormRef normalizes each [n, c] plane of x (plane elements each)
// with the population variance, then scales and shifts per channel.
func instanceNormRef(x []float32, c, plane int, scale, bias []float32, eps float64) []float64 {
	out := make([]float64, len(x))
	for p := 0; p*plane < len(x); p++ {
		ch := p % c
		v := x[p*plane : (p+1)*plane]
		mean := 0.0
		for _, e := range v {
			mean += float64(e)
		}
		mean /= float64(plane)
		vr := 0.0
		for _, e := range v {
			vr += (float64(e) - mean) * (float64(e) - mean)
		}
		vr /= float64(plane)
		for i, e := range v {
			out[p*plane+i] = (float64(e)-mean)/math.Sqrt(vr+eps)*float64(scale[ch]) + float64(bias[ch])
		}
	}
	return out
}

func TestLoweredInstanceNorm(t *testing.T) {
	const N, C, H, W, G = 2, 4, 3, 5, 2
	x := seq(N*C*H*W, 2)
	for i := range x {
		x[i] += float32(i%7) * 0.1 // planes with different means
	}
	scale, bias := []float32{1, 0.5, -2, 1.5}, []float32{0.1, -0.3, 0, 2}
	gamma, beta := []float32{0.5, 1, 2, -1}, []float32{1, 0, -1, 0.25}
	for _, sym := range []bool{false, true} {
		t.Run(fmt.Sprintf("symbolic=%v", sym), func(t *testing.T) {
			g := &graph{outs: []string{"in4", "in3", "gn"}}
			var names4, names3 []string
			var b specialize.Binding
			if sym {
				names4, names3 = []string{"n", "", "h", "w"}, []string{"n", "", "l"}
				b = specialize.Binding{"n": N, "h": H, "w": W, "l": H * W}
			}
			g.input("x", dimsOf([]int{N, C, H, W}, names4...)...)
			g.input("x3", dimsOf([]int{N, C, H * W}, names3...)...)
			g.init("scale", []int64{C}, scale)
			g.init("bias", []int64{C}, bias)
			g.node("InstanceNormalization", []string{"x", "scale", "bias"}, []string{"in4"}, af("epsilon", 1e-3))
			g.node("InstanceNormalization", []string{"x3", "scale", "bias"}, []string{"in3"}) // default epsilon 1e-5
			// torch.nn.GroupNorm(2, 4) as PyTorch exports it.
			g.initI64("gshape", []int64{3}, []int64{0, G, -1})
			g.init("ones", []int64{G}, []float32{1, 1})
			g.init("zeros", []int64{G}, []float32{0, 0})
			g.init("gamma", []int64{C, 1, 1}, gamma)
			g.init("beta", []int64{C, 1, 1}, beta)
			g.node("Reshape", []string{"x", "gshape"}, []string{"grouped"})
			g.node("InstanceNormalization", []string{"grouped", "ones", "zeros"}, []string{"gnorm"}, af("epsilon", 1e-5))
			g.node("Shape", []string{"x"}, []string{"xshape"})
			g.node("Reshape", []string{"gnorm", "xshape"}, []string{"gback"})
			g.node("Mul", []string{"gback", "gamma"}, []string{"gmul"})
			g.node("Add", []string{"gmul", "beta"}, []string{"gn"})
			inputs := map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(N, C, H, W), x), "x3": tensor.FromF32(i64s(N, C, H*W), x)}
			lowered(t, g, 17, b, inputs, func(t *testing.T, out []*tensor.Tensor) {
				shapeIs(t, "in4", out[0], N, C, H, W)
				near(t, "InstanceNormalization 4-D", out[0].F32(), instanceNormRef(x, C, H*W, scale, bias, 1e-3))
				shapeIs(t, "in3", out[1], N, C, H*W)
				near(t, "InstanceNormalization 3-D", out[1].F32(), instanceNormRef(x, C, H*W, scale, bias, 1e-5))
				grp := instanceNormRef(x, G, C/G*H*W, []float32{1, 1}, []float32{0, 0}, 1e-5)
				want := make([]float64, len(grp))
				for i, v := range grp {
					ch := i / (H * W) % C
					want[i] = v*float64(gamma[ch]) + float64(beta[ch])
				}
				shapeIs(t, "gn", out[2], N, C, H, W)
				near(t, "GroupNorm", out[2].F32(), want)
			})
		})
	}
}
