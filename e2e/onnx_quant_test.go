package e2e

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/qgemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Quantized operators against their definitions, computed here with
// ONNX Runtime's arithmetic: integer accumulation, the f32 multiplier
// a_scale·b_scale/y_scale, f32 products, rounding half to even.

// quantize is saturate(round(x / s) + zp) in f32.
func quantize(x, s float32, zp, lo, hi float64) float64 {
	return math.Max(lo, math.Min(hi, math.RoundToEven(float64(x/s))+zp))
}

func (g *graph) initU8(name string, dims []int64, v []uint8) {
	g.inits = append(g.inits, &onnxpb.Tensor{Name: name, DataType: 2, Dims: dims, RawData: v})
}

func (g *graph) initI8(name string, dims []int64, v []int8) {
	raw := make([]byte, len(v))
	for i, x := range v {
		raw[i] = byte(x)
	}
	g.inits = append(g.inits, &onnxpb.Tensor{Name: name, DataType: 3, Dims: dims, RawData: raw})
}

func (g *graph) initI32(name string, dims []int64, v []int32) {
	g.inits = append(g.inits, &onnxpb.Tensor{Name: name, DataType: 6, Dims: dims, Int32Data: v})
}

// eachTarget runs a quantized test on the cpu target and on vulkan (where
// this machine has a Vulkan device; CI installs llvmpipe): the integer
// arithmetic must come out the same on both.
func eachTarget(t *testing.T, test func(t *testing.T, target string)) {
	for _, target := range []string{"cpu", "vulkan"} {
		t.Run(target, func(t *testing.T) {
			if target == "vulkan" {
				needVulkan(t)
			}
			test(t, target)
		})
	}
}

// runONNXOn imports an opset's model and runs it on target at b.
func runONNXOn(t *testing.T, g *graph, opset int64, target string, b specialize.Binding, inputs map[string]*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	res, err := onnx.Import(g.model(opset), onnx.Options{Module: "t", Source: "t.onnx"})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return runImported(t, res, target, b, inputs)
}

// ints reads an integer tensor as float64s.
func ints(t *tensor.Tensor) []float64 { return t.Float64s() }

// TestONNXQuantizeDequantize: QuantizeLinear then DequantizeLinear (a QDQ
// pair), per tensor into uint8 and per channel into int8, over a symbolic
// dim, both outputs checked exactly.
func TestONNXQuantizeDequantize(t *testing.T) {
	eachTarget(t, func(t *testing.T, target string) {
		for _, perAxis := range []bool{false, true} {
			g := &graph{outs: []string{"q", "y"}}
			g.input("x", 2, 4, "s")
			var scales []float32
			var zps []float64
			if perAxis {
				scales, zps = []float32{0.05, 0.11, 0.02, 0.3}, []float64{-3, 0, 5, 1}
				g.init("sc", []int64{4}, scales)
				g.initI8("zp", []int64{4}, []int8{-3, 0, 5, 1})
			} else {
				scales, zps = []float32{0.07}, []float64{128}
				g.init("sc", nil, scales)
				g.initU8("zp", nil, []uint8{128})
			}
			g.node("QuantizeLinear", []string{"x", "sc", "zp"}, []string{"q"}, ai("axis", 1))
			g.node("DequantizeLinear", []string{"q", "sc", "zp"}, []string{"y"}, ai("axis", 1))
			for _, s := range []int64{3, 7} {
				n := 2 * 4 * s
				x := seq(int(n), 9)
				x[0], x[1] = 1000, -1000  // saturate
				for k := 2; k < 22; k++ { // ties of the f32 quotient: x / s is k + 0.5 in f32 arithmetic
					x[k] = float32(k) * 0.5 * scales[0] // (not always in f64: round in f32, as ONNX Runtime)
				}
				out := runONNXOn(t, g, 13, target, specialize.Binding{"s": s}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 4, s}, x)})
				lo, hi := 0.0, 255.0
				if perAxis {
					lo, hi = -128, 127
				}
				q, y := ints(out[0]), out[1].F32()
				for e := range x {
					c := 0
					if perAxis {
						c = e / int(s) % 4
					}
					wq := quantize(x[e], scales[c], zps[c], lo, hi)
					wy := float32(wq-zps[c]) * scales[c]
					if q[e] != wq || y[e] != wy {
						t.Fatalf("per axis %v s=%d element %d (x %g): q %v y %v, want %v %v", perAxis, s, e, x[e], q[e], y[e], wq, wy)
					}
				}
			}
		}
	})
}

// TestONNXQLinearMatMul: uint8 a times int8 b with per-column scales and
// zero points into uint8, a's rows symbolic.
func TestONNXQLinearMatMul(t *testing.T) {
	eachTarget(t, func(t *testing.T, target string) {
		const k, n = 8, 5
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "a", ElemType: 2, HasShape: true,
			Shape: []onnxpb.Dim{{Param: "m"}, {Value: k, Known: true}}})
		bv := make([]int8, k*n)
		for i := range bv {
			bv[i] = int8((i*37)%255 - 127)
		}
		bs := []float32{0.01, 0.02, 0.005, 0.03, 0.015}
		bzp := []int8{0, 2, -1, 0, 3}
		g.init("as", nil, []float32{0.04})
		g.initU8("azp", nil, []uint8{120})
		g.initI8("b", []int64{k, n}, bv)
		g.init("bs", []int64{n}, bs)
		g.initI8("bzp", []int64{n}, bzp)
		g.init("ys", nil, []float32{0.09})
		g.initU8("yzp", nil, []uint8{100})
		g.node("QLinearMatMul", []string{"a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"}, []string{"y"})
		for _, m := range []int64{1, 6} {
			a := tensor.New(tensor.U8, m, k)
			for i := range a.Data {
				a.Data[i] = byte(i * 53 % 256)
			}
			out := runONNXOn(t, g, 13, target, specialize.Binding{"m": m}, map[string]*tensor.Tensor{"a": a})
			got := ints(out[0])
			for i := range int(m) {
				for j := range n {
					var acc int64
					for c := range k {
						acc += (int64(a.Data[i*k+c]) - 120) * (int64(bv[c*n+j]) - int64(bzp[j]))
					}
					mult := float32(0.04) * bs[j] / float32(0.09)
					want := quantize(float32(acc)*mult, 1, 100, 0, 255)
					if got[i*n+j] != want {
						t.Fatalf("m=%d y[%d][%d] = %v, want %v (acc %d)", m, i, j, got[i*n+j], want, acc)
					}
				}
			}
		}
	})
}

// TestONNXQLinearConv: uint8 input, int8 weights with a scale per output
// channel, an int32 bias, padding, into int8, over a symbolic height.
func TestONNXQLinearConv(t *testing.T) {
	testQConv(t, func(g *graph) {
		g.node("QLinearConv", []string{"x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "b"}, []string{"y"}, ais("pads", 1, 1, 1, 1))
	})
}

// TestONNXQDQConv: the same convolution as ONNX Runtime's quantizer
// writes it in QDQ form (DequantizeLinear of the input, weights and bias,
// a float Conv, QuantizeLinear), which imports as QLinearConv and so
// gives its results exactly; a bias whose scale is not the input's times
// the weights' keeps the float group.
func TestONNXQDQConv(t *testing.T) {
	qdq := func(biasScale float32) func(g *graph) {
		return func(g *graph) {
			bs := make([]float32, len(qconvWS))
			for i, w := range qconvWS {
				bs[i] = biasScale * w
			}
			g.init("bs", []int64{int64(len(bs))}, bs)
			g.node("DequantizeLinear", []string{"x", "xs", "xzp"}, []string{"xf"})
			g.node("DequantizeLinear", []string{"w", "ws", "wzp"}, []string{"wf"}, ai("axis", 0))
			g.node("DequantizeLinear", []string{"b", "bs"}, []string{"bf"}, ai("axis", 0))
			g.node("Conv", []string{"xf", "wf", "bf"}, []string{"yf"}, ais("pads", 1, 1, 1, 1))
			g.node("QuantizeLinear", []string{"yf", "ys", "yzp"}, []string{"y"})
		}
	}
	testQConv(t, qdq(0.03))
	for _, c := range []struct {
		scale float32
		fused bool
	}{{0.03, true}, {0.031, false}} {
		g := &graph{outs: []string{"y"}}
		qconvGraph(g)
		qdq(c.scale)(g)
		res, err := onnx.Import(g.model(13), onnx.Options{Module: "t", Source: "t.onnx"})
		if err != nil {
			t.Fatal(err)
		}
		if fused := strings.Contains(string(res.HIR), "y_mult"); fused != c.fused {
			t.Errorf("bias scale %g x the weights': imported as QLinearConv %v, want %v\n%s", c.scale, fused, c.fused, res.HIR)
		}
	}
}

// qconvWS are testQConv's weight scales, one per output channel.
var qconvWS = []float32{0.02, 0.01, 0.05, 0.03}

// qconvC is testQConv's input channels: sums of 32·9 terms, long enough
// for an integer convolution on every CPU with an integer kernel
// (tuning.Int8MinK).
const qconvC = 32

// qconvYS is testQConv's output scale, which keeps most results of those
// sums inside int8.
const qconvYS = 2

// qconvGraph declares testQConv's input and initializers.
func qconvGraph(g *graph) {
	const c, o, kh, w = qconvC, 4, 3, 6
	g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: 2, HasShape: true,
		Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: c, Known: true}, {Param: "h"}, {Value: w, Known: true}}})
	g.init("xs", nil, []float32{0.03})
	g.initU8("xzp", nil, []uint8{10})
	g.initI8("w", []int64{o, c, kh, kh}, qconvW())
	g.init("ws", []int64{o}, qconvWS)
	g.initI8("wzp", []int64{o}, make([]int8, o))
	g.init("ys", nil, []float32{qconvYS})
	g.initI8("yzp", nil, []int8{-5})
	g.initI32("b", []int64{o}, qconvBias)
}

var qconvBias = []int32{100, -2000, 0, 555}

func qconvW() []int8 {
	wv := make([]int8, 4*qconvC*3*3)
	for i := range wv {
		wv[i] = int8((i*29)%200 - 100)
	}
	return wv
}

// testQConv checks the convolution build writes (uint8 input, int8
// weights with a scale per output channel, an int32 bias, padding, into
// int8, over a symbolic height) against QLinearConv's definition.
func testQConv(t *testing.T, build func(g *graph)) {
	eachTarget(t, func(t *testing.T, target string) {
		const c, o, kh, w = qconvC, 4, 3, 6
		g := &graph{outs: []string{"y"}}
		qconvGraph(g)
		build(g)
		wv, ws, bias := qconvW(), qconvWS, qconvBias
		for _, h := range []int64{4, 7} {
			x := tensor.New(tensor.U8, 1, c, h, w)
			for i := range x.Data {
				x.Data[i] = byte(i * 71 % 256)
			}
			out := runONNXOn(t, g, 13, target, specialize.Binding{"h": h}, map[string]*tensor.Tensor{"x": x})
			got := ints(out[0])
			inside := 0 // results not clamped: the test checks sums, not saturation
			for _, v := range got {
				if v > -128 && v < 127 {
					inside++
				}
			}
			if 2*inside < len(got) {
				t.Fatalf("h=%d: %d of %d results inside int8's range, want most", h, inside, len(got))
			}
			for oc := range o {
				for y := range int(h) {
					for xx := range w {
						acc := int64(bias[oc])
						for ic := range c {
							for dy := range kh {
								for dx := range kh {
									iy, ix := y+dy-1, xx+dx-1
									if iy < 0 || iy >= int(h) || ix < 0 || ix >= w {
										continue
									}
									acc += (int64(x.Data[(ic*int(h)+iy)*w+ix]) - 10) * int64(wv[((oc*c+ic)*kh+dy)*kh+dx])
								}
							}
						}
						mult := float32(0.03) * ws[oc] / float32(qconvYS)
						want := quantize(float32(acc)*mult, 1, -5, -128, 127)
						at := (oc*int(h)+y)*w + xx
						if got[at] != want {
							t.Fatalf("h=%d y[%d][%d][%d] = %v, want %v (acc %d)", h, oc, y, xx, got[at], want, acc)
						}
					}
				}
			}
		}
	})
}

// TestONNXDynamicQuantMatMul: ONNX Runtime's dynamic quantization of a
// product, DynamicQuantizeLinear then MatMulInteger with per-column
// weight zero points, every output exactly, over a symbolic row count;
// one binding's input is all zeros (the flat range).
func TestONNXDynamicQuantMatMul(t *testing.T) {
	// Weights' zero points per column that take some centered weights
	// past int8 (an f32 product), and none (an integer product with the
	// run-time zero point on CPUs with one: specialize/int8.go).
	for _, wzp := range [][]int8{{0, 1, -2, 0, 5}, {0, 0, 0, 0, 0}} {
		testDynamicQuantMatMul(t, wzp)
	}
}

func testDynamicQuantMatMul(t *testing.T, wzp []int8) {
	eachTarget(t, func(t *testing.T, target string) {
		// sums of 128 terms: an integer product with the run-time zero
		// point on every CPU that has an integer kernel (tuning.Int8MinK)
		const k, n = 128, 5
		g := &graph{outs: []string{"xq", "xs", "xzp", "acc"}}
		g.input("x", "m", k)
		wv := make([]int8, k*n)
		for i := range wv {
			wv[i] = int8((i*41)%255 - 127)
		}
		g.initI8("w", []int64{k, n}, wv)
		g.initI8("wzp", []int64{n}, wzp)
		g.node("DynamicQuantizeLinear", []string{"x"}, []string{"xq", "xs", "xzp"})
		g.node("MatMulInteger", []string{"xq", "w", "xzp", "wzp"}, []string{"acc"})
		for _, m := range []int64{1, 4} {
			x := seq(int(m*k), 3)
			if m == 1 {
				x = make([]float32, k)
			}
			out := runONNXOn(t, g, 13, target, specialize.Binding{"m": m}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{m, k}, x)})
			mx, mn := float32(0), float32(0)
			for _, v := range x {
				mx, mn = max(mx, v), min(mn, v)
			}
			span := mx - mn
			if mx == mn {
				span = 1
			}
			scale := span / 255
			zp := math.RoundToEven(math.Max(0, math.Min(255, float64(-(mn/scale)))))
			if got := out[1].F32()[0]; got != scale {
				t.Fatalf("m=%d scale %v, want %v", m, got, scale)
			}
			if got := ints(out[2])[0]; got != zp {
				t.Fatalf("m=%d zero point %v, want %v", m, got, zp)
			}
			q := ints(out[0])
			for e, v := range x {
				if want := quantize(v, scale, zp, 0, 255); q[e] != want {
					t.Fatalf("m=%d xq[%d] = %v, want %v", m, e, q[e], want)
				}
			}
			acc := ints(out[3])
			for i := range int(m) {
				for j := range n {
					var want int64
					for c := range k {
						want += (int64(q[i*k+c]) - int64(zp)) * (int64(wv[c*n+j]) - int64(wzp[j]))
					}
					if acc[i*n+j] != float64(want) {
						t.Fatalf("m=%d acc[%d][%d] = %v, want %d", m, i, j, acc[i*n+j], want)
					}
				}
			}
		}
	})
}

// TestONNXConvInteger: uint8 input and weights, a zero point per output
// channel, stride 2, into int32.
func TestONNXConvInteger(t *testing.T) {
	eachTarget(t, func(t *testing.T, target string) {
		const c, o, w = 2, 3, 7
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: 2, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: c, Known: true}, {Param: "h"}, {Value: w, Known: true}}})
		wv := make([]uint8, o*c*9)
		for i := range wv {
			wv[i] = uint8(i * 83 % 256)
		}
		wzp := []uint8{128, 100, 0}
		g.initU8("w", []int64{o, c, 3, 3}, wv)
		g.initU8("xzp", nil, []uint8{7})
		g.initU8("wzp", []int64{o}, wzp)
		g.node("ConvInteger", []string{"x", "w", "xzp", "wzp"}, []string{"y"}, ais("strides", 2, 2))
		for _, h := range []int64{5, 9} {
			x := tensor.New(tensor.U8, 1, c, h, w)
			for i := range x.Data {
				x.Data[i] = byte(i * 59 % 256)
			}
			out := runONNXOn(t, g, 13, target, specialize.Binding{"h": h}, map[string]*tensor.Tensor{"x": x})
			oh, ow := (int(h)-3)/2+1, (w-3)/2+1
			got := ints(out[0])
			for oc := range o {
				for y := range oh {
					for xx := range ow {
						var want int64
						for ic := range c {
							for dy := range 3 {
								for dx := range 3 {
									xv := int64(x.Data[(ic*int(h)+2*y+dy)*w+2*xx+dx]) - 7
									want += xv * (int64(wv[((oc*c+ic)*3+dy)*3+dx]) - int64(wzp[oc]))
								}
							}
						}
						if g := got[(oc*oh+y)*ow+xx]; g != float64(want) {
							t.Fatalf("h=%d y[%d][%d][%d] = %v, want %d", h, oc, y, xx, g, want)
						}
					}
				}
			}
		}
	})
}

// TestONNXMatMulIntegerExact: a MatMulInteger whose running sums pass
// 2^24 (half of K adds 127·127 to each, the other half takes it away),
// where f32 sums round and the integer products (matmul_i8) stay exact,
// as ONNX Runtime's int32 accumulation does. On a CPU without the
// integer kernels (tuning.Int8Products) the product runs in f32 and the
// test has nothing to show.
func TestONNXMatMulIntegerExact(t *testing.T) {
	if !tuning.Int8Products(qgemm.Int8Kernel()) {
		t.Skip("this CPU runs quantized products in f32 (no AVX2 or AVX-512 VNNI)")
	}
	const m, k, n = 3, 4096, 5
	g := &graph{outs: []string{"y"}}
	g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "a", ElemType: 2, HasShape: true,
		Shape: []onnxpb.Dim{{Param: "m"}, {Value: k, Known: true}}})
	bv := make([]int8, k*n)
	for p := range k {
		for j := range n {
			bv[p*n+j] = 127
			if p >= k/2 {
				bv[p*n+j] = int8(-(127 - j))
			}
		}
	}
	g.initI8("b", []int64{k, n}, bv)
	g.initU8("azp", nil, []uint8{128})
	g.node("MatMulInteger", []string{"a", "b", "azp"}, []string{"y"})
	a := tensor.New(tensor.U8, m, k)
	for p := range k {
		// Row 0 near 127 (up to about 127·127·k/2, then back down to
		// about 127·j·k/2), row 1 its negation, row 2 a ramp. The
		// uneven steps keep partial sums from being multiples of a
		// power of two, which f32 would hold exactly.
		d := byte(5*b2i(p%3 == 0) + b2i(p%7 == 0))
		a.Data[p] = 255 - d
		a.Data[k+p] = 1 + d
		a.Data[2*k+p] = byte(1 + p%255)
	}
	out := runONNXOn(t, g, 13, "cpu", specialize.Binding{"m": m}, map[string]*tensor.Tensor{"a": a})
	got := ints(out[0])
	for i := range m {
		for j := range n {
			var want int64
			for p := range k {
				want += (int64(a.Data[i*k+p]) - 128) * int64(bv[p*n+j])
			}
			if math.Abs(float64(want)) >= 1<<24 {
				t.Fatalf("y[%d][%d] = %d: past 2^24, where the f32 result itself rounds", i, j, want)
			}
			if got[i*n+j] != float64(want) {
				t.Fatalf("y[%d][%d] = %v, want %d", i, j, got[i*n+j], want)
			}
		}
	}
}

// TestONNXByteMaxPool: MaxPool of uint8 and int8 values (opset 12's
// types; QOperator models pool their quantized activations so), 2-D with
// padding and ceil_mode and 1-D, against the maximum of each window
// computed here: the bytes come out exactly, in the input's dtype.
func TestONNXByteMaxPool(t *testing.T) {
	eachTarget(t, func(t *testing.T, target string) { testByteMaxPool(t, target) })
}

func testByteMaxPool(t *testing.T, target string) {
	for _, dt := range []tensor.DType{tensor.U8, tensor.I8} {
		elem := map[tensor.DType]int32{tensor.U8: 2, tensor.I8: 3}[dt]
		const c, h, w = 3, 7, 6
		// 2-D: 3x3 windows, stride 2, padding 1, ceil_mode (windows
		// that start in the padding at the end are dropped).
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: elem, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: c, Known: true}, {Value: h, Known: true}, {Value: w, Known: true}}})
		g.node("MaxPool", []string{"x"}, []string{"y"}, ais("kernel_shape", 3, 3), ais("strides", 2, 2), ais("pads", 1, 1, 1, 1), ai("ceil_mode", 1))
		x := tensor.New(dt, 1, c, h, w)
		for i := range x.Data {
			x.Data[i] = byte(i*89 + 17)
		}
		val := func(i int) int {
			if dt == tensor.I8 {
				return int(int8(x.Data[i]))
			}
			return int(x.Data[i])
		}
		out := runONNXOn(t, g, 13, target, specialize.Binding{}, map[string]*tensor.Tensor{"x": x})[0]
		oh, ow := 4, 4 // ceil((7+2-3)/2)+1, ceil((6+2-3)/2)+1 = 4: the last windows start inside
		if out.DType != dt || len(out.Data) != c*oh*ow {
			t.Fatalf("%s: result %s%v, want %s[1 %d %d %d]", dt, out.DType, out.Shape, dt, c, oh, ow)
		}
		for ch := range c {
			for oy := range oh {
				for ox := range ow {
					best := -1 << 20
					for ky := range 3 {
						for kx := range 3 {
							iy, ix := oy*2+ky-1, ox*2+kx-1
							if iy >= 0 && iy < h && ix >= 0 && ix < w {
								best = max(best, val((ch*h+iy)*w+ix))
							}
						}
					}
					at := (ch*oh+oy)*ow + ox
					got := int(out.Data[at])
					if dt == tensor.I8 {
						got = int(int8(out.Data[at]))
					}
					if got != best {
						t.Fatalf("%s: y[%d][%d][%d] = %d, want %d", dt, ch, oy, ox, got, best)
					}
				}
			}
		}
		// 1-D: windows of 2, stride 2.
		g1 := &graph{outs: []string{"y"}}
		g1.inputs = append(g1.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: elem, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: 2, Known: true}, {Value: 8, Known: true}}})
		g1.node("MaxPool", []string{"x"}, []string{"y"}, ais("kernel_shape", 2), ais("strides", 2))
		x1 := tensor.New(dt, 1, 2, 8)
		for i := range x1.Data {
			x1.Data[i] = byte(i*151 + 3)
		}
		out1 := runONNXOn(t, g1, 13, target, specialize.Binding{}, map[string]*tensor.Tensor{"x": x1})[0]
		for i := range 8 {
			a, b := x1.Data[2*i], x1.Data[2*i+1]
			want := max(a, b)
			if dt == tensor.I8 {
				want = byte(max(int8(a), int8(b)))
			}
			if out1.DType != dt || out1.Data[i] != want {
				t.Fatalf("%s 1-D: y[%d] = %d (%s), want %d", dt, i, out1.Data[i], out1.DType, want)
			}
		}
	}
}

// TestONNXByteResize: Resize of uint8 values in mode nearest (QOperator
// models upsample quantized activations so), static and over a symbolic
// height, picks the same elements as the float Resize of the same values,
// in the input's dtype; linear mode on bytes says what is supported.
func TestONNXByteResize(t *testing.T) {
	resize := func(elem int32, mode string) *graph {
		g := &graph{outs: []string{"y"}}
		g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "x", ElemType: elem, HasShape: true,
			Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: 2, Known: true}, {Param: "h"}, {Value: 5, Known: true}}})
		g.init("sc", []int64{4}, []float32{1, 1, 2, 1.5})
		g.node("Resize", []string{"x", "", "sc"}, []string{"y"}, as("mode", mode), as("nearest_mode", "floor"), as("coordinate_transformation_mode", "asymmetric"))
		return g
	}
	for _, h := range []int64{3, 4} {
		xb := tensor.New(tensor.U8, 1, 2, h, 5)
		xf := tensor.New(tensor.F32, 1, 2, h, 5)
		fs := tensor.AsF32(xf.Data)
		for i := range xb.Data {
			xb.Data[i] = byte(i*71 + 5)
			fs[i] = float32(xb.Data[i])
		}
		b := specialize.Binding{"h": h}
		got := runONNXOn(t, resize(2, "nearest"), 13, "cpu", b, map[string]*tensor.Tensor{"x": xb})[0]
		want := runONNXOn(t, resize(1, "nearest"), 13, "cpu", b, map[string]*tensor.Tensor{"x": xf})[0]
		if got.DType != tensor.U8 || len(got.Data) != len(want.Data)/4 || len(got.Data) != int(2*2*h*7) {
			t.Fatalf("h=%d: %s%v, want u8 of float's %v", h, got.DType, got.Shape, want.Shape)
		}
		for i, v := range tensor.AsF32(want.Data) {
			if float32(got.Data[i]) != v {
				t.Fatalf("h=%d: y[%d] = %d, the float Resize %v", h, i, got.Data[i], v)
			}
		}
	}
	if err := importErr(resize(2, "linear"), 13); !strings.Contains(err, "Resize of a u8 input in mode linear: integer inputs are resized in mode nearest only") {
		t.Errorf("linear Resize of bytes: %q", err)
	}
}
