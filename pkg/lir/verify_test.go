package lir

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// validProgram is a small program every step of which is consistent:
// x[2,3] · w[3,4] + bias -> h[2,4]; softmax(h) -> y; plus a copy, a
// gather and an elementwise region over the same buffers.
func validProgram() *Program {
	return &Program{
		Inputs:  []Slot{{Name: "x", DType: "f32", Shape: []int64{2, 3}, Buffer: 0}, {Name: "ids", DType: "i64", Shape: []int64{2}, Buffer: 5}},
		Outputs: []Slot{{Name: "y", DType: "f32", Shape: []int64{2, 4}, Buffer: 1}},
		Buffers: []Buffer{
			{Kind: BufInput, Index: 0, Bytes: 24},
			{Kind: BufOutput, Index: 0, Bytes: 32},
			{Kind: BufWeight, Index: 0, Bytes: 48},
			{Kind: BufWeight, Index: 1, Bytes: 16},
			{Kind: BufArena, Offset: 0, Bytes: 32},
			{Kind: BufInput, Index: 1, Bytes: 16},
			{Kind: BufArena, Offset: 64, Bytes: 32},
		},
		ArenaBytes: 128,
		Steps: []Step{
			{Op: &MatMul{A: 0, B: 2, Out: 4, AShape: []int64{2, 3}, BShape: []int64{3, 4}, Epilogue: Epilogue{Bias: 3, Residual: NoBuf, Act: ActRelu}}, Src: "m:1"},
			{Op: &Softmax{X: 4, Out: 1, Outer: 2, Axis: 4, Inner: 1}, Src: "m:2"},
			{Op: &Copy{Src: 4, Dst: 6, ElemSize: 4, Shape: []int64{4, 2}, DstStrides: []int64{2, 1}, SrcStrides: []int64{1, 4}}, Src: "m:3"},
			{Op: &Gather{X: 2, Idx: 5, Out: 6, Outer: 1, AxisLen: 3, Inner: 4, ElemSize: 4, IdxDType: tensor.I64}, Src: "m:4"},
			{Op: &Elementwise{Shape: []int64{2, 4}, In: []EwIn{{Buf: 4, DType: tensor.F32, Strides: []int64{4, 1}}, {Buf: 3, DType: tensor.F32, Strides: []int64{0, 1}}},
				Out:  []EwOut{{Buf: 6, DType: tensor.F32}},
				Code: []Instr{{Op: EwLoad, Dst: 0, A: 0}, {Op: EwLoad, Dst: 1, A: 1}, {Op: EwAdd, Dst: 2, A: 0, B: 1}, {Op: EwStore, Dst: 2, A: 0}}}, Src: "m:5"},
		},
	}
}

func TestVerifyAcceptsAValidProgram(t *testing.T) {
	if err := validProgram().Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyRefuses forges one inconsistency at a time and checks that
// Verify names the step and the field.
func TestVerifyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		forge func(p *Program)
		want  string
	}{
		{"arena buffer past the arena", func(p *Program) { p.Buffers[6].Offset = 100 }, "buffer 6: runs past the arena"},
		{"offset overflow", func(p *Program) { p.Buffers[4].Offset = math.MaxInt64 - 1 }, "offset + size overflows"},
		{"slot shape larger than its buffer", func(p *Program) { p.Inputs[0].Shape = []int64{4, 3} }, "input 0 (x): f32[4 3] needs 48 bytes"},
		{"slot on another kind of buffer", func(p *Program) { p.Outputs[0].Buffer = 4 }, "buffer 4 is arena 0, not output 0"},
		{"slot shape overflow", func(p *Program) { p.Inputs[0].Shape = []int64{1 << 62, 4} }, "too many elements"},
		{"matmul inner dims", func(p *Program) { p.Steps[0].Op.(*MatMul).BShape = []int64{2, 4} }, "step 0 (matmul, m:1): b_shape: inner dims 3 and 2 differ"},
		{"matmul output too small", func(p *Program) { p.Steps[0].Op.(*MatMul).BShape = []int64{3, 8} }, "step 0 (matmul, m:1): b: buffer b2 holds 48 bytes, needs 96"},
		{"matmul huge shape", func(p *Program) { p.Steps[0].Op.(*MatMul).AShape = []int64{1 << 40, 1 << 40, 3} }, "a_shape"},
		{"bias shorter than a row", func(p *Program) { p.Buffers[3].Bytes = 8 }, "epilogue.bias: buffer b3 holds 8 bytes, needs 16"},
		{"unknown activation", func(p *Program) { p.Steps[0].Op.(*MatMul).Epilogue.Act = 99 }, "unknown activation 99"},
		{"activation last without a residual", func(p *Program) { p.Steps[0].Op.(*MatMul).Epilogue.ActLast = true }, "epilogue.act_last: needs an activation and a residual"},
		{"softmax negative dim", func(p *Program) { p.Steps[1].Op.(*Softmax).Outer = -1 }, "step 1 (softmax, m:2): axis: dims"},
		{"copy reads past its source", func(p *Program) { p.Steps[2].Op.(*Copy).SrcStrides = []int64{2, 4} }, "step 2 (copy, m:3): src: reaches elements [0, 10]"},
		{"copy with a negative reach", func(p *Program) { p.Steps[2].Op.(*Copy).SrcStrides = []int64{-1, 4} }, "reaches elements [-3"},
		{"copy stride rank", func(p *Program) { p.Steps[2].Op.(*Copy).DstStrides = []int64{1} }, "1 strides for a rank-2 shape"},
		{"copy element size", func(p *Program) { p.Steps[2].Op.(*Copy).ElemSize = 3 }, "elem_size: 3"},
		{"gather output too small", func(p *Program) { p.Steps[3].Op.(*Gather).Inner = 8 }, "step 3 (gather, m:4): x:"},
		{"gather index dtype", func(p *Program) { p.Steps[3].Op.(*Gather).IdxDType = tensor.F32 }, "idx_dtype: f32"},
		{"elementwise operand reach", func(p *Program) { p.Steps[4].Op.(*Elementwise).In[1].Strides = []int64{4, 1} }, "step 4 (ew, m:5): in[1]: reaches elements [0, 7], the buffer holds 4"},
		{"elementwise register", func(p *Program) { p.Steps[4].Op.(*Elementwise).Code[2].Dst = 7 << 20 }, "code[2]: register 7340032"},
		{"elementwise load index", func(p *Program) { p.Steps[4].Op.(*Elementwise).Code[1].A = 5 }, "load of operand 5, the region has 2"},
		{"elementwise store index", func(p *Program) { p.Steps[4].Op.(*Elementwise).Code[3].A = 1 }, "store to result 1, the region has 1"},
		{"elementwise unknown op", func(p *Program) { p.Steps[4].Op.(*Elementwise).Code[2].Op = 250 }, "unknown instruction 250"},
		{"elementwise cast target", func(p *Program) {
			p.Steps[4].Op.(*Elementwise).Code[2] = Instr{Op: EwCast, Dst: 2, A: 0, Imm: 77}
		}, "cast to unknown dtype 77"},
		{"elementwise output dtype", func(p *Program) { p.Steps[4].Op.(*Elementwise).Out[0].DType = 0 }, "out[0].dtype"},
		{"write to a weight", func(p *Program) { p.Steps[1].Op.(*Softmax).Out = 2 }, "writes buffer 2, which is a read-only weight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := validProgram()
			tc.forge(p)
			err := p.Verify()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestVerifyKinds(t *testing.T) {
	conv := ConvGeom{N: 1, C: 4, H: 5, W: 5, O: 4, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadT: 1, PadL: 1, PadB: 1, PadR: 1, DilH: 1, DilW: 1, Groups: 4, OH: 3, OW: 3}
	f32 := func(elems int64) Buffer { return Buffer{Kind: BufArena, Bytes: elems * 4} }
	b := func(bytes int64) Buffer { return Buffer{Kind: BufArena, Bytes: bytes} }
	// A 3x3 stride-1 convolution: 5x5 out, 2x2 tiles of 4 (16 with the
	// padding), 36 points.
	wconv := ConvGeom{N: 1, C: 4, H: 5, W: 5, O: 4, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadT: 1, PadL: 1, PadB: 1, PadR: 1, DilH: 1, DilW: 1, Groups: 1, OH: 5, OW: 5}
	for _, tc := range []struct {
		name string
		bufs []Buffer
		op   Op
		want string // "" for a valid step
	}{
		{"winograd_input", []Buffer{f32(100), f32(2304)}, &WinogradInput{X: 0, V: 1, Geom: wconv, Tile: 4}, ""},
		{"winograd_input short v", []Buffer{f32(100), f32(2303)}, &WinogradInput{X: 0, V: 1, Geom: wconv, Tile: 4}, "v: buffer b1 holds 9212 bytes, needs 9216"},
		{"winograd_input stride 2", []Buffer{f32(100), f32(2304)}, &WinogradInput{X: 0, V: 1, Geom: conv, Tile: 4}, "Winograd takes 3x3, stride 1"},
		{"winograd_input tile 3", []Buffer{f32(100), f32(2304)}, &WinogradInput{X: 0, V: 1, Geom: wconv, Tile: 3}, "tile: 3, want 2 or 4"},
		{"winograd_product", []Buffer{f32(2304), f32(576), f32(2304)}, &WinogradProduct{V: 0, U: 1, M: 2, P: 36, C: 4, O: 4, TP: 16}, ""},
		{"winograd_product points", []Buffer{f32(2304), f32(576), f32(2304)}, &WinogradProduct{V: 0, U: 1, M: 2, P: 25, C: 4, O: 4, TP: 16}, "p: 25 points"},
		{"winograd_product tiles", []Buffer{f32(2304), f32(576), f32(2304)}, &WinogradProduct{V: 0, U: 1, M: 2, P: 36, C: 4, O: 4, TP: 12}, "want multiples of 16"},
		{"winograd_product part", []Buffer{f32(4608), f32(576), f32(4608)}, &WinogradProduct{V: 0, U: 1, M: 2, P: 36, C: 4, O: 4, TP: 16, LD: 32}, ""},
		{"winograd_product short part", []Buffer{f32(4607), f32(576), f32(4608)}, &WinogradProduct{V: 0, U: 1, M: 2, P: 36, C: 4, O: 4, TP: 16, LD: 32}, "v: buffer b0"},
		{"winograd_product rows too short", []Buffer{f32(4608), f32(576), f32(4608)}, &WinogradProduct{V: 0, U: 1, M: 2, P: 36, C: 4, O: 4, TP: 32, LD: 16}, "no more tiles than the row holds"},
		{"winograd_product u in blocks of 4", []Buffer{f32(2880), f32(1151), f32(2880)}, &WinogradProduct{V: 0, U: 1, M: 2, P: 36, C: 4, O: 5, TP: 16}, "u: buffer b1 holds 4604 bytes, needs 4608"},
		{"winograd_product short u", []Buffer{f32(2304), f32(575), f32(2304)}, &WinogradProduct{V: 0, U: 1, M: 2, P: 36, C: 4, O: 4, TP: 16}, "u: buffer b1"},
		{"winograd_output", []Buffer{f32(2304), f32(100), f32(4)}, &WinogradOutput{M: 0, Out: 1, Geom: wconv, Tile: 4, Epilogue: Epilogue{Bias: 2, Residual: 1}}, ""},
		{"winograd_input part", []Buffer{f32(100), f32(2304)}, &WinogradInput{X: 0, V: 1, Geom: wconv, Tile: 4, Part: TileRange{T0: 0, T1: 16, LD: 16}}, ""},
		{"winograd_input part past the tiles", []Buffer{f32(100), f32(2304)}, &WinogradInput{X: 0, V: 1, Geom: wconv, Tile: 4, Part: TileRange{T0: 16, T1: 32, LD: 16}}, "part: tiles [16, 32)"},
		{"winograd_output part unaligned", []Buffer{f32(2304), f32(100)}, &WinogradOutput{M: 0, Out: 1, Geom: wconv, Tile: 4, Epilogue: NoEpilogue(), Part: TileRange{T0: 0, T1: 8, LD: 16}}, "part: tiles [0, 8)"},
		{"winograd_output short m", []Buffer{f32(1024), f32(100)}, &WinogradOutput{M: 0, Out: 1, Geom: wconv, Tile: 4, Epilogue: NoEpilogue()}, "m: buffer b0"},
		{"conv2d", []Buffer{f32(100), f32(36), f32(36)}, &Conv2D{X: 0, W: 1, Out: 2, Geom: conv, Epilogue: NoEpilogue()}, ""},
		{"conv2d_i8", []Buffer{b(100), b(704), f32(100), b(392), b(400), f32(4)}, &QConv2D{X: 0, W: 1, Bias: 5, Out: 2, XPad: 3, OutT: 4, Geom: wconv, Zero: 9}, ""},
		{"conv2d_i8 short scratch", []Buffer{b(100), b(704), f32(100), b(391), b(400)}, &QConv2D{X: 0, W: 1, Bias: NoBuf, Out: 2, XPad: 3, OutT: 4, Geom: wconv}, "xpad: buffer b3 holds 391 bytes, needs 392"},
		{"conv2d_i8 channels last", []Buffer{b(100), b(704), f32(100), b(392)}, &QConv2D{X: 0, W: 1, Bias: NoBuf, Out: 2, XPad: 3, OutT: NoBuf, Geom: wconv, XNHWC: true, OutNHWC: true}, ""},
		{"conv2d_i8 no outt", []Buffer{b(100), b(704), f32(100), b(392)}, &QConv2D{X: 0, W: 1, Bias: NoBuf, Out: 2, XPad: 3, OutT: NoBuf, Geom: wconv, XNHWC: true}, "outt: none: an NCHW result is transposed from it"},
		{"conv2d_i8 short weight", []Buffer{b(100), b(703), f32(100), b(392), b(400)}, &QConv2D{X: 0, W: 1, Bias: NoBuf, Out: 2, XPad: 3, OutT: 4, Geom: wconv}, "w: buffer b1 holds 703 bytes, needs 704"},
		{"conv2d_i8 grouped", []Buffer{b(100), b(704), f32(100), b(196), b(400)}, &QConv2D{X: 0, W: 1, Bias: NoBuf, Out: 2, XPad: 3, OutT: 4, Geom: conv}, "geom.groups: 4: an integer convolution has one group"},
		{"conv2d output dims", []Buffer{f32(100), f32(36), f32(36)}, &Conv2D{X: 0, W: 1, Out: 2, Geom: func() ConvGeom { g := conv; g.OH = 4; return g }(), Epilogue: NoEpilogue()}, "geom.oh: 4, the geometry gives 3"},
		{"conv2d groups", []Buffer{f32(100), f32(36), f32(36)}, &Conv2D{X: 0, W: 1, Out: 2, Geom: func() ConvGeom { g := conv; g.Groups = 3; return g }(), Epilogue: NoEpilogue()}, "3 groups do not divide"},
		{"conv2d zero stride", []Buffer{f32(100), f32(36), f32(36)}, &Conv2D{X: 0, W: 1, Out: 2, Geom: func() ConvGeom { g := conv; g.StrideH = 0; return g }(), Epilogue: NoEpilogue()}, "geom.stride: 0"},
		{"conv2d_taps", []Buffer{f32(100), f32(576), f32(100)}, &TapConv2D{X: 0, W: 1, Out: 2, Geom: wconv, Epilogue: NoEpilogue()}, ""},
		{"conv2d_taps short weights", []Buffer{f32(100), f32(575), f32(100)}, &TapConv2D{X: 0, W: 1, Out: 2, Geom: wconv, Epilogue: NoEpilogue()}, "w: buffer b1 holds 2300 bytes, needs 2304"},
		{"conv2d_taps groups", []Buffer{f32(100), f32(576), f32(100)}, &TapConv2D{X: 0, W: 1, Out: 2, Geom: func() ConvGeom { g := wconv; g.Groups = 2; return g }(), Epilogue: NoEpilogue()}, "2 groups: a tap-major convolution has one"},
		{"depthwise nhwc", []Buffer{f32(100), f32(36), f32(36)}, &DepthwiseNHWC{X: 0, W: 1, Out: 2, Geom: conv, Epilogue: NoEpilogue()}, ""},
		{"depthwise nhwc not depthwise", []Buffer{f32(100), f32(36), f32(36)}, &DepthwiseNHWC{X: 0, W: 1, Out: 2, Geom: func() ConvGeom { g := conv; g.Groups = 2; return g }(), Epilogue: NoEpilogue()}, "not depthwise"},
		{"packed matmul", []Buffer{f32(6), f32(12), f32(8)}, &PackedMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 3, Epilogue: NoEpilogue()}, ""},
		{"matmul_i8", []Buffer{f32(6), {Kind: BufArena, Bytes: 320}, f32(8), {Kind: BufArena, Bytes: 48}}, &QMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 12, Zero: 128, Scratch: 3, Bias: NoBuf}, ""},
		{"matmul_i8 short scratch", []Buffer{f32(6), {Kind: BufArena, Bytes: 320}, f32(8), {Kind: BufArena, Bytes: 47}}, &QMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 12, Zero: 128, Scratch: 3, Bias: NoBuf}, "scratch: buffer b3 holds 47 bytes, needs 48"},
		{"matmul_i8 with a bias", []Buffer{f32(6), {Kind: BufArena, Bytes: 320}, f32(8), {Kind: BufArena, Bytes: 48}, f32(4)}, &QMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 12, Zero: 128, Scratch: 3, Bias: 4}, ""},
		{"matmul_i8 short bias", []Buffer{f32(6), {Kind: BufArena, Bytes: 320}, f32(8), {Kind: BufArena, Bytes: 48}, f32(3)}, &QMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 12, Zero: 128, Scratch: 3, Bias: 4}, "bias: buffer b4 holds 12 bytes, needs 16"},
		{"matmul_i8 without scratch", []Buffer{f32(6), {Kind: BufArena, Bytes: 320}, f32(8)}, &QMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 12, Zero: 128, Scratch: NoBuf, Bias: NoBuf}, ""},
		{"matmul_i8 short packed weight", []Buffer{f32(6), {Kind: BufArena, Bytes: 319}, f32(8)}, &QMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 12, Zero: 128, Scratch: NoBuf, Bias: NoBuf}, "b: buffer b1 holds 319 bytes, needs 320"},
		{"matmul_i8 zero out of range", []Buffer{f32(6), {Kind: BufArena, Bytes: 320}, f32(8)}, &QMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 12, Zero: 128, Signed: true, Scratch: NoBuf, Bias: NoBuf}, "zero: 128 outside the range of the operand's type"},
		{"matmul_i8 k past exact sums", []Buffer{f32(1 << 20), {Kind: BufArena, Bytes: 1 << 20}, f32(8)}, &QMatMul{A: 0, B: 1, Out: 2, M: 1, N: 1, K: QMatMulMaxK + 1, Scratch: NoBuf, Bias: NoBuf}, "k: 65794 past 65793, the longest sum exact in int32"},
		{"packed matmul short output", []Buffer{f32(6), f32(12), f32(7)}, &PackedMatMul{A: 0, B: 1, Out: 2, M: 2, N: 4, K: 3, Epilogue: NoEpilogue()}, "out: buffer b2 holds 28 bytes, needs 32"},
		{"reduce", []Buffer{f32(24), f32(6)}, &Reduce{X: 0, Out: 1, Fn: ReduceMax, DType: tensor.F32, Shape: []int64{2, 3, 4}, Axes: []int64{2}}, ""},
		{"reduce repeated axis", []Buffer{f32(24), f32(6)}, &Reduce{X: 0, Out: 1, DType: tensor.F32, Shape: []int64{2, 3, 4}, Axes: []int64{2, 2}}, "repeated"},
		{"reduce output", []Buffer{f32(24), f32(5)}, &Reduce{X: 0, Out: 1, DType: tensor.F32, Shape: []int64{2, 3, 4}, Axes: []int64{2}}, "out: buffer b1 holds 20 bytes, needs 24"},
		{"attention", []Buffer{f32(2 * 3 * 4), f32(2 * 5 * 4), f32(2 * 5 * 4), f32(2 * 3 * 4)}, &Attention{Q: 0, K: 1, V: 2, Mask: NoBuf, Out: 3,
			Geom: AttnGeom{Batch: []int64{2}, QStrides: []int64{12}, KStrides: []int64{20}, VStrides: []int64{20}, Sq: 3, Sk: 5, D: 4, Dv: 4, Scale: 0.5}}, ""},
		{"attention row stride past k", []Buffer{f32(2 * 3 * 4), f32(2 * 5 * 4), f32(2 * 5 * 4), f32(2 * 3 * 4)}, &Attention{Q: 0, K: 1, V: 2, Mask: NoBuf, Out: 3,
			Geom: AttnGeom{Batch: []int64{2}, QStrides: []int64{12}, KStrides: []int64{20}, VStrides: []int64{20}, KRow: 8, Sq: 3, Sk: 5, D: 4, Dv: 4}}, "k: reaches elements [0, 55]"},
		{"attention mask strides", []Buffer{f32(24), f32(40), f32(40), f32(24), f32(15)}, &Attention{Q: 0, K: 1, V: 2, Mask: 4, Out: 3,
			Geom: AttnGeom{Batch: []int64{2}, QStrides: []int64{12}, KStrides: []int64{20}, VStrides: []int64{20}, MaskStrides: []int64{15}, MaskRowStride: 5, MaskColStride: 1, Sq: 3, Sk: 5, D: 4, Dv: 4}}, "mask: reaches elements [0, 29]"},
		{"pool", []Buffer{f32(100), f32(36)}, &Pool2D{X: 0, Out: 1, Max: true, Geom: PoolGeom{N: 1, C: 4, H: 5, W: 5, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, OH: 3, OW: 3}}, ""},
		{"pool short input", []Buffer{f32(99), f32(36)}, &Pool2D{X: 0, Out: 1, Max: true, Geom: PoolGeom{N: 1, C: 4, H: 5, W: 5, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, OH: 3, OW: 3}}, "x: buffer b0 holds 396 bytes"},
		{"scatter", []Buffer{f32(5), f32(6), f32(3)}, &Scatter{Out: 0, Idx: 1, Upd: 2, N: 5, M: 3, ElemSize: 4, IdxDType: tensor.I64}, ""},
		{"scatter short updates", []Buffer{f32(5), f32(6), f32(2)}, &Scatter{Out: 0, Idx: 1, Upd: 2, N: 5, M: 3, ElemSize: 4, IdxDType: tensor.I64}, "upd: buffer b2 holds 8 bytes, needs 12"},
		{"scatter idx dtype", []Buffer{f32(5), f32(6), f32(3)}, &Scatter{Out: 0, Idx: 1, Upd: 2, N: 5, M: 3, ElemSize: 4, IdxDType: tensor.F32}, "idx_dtype: f32, want i32 or i64"},
		{"topk", []Buffer{f32(24), f32(16), f32(32)}, &TopK{X: 0, Values: 1, Indices: 2, Outer: 2, Axis: 3, Inner: 4, K: 2, DType: tensor.F32}, ""},
		{"topk k past the axis", []Buffer{f32(24), f32(24), f32(48)}, &TopK{X: 0, Values: 1, Indices: 2, Outer: 2, Axis: 3, Inner: 4, K: 4, DType: tensor.F32}, "k: 4 outside [1, axis 3]"},
		{"topk short indices", []Buffer{f32(24), f32(16), f32(31)}, &TopK{X: 0, Values: 1, Indices: 2, Outer: 2, Axis: 3, Inner: 4, K: 2, DType: tensor.F32}, "indices: buffer b2 holds 124 bytes, needs 128"},
		{"layernorm scale", []Buffer{f32(12), f32(3), f32(12)}, &LayerNorm{X: 0, Scale: 1, Bias: NoBuf, Out: 2, Rows: 3, Cols: 4}, "scale: buffer b1 holds 12 bytes, needs 16"},
		{"iota", []Buffer{{Kind: BufArena, Bytes: 16}}, &Iota{Out: 0, N: 3, DType: tensor.I64}, "out: buffer b0 holds 16 bytes, needs 24"},
		{"dispatch without kernels", []Buffer{f32(1)}, &Dispatch{Kernel: 0, Args: []Buf{0}}, "kernel: 0, the program has 0 kernels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			total := int64(0)
			for i := range tc.bufs {
				tc.bufs[i].Offset = total
				total += tc.bufs[i].Bytes
			}
			p := &Program{Buffers: tc.bufs, ArenaBytes: total, Steps: []Step{{Op: tc.op, Src: "s"}}}
			err := p.Verify()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid step refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestOverflowSafeArithmetic(t *testing.T) {
	for _, c := range []struct {
		a, b int64
		ok   bool
	}{{1 << 31, 1 << 31, true}, {1 << 32, 1 << 31, false}, {-(1 << 31), 1 << 31, true}, {math.MinInt64, -1, false}, {math.MaxInt64, 1, true}, {3, -5, true}} {
		got, ok := mul(c.a, c.b)
		if ok != c.ok || ok && got != c.a*c.b {
			t.Errorf("mul(%d, %d) = %d, %v", c.a, c.b, got, ok)
		}
	}
	if _, ok := add(math.MaxInt64, 1); ok {
		t.Error("add(MaxInt64, 1) did not report overflow")
	}
	if _, ok := elements([]int64{1 << 32, 1 << 32}); ok {
		t.Error("elements did not report overflow")
	}
}

// TestVerifyNative: a native call binds buffers at least as large as its
// function reads and writes; the function and object tables are sane.
func TestVerifyNative(t *testing.T) {
	fn := NativeFunc{Name: "f", N: 4, Grain: 1, In: []int64{16}, Out: []int64{16}}
	obj := []NativeObject{{Level: "x86-64-v3", ELF: []byte{1}}}
	for _, tc := range []struct {
		name   string
		native *Native
		call   *NativeCall
		want   string
	}{
		{"ok", &Native{Funcs: []NativeFunc{fn}, Objects: obj}, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{1}}, ""},
		{"no native code", nil, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{1}}, "func: 0, the program has 0 native functions"},
		{"function index", &Native{Funcs: []NativeFunc{fn}, Objects: obj}, &NativeCall{Func: 1, In: []Buf{0}, Out: []Buf{1}}, "func: 1, the program has 1"},
		{"arity", &Native{Funcs: []NativeFunc{fn}, Objects: obj}, &NativeCall{Func: 0, In: []Buf{0, 1}, Out: []Buf{1}}, "2 inputs and 1 outputs for function f of 1 and 1"},
		{"short output", &Native{Funcs: []NativeFunc{fn}, Objects: obj}, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{2}}, "out[0]: buffer b2 holds 8 bytes, needs 16"},
		{"repeated name", &Native{Funcs: []NativeFunc{fn, fn}, Objects: obj}, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{1}}, "empty or repeated name"},
		{"no object", &Native{Funcs: []NativeFunc{fn}}, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{1}}, "no compiled object"},
		{"grain", &Native{Funcs: []NativeFunc{{Name: "g", N: 4}}, Objects: obj}, &NativeCall{Func: 0, In: []Buf{}, Out: []Buf{}}, "range 4 in chunks of 0"},
		{"part", &Native{Funcs: []NativeFunc{fn}, Objects: obj}, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{1}, Lo: 1, Hi: 4}, ""},
		{"part past the range", &Native{Funcs: []NativeFunc{fn}, Objects: obj}, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{1}, Lo: 2, Hi: 5}, "range: [2, 5) of function f's 4 items"},
		{"empty part", &Native{Funcs: []NativeFunc{fn}, Objects: obj}, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{1}, Lo: 3, Hi: 3}, "range: [3, 3)"},
		{"repeated level", &Native{Funcs: []NativeFunc{fn}, Objects: append(obj, obj...)}, &NativeCall{Func: 0, In: []Buf{0}, Out: []Buf{1}}, "repeated CPU level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Program{Buffers: []Buffer{{Kind: BufArena, Bytes: 16}, {Kind: BufArena, Offset: 16, Bytes: 16}, {Kind: BufArena, Offset: 32, Bytes: 8}},
				ArenaBytes: 40, Native: tc.native, Steps: []Step{{Op: tc.call, Src: "s"}}}
			err := p.Verify()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid program refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestVerifyDispatchOffsets checks that a dispatch carries launch offsets
// exactly when its kernel takes them, one per parameter, each an int32.
func TestVerifyDispatchOffsets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offsets bool // the kernel takes launch offsets
		op      *Dispatch
		want    string
	}{
		{"constant offsets", false, &Dispatch{Kernel: 0, Groups: [3]int64{1, 1, 1}, Args: []Buf{0, 1}}, ""},
		{"launch offsets", true, &Dispatch{Kernel: 0, Groups: [3]int64{1, 1, 1}, Args: []Buf{0, 1}, Offsets: []int64{0, 3}}, ""},
		{"missing", true, &Dispatch{Kernel: 0, Groups: [3]int64{1, 1, 1}, Args: []Buf{0, 1}}, "0 offsets for kernel k of 2 parameters"},
		{"short", true, &Dispatch{Kernel: 0, Groups: [3]int64{1, 1, 1}, Args: []Buf{0, 1}, Offsets: []int64{1}}, "1 offsets for kernel k of 2 parameters"},
		{"unexpected", false, &Dispatch{Kernel: 0, Groups: [3]int64{1, 1, 1}, Args: []Buf{0, 1}, Offsets: []int64{1, 2}}, "compiled in"},
		{"negative", true, &Dispatch{Kernel: 0, Groups: [3]int64{1, 1, 1}, Args: []Buf{0, 1}, Offsets: []int64{-1, 2}}, "offset -1 of parameter 0"},
		{"too large", true, &Dispatch{Kernel: 0, Groups: [3]int64{1, 1, 1}, Args: []Buf{0, 1}, Offsets: []int64{0, 1 << 31}}, "outside 0..2^31-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Program{
				Buffers:    []Buffer{{Kind: BufArena, Bytes: 16}, {Kind: BufArena, Offset: 16, Bytes: 16}},
				ArenaBytes: 32,
				Kernels: []Kernel{{Name: "k", Lang: "glsl", Entry: "main", Local: [3]int64{1, 1, 1}, Offsets: tc.offsets,
					Params: []KernelParam{{Name: "x", DType: "f32"}, {Name: "y", DType: "f32", Write: true}}}},
				Steps: []Step{{Op: tc.op, Src: "s"}},
			}
			err := p.Verify()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid dispatch refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestTileParts: parts of ld tiles, the last one short, each valid for
// the verifier's rule; one whole range where a part would hold them all.
func TestTileParts(t *testing.T) {
	got := TileParts(80, 32)
	want := []TileRange{{0, 32, 32}, {32, 64, 32}, {64, 80, 32}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("TileParts(80, 32) = %v, want %v", got, want)
	}
	for _, c := range [][2]int64{{80, 0}, {80, 80}, {80, 96}} {
		if p := TileParts(c[0], c[1]); len(p) != 1 || !p[0].Whole() {
			t.Errorf("TileParts(%d, %d) = %v, want one whole range", c[0], c[1], p)
		}
	}
}
