package e2e

import (
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
)

// The importer turns a panic on a malformed model into an error naming
// the node ("malformed node: ..."); these fuzz targets build models
// around the shape-value and constant-only operators with attributes and
// shapes drawn by the fuzzer and fail on such an error: every bad value
// must be refused by a check that says what is wrong, not by a recovered
// index or slice error.
func noRecoveredPanic(t *testing.T, e string) {
	t.Helper()
	if strings.Contains(e, "malformed node") || strings.Contains(e, "malformed model") {
		t.Fatalf("import recovered a panic: %s", e)
	}
}

// FuzzONNXShapeValueND: a shape value of 1-6 elements reshaped to a
// fuzzed target, transposed by a fuzzed permutation, sliced and
// reshaped back, then used as Pad's pads.
func FuzzONNXShapeValueND(f *testing.F) {
	f.Add(int64(8), int64(-1), int64(2), int64(1), int64(0), int64(-1), int64(-9223372036854775807), int64(0), int64(-1))
	f.Add(int64(4), int64(2), int64(2), int64(0), int64(1), int64(0), int64(5), int64(1), int64(2))
	f.Add(int64(6), int64(3), int64(-1), int64(1), int64(1), int64(7), int64(-3), int64(-2), int64(0))
	f.Fuzz(func(t *testing.T, n, r0, r1, p0, p1, start, end, axis, step int64) {
		n = 1 + (n%8+8)%8
		g := &graph{outs: []string{"y"}}
		g.input("x", 1, 2, "h", "w")
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(i % 3)
		}
		g.initI64("v", []int64{n}, vals)
		g.initI64("shape", []int64{2}, []int64{r0, r1})
		g.initI64("st", []int64{1}, []int64{start})
		g.initI64("en", []int64{1}, []int64{end})
		g.initI64("ax", []int64{1}, []int64{axis})
		g.initI64("sp", []int64{1}, []int64{step})
		g.initI64("flat", []int64{1}, []int64{-1})
		g.node("Reshape", []string{"v", "shape"}, []string{"r"})
		g.node("Transpose", []string{"r"}, []string{"t"}, ais("perm", p0, p1))
		g.node("Slice", []string{"t", "st", "en", "ax", "sp"}, []string{"s"})
		g.node("Reshape", []string{"s", "flat"}, []string{"f"})
		g.node("Pad", []string{"x", "f"}, []string{"y"})
		noRecoveredPanic(t, importErr(g, 17))
	})
}

// FuzzONNXScatterND: ScatterND of fuzzed shapes and indices over
// constants (folded at import) and, for a negative upd, over run-time
// data (a scatter).
func FuzzONNXScatterND(f *testing.F) {
	f.Add(int64(3), int64(4), int64(1), int64(2), int64(-1), int64(0))
	f.Add(int64(2), int64(2), int64(2), int64(1), int64(1), int64(5))
	f.Fuzz(func(t *testing.T, d0, d1, k, i0, i1, upd int64) {
		d0, d1 = 1+(d0%5+5)%5, 1+(d1%5+5)%5
		k = (k%4 + 4) % 4
		g := &graph{outs: []string{"y"}}
		g.input("x", 1)
		if upd < 0 { // run-time data: the scatter lowering
			g.input("data", d0, "s")
		} else {
			g.init("data", []int64{d0, d1}, make([]float32, d0*d1))
		}
		g.initI64("idx", []int64{1, k}, []int64{i0, i1, 0}[:k])
		un := (upd%4 + 4) % 4
		g.init("upd", []int64{1, un}, make([]float32, un))
		g.node("ScatterND", []string{"data", "idx", "upd"}, []string{"y"})
		noRecoveredPanic(t, importErr(g, 17))
	})
}

// FuzzONNXConv3D: a 3-D Conv, MaxPool and AveragePool with fuzzed
// kernel, strides, dilations, pads, groups and ceil_mode over a symbolic
// number of frames.
func FuzzONNXConv3D(f *testing.F) {
	f.Add(int64(3), int64(3), int64(3), int64(1), int64(2), int64(1), int64(1), int64(0), int64(1))
	f.Add(int64(1), int64(0), int64(2), int64(0), int64(-1), int64(3), int64(9), int64(-2), int64(2))
	f.Fuzz(func(t *testing.T, kt, kh, kw, st, dl, pt, ph, pw, groups int64) {
		kt, kh, kw = 1+(kt%4+4)%4, 1+(kh%4+4)%4, 1+(kw%4+4)%4
		g := &graph{outs: []string{"y"}}
		g.input("x", 1, 4, "t", 5, 6)
		cg := 4 / max(1, (groups%4+4)%4)
		g.init("w", []int64{4, cg, kt, kh, kw}, make([]float32, 4*cg*kt*kh*kw))
		g.node("Conv", []string{"x", "w"}, []string{"y"}, ais("strides", st, st, st), ais("dilations", dl, dl, dl),
			ais("pads", pt, ph, pw, pt, ph, pw), ai("group", groups))
		noRecoveredPanic(t, importErr(g, 17))
		// The 3-D pools with the same window.
		for _, op := range []string{"MaxPool", "AveragePool"} {
			g := &graph{outs: []string{"y"}}
			g.input("x", 1, 4, "t", 5, 6)
			g.node(op, []string{"x"}, []string{"y"}, ais("kernel_shape", kt, kh, kw), ais("strides", st, st, st),
				ais("dilations", dl, dl, dl), ais("pads", pt, ph, pw, pt, ph, pw), ai("ceil_mode", groups%2))
			noRecoveredPanic(t, importErr(g, 19))
		}
	})
}

// FuzzONNXNorms: GroupNormalization, LRN and Hardmax with fuzzed group
// counts, sizes, axes, ranks and opsets.
func FuzzONNXNorms(f *testing.F) {
	f.Add(int64(3), int64(3), int64(-1), int64(4), int64(18))
	f.Add(int64(0), int64(-2), int64(5), int64(2), int64(11))
	f.Add(int64(7), int64(1<<40), int64(-9), int64(1), int64(21))
	f.Fuzz(func(t *testing.T, groups, size, axis, rank, opset int64) {
		rank = 1 + (rank%5+5)%5
		dims := []any{2, 6, "h", 3, 2}[:rank]
		opset = []int64{11, 13, 18, 21}[(opset%4+4)%4]
		for _, op := range []string{"GroupNormalization", "LRN", "Hardmax"} {
			g := &graph{outs: []string{"y"}}
			g.input("x", dims...)
			ins := []string{"x"}
			if op == "GroupNormalization" {
				n := (groups%8 + 8) % 8
				g.init("s", []int64{n}, make([]float32, n))
				g.init("b", []int64{n}, make([]float32, n))
				ins = append(ins, "s", "b")
			}
			g.node(op, ins, []string{"y"}, ai("num_groups", groups), ai("size", size), ai("axis", axis))
			noRecoveredPanic(t, importErr(g, opset))
		}
	})
}

// FuzzONNXEinsum: Einsum with a fuzzed equation over two operands of
// fuzzed ranks.
func FuzzONNXEinsum(f *testing.F) {
	f.Add("ij,jk->ik", int64(2), int64(2))
	f.Add("...ij,...jk", int64(4), int64(3))
	f.Add("b...d,nd->b...n", int64(3), int64(2))
	f.Add("ii,->", int64(2), int64(0))
	f.Fuzz(func(t *testing.T, eq string, ra, rb int64) {
		dims := []any{2, "s", 2, 3, 2}
		g := &graph{outs: []string{"y"}}
		g.input("a", dims[:(ra%6+6)%6]...)
		g.input("b", dims[:(rb%6+6)%6]...)
		g.node("Einsum", []string{"a", "b"}, []string{"y"}, as("equation", eq))
		noRecoveredPanic(t, importErr(g, 17))
	})
}

// FuzzONNXGridSample: GridSample with fuzzed modes, padding, ranks and
// grid shapes.
func FuzzONNXGridSample(f *testing.F) {
	f.Add("bilinear", "zeros", int64(0), int64(4), int64(2))
	f.Add("nearest", "border", int64(1), int64(3), int64(3))
	f.Add("bicubic", "reflection", int64(7), int64(5), int64(0))
	f.Fuzz(func(t *testing.T, mode, pad string, align, rank, last int64) {
		dims := []any{2, 3, "h", 5, 4}
		g := &graph{outs: []string{"y"}}
		g.input("x", dims[:(rank%6+6)%6]...)
		g.input("grid", 2, 4, 6, int((last%4+4)%4))
		g.node("GridSample", []string{"x", "grid"}, []string{"y"}, as("mode", mode), as("padding_mode", pad), ai("align_corners", align))
		noRecoveredPanic(t, importErr(g, 16))
	})
}

// TestONNXShapeValueReshapeOverflow: a reshape target whose dims multiply
// past int64 (wrapping to a divisor of the value count) is refused, not
// taken for a negative dim.
func TestONNXShapeValueReshapeOverflow(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", 1, 2, 3, 4)
	g.initI64("v", []int64{8}, make([]int64, 8))
	g.initI64("shape", []int64{3}, []int64{1<<63 - 1, 2, -1})
	g.node("Reshape", []string{"v", "shape"}, []string{"r"})
	g.initI64("flat", []int64{1}, []int64{-1})
	g.node("Reshape", []string{"r", "flat"}, []string{"f"})
	g.node("Pad", []string{"x", "f"}, []string{"y"})
	e := importErr(g, 17)
	noRecoveredPanic(t, e)
	if !strings.Contains(e, "cannot reshape") {
		t.Errorf("error %q, want a reshape error", e)
	}
}

// FuzzONNXTopK: TopK with a fuzzed K (an initializer or opset 1's
// attribute), axis and rank.
func FuzzONNXTopK(f *testing.F) {
	f.Add(int64(2), int64(-1), int64(3), int64(1), false)
	f.Add(int64(0), int64(1), int64(2), int64(0), true)
	f.Add(int64(1<<40), int64(-7), int64(5), int64(1), false)
	f.Fuzz(func(t *testing.T, k, axis, rank, largest int64, attr bool) {
		rank = 1 + (rank%5+5)%5
		dims := []any{2, "s", 3, 1, 2}[:rank]
		g := &graph{outs: []string{"v", "i"}}
		g.input("x", dims...)
		opset := int64(17)
		if attr {
			opset = 9
			g.node("TopK", []string{"x"}, []string{"v", "i"}, ai("k", k), ai("axis", axis))
		} else {
			g.initI64("k", []int64{1}, []int64{k})
			g.node("TopK", []string{"x", "k"}, []string{"v", "i"}, ai("axis", axis), ai("largest", largest))
		}
		noRecoveredPanic(t, importErr(g, opset))
	})
}

// FuzzONNXGatherElements: GatherElements and ScatterElements with fuzzed
// ranks, axis and indices dims (static, symbolic, larger than the
// data's).
func FuzzONNXGatherElements(f *testing.F) {
	f.Add(int64(1), int64(3), int64(3), uint8(0))
	f.Add(int64(-1), int64(2), int64(2), uint8(5))
	f.Add(int64(7), int64(1), int64(4), uint8(255))
	f.Fuzz(func(t *testing.T, axis, rd, ri int64, pick uint8) {
		dims := []any{2, "s", 3, 1}
		g := &graph{outs: []string{"y"}}
		g.input("x", dims[:(rd%5+5)%5]...)
		var id []any
		for k := range int((ri%5 + 5) % 5) {
			id = append(id, []any{1, 2, 4, "s", "t"}[(int(pick)>>k+k)%5])
		}
		vi := &onnxpb.ValueInfo{Name: "i", ElemType: 7, HasShape: true}
		for _, d := range id {
			if s, ok := d.(string); ok {
				vi.Shape = append(vi.Shape, onnxpb.Dim{Param: s})
			} else {
				vi.Shape = append(vi.Shape, onnxpb.Dim{Value: int64(d.(int)), Known: true})
			}
		}
		g.inputs = append(g.inputs, vi)
		if pick%2 == 0 {
			g.node("GatherElements", []string{"x", "i"}, []string{"y"}, ai("axis", axis))
		} else {
			u := *vi
			u.Name, u.ElemType = "u", 1
			g.inputs = append(g.inputs, &u)
			g.node("ScatterElements", []string{"x", "i", "u"}, []string{"y"}, ai("axis", axis))
		}
		noRecoveredPanic(t, importErr(g, 16))
	})
}

// FuzzONNXUpsample: Upsample and opset 10's Resize with fuzzed scales
// (as opset 7's attribute or an input), modes and ranks.
func FuzzONNXUpsample(f *testing.F) {
	f.Add(float32(2), float32(2), "nearest", int64(4), uint8(7))
	f.Add(float32(0), float32(-1), "bilinear", int64(3), uint8(9))
	f.Add(float32(1e30), float32(0.5), "linear", int64(4), uint8(10))
	f.Fuzz(func(t *testing.T, sh, sw float32, mode string, rank int64, opset uint8) {
		rank = 1 + (rank%5+5)%5
		dims := []any{1, 2, "h", 3, 2}[:rank]
		scales := make([]float32, rank)
		for i := range scales {
			scales[i] = 1
		}
		scales[rank-1] = sw
		if rank > 1 {
			scales[rank-2] = sh
		}
		ops := []int64{7, 9, 10}
		o := ops[int(opset)%len(ops)]
		g := &graph{outs: []string{"y"}}
		g.input("x", dims...)
		op := "Upsample"
		if o == 10 {
			op = "Resize"
		}
		if o == 7 {
			g.node(op, []string{"x"}, []string{"y"}, as("mode", mode), &onnxpb.Attr{Name: "scales", Type: onnxpb.AttrFloats, Floats: scales})
		} else {
			g.init("scales", []int64{rank}, scales)
			g.node(op, []string{"x", "scales"}, []string{"y"}, as("mode", mode))
		}
		noRecoveredPanic(t, importErr(g, o))
	})
}

// FuzzONNXAttention: Attention with fuzzed ranks, head counts, masks and
// a past.
func FuzzONNXAttention(f *testing.F) {
	f.Add(int64(4), int64(2), int64(3), int64(0), int64(1), false)
	f.Add(int64(3), int64(4), int64(1), int64(2), int64(0), true)
	f.Add(int64(4), int64(0), int64(-3), int64(5), int64(1), true)
	f.Fuzz(func(t *testing.T, rank, hq, hkv, maskRank, causal int64, past bool) {
		rank = 3 + (rank%2+2)%2
		g := &graph{outs: []string{"y"}}
		attrs := []*onnxpb.Attr{ai("is_causal", causal)}
		if rank == 3 {
			g.input("q", 2, "s", 8)
			g.input("k", 2, "t", 8)
			g.input("v", 2, "t", 4)
			attrs = append(attrs, ai("q_num_heads", hq), ai("kv_num_heads", hkv))
		} else {
			g.input("q", 2, 4, "s", 8)
			g.input("k", 2, 2, "t", 8)
			g.input("v", 2, 2, "t", 4)
		}
		ins := []string{"q", "k", "v", ""}
		if m := (maskRank%6 + 6) % 6; m > 0 {
			g.input("m", []any{2, 4, "s", "t", 1}[5-m:]...)
			ins[3] = "m"
		}
		if past {
			g.input("pk", 2, 2, "p", 8)
			g.input("pv", 2, 2, "p", 4)
			ins = append(ins, "pk", "pv")
		}
		g.node("Attention", ins, []string{"y"}, attrs...)
		noRecoveredPanic(t, importErr(g, 23))
	})
}

// FuzzONNXQuant: QuantizeLinear, DequantizeLinear, QLinearMatMul and
// MatMulInteger with fuzzed axes, parameter ranks, lengths and dtypes,
// DynamicQuantizeLinear, QDQ groups around MatMul, Conv and Gemm, a
// MaxPool of bytes, and com.microsoft QGemm, QLinearAdd, QLinearMul,
// QLinearGlobalAveragePool, QLinearConcat, QLinearSigmoid,
// QLinearLeakyRelu and QLinearAveragePool.
func FuzzONNXQuant(f *testing.F) {
	f.Add(int64(1), int64(1), int64(4), int32(2), uint8(0))
	f.Add(int64(-1), int64(0), int64(0), int32(3), uint8(1))
	f.Add(int64(5), int64(2), int64(3), int32(7), uint8(2))
	f.Add(int64(0), int64(1), int64(4), int32(3), uint8(4))
	f.Add(int64(1), int64(2), int64(2), int32(2), uint8(5))
	f.Add(int64(1), int64(1), int64(2), int32(3), uint8(6))
	f.Add(int64(0), int64(1), int64(4), int32(2), uint8(7))
	f.Add(int64(1), int64(2), int64(3), int32(2), uint8(7)) // a float QGemm, alpha 2
	f.Add(int64(0), int64(0), int64(2), int32(2), uint8(9))
	f.Add(int64(0), int64(1), int64(1), int32(3), uint8(10))
	f.Add(int64(0), int64(0), int64(1), int32(2), uint8(11))
	f.Add(int64(1), int64(0), int64(2), int32(2), uint8(12))
	f.Add(int64(0), int64(1), int64(1), int32(3), uint8(13))
	f.Add(int64(1), int64(0), int64(1), int32(2), uint8(14))
	f.Add(int64(0), int64(0), int64(1), int32(2), uint8(15))
	f.Fuzz(func(t *testing.T, axis, prank, plen int64, zdt int32, op uint8) {
		g := &graph{outs: []string{"y"}}
		g.input("x", 2, 4, "s")
		dims := []int64{}
		if r := (prank%3 + 3) % 3; r > 0 {
			dims = append(dims, (plen%6+6)%6)
			if r == 2 {
				dims = append(dims, 2)
			}
		}
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		g.init("sc", dims, make([]float32, n))
		raw := make([]byte, n*8)
		g.inits = append(g.inits, &onnxpb.Tensor{Name: "zp", DataType: zdt, Dims: dims, RawData: raw})
		switch op % 16 {
		case 0:
			g.node("QuantizeLinear", []string{"x", "sc", "zp"}, []string{"y"}, ai("axis", axis))
		case 1:
			g.node("Cast", []string{"x"}, []string{"xi"}, ai("to", int64(zdt)))
			g.node("DequantizeLinear", []string{"xi", "sc", "zp"}, []string{"y"}, ai("axis", axis))
		case 2:
			g.node("Cast", []string{"x"}, []string{"xi"}, ai("to", 2))
			g.node("QLinearMatMul", []string{"xi", "sc", "zp", "xi", "sc", "zp", "sc", "zp"}, []string{"y"})
		case 3:
			g.node("Cast", []string{"x"}, []string{"xi"}, ai("to", int64(zdt)))
			g.node("MatMulInteger", []string{"xi", "xi", "zp", "zp"}, []string{"y"})
		case 4, 5, 6:
			// a QDQ group (qdq.go), the fuzzed zero point its weights
			prod := []string{"MatMul", "Conv", "Gemm"}[op%16-4]
			var attrs []*onnxpb.Attr
			if prod == "Gemm" {
				attrs = append(attrs, ai("transB", axis&1))
			}
			g.node("Cast", []string{"x"}, []string{"xi"}, ai("to", int64(zdt)))
			g.node("DequantizeLinear", []string{"xi", "sc", "zp"}, []string{"xf"}, ai("axis", axis))
			g.node("DequantizeLinear", []string{"zp", "sc", "zp"}, []string{"wf"}, ai("axis", axis))
			g.node(prod, []string{"xf", "wf", "wf"}, []string{"yf"}, attrs...)
			g.node("QuantizeLinear", []string{"yf", "sc", "zp"}, []string{"y"}, ai("axis", axis))
		case 7:
			g.node("Cast", []string{"x"}, []string{"xi"}, ai("to", int64(zdt)))
			// 6 to 9 inputs: with or without C, y_scale, y_zero_point
			ins := []string{"xi", "sc", "zp", "zp", "sc", "zp", "", "sc", "zp"}[:6+(plen%4+4)%4]
			g.node("QGemm", ins, []string{"y"}, ai("transB", axis&1), af("alpha", float32(prank)))
			g.nodes[len(g.nodes)-1].Domain = "com.microsoft"
		case 9, 10, 11:
			// QOperator models' com.microsoft operators, fuzzed
			// parameter shapes and dtypes
			g.node("Cast", []string{"x"}, []string{"xi"}, ai("to", int64(zdt)))
			if op%16 == 11 {
				g.node("QLinearGlobalAveragePool", []string{"xi", "sc", "zp", "sc", "zp"}, []string{"y"}, ai("channels_last", axis&1))
			} else {
				g.node([]string{"QLinearAdd", "QLinearMul"}[op%16-9], []string{"xi", "sc", "zp", "xi", "sc", "zp", "sc", "zp"}[:6+(plen%3+3)%3], []string{"y"})
			}
			g.nodes[len(g.nodes)-1].Domain = "com.microsoft"
		case 12, 13, 14, 15:
			// the QOperator operators of concatenations, activations and
			// windowed pools, fuzzed parameter shapes, dtypes and input
			// counts
			g.node("Cast", []string{"x"}, []string{"xi"}, ai("to", int64(zdt)))
			switch op % 16 {
			case 12:
				g.node("QLinearConcat", []string{"sc", "zp", "xi", "sc", "zp", "xi", "sc", "zp"}[:2+(plen%7+7)%7], []string{"y"}, ai("axis", axis))
			case 13, 14:
				g.node([]string{"QLinearSigmoid", "QLinearLeakyRelu"}[op%16-13], []string{"xi", "sc", "zp", "sc", "zp"}[:3+(plen%3+3)%3], []string{"y"})
			default:
				g.node("MaxPool", []string{"xi"}, []string{"xm"}, ais("kernel_shape", 2), ai("ceil_mode", axis&1))
				g.node("QLinearAveragePool", []string{"xm", "sc", "zp", "sc", "zp"}, []string{"y"}, ais("kernel_shape", 2), ai("channels_last", prank&1))
			}
			g.nodes[len(g.nodes)-1].Domain = "com.microsoft"
		default:
			g.node("DynamicQuantizeLinear", []string{"x"}, []string{"y", "ys", "yz"})
		}
		noRecoveredPanic(t, importErr(g, 13))
	})
}

// FuzzONNXIf: If with a fuzzed condition (dtype, length, value, known or
// not) and branches of fuzzed output counts.
func FuzzONNXIf(f *testing.F) {
	f.Add(int32(9), uint8(1), uint8(1), uint8(1), false)
	f.Add(int32(7), uint8(0), uint8(2), uint8(1), true)
	f.Add(int32(1), uint8(3), uint8(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, dt int32, n, thenOuts, elseOuts uint8, runtime bool) {
		g := &graph{outs: []string{"y"}}
		g.input("x", 2, 3)
		if runtime {
			g.input("c", int(n%3)+1)
		} else {
			g.inits = append(g.inits, &onnxpb.Tensor{Name: "c", DataType: dt, Dims: []int64{int64(n % 3)}, RawData: make([]byte, 8*int(n%3))})
		}
		branch := func(name string, outs uint8) *onnxpb.Attr {
			b := &onnxpb.Graph{Name: name, Nodes: []*onnxpb.Node{{OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{name + "_y"}}}}
			for range outs % 3 {
				b.Outputs = append(b.Outputs, &onnxpb.ValueInfo{Name: name + "_y"})
			}
			return &onnxpb.Attr{Name: name + "_branch", Type: onnxpb.AttrGraph, HasGraph: true, G: b}
		}
		g.node("If", []string{"c"}, []string{"y"}, branch("then", thenOuts), branch("else", elseOuts))
		noRecoveredPanic(t, importErr(g, 17))
	})
}
