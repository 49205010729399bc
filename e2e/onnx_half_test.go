package e2e

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"sort"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
)

// halfType is a 16-bit float dtype: its ONNX and rlx dtypes and its
// conversions.
type halfType struct {
	name   string
	onnx   int32
	dt     tensor.DType
	narrow func(float32) uint16
	widen  func(uint16) float32
	ulp    float64 // one rounding's relative error bound, 2^-(mantissa bits)
}

var (
	f16  = halfType{"f16", 10, tensor.F16, tensor.F32ToF16, tensor.F16ToF32, 1.0 / 1024}
	bf16 = halfType{"bf16", 16, tensor.BF16, tensor.F32ToBF16, tensor.BF16ToF32, 1.0 / 128}
)

// values rounds f to h and returns the values and their bytes.
func (h halfType) values(f []float32) ([]float64, []byte) {
	v := make([]float64, len(f))
	raw := make([]byte, 2*len(f))
	for i, x := range f {
		b := h.narrow(x)
		binary.LittleEndian.PutUint16(raw[2*i:], b)
		v[i] = float64(h.widen(b))
	}
	return v, raw
}

// round rounds a float64 result to h, as each op of a half model rounds
// its result.
func (h halfType) round(x float64) float64 { return float64(h.widen(h.narrow(float32(x)))) }

// halves rounds f to float16 and returns the values and their bytes.
func halves(f []float32) ([]float64, []byte) { return f16.values(f) }

// TestONNXHalfModel runs a float16 and a bfloat16 model (an fp16 or bf16
// export: inputs, weights and outputs in the half type) whose
// convolution, pools, product, softmax and layer norm have f32 kernels
// only (and whose reduction's are the fast ones): each computes in f32
// and rounds its result to the half type (fusion's widen-halves). The
// reference computes each op in float64 from the half values and rounds
// its result the same way; the two agree within one rounding (relative
// 2^-10 for f16, 2^-7 for bf16) of the larger of the value and that
// bound (the f32 sums may round a tie the other way), on the cpu target
// and on vulkan.
func TestONNXHalfModel(t *testing.T) {
	for _, h := range []halfType{f16, bf16} {
		t.Run(h.name, func(t *testing.T) { halfModelCase(t, h) })
	}
}

func halfModelCase(t *testing.T, h halfType) {
	const N, C, H, W, O = 2, 16, 6, 6, 16
	halves, toHalf := h.values, h.round
	xv, xraw := halves(seq(N*C*H*W, 1))
	wv, wraw := halves(seq(O*C*9, 0.3))
	bv, braw := halves(seq(O, 0.2))
	const M, K, P = 5, 8, 7
	av, araw := halves(seq(3*M*K, 1.1))
	mv, mraw := halves(seq(K*P, 0.4))
	sv, sraw := halves(seq(P, 1.3))

	g := &graph{}
	g.inputs = append(g.inputs,
		&onnxpb.ValueInfo{Name: "x", ElemType: h.onnx, HasShape: true, Shape: []onnxpb.Dim{{Value: N, Known: true}, {Value: C, Known: true}, {Value: H, Known: true}, {Value: W, Known: true}}},
		&onnxpb.ValueInfo{Name: "a", ElemType: h.onnx, HasShape: true, Shape: []onnxpb.Dim{{Value: 3, Known: true}, {Value: M, Known: true}, {Value: K, Known: true}}})
	half := func(name string, dims []int64, raw []byte) {
		g.inits = append(g.inits, &onnxpb.Tensor{Name: name, DataType: h.onnx, Dims: dims, RawData: raw})
	}
	half("w", i64s(O, C, 3, 3), wraw)
	half("b", i64s(O), braw)
	half("m", i64s(K, P), mraw)
	half("s", i64s(P), sraw)
	g.node("Conv", []string{"x", "w", "b"}, []string{"c"}, ais("kernel_shape", 3, 3), ais("pads", 1, 1, 1, 1))
	// MobileNetV2's relu6: Clip with its bounds as f16 Constants, which
	// the importer writes inline.
	_, zero := halves([]float32{0})
	_, six := halves([]float32{6})
	g.node("Constant", nil, []string{"lo"}, &onnxpb.Attr{Name: "value", Type: onnxpb.AttrTensor, T: &onnxpb.Tensor{DataType: h.onnx, RawData: zero}})
	g.node("Constant", nil, []string{"hi"}, &onnxpb.Attr{Name: "value", Type: onnxpb.AttrTensor, T: &onnxpb.Tensor{DataType: h.onnx, RawData: six}})
	g.node("Clip", []string{"c", "lo", "hi"}, []string{"r"})
	g.node("MaxPool", []string{"r"}, []string{"y"}, ais("kernel_shape", 2, 2), ais("strides", 2, 2))
	g.node("MatMul", []string{"a", "m"}, []string{"p"})
	g.node("Softmax", []string{"p"}, []string{"q"}, ai("axis", -1))
	g.node("LayerNormalization", []string{"p", "s"}, []string{"z"}, ai("axis", -1))
	g.node("GlobalAveragePool", []string{"y"}, []string{"gap"})
	g.outs = []string{"y", "q", "z", "gap"}

	xt, at := tensor.New(h.dt, N, C, H, W), tensor.New(h.dt, 3, M, K)
	copy(xt.Data, xraw)
	copy(at.Data, araw)

	// Conv + bias (one f16 rounding), relu6, 2x2 max pool.
	conv := make([]float64, N*O*H*W)
	for n := 0; n < N; n++ {
		for o := 0; o < O; o++ {
			for y := 0; y < H; y++ {
				for x := 0; x < W; x++ {
					s := bv[o]
					for c := 0; c < C; c++ {
						for i := 0; i < 3; i++ {
							for j := 0; j < 3; j++ {
								if yy, xx := y+i-1, x+j-1; yy >= 0 && yy < H && xx >= 0 && xx < W {
									s += xv[((n*C+c)*H+yy)*W+xx] * wv[((o*C+c)*3+i)*3+j]
								}
							}
						}
					}
					conv[((n*O+o)*H+y)*W+x] = math.Min(math.Max(toHalf(s), 0), 6)
				}
			}
		}
	}
	var pooled []float64
	for n := 0; n < N*O; n++ {
		for y := 0; y < H; y += 2 {
			for x := 0; x < W; x += 2 {
				m := math.Inf(-1)
				for i := 0; i < 2; i++ {
					for j := 0; j < 2; j++ {
						m = math.Max(m, conv[(n*H+y+i)*W+x+j])
					}
				}
				pooled = append(pooled, m)
			}
		}
	}
	// The global average pool of the pooled planes (one rounding).
	var gap []float64
	for n := 0; n < N*O; n++ {
		s := 0.0
		for _, v := range pooled[n*(H/2)*(W/2) : (n+1)*(H/2)*(W/2)] {
			s += v
		}
		gap = append(gap, toHalf(s/float64((H/2)*(W/2))))
	}
	// MatMul (one rounding), then softmax and layer norm of its f16 rows.
	var soft, norm []float64
	for r := 0; r < 3*M; r++ {
		row := make([]float64, P)
		for p := range row {
			s := 0.0
			for k := 0; k < K; k++ {
				s += av[r*K+k] * mv[k*P+p]
			}
			row[p] = toHalf(s)
		}
		mx, sum, mean := math.Inf(-1), 0.0, 0.0
		for _, v := range row {
			mx = math.Max(mx, v)
			mean += v / P
		}
		for _, v := range row {
			sum += math.Exp(v - mx)
		}
		vr := 0.0
		for _, v := range row {
			vr += (v - mean) * (v - mean) / P
		}
		for p, v := range row {
			soft = append(soft, toHalf(math.Exp(v-mx)/sum))
			norm = append(norm, toHalf((v-mean)/math.Sqrt(vr+1e-5)*sv[p]))
		}
	}
	eachTarget(t, func(t *testing.T, target string) {
		out := runONNXOn(t, g, 17, target, specialize.Binding{}, map[string]*tensor.Tensor{"x": xt, "a": at})
		for i, c := range []struct {
			name string
			want []float64
		}{{"conv, relu6, max pool", pooled}, {"matmul, softmax", soft}, {"matmul, layer norm", norm}, {"global average pool", gap}} {
			got := out[i]
			if got.DType != h.dt {
				t.Fatalf("%s: output %s, want %s", c.name, got.DType, h.dt)
			}
			if len(got.Data) != 2*len(c.want) {
				t.Fatalf("%s: %d bytes, want %d values", c.name, len(got.Data), len(c.want))
			}
			for k, w := range c.want {
				g := float64(h.widen(binary.LittleEndian.Uint16(got.Data[2*k:])))
				if d := math.Abs(g - w); d > math.Max(math.Abs(w), h.ulp)*h.ulp {
					t.Fatalf("%s: element %d = %v, want %v", c.name, k, g, w)
				}
			}
		}
	})
}

// halfModel converts a float32 ONNX model to float16 as an fp16 export
// has it (scripts/to_fp16.py does the same): FLOAT initializers,
// Constants, graph inputs, outputs and value_info become FLOAT16.
func halfModel(t *testing.T, pb *onnxpb.Model) {
	t.Helper()
	toHalf := func(x *onnxpb.Tensor) {
		if x.DataType != 1 {
			return
		}
		v, err := x.ToTensor()
		if err != nil {
			t.Fatal(err)
		}
		_, raw := halves(v.F32())
		*x = onnxpb.Tensor{Name: x.Name, DataType: 10, Dims: x.Dims, RawData: raw}
	}
	g := pb.Graph
	for _, x := range g.Initializers {
		toHalf(x)
	}
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			if n.OpType == "Constant" && a.Name == "value" && a.T != nil {
				toHalf(a.T)
			}
		}
	}
	for _, vs := range [][]*onnxpb.ValueInfo{g.Inputs, g.Outputs, g.ValueInfo} {
		for _, v := range vs {
			if v.ElemType == 1 {
				v.ElemType = 10
			}
		}
	}
}

// TestONNXConformanceHalf converts every model of ../shared/models to
// float16 (halfModel), builds it at both bindings on the cpu target,
// runs each case's inputs rounded to f16 and compares with PyTorch's
// float32 outputs within 2e-2·max(1, max|ref|): the error of f16
// arithmetic itself (ONNX Runtime's run of the converted MobileNetV2 is
// 5.6e-3 off; docs/perf/models.md). It guards the half path end to end:
// widen-halves, half constants, f16 regions.
func TestONNXConformanceHalf(t *testing.T) {
	man := readManifest(t, sharedModels)
	for name, model := range man.Models {
		t.Run(name, func(t *testing.T) {
			pb, err := onnxpb.DecodeFile(filepath.Join(sharedModels, model.File))
			if err != nil {
				t.Fatal(err)
			}
			halfModel(t, pb)
			imp, err := onnx.Import(pb, onnx.Options{Module: name, Source: model.File})
			if err != nil {
				t.Fatal(err)
			}
			var cases []string
			var bindings []specialize.Binding
			for c := range model.Cases {
				cases = append(cases, c)
			}
			sort.Strings(cases)
			for _, c := range cases {
				bindings = append(bindings, model.Cases[c].Binding)
			}
			out := filepath.Join(t.TempDir(), name+".rlx")
			if _, err := build(t, name+".hir", imp.HIR, out, driver.Options{Target: "cpu", Bindings: bindings, Params: imp.Weights, Compiler: "test"}); err != nil {
				t.Fatalf("build: %v", err)
			}
			m, err := loader.Open(out, loader.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, c := range cases {
				cs := model.Cases[c]
				inputs := map[string]*tensor.Tensor{}
				for in, f := range cs.Inputs {
					x, err := npy.ReadFile(filepath.Join(sharedModels, f.File))
					if err != nil {
						t.Fatal(err)
					}
					if x.DType == tensor.F32 {
						h := tensor.New(tensor.F16, x.Shape...)
						_, raw := halves(x.F32())
						copy(h.Data, raw)
						x = h
					}
					inputs[in] = x
				}
				got, err := m.Run(inputs)
				if err != nil {
					t.Fatalf("case %s: %v", c, err)
				}
				for _, o := range got {
					ref, err := npy.ReadFile(filepath.Join(sharedModels, cs.Outputs[o.Name].File))
					if err != nil {
						t.Fatal(err)
					}
					if o.Tensor.DType != tensor.F16 {
						t.Errorf("case %s %s: %s, want f16", c, o.Name, o.Tensor.DType)
					}
					if d, bad := conformTol(o.Tensor, ref, 2e-2); bad != "" {
						t.Errorf("case %s %s: %s", c, o.Name, bad)
					} else {
						t.Logf("case %s %s: max|diff| %.3g", c, o.Name, d)
					}
				}
			}
		})
	}
}
