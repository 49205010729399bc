package lir

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// samples has one operation per tag, every field set to something other
// than its zero value where the type allows, so a field the encoding
// dropped shows up in the round trip.
func samples() []Op {
	epi := Epilogue{Bias: 3, Residual: 4, Act: ActClamp, Alpha: 0.5, Min: math.Inf(-1), Max: 6}
	conv := ConvGeom{N: 1, C: 2, H: 3, W: 4, O: 5, KH: 6, KW: 7, StrideH: 8, StrideW: 9, PadT: 10, PadL: 11, PadB: 12, PadR: 13, DilH: 14, DilW: 15, Groups: 16, OH: 17, OW: 18}
	pool := PoolGeom{N: 1, C: 2, H: 3, W: 4, KH: 5, KW: 6, StrideH: 7, StrideW: 8, PadT: 9, PadL: 10, PadB: 11, PadR: 12, DilH: 13, DilW: 14, OH: 15, OW: 16}
	return []Op{
		&MatMul{A: 0, B: 1, Out: 2, AShape: []int64{2, 3, 4}, BShape: []int64{4, 5}, Epilogue: epi},
		&PackedMatMul{A: 0, B: 1, Out: 2, M: 3, N: 4, K: 5, Epilogue: epi},
		&PackedConv1x1{X: 0, W: 1, Out: 2, N: 1, C: 2, HW: 3, O: 4, Epilogue: NoEpilogue()},
		&QMatMul{A: 0, B: 1, Out: 2, M: 3, N: 4, K: 5, Zero: 6, ZeroAt: 3, Signed: true, Scratch: 4, Bias: 5},
		&QConv2D{X: 0, W: 1, Bias: 3, Out: 2, XPad: 4, OutT: 5, Geom: conv, Zero: -7, Signed: true},
		&QConv2D{X: 0, W: 1, Bias: 3, Out: 2, XPad: 4, OutT: NoBuf, Geom: conv, Zero: 3, XNHWC: true, OutNHWC: true},
		&Conv2D{X: 0, W: 1, Out: 2, Geom: conv, Epilogue: epi},
		&DepthwiseNHWC{X: 0, W: 1, Out: 2, Geom: conv, Epilogue: epi},
		&TapConv2D{X: 0, W: 1, Out: 2, Geom: conv, Epilogue: epi},
		&WinogradInput{X: 0, V: 3, Geom: conv, Tile: 4},
		&WinogradProduct{V: 3, U: 1, M: 5, P: 36, C: 3, O: 4, TP: 16},
		&WinogradOutput{M: 5, Out: 2, Geom: conv, Tile: 2, Epilogue: epi},
		&WinogradInput{X: 0, V: 3, Geom: conv, Tile: 4, Part: TileRange{T0: 32, T1: 48, LD: 32}},
		&WinogradProduct{V: 3, U: 1, M: 5, P: 36, C: 3, O: 4, TP: 16, LD: 32},
		&WinogradOutput{M: 5, Out: 2, Geom: conv, Tile: 2, Epilogue: epi, Part: TileRange{T0: 32, T1: 48, LD: 32}},
		&Relayout{Src: 0, Dst: 2, N: 1, C: 2, HW: 3, ToNHWC: true},
		&Relayout{Src: 0, Dst: 2, N: 1, C: 2, HW: 3},
		&Pool2D{X: 0, Out: 2, Max: true, Geom: pool},
		&Pool2D{X: 0, Out: 2, Geom: pool, CountIncludePad: true},
		&Reduce{X: 0, Out: 2, Fn: ReduceProd, DType: tensor.I64, Shape: []int64{2, 3}, Axes: []int64{1}},
		&ArgReduce{X: 0, Out: 2, Max: true, Outer: 1, Axis: 2, Inner: 3, DType: tensor.F16},
		&TopK{X: 0, Values: 2, Indices: 3, Outer: 1, Axis: 2, Inner: 3, K: 2, Largest: true, DType: tensor.F16},
		&Softmax{X: 0, Out: 2, Outer: 1, Axis: 2, Inner: 3, Log: true},
		&LayerNorm{X: 0, Scale: 1, Bias: NoBuf, Out: 2, Rows: 3, Cols: 4, RMS: true, Eps: 1e-5},
		&AddLayerNorm{A: 0, B: 1, Scale: 3, Bias: 4, Out: 2, Sum: 5, Rows: 3, Cols: 4, Eps: 1e-6},
		&Attention{Q: 0, K: 1, V: 3, Mask: 4, Out: 2, Geom: AttnGeom{Batch: []int64{2, 4}, QStrides: []int64{1, 2}, KStrides: []int64{3, 4},
			VStrides: []int64{5, 6}, MaskStrides: []int64{0, 7}, QRow: 8, KRow: 9, VRow: 10, MaskRowStride: 11, MaskColStride: 12,
			Sq: 13, Sk: 14, D: 15, Dv: 16, Scale: 0.125, Causal: true}},
		&Memcpy{Src: 0, Dst: 2},
		&Copy{Src: 0, Dst: 2, ElemSize: 4, Shape: []int64{2, 3}, DstOff: 1, SrcOff: 2, DstStrides: []int64{3, 1}, SrcStrides: []int64{1, 2}},
		&Fill{Dst: 2, DType: tensor.Bool, Value: -3.5},
		&Gather{X: 0, Idx: 1, Out: 2, Outer: 1, AxisLen: 2, Inner: 3, ElemSize: 8, IdxDType: tensor.I32},
		&Scatter{Out: 2, Idx: 1, Upd: 0, N: 5, M: 3, ElemSize: 4, IdxDType: tensor.I64},
		&Iota{Out: 2, N: 7, DType: tensor.I64},
		&Dispatch{Kernel: 1, Groups: [3]int64{4, 5, 6}, Args: []Buf{0, 2}},
		&Dispatch{Kernel: 1, Groups: [3]int64{4, 5, 6}, Args: []Buf{0, 2}, Offsets: []int64{16, 0}},
		&NativeCall{Func: 0, In: []Buf{0, 1}, Out: []Buf{2}},
		&NativeCall{Func: 0, In: []Buf{0, 1}, Out: []Buf{2}, Lo: 2, Hi: 5},
		&Elementwise{Shape: []int64{2, 3}, In: []EwIn{{Buf: 0, DType: tensor.F32, Strides: []int64{0, 1}}}, Out: []EwOut{{Buf: 2, DType: tensor.F16}},
			Code: []Instr{{Op: EwLoad, Dst: 0}, {Op: EwImm, Dst: 1, Imm: 2}, {Op: EwWhere, Dst: 2, A: 0, B: 1, C: 0}, {Op: EwStore, Dst: 2}}},
	}
}

func sampleProgram() *Program {
	p := &Program{
		Inputs:  []Slot{{Name: "x", DType: "f32", Shape: []int64{2, 3}, Buffer: 0}},
		Outputs: []Slot{{Name: "y", DType: "f32", Shape: []int64{2, 3}, Buffer: 2}},
		Buffers: []Buffer{{Kind: BufInput, Bytes: 24}, {Kind: BufWeight, Index: 0, Bytes: 24}, {Kind: BufOutput, Bytes: 24},
			{Kind: BufArena, Offset: 64, Bytes: 24}, {Kind: BufArena, Offset: 128, Bytes: 24}, {Kind: BufArena, Offset: 192, Bytes: 24}},
		ArenaBytes: 256,
		Kernels:    []Kernel{{Name: "k", Lang: "glsl", Entry: "main", Source: "void main(){}", Binary: []byte{1, 2}, BinaryKind: "spirv", Local: [3]int64{64, 1, 1}, Params: []KernelParam{{Name: "x", DType: "f32"}}}},
		Native: &Native{Funcs: []NativeFunc{{Name: "f0", N: 6, Grain: 2, In: []int64{24, 8}, Out: []int64{24}, Source: "void f0() {}"}},
			Objects: []NativeObject{{Level: "x86-64-v3", ELF: []byte{0x7f, 'E'}}}},
	}
	for i, op := range samples() {
		p.Steps = append(p.Steps, Step{Op: op, Src: "m.hir:" + string(rune('1'+i%9)) + ":1 op"})
	}
	return p
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEveryKindHasASample(t *testing.T) {
	seen := map[Kind]bool{}
	for _, op := range samples() {
		seen[op.Kind()] = true
		if New(op.Kind()) == nil {
			t.Errorf("%s: not in the decoder's table", op.Kind())
		}
	}
	for _, k := range Kinds() {
		if !seen[k] {
			t.Errorf("kind %s has no sample: add one so its encoding is tested", k)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	p := sampleProgram()
	var got Program
	if err := msgpack.Unmarshal(encode(t, p), &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p, &got); d != "" {
		t.Fatalf("round trip changed the program (-want +got):\n%s", d)
	}
	// Encoding is deterministic: the same program gives the same bytes.
	if !bytes.Equal(encode(t, p), encode(t, &got)) {
		t.Error("re-encoding the decoded program gave other bytes")
	}
}

func TestDecodeRefusesForeignSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		step map[string]any
		want string
	}{
		{"unknown kind", map[string]any{"kind": "frobnicate", "src": "x", "op": map[string]any{}}, "unknown kernel \"frobnicate\""},
		{"tag and fields disagree", map[string]any{"kind": "maxpool2d", "src": "x", "op": map[string]any{"Max": false}}, "tagged maxpool2d"},
		{"no operation", map[string]any{"kind": "fill", "src": "x"}, "has no operation"},
		{"fields of another type", map[string]any{"kind": "fill", "src": "x", "op": map[string]any{"Value": "text"}}, "fill"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Step
			err := msgpack.Unmarshal(encode(t, tc.step), &s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckRefs(t *testing.T) {
	p := sampleProgram()
	if err := p.CheckRefs(); err != nil {
		t.Fatalf("valid program: %v", err)
	}
	for _, tc := range []struct {
		name string
		op   Op
		want string
	}{
		{"write to a weight", &Memcpy{Src: 0, Dst: 1}, "read-only weight"},
		{"write to an input", &Fill{Dst: 0}, "read-only input"},
		{"missing buffer", &Memcpy{Src: 99, Dst: 2}, "missing buffer 99"},
		{"required operand absent", &Softmax{X: NoBuf, Out: 2}, "missing buffer -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := *p
			q.Steps = []Step{{Op: tc.op, Src: "s"}}
			if err := q.CheckRefs(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFprint(t *testing.T) {
	var b strings.Builder
	if err := Fprint(&b, sampleProgram()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"b1 = weight[0] +0 24 bytes",
		"input x: f32[2 3] = b0",
		"0: matmul a=b0 b=b1 out=b2 a_shape=[2,3,4] b_shape=[4,5] epilogue.bias=b3 epilogue.residual=b4 epilogue.act=clamp epilogue.alpha=0.5 epilogue.min=-Inf epilogue.max=6  # m.hir:1:1 op",
		"layernorm x=b0 scale=b1 out=b2 rows=3 cols=4 rms=true eps=1e-05",
		"reduce x=b0 out=b2 fn=prod dtype=i64 shape=[2,3] axes=[1]",
		"ew shape=[2,3] in=[{buf=b0 dtype=f32 strides=[0,1]}] out=[{buf=b2 dtype=f16}] code=[r0 = load in0; r1 = 2; r2 = where r0 r1 r0; out0 = r2]",
		"avgpool2d x=b0 out=b2 geom.n=1 geom.c=2 geom.h=3 geom.w=4 geom.kh=5 geom.kw=6 geom.stride_h=7",
		"count_include_pad=true", "nchw_to_nhwc src=b0 dst=b2 n=1 c=2 hw=3 to_nhwc=true", "idx_dtype=i32",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func TestEwOpsTable(t *testing.T) {
	for op := EwLoad; op < NumEwOps; op++ {
		info := op.Info()
		if info.Name == "" {
			t.Errorf("EwOp %d has no row", op)
			continue
		}
		if back, ok := ParseEwOp(info.Name); !ok || back != op {
			t.Errorf("%s: ParseEwOp gives %v", info.Name, back)
		}
		if info.Unary != nil && info.Arity != 1 || info.Binary != nil && info.Arity != 2 {
			t.Errorf("%s: arity %d does not match its function", info.Name, info.Arity)
		}
		if (info.Arity == 0) != (info.Operands == EwNoOperands) {
			t.Errorf("%s: arity %d with operand class %d (every op that reads registers has a class)", info.Name, info.Arity, info.Operands)
		}
		if info.BoolResult && info.Arity != 2 {
			t.Errorf("%s: a bool result is for comparisons, which are binary", info.Name)
		}
	}
	if EwInvalid.Valid() || NumEwOps.Valid() {
		t.Error("EwInvalid and NumEwOps must not be valid ops")
	}
}

// TestDispatchEncodingCompat: a dispatch without launch offsets encodes
// as dispatches did before them, so artifacts written then decode (and
// ones written now without offsets are byte-identical); one with offsets
// has its own tag, which an older reader refuses as an unknown kind.
func TestDispatchEncodingCompat(t *testing.T) {
	type oldDispatch struct { // lir.Dispatch before Offsets
		Kernel int
		Groups [3]int64
		Args   []Buf
	}
	old := encode(t, map[string]any{"kind": "dispatch", "op": oldDispatch{Kernel: 2, Groups: [3]int64{1, 2, 3}, Args: []Buf{4, 5}}, "src": "s"})
	var s Step
	if err := msgpack.Unmarshal(old, &s); err != nil {
		t.Fatal(err)
	}
	d, ok := s.Op.(*Dispatch)
	if !ok || d.Kernel != 2 || d.Groups != [3]int64{1, 2, 3} || len(d.Args) != 2 || d.Offsets != nil || s.Kind() != "dispatch" {
		t.Fatalf("old dispatch decoded as %#v", s.Op)
	}
	if got, want := encode(t, oldDispatch{Kernel: 2, Groups: [3]int64{1, 2, 3}, Args: []Buf{4, 5}}), encode(t, d); !bytes.Equal(got, want) {
		t.Errorf("a dispatch without offsets encodes differently from before: % x, was % x", want, got)
	}
	d.Offsets = []int64{0, 7}
	if s.Kind() != "dispatch_offsets" {
		t.Errorf("a dispatch with offsets is tagged %s", s.Kind())
	}
}

// TestQConv2DEncodingCompat: an integer convolution in NCHW encodes as
// before the channels-last fields (artifacts written then decode, and
// ones written now are byte-identical); one with either field set has
// its own tag, and a step tagged conv2d_i8 whose fields say channels
// last is refused rather than run with the wrong layout.
func TestQConv2DEncodingCompat(t *testing.T) {
	type oldQConv2D struct { // lir.QConv2D before XNHWC and OutNHWC
		X, W, Bias, Out Buf
		XPad, OutT      Buf
		Geom            ConvGeom
		Zero            int64
		Signed          bool
	}
	g := ConvGeom{N: 1, C: 4, H: 3, W: 3, O: 2, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1, OH: 3, OW: 3}
	old := oldQConv2D{X: 0, W: 1, Bias: NoBuf, Out: 2, XPad: 3, OutT: 4, Geom: g, Zero: 7}
	var s Step
	if err := msgpack.Unmarshal(encode(t, map[string]any{"kind": "conv2d_i8", "op": old, "src": "s"}), &s); err != nil {
		t.Fatal(err)
	}
	q, ok := s.Op.(*QConv2D)
	if !ok || q.XNHWC || q.OutNHWC || q.Zero != 7 || q.OutT != 4 || s.Kind() != "conv2d_i8" {
		t.Fatalf("old conv2d_i8 decoded as %#v", s.Op)
	}
	if got, want := encode(t, old), encode(t, q); !bytes.Equal(got, want) {
		t.Errorf("an NCHW integer convolution encodes differently from before: % x, was % x", want, got)
	}
	q.OutNHWC = true
	if s.Kind() != "conv2d_i8_nhwc" {
		t.Errorf("a channels-last integer convolution is tagged %s", s.Kind())
	}
	forged := encode(t, map[string]any{"kind": "conv2d_i8", "op": q, "src": "s"})
	if err := msgpack.Unmarshal(forged, &s); err == nil || !strings.Contains(err.Error(), "tagged conv2d_i8") {
		t.Errorf("conv2d_i8 with channels-last fields: %v, want a refusal", err)
	}
}
