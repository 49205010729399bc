package e2e

import (
	"fmt"
	"math"
	"strings"
	"testing"

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
	return loweredOn(t, gpuRun, g, opset, b, inputs, check)
}

// loweredOn is lowered on the cpu target, and on vulkan when gpu is set.
// Two sweeps with a symbolic variant run vulkan on the static one only,
// at tens of seconds of glslangValidator and llvmpipe saved each:
// ConvTranspose, whose symbolic dims are bound at build time (the same
// kernels as the static variant), and Resize's cubic mode, whose
// indices and weights computed on the device from iota are the same
// kernels (iota, floor, clamp, casts, gathers) as the linear mode's in
// TestLoweredResize, which runs both variants on vulkan.
func loweredOn(t *testing.T, gpu bool, g *graph, opset int64, b specialize.Binding, inputs map[string]*tensor.Tensor, check func(t *testing.T, out []*tensor.Tensor)) string {
	t.Helper()
	res, err := onnx.Import(g.model(opset), onnx.Options{Module: "t", Source: "t.onnx"})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	targets := []string{"cpu"}
	if gpu {
		targets = append(targets, "vulkan")
	}
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			if target == "vulkan" {
				needTool(t, "glslangValidator")
				needVulkan(t)
			}
			ts := runImported(t, res, target, b, inputs)
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

// ---- 1-D Conv and pools ----

// conv1dRef is ONNX Conv on x [n, c, l] with w [o, c/g, k]: it returns the
// output and its length.
func conv1dRef(x []float32, n, c, l int, w []float32, o, k int, bias []float32, s, pb, pe, d, g int) ([]float64, int) {
	ol := (l+pb+pe-d*(k-1)-1)/s + 1
	out := make([]float64, n*o*ol)
	cg, og := c/g, o/g
	for b := 0; b < n; b++ {
		for oc := 0; oc < o; oc++ {
			for i := 0; i < ol; i++ {
				sum := 0.0
				if bias != nil {
					sum = float64(bias[oc])
				}
				for ci := 0; ci < cg; ci++ {
					for j := 0; j < k; j++ {
						p := i*s - pb + j*d
						if p < 0 || p >= l {
							continue
						}
						sum += float64(x[(b*c+oc/og*cg+ci)*l+p]) * float64(w[(oc*cg+ci)*k+j])
					}
				}
				out[(b*o+oc)*ol+i] = sum
			}
		}
	}
	return out, ol
}

// pool1dRef is ONNX MaxPool (isMax) or AveragePool on x [rows, l].
func pool1dRef(x []float32, rows, l, k, s, pb, pe, d int, ceil, isMax, includePad bool) ([]float64, int) {
	span := l + pb + pe - d*(k-1) - 1
	ol := span/s + 1
	if ceil {
		ol = (span+s-1)/s + 1
		if (ol-1)*s >= l+pb { // the last window would start in the end padding
			ol--
		}
	}
	out := make([]float64, rows*ol)
	for r := 0; r < rows; r++ {
		for i := 0; i < ol; i++ {
			m, sum, valid, inPad := math.Inf(-1), 0.0, 0, 0
			for j := 0; j < k; j++ {
				p := i*s - pb + j*d
				if p < l+pe {
					inPad++
				}
				if p < 0 || p >= l {
					continue
				}
				v := float64(x[r*l+p])
				m, sum, valid = math.Max(m, v), sum+v, valid+1
			}
			switch {
			case isMax:
				out[r*ol+i] = m
			case includePad:
				out[r*ol+i] = sum / float64(inPad)
			default:
				out[r*ol+i] = sum / float64(valid)
			}
		}
	}
	return out, ol
}

// samePads is auto_pad SAME_UPPER (upper) or SAME_LOWER for length l.
func samePads(l, k, s, d int, upper bool) (int, int) {
	out := (l + s - 1) / s
	total := max(0, (out-1)*s+(k-1)*d+1-l)
	if upper {
		return total / 2, total - total/2
	}
	return total - total/2, total / 2
}

func TestLowered1D(t *testing.T) {
	const N, C, L, O = 2, 4, 11, 6
	x := seq(N*C*L, 1)
	type convCase struct {
		k, s, pb, pe, d, g int
		autoPad            string
		bias               bool
	}
	convs := []convCase{
		{k: 3, s: 2, pb: 1, pe: 2, d: 2, g: 2, bias: true},
		{k: 1, s: 1, d: 1, g: 1},
		{k: 4, s: 2, d: 1, g: 1, autoPad: "SAME_UPPER"},
		{k: 4, s: 3, d: 2, g: 2, autoPad: "SAME_LOWER", bias: true},
		{k: 3, s: 1, d: 1, g: 1, pb: 1, pe: 1, autoPad: "VALID"},
		{k: 2, s: 1, d: 3, g: 2, autoPad: "NOTSET", pb: 0, pe: 3},
	}
	type poolCase struct {
		op                  string
		k, s, pb, pe, d     int
		ceil, includePad    bool
		autoPad             string
		attrDil, attrStride bool
	}
	pools := []poolCase{
		{op: "MaxPool", k: 3, s: 2, pb: 1, pe: 1, d: 2, ceil: true, attrDil: true, attrStride: true},
		{op: "MaxPool", k: 2, s: 1, d: 1},
		{op: "MaxPool", k: 3, s: 2, d: 1, autoPad: "SAME_UPPER", attrStride: true},
		{op: "AveragePool", k: 3, s: 2, pb: 1, pe: 2, d: 1, includePad: true, attrStride: true},
		{op: "AveragePool", k: 3, s: 2, pb: 1, pe: 2, d: 1, attrStride: true},
		{op: "AveragePool", k: 3, s: 2, pb: 2, pe: 1, d: 1, ceil: true, attrStride: true},
		{op: "AveragePool", k: 4, s: 3, d: 1, autoPad: "SAME_LOWER", attrStride: true},
	}
	// auto_pad SAME needs a static length; ceil_mode does not where its last
	// window cannot start in the end padding (both ceil cases here).
	static := func(ap string) bool { return strings.HasPrefix(ap, "SAME") }
	for _, sym := range []bool{false, true} {
		t.Run(fmt.Sprintf("symbolic=%v", sym), func(t *testing.T) {
			g := &graph{}
			var b specialize.Binding
			if sym {
				g.input("x", "n", C, "l")
				b = specialize.Binding{"n": N, "l": L}
			} else {
				g.input("x", N, C, L)
			}
			type check func(t *testing.T, out *tensor.Tensor)
			var checks []check
			for i, c := range convs {
				if sym && static(c.autoPad) {
					continue
				}
				name := fmt.Sprintf("conv%d", i)
				w := seq(O*(C/c.g)*c.k, 0.5)
				for j := range w {
					w[j] += float32(j%5) * 0.1
				}
				g.init(name+"_w", i64s(O, C/c.g, c.k), w)
				in := []string{"x", name + "_w"}
				var bias []float32
				if c.bias {
					bias = []float32{0.5, -1, 0.25, 0, 2, -0.5}
					g.init(name+"_b", i64s(O), bias)
					in = append(in, name+"_b")
				}
				attrs := []*onnxpb.Attr{ai("group", int64(c.g)), ais("kernel_shape", int64(c.k))}
				if c.s != 1 {
					attrs = append(attrs, ais("strides", int64(c.s)))
				}
				if c.d != 1 {
					attrs = append(attrs, ais("dilations", int64(c.d)))
				}
				pb, pe := c.pb, c.pe
				switch c.autoPad {
				case "":
					attrs = append(attrs, ais("pads", int64(pb), int64(pe)))
				case "VALID":
					attrs = append(attrs, &onnxpb.Attr{Name: "auto_pad", Type: 3, S: []byte(c.autoPad)})
					pb, pe = 0, 0
				case "NOTSET":
					attrs = append(attrs, &onnxpb.Attr{Name: "auto_pad", Type: 3, S: []byte(c.autoPad)}, ais("pads", int64(pb), int64(pe)))
				default:
					attrs = append(attrs, &onnxpb.Attr{Name: "auto_pad", Type: 3, S: []byte(c.autoPad)})
					pb, pe = samePads(L, c.k, c.s, c.d, c.autoPad == "SAME_UPPER")
				}
				g.node("Conv", in, []string{name}, attrs...)
				g.outs = append(g.outs, name)
				want, ol := conv1dRef(x, N, C, L, w, O, c.k, bias, c.s, pb, pe, c.d, c.g)
				c := c
				checks = append(checks, func(t *testing.T, out *tensor.Tensor) {
					shapeIs(t, fmt.Sprintf("Conv %+v", c), out, N, O, ol)
					near(t, fmt.Sprintf("Conv %+v", c), out.F32(), want)
				})
			}
			for i, p := range pools {
				if sym && static(p.autoPad) {
					continue
				}
				name := fmt.Sprintf("pool%d", i)
				attrs := []*onnxpb.Attr{ais("kernel_shape", int64(p.k))}
				if p.attrStride {
					attrs = append(attrs, ais("strides", int64(p.s)))
				}
				if p.attrDil {
					attrs = append(attrs, ais("dilations", int64(p.d)))
				}
				if p.ceil {
					attrs = append(attrs, ai("ceil_mode", 1))
				}
				if p.includePad {
					attrs = append(attrs, ai("count_include_pad", 1))
				}
				pb, pe := p.pb, p.pe
				if p.autoPad != "" {
					attrs = append(attrs, &onnxpb.Attr{Name: "auto_pad", Type: 3, S: []byte(p.autoPad)})
					pb, pe = samePads(L, p.k, p.s, p.d, p.autoPad == "SAME_UPPER")
				} else {
					attrs = append(attrs, ais("pads", int64(pb), int64(pe)))
				}
				g.node(p.op, []string{"x"}, []string{name}, attrs...)
				g.outs = append(g.outs, name)
				want, ol := pool1dRef(x, N*C, L, p.k, p.s, pb, pe, p.d, p.ceil, p.op == "MaxPool", p.includePad)
				p := p
				checks = append(checks, func(t *testing.T, out *tensor.Tensor) {
					shapeIs(t, fmt.Sprintf("%+v", p), out, N, C, ol)
					near(t, fmt.Sprintf("%+v", p), out.F32(), want)
				})
			}
			inputs := map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(N, C, L), x)}
			lowered(t, g, 17, b, inputs, func(t *testing.T, out []*tensor.Tensor) {
				for i, c := range checks {
					c(t, out[i])
				}
			})
		})
	}
	// What a 1-D window cannot do fails at import, naming the attribute.
	for _, c := range []struct {
		attrs []*onnxpb.Attr
		want  string
	}{
		{[]*onnxpb.Attr{ais("kernel_shape", 1), ais("strides", 2), ai("ceil_mode", 1)}, "ceil_mode with stride 2, a window of 1 and end padding 0 needs a static width, found l"},
		{[]*onnxpb.Attr{ais("kernel_shape", 3), &onnxpb.Attr{Name: "auto_pad", Type: 3, S: []byte("SAME_UPPER")}}, "attribute auto_pad=SAME_UPPER needs a static length"},
		{[]*onnxpb.Attr{ais("kernel_shape", 3), ais("strides", 1, 2)}, "attribute strides=[1 2], want one positive value"},
		{[]*onnxpb.Attr{ais("kernel_shape", 3), ais("pads", 3, 0)}, "attribute pads=[3, 0]: pads must be smaller than the kernel"},
	} {
		g := &graph{outs: []string{"y"}}
		g.input("x", 1, 2, "l")
		g.node("MaxPool", []string{"x"}, []string{"y"}, c.attrs...)
		if err := importErr(g, 17); !strings.Contains(err, `"/MaxPool_y" (MaxPool, opset 17): `) || !strings.Contains(err, c.want) {
			t.Errorf("got %q, want %q", err, c.want)
		}
	}
}

// ---- ConvTranspose ----

// convTransposeRef is ONNX ConvTranspose on x [n, cin, h, w] with wt
// [cin, cog, k0, k1], as its definition scatters: input pixel (ih, iw)
// adds x * wt into output (ih*s - padBegin + kh*d, ...).
func convTransposeRef(x []float32, n, cin, h, w int, wt []float32, cog, g int, k, s, d, op [2]int, pads [4]int, bias []float32) ([]float64, int, int) {
	oh := s[0]*(h-1) + op[0] + (k[0]-1)*d[0] + 1 - pads[0] - pads[2]
	ow := s[1]*(w-1) + op[1] + (k[1]-1)*d[1] + 1 - pads[1] - pads[3]
	cig, cout := cin/g, cog*g
	out := make([]float64, n*cout*oh*ow)
	for b := 0; b < n; b++ {
		for oc := 0; oc < cout && bias != nil; oc++ {
			for i := 0; i < oh*ow; i++ {
				out[(b*cout+oc)*oh*ow+i] = float64(bias[oc])
			}
		}
		for ci := 0; ci < cin; ci++ {
			for ih := 0; ih < h; ih++ {
				for iw := 0; iw < w; iw++ {
					v := float64(x[((b*cin+ci)*h+ih)*w+iw])
					for co := 0; co < cog; co++ {
						oc := ci/cig*cog + co
						for kh := 0; kh < k[0]; kh++ {
							for kw := 0; kw < k[1]; kw++ {
								y, z := ih*s[0]-pads[0]+kh*d[0], iw*s[1]-pads[1]+kw*d[1]
								if y < 0 || y >= oh || z < 0 || z >= ow {
									continue
								}
								out[((b*cout+oc)*oh+y)*ow+z] += v * float64(wt[((ci*cog+co)*k[0]+kh)*k[1]+kw])
							}
						}
					}
				}
			}
		}
	}
	return out, oh, ow
}

// resizeOperands adds the scales or sizes input of Resize node name of
// x [.., h, w] to g (sizes as Shape(x) * symSizes, computed at import,
// when neither is given) and returns the node's inputs (x's slot left
// empty), the scale of H and W (out/in where sizes were given) and the
// output size.
func resizeOperands(g *graph, name string, h, w int, scales []float32, sizes, symSizes []int64) (in []string, sc [2]float64, oh, ow int) {
	switch {
	case scales != nil:
		g.init(name+"_scales", i64s(len(scales)), scales)
		in = []string{"", "", name + "_scales"}
		hs, ws := scales[len(scales)-2], scales[len(scales)-1]
		return in, [2]float64{float64(hs), float64(ws)}, int(math.Floor(float64(float32(h) * hs))), int(math.Floor(float64(float32(w) * ws)))
	case sizes != nil:
		g.initI64(name+"_sizes", i64s(len(sizes)), sizes)
		oh, ow = int(sizes[len(sizes)-2]), int(sizes[len(sizes)-1])
	default:
		g.initI64(name+"_mul", i64s(4), symSizes)
		g.node("Mul", []string{"xshape", name + "_mul"}, []string{name + "_sizes"})
		oh, ow = h*int(symSizes[2]), w*int(symSizes[3])
	}
	return []string{"", "", "", name + "_sizes"}, [2]float64{float64(oh) / float64(h), float64(ow) / float64(w)}, oh, ow
}

// ---- Resize ----

// resizeRef is ONNX Resize of x [n, c, h, w] to [n, c, oh, ow] along H and
// W, as ONNX's reference implementation computes it: per output pixel the
// source coordinate of each axis, then the nearest pixel, or the four
// neighbours bilinearly with edge values outside the input.
func resizeRef(x []float32, nc, h, w, oh, ow int, scaleH, scaleW float64, mode, ctm, nearestMode string) []float64 {
	coord := func(o int, scale float64, in, out int) float64 {
		i, fin, fout := float64(o), float64(in), float64(out)
		switch ctm {
		case "half_pixel":
			return (i+0.5)/scale - 0.5
		case "pytorch_half_pixel":
			if out == 1 {
				return 0
			}
			return (i+0.5)/scale - 0.5
		case "align_corners":
			if out == 1 {
				return 0
			}
			return i * (fin - 1) / (fout - 1)
		case "tf_half_pixel_for_nn":
			return (i + 0.5) / scale
		case "asymmetric":
			return i / scale
		}
		panic(ctm)
	}
	edge := func(i, n int) int { return min(max(i, 0), n-1) }
	nearest := func(v float64) int {
		switch nearestMode {
		case "round_prefer_floor":
			if v == math.Floor(v)+0.5 {
				return int(math.Floor(v))
			}
			return int(math.Round(v))
		case "round_prefer_ceil":
			if v == math.Floor(v)+0.5 {
				return int(math.Ceil(v))
			}
			return int(math.Round(v))
		case "floor":
			return int(math.Floor(v))
		case "ceil":
			return int(math.Ceil(v))
		}
		panic(nearestMode)
	}
	out := make([]float64, nc*oh*ow)
	for p := 0; p < nc; p++ {
		at := func(i, j int) float64 { return float64(x[(p*h+edge(i, h))*w+edge(j, w)]) }
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				y, z := coord(i, scaleH, h, oh), coord(j, scaleW, w, ow)
				var v float64
				if mode == "nearest" {
					v = at(nearest(y), nearest(z))
				} else {
					y0, z0 := math.Floor(y), math.Floor(z)
					dy, dz := y-y0, z-z0
					a, b := int(y0), int(z0)
					v = (1-dy)*((1-dz)*at(a, b)+dz*at(a, b+1)) + dy*((1-dz)*at(a+1, b)+dz*at(a+1, b+1))
				}
				out[(p*oh+i)*ow+j] = v
			}
		}
	}
	return out
}

func TestLoweredResize(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	const N, C, H, W = 1, 2, 4, 5
	x := seq(N*C*H*W, 1)
	type rc struct {
		mode, ctm, nearestMode string // "" leaves the attribute out (its default)
		scales                 []float32
		sizes                  []int64
		symSizes               []int64 // sizes as Shape(x) * these, computed at import
		axes                   []int64
	}
	cases := []rc{
		{mode: "nearest", ctm: "asymmetric", nearestMode: "floor", scales: []float32{1, 1, 2, 2}}, // F.interpolate(scale_factor=2)
		{scales: []float32{1, 1, 1.5, 0.5}}, // the defaults: nearest, half_pixel, round_prefer_floor
		{mode: "nearest", ctm: "align_corners", nearestMode: "round_prefer_ceil", sizes: []int64{N, C, 7, 3}},
		{mode: "nearest", ctm: "tf_half_pixel_for_nn", nearestMode: "ceil", sizes: []int64{N, C, 3, 8}},
		{mode: "nearest", ctm: "pytorch_half_pixel", nearestMode: "round_prefer_ceil", scales: []float32{1, 1, 3, 2}},
		{mode: "nearest", ctm: "asymmetric", nearestMode: "round_prefer_floor", scales: []float32{1, 1, 2, 3}},
		{mode: "nearest", ctm: "half_pixel", nearestMode: "round_prefer_ceil", symSizes: []int64{1, 1, 2, 1}},
		{mode: "linear", ctm: "half_pixel", scales: []float32{1, 1, 2, 2}},
		{mode: "linear", ctm: "pytorch_half_pixel", scales: []float32{1, 1, 2, 2}}, // bilinear, align_corners=False
		{mode: "linear", ctm: "align_corners", sizes: []int64{N, C, 7, 9}},         // bilinear, align_corners=True
		{mode: "linear", ctm: "asymmetric", scales: []float32{1, 1, 0.5, 1.5}},
		{mode: "linear", ctm: "pytorch_half_pixel", sizes: []int64{N, C, 1, 3}},
		{mode: "linear", ctm: "align_corners", sizes: []int64{N, C, 1, 6}},
		{mode: "linear", ctm: "tf_half_pixel_for_nn", symSizes: []int64{1, 1, 3, 2}},
		{mode: "linear", ctm: "half_pixel", scales: []float32{2, 1.5}, axes: []int64{2, -1}},
		{mode: "nearest", ctm: "asymmetric", nearestMode: "floor", sizes: []int64{3, 10}, axes: []int64{2, 3}},
		{mode: "linear", ctm: "half_pixel", scales: []float32{1, 1, 1, 1}},
	}
	for _, sym := range []bool{false, true} {
		t.Run(fmt.Sprintf("symbolic=%v", sym), func(t *testing.T) {
			g := &graph{}
			var b specialize.Binding
			if sym {
				g.input("x", N, C, "h", "w")
				b = specialize.Binding{"h": H, "w": W}
			} else {
				g.input("x", N, C, H, W)
			}
			g.node("Shape", []string{"x"}, []string{"xshape"})
			var checks []func(t *testing.T, out *tensor.Tensor)
			for i, c := range cases {
				name := fmt.Sprintf("r%d", i)
				var attrs []*onnxpb.Attr
				for _, a := range [][2]string{{"mode", c.mode}, {"coordinate_transformation_mode", c.ctm}, {"nearest_mode", c.nearestMode}} {
					if a[1] != "" {
						attrs = append(attrs, &onnxpb.Attr{Name: a[0], Type: 3, S: []byte(a[1])})
					}
				}
				if c.axes != nil {
					attrs = append(attrs, ais("axes", c.axes...))
				}
				in, sc, oh, ow := resizeOperands(g, name, H, W, c.scales, c.sizes, c.symSizes)
				in[0] = "x"
				for len(in) > 0 && in[len(in)-1] == "" {
					in = in[:len(in)-1]
				}
				g.node("Resize", in, []string{name}, attrs...)
				g.outs = append(g.outs, name)
				mode, ctm, nm := c.mode, c.ctm, c.nearestMode
				if mode == "" {
					mode, ctm, nm = "nearest", "half_pixel", "round_prefer_floor"
				}
				want := resizeRef(x, N*C, H, W, oh, ow, sc[0], sc[1], mode, ctm, nm)
				c := c
				checks = append(checks, func(t *testing.T, out *tensor.Tensor) {
					what := fmt.Sprintf("Resize %+v", c)
					shapeIs(t, what, out, N, C, oh, ow)
					near(t, what, out.F32(), want)
				})
			}
			inputs := map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(N, C, H, W), x)}
			hirText := loweredOn(t, gpuRun && !sym, g, 19, b, inputs, func(t *testing.T, out []*tensor.Tensor) {
				for i, c := range checks {
					c(t, out[i])
				}
			})
			// Static sizes compute indices at import; symbolic ones from iota.
			if got := strings.Contains(hirText, "iota("); got != sym {
				t.Errorf("HIR has iota: %v, want %v:\n%s", got, sym, hirText)
			}
		})
	}
	// Opset 11: roi and scales are required inputs, empty when unused.
	g := &graph{outs: []string{"a", "b"}}
	g.input("x", N, C, H, W)
	g.init("empty", []int64{0}, nil)
	g.init("scales", i64s(4), []float32{1, 1, 2, 0.5})
	g.initI64("sizes", i64s(4), []int64{N, C, 3, 7})
	lin := &onnxpb.Attr{Name: "mode", Type: 3, S: []byte("linear")}
	g.node("Resize", []string{"x", "empty", "scales"}, []string{"a"}, lin)
	g.node("Resize", []string{"x", "empty", "empty", "sizes"}, []string{"b"})
	lowered(t, g, 11, nil, map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(N, C, H, W), x)}, func(t *testing.T, out []*tensor.Tensor) {
		shapeIs(t, "opset 11 scales", out[0], N, C, 2*H, W/2)
		near(t, "opset 11 scales", out[0].F32(), resizeRef(x, N*C, H, W, 2*H, W/2, 2, 0.5, "linear", "half_pixel", ""))
		shapeIs(t, "opset 11 sizes", out[1], N, C, 3, 7)
		near(t, "opset 11 sizes", out[1].F32(), resizeRef(x, N*C, H, W, 3, 7, 3.0/H, 7.0/W, "nearest", "half_pixel", "round_prefer_floor"))
	})
	for _, c := range []struct {
		attrs  []*onnxpb.Attr
		scales []float32
		want   string
	}{
		{[]*onnxpb.Attr{{Name: "mode", Type: 3, S: []byte("bicubic")}}, nil, `attribute mode="bicubic" is not supported (nearest, linear and cubic are)`},
		{[]*onnxpb.Attr{ai("antialias", 1)}, nil, "attribute antialias=1 is not supported"},
		{[]*onnxpb.Attr{{Name: "coordinate_transformation_mode", Type: 3, S: []byte("tf_crop_and_resize")}}, nil, `attribute coordinate_transformation_mode="tf_crop_and_resize" is not supported`},
		{[]*onnxpb.Attr{{Name: "nearest_mode", Type: 3, S: []byte("round")}}, nil, `attribute nearest_mode="round" is not supported`},
		{[]*onnxpb.Attr{{Name: "keep_aspect_ratio_policy", Type: 3, S: []byte("not_larger")}}, nil, `attribute keep_aspect_ratio_policy="not_larger" is not supported`},
		{nil, []float32{1, 2, 2, 2}, "Resize of axis 1 (N or C): only H and W are resized"},
		{nil, []float32{1, 1, 0.7071, 1}, "Resize's scale 0.707099974155426 on the symbolic dim h: the output size floor(h*0.707099974155426) needs a scale that is a fraction p/q"},
	} {
		g := &graph{outs: []string{"y"}}
		g.input("x", 1, 2, "h", 4)
		s := c.scales
		if s == nil {
			s = []float32{1, 1, 2, 2}
		}
		g.init("s", i64s(4), s)
		g.node("Resize", []string{"x", "", "s"}, []string{"y"}, c.attrs...)
		if err := importErr(g, 19); !strings.Contains(err, `"/Resize_y" (Resize, opset 19): `+c.want) {
			t.Errorf("got %q, want %q", err, c.want)
		}
	}
}
