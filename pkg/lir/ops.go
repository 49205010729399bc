package lir

import (
	"strconv"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// This file holds one struct per kind of kernel. Geometry is in elements
// (not bytes) unless a field says otherwise; tensors are row-major unless
// the kind says otherwise (Relayout, DepthwiseNHWC).

// Activation selects the function an Epilogue applies. NaN passes through
// every activation unchanged.
type Activation uint8

// The activations. ActGelu is the erf form, ActGeluTanh the tanh
// approximation; ActLeakyRelu uses Epilogue.Alpha as the negative slope;
// ActClamp clamps to [Epilogue.Min, Epilogue.Max] (±Inf for one side).
const (
	ActNone Activation = iota
	ActRelu
	ActGelu
	ActGeluTanh
	ActSilu
	ActSigmoid
	ActTanh
	ActLeakyRelu
	ActClamp
	numActivations
)

var activationNames = [...]string{
	ActNone:      "none",
	ActRelu:      "relu",
	ActGelu:      "gelu",
	ActGeluTanh:  "gelu_tanh",
	ActSilu:      "silu",
	ActSigmoid:   "sigmoid",
	ActTanh:      "tanh",
	ActLeakyRelu: "leaky_relu",
	ActClamp:     "clamp",
}

// String returns the activation's name.
func (a Activation) String() string {
	if a < numActivations {
		return activationNames[a]
	}
	return "Activation(" + strconv.Itoa(int(a)) + ")"
}

// ParseActivation returns the activation named s ("" is ActNone).
func ParseActivation(s string) (Activation, bool) {
	if s == "" {
		return ActNone, true
	}
	for a, n := range activationNames {
		if n == s {
			return Activation(a), true
		}
	}
	return 0, false
}

// Epilogue is what a product or convolution applies to each sum before
// storing it: bias, then the activation, then the residual; or, where
// ActLast, bias, then the residual, then the activation (a ResNet block's
// relu(conv + shortcut), which would otherwise read the whole output back
// in a step of its own).
type Epilogue struct {
	Bias     Buf // per output column (matmul) or channel (conv), or NoBuf
	Residual Buf // same layout as the output, added after the activation, or NoBuf
	Act      Activation
	Alpha    float64 // ActLeakyRelu's slope
	Min, Max float64 // ActClamp's bounds
	// ActLast applies Act after the residual; it needs both.
	ActLast bool `msgpack:",omitempty"`
}

// NoEpilogue stores the sums as they are.
func NoEpilogue() Epilogue { return Epilogue{Bias: NoBuf, Residual: NoBuf} }

func (e *Epilogue) refs(rs []Ref) []Ref { return opt(rs, false, e.Bias, e.Residual) }

// MatMul is NumPy's matmul of A (shape AShape) and B (BShape), both rank
// >= 2 with broadcast batch dims, into Out.
type MatMul struct {
	A, B, Out      Buf
	AShape, BShape []int64
	Epilogue       Epilogue
}

// PackedMatMul is Out[M, N] = A[M, K] · B[K, N] with B a weight packed at
// build time in the CPU micro-kernel's panel layout (its header names the
// layout).
type PackedMatMul struct {
	A, B, Out Buf
	M, N, K   int64
	Epilogue  Epilogue
}

// QMatMul is Out[M, N] = (A[M, K] − Zero)·B[K, N] (+ Bias[N]) over 8-bit
// integers, summed exactly in int32 and stored as f32: A uint8 (Signed: int8), B an
// int8 weight packed at build time (the CPU's qgemm layout, the same on
// every CPU: QMatMulPackedBytes long). It runs the products of quantized
// models, whose f32 forms spell out the same integer arithmetic. Scratch
// (QMatMulScratch bytes) holds A in the form the CPU's kernel reads where
// that is not A itself: rows padded to whole groups of 4, int8 shifted
// into uint8, or widened to uint16 (the AVX2 kernel).
type QMatMul struct {
	A, B, Out Buf
	M, N, K   int64
	Zero      int64
	// ZeroAt, when not NoBuf, holds the zero point at run time (one
	// element of A's dtype: dynamic quantization's), in place of Zero.
	ZeroAt  Buf
	Signed  bool
	Scratch Buf
	// Bias, when not NoBuf, is int32 per column, added to the sums.
	Bias Buf
}

// QMatMulScratch is the bytes of a QMatMul's scratch: M rows of K rounded
// up to 4, as uint16.
func QMatMulScratch(m, k int64) int64 { return m * ((k + 3) &^ 3) * 2 }

// QConv2D is a one-group convolution of 8-bit X (NCHW, uint8, or int8
// where Signed) minus Zero by an int8 weight packed at build time (B
// [taps·bytes, O] of QMatMul's layout, QConvPackedBytes long: QConvTaps,
// QConvTapBytes), plus Bias (int32 per output channel, or NoBuf),
// summed exactly in int32 and stored as f32 NCHW Out, the padding adding
// nothing. XPad (one image relaid channels last with its padding) and
// OutT (one image's result channels last) are its scratch, of
// QConvScratch's sizes. XNHWC and OutNHWC store X and Out channels last
// instead ([N, H, W, C], [N, OH, OW, O]: a channels-last stretch's), OutT
// then unused (NoBuf); an operation with either is tagged
// "conv2d_i8_nhwc", so a reader that predates them refuses it by name
// instead of reading the layouts as NCHW.
type QConv2D struct {
	X, W, Bias, Out Buf
	XPad, OutT      Buf
	Geom            ConvGeom
	Zero            int64
	Signed          bool
	XNHWC           bool `msgpack:",omitempty"`
	OutNHWC         bool `msgpack:",omitempty"`
}

// QConvWide reports a QConv2D over at most 4 channels (an image's stem)
// without dilation along the width: its relaid input holds 4 bytes a
// position, so the KW positions a kernel row reads are consecutive
// groups of 4 bytes, summed as one tap of KW groups (KH taps) where each
// would otherwise be a tap of its own group.
func QConvWide(g ConvGeom) bool { return g.C <= 4 && g.KW > 1 && g.DilW == 1 }

// QConvC4 is the bytes of a QConv2D's relaid input at each position: its
// input channels rounded up to groups of 4.
func QConvC4(g ConvGeom) int64 { return (g.C + 3) &^ 3 }

// QConvTapBytes is the bytes each tap of a QConv2D sums: QConvC4, or KW
// times it where QConvWide.
func QConvTapBytes(g ConvGeom) int64 {
	if QConvWide(g) {
		return g.KW * QConvC4(g)
	}
	return QConvC4(g)
}

// QConvTaps is a QConv2D's taps: KH where QConvWide, else KH·KW.
func QConvTaps(g ConvGeom) int64 {
	if QConvWide(g) {
		return g.KH
	}
	return g.KH * g.KW
}

// QConvPackedBytes is the length of a QConv2D's packed weight.
func QConvPackedBytes(g ConvGeom) int64 {
	return QMatMulPackedBytes(QConvTaps(g)*QConvTapBytes(g), g.O)
}

// QConvScratch is the bytes of a QConv2D's scratch XPad and OutT: XPad
// has room for the relaid image as uint16 (the AVX2 kernel reads it
// widened; the VNNI one reads its bytes).
func QConvScratch(g ConvGeom) (xpad, outT int64) {
	return (g.H + g.PadT + g.PadB) * (g.W + g.PadL + g.PadR) * QConvC4(g) * 2, g.OH * g.OW * g.O * 4
}

// QMatMulMaxK is the longest K whose sums QMatMul computes exactly: every
// term is at most 255·128 in magnitude and the sum must fit in int32.
const QMatMulMaxK = (1<<31 - 1) / (255 * 128)

// QMatMulPackedBytes is the length of B [k, n] packed for QMatMul: panels
// of 16 columns, each k rounded up to groups of 4 rows (64 bytes a group),
// then the int32 column sums of every pair of panels.
func QMatMulPackedBytes(k, n int64) int64 {
	panels, groups := (n+15)/16, (k+3)/4
	return panels*groups*64 + (panels+1)/2*2*16*4
}

// PackedConv1x1 is a 1x1 convolution of X [N, C, HW] as the transposed
// product Out[n] = Wᵀ·X[n] with Wᵀ [C, O] packed at build time.
type PackedConv1x1 struct {
	X, W, Out   Buf
	N, C, HW, O int64
	Epilogue    Epilogue
}

// ConvGeom is a 2-D convolution's geometry: input [N, C, H, W], weights
// [O, C/Groups, KH, KW], output [N, O, OH, OW].
type ConvGeom struct {
	N, C, H, W             int64
	O, KH, KW              int64
	StrideH, StrideW       int64
	PadT, PadL, PadB, PadR int64
	DilH, DilW             int64
	Groups                 int64
	OH, OW                 int64
}

// Conv2D is a convolution over NCHW tensors.
type Conv2D struct {
	X, W, Out Buf
	Geom      ConvGeom
	Epilogue  Epilogue
}

// TapConv2D is a convolution over NCHW tensors with one group, its
// weights stored tap-major in panels of output channels (TapMajor's
// layout). A kernel vectorized over output channels reads the weights of
// one tap and input channel as whole vectors, and visits each output
// position's live taps alone (those that read the input, not the
// padding), so convolutions of mostly padding (DeepLabV3's atrous
// pyramid) do only their live work.
type TapConv2D struct {
	X, W, Out Buf
	Geom      ConvGeom
	Epilogue  Epilogue
}

// TapConvBlock is the multiple TapConv2D's weights round the output
// channels up to: a vector of any CPU level's lanes divides it.
const TapConvBlock = 16

// TapConvPanel is the output channels of one panel of a TapConv2D's
// weights, a multiple of TapConvBlock. A kernel works a panel at a time
// over a run of output rows, so the panel's weights (its channels by
// every tap and input channel) are contiguous: strided through the full
// row of channels, as one [taps, C, OP] array, they would fall in an
// eighth of an 8-way cache's sets (a 64-channel panel's 256 bytes of
// every 2 KiB row at 512 channels) and leave L2 before the next row.
const TapConvPanel = 64

// TapConvOP is the output channels of a TapConv2D's weights for o output
// channels: o rounded up to TapConvBlock.
func TapConvOP(o int64) int64 { return (o + TapConvBlock - 1) / TapConvBlock * TapConvBlock }

// TapMajor lays out the [o, c, KH, KW] weights w (taps = KH·KW) as a
// TapConv2D reads them: panels of TapConvPanel output channels (the last
// one the rest of TapConvOP(o)), each [taps, c, width], zeros past o. The
// weight of output channel oc in panel p = oc / TapConvPanel is at
// TapConvPanel·p·taps·c + (t·c + ic)·width + oc mod TapConvPanel.
func TapMajor(w []float32, o, c, taps int64) []float32 {
	op := TapConvOP(o)
	out := make([]float32, taps*c*op)
	for oc := range o {
		p0 := oc / TapConvPanel * TapConvPanel
		width := min(TapConvPanel, op-p0)
		panel := out[p0*taps*c:]
		for ic := range c {
			for t := range taps {
				panel[(t*c+ic)*width+oc-p0] = w[(oc*c+ic)*taps+t]
			}
		}
	}
	return out
}

// Winograd convolutions. A 3x3, stride-1, undilated, ungrouped
// convolution runs as Winograd's F(m×m, 3×3) (Tile = m, 2 or 4) in three
// steps: the input transform of every tile, one product per point of the
// transform, and the output transform with the epilogue. Tiles cover the
// output in m×m blocks, numbered t = (n·TH + th)·TW + tw over the batch
// (WinogradTiles); each step's layout keeps the tiles innermost, padded
// to TP, a multiple of 16, so vectors of them are whole.
//
// A convolution over a large plane runs in parts of its tiles (Part),
// the three steps per part in turn, so that the scratch V and M (the
// transformed input and the products, 2.25x the input and output at
// F(4×4)) hold one part and stay in cache between the steps, instead of
// all the tiles going out to memory and back.

// TileRange is the part [T0, T1) of a Winograd convolution's tiles a
// step computes, and LD the tiles its scratch holds: tile t is at t - T0
// there. T0 is a multiple of LD, and T0, T1 and LD of 16. The zero
// value is every tile, LD = TP.
type TileRange struct {
	T0, T1, LD int64
}

// Whole reports the zero range: every tile.
func (r TileRange) Whole() bool { return r == TileRange{} }

// TileParts splits tp tiles into parts of ld (the last one short where
// ld does not divide tp); one whole range where ld is 0 or holds them all.
func TileParts(tp, ld int64) []TileRange {
	if ld <= 0 || ld >= tp {
		return []TileRange{{}}
	}
	var parts []TileRange
	for t0 := int64(0); t0 < tp; t0 += ld {
		parts = append(parts, TileRange{T0: t0, T1: min(t0+ld, tp), LD: ld})
	}
	return parts
}

// WinogradInput writes V[P, C, TP] (P = (m+2)², the points of the
// transform): V[p, c, t] = (Bᵀ·d·B)[p] for the (m+2)×(m+2) patch d of
// channel c that tile t reads (zeros in the padding); tiles past T are
// zeros. With a Part, V is [P, C, Part.LD] and holds the part's tiles.
type WinogradInput struct {
	X, V Buf
	Geom ConvGeom
	Tile int64
	Part TileRange `msgpack:",omitempty"`
}

// WinogradProduct is M[p, o, t] = Σ_c U[p, o, c]·V[p, c, t]: one product
// per point p, with U the weights transformed at build time (G·g·Gᵀ),
// stored in blocks of 4 output channels, [P, ⌈O/4⌉, C, 4] (zeros past
// O), so that a register tile of channels reads a few streams.
// V and M hold LD tiles per row (0: TP), of which the product computes
// the first TP: a part's (TileRange).
type WinogradProduct struct {
	V, U, M     Buf
	P, C, O, TP int64
	LD          int64 `msgpack:",omitempty"`
}

// Stride returns the tiles per row of V and M.
func (o *WinogradProduct) Stride() int64 {
	if o.LD != 0 {
		return o.LD
	}
	return o.TP
}

// WinogradOutput writes Out [N, O, OH, OW] = act(Aᵀ·m·A + bias) +
// residual from each tile's P sums m of M[P, O, TP], the part of each
// m×m block inside the plane. With a Part, M is [P, O, Part.LD] and it
// writes the part's tiles.
type WinogradOutput struct {
	M, Out   Buf
	Geom     ConvGeom
	Tile     int64
	Epilogue Epilogue
	Part     TileRange `msgpack:",omitempty"`
}

// WinogradTiles returns the tiles of F(m×m, 3×3) over g's output: th×tw
// per image, t in all, and tp, t rounded up to a multiple of 16.
func (g ConvGeom) WinogradTiles(m int64) (th, tw, t, tp int64) {
	th, tw = (g.OH+m-1)/m, (g.OW+m-1)/m
	t = g.N * th * tw
	return th, tw, t, (t + 15) / 16 * 16
}

// DepthwiseNHWC is a depthwise convolution over channels-last X and Out
// ([N, H, W, C]) with the weights stored tap-major, [KH·KW, C].
type DepthwiseNHWC struct {
	X, W, Out Buf
	Geom      ConvGeom
	Epilogue  Epilogue
}

// Relayout moves [N, C, HW] to [N, HW, C] (ToNHWC) or back.
type Relayout struct {
	Src, Dst Buf
	N, C, HW int64
	ToNHWC   bool
}

// PoolGeom is a 2-D pool's geometry: input [N, C, H, W], output [N, C, OH, OW].
type PoolGeom struct {
	N, C, H, W             int64
	KH, KW                 int64
	StrideH, StrideW       int64
	PadT, PadL, PadB, PadR int64
	DilH, DilW             int64
	OH, OW                 int64
}

// Pool2D is a max or average pool over NCHW tensors.
type Pool2D struct {
	X, Out          Buf
	Max             bool // else average
	Geom            PoolGeom
	CountIncludePad bool // average: divide by the whole window, padding included
}

// ReduceFn selects what a Reduce computes. Over an empty set Sum gives 0,
// Mean NaN, Max -Inf, Min +Inf and Prod 1; Max and Min propagate NaN.
type ReduceFn uint8

// The reductions.
const (
	ReduceSum ReduceFn = iota
	ReduceMean
	ReduceMax
	ReduceMin
	ReduceProd
	numReduceFns
)

var reduceNames = [...]string{ReduceSum: "sum", ReduceMean: "mean", ReduceMax: "max", ReduceMin: "min", ReduceProd: "prod"}

func (f ReduceFn) String() string {
	if f < numReduceFns {
		return reduceNames[f]
	}
	return "ReduceFn(" + strconv.Itoa(int(f)) + ")"
}

// ParseReduceFn returns the reduction named s.
func ParseReduceFn(s string) (ReduceFn, bool) {
	for f, n := range reduceNames {
		if n == s {
			return ReduceFn(f), true
		}
	}
	return 0, false
}

// Reduce reduces X (Shape) over Axes into Out (the kept dims, in order).
type Reduce struct {
	X, Out Buf
	Fn     ReduceFn
	DType  tensor.DType
	Shape  []int64
	Axes   []int64
}

// ArgReduce is the index (i64) of the first largest (Max) or smallest
// element along the middle dim of X viewed as [Outer, Axis, Inner].
type ArgReduce struct {
	X, Out             Buf
	Max                bool
	Outer, Axis, Inner int64
	DType              tensor.DType
}

// TopK selects, along the middle dim of X viewed as [Outer, Axis, Inner],
// the K largest (Largest) or smallest elements of each line, in order:
// Values (X's dtype) and Indices (i64), both [Outer, K, Inner]. The order
// is total: equal values by lower index first, and a NaN ranks above every
// number (PyTorch's topk), so it leads the largest and trails the
// smallest.
type TopK struct {
	X, Values, Indices    Buf
	Outer, Axis, Inner, K int64
	Largest               bool
	DType                 tensor.DType
}

// Softmax normalizes X viewed as [Outer, Axis, Inner] along Axis (its log
// when Log).
type Softmax struct {
	X, Out             Buf
	Outer, Axis, Inner int64
	Log                bool
}

// LayerNorm normalizes each of Rows rows of Cols elements (RMSNorm when
// RMS: no mean subtracted, no bias), then scales and shifts.
type LayerNorm struct {
	X, Scale, Bias, Out Buf // Scale and Bias may be NoBuf
	Rows, Cols          int64
	RMS                 bool
	Eps                 float64
}

// AddLayerNorm is LayerNorm(A + B), also storing A + B in Sum when Sum is
// not NoBuf.
type AddLayerNorm struct {
	A, B, Scale, Bias, Out, Sum Buf // Scale, Bias and Sum may be NoBuf
	Rows, Cols                  int64
	Eps                         float64
}

// AttnGeom is attention's geometry: Out[b..., Sq, Dv] over the broadcast
// batch dims Batch. Each operand has an element stride per batch dim (0
// broadcasts) and a row stride (0: rows back to back); the mask, when
// present, also has strides along Sq and Sk.
type AttnGeom struct {
	Batch                                     []int64
	QStrides, KStrides, VStrides, MaskStrides []int64
	QRow, KRow, VRow                          int64
	MaskRowStride, MaskColStride              int64
	Sq, Sk, D, Dv                             int64
	Scale                                     float64
	Causal                                    bool // query i sees keys j <= i + (Sk - Sq)
}

// Attention is softmax(Q·Kᵀ·Scale + Mask)·V.
type Attention struct {
	Q, K, V, Mask, Out Buf // Mask may be NoBuf
	Geom               AttnGeom
}

// Memcpy copies Src's bytes to Dst (the smaller of the two sizes).
type Memcpy struct {
	Src, Dst Buf
}

// Copy is a strided copy of Shape elements of ElemSize bytes: element i
// (a multi-index) goes from SrcOff + i·SrcStrides to DstOff + i·DstStrides.
type Copy struct {
	Src, Dst               Buf
	ElemSize               int64
	Shape                  []int64
	DstOff, SrcOff         int64
	DstStrides, SrcStrides []int64
}

// Fill sets every element of Dst to Value.
type Fill struct {
	Dst   Buf
	DType tensor.DType
	Value float64
}

// Gather takes, for X viewed as [Outer, AxisLen, Inner] elements of
// ElemSize bytes, the rows named by Idx (i32 or i64) along the middle dim.
type Gather struct {
	X, Idx, Out           Buf
	Outer, AxisLen, Inner int64
	ElemSize              int64
	IdxDType              tensor.DType
}

// Scatter writes, in place, Upd's M elements into Out [N] at the indices
// Idx (IdxDType), in order: of two updates of one index the later wins;
// negative indices count from the end. Out already holds the data (a
// Memcpy before it), elements of ElemSize bytes moved as bits.
type Scatter struct {
	Out, Idx, Upd Buf
	N, M          int64
	ElemSize      int64
	IdxDType      tensor.DType
}

// Iota writes 0, 1, ..., N-1.
type Iota struct {
	Out   Buf
	N     int64
	DType tensor.DType
}

// Dispatch launches GPU kernel Kernel (an index into Program.Kernels)
// over Groups workgroups with its parameters bound to Args, in order.
//
// Offsets holds, for a kernel that takes its parameters' offsets at
// launch (Kernel.Offsets), one per Args entry: where the tensor starts in
// the bound buffer, in elements of that parameter's element type. It is
// empty for a kernel with the offsets compiled in. A dispatch with offsets
// is tagged "dispatch_offsets", so a reader that predates them refuses
// the artifact by name instead of launching kernels without them.
type Dispatch struct {
	Kernel  int
	Groups  [3]int64
	Args    []Buf
	Offsets []int64 `msgpack:",omitempty"`
}

// NativeCall calls function Func of the program's native code
// (Program.Native.Funcs) over its range, with its inputs bound to In and
// its outputs to Out, in order.
type NativeCall struct {
	Func int
	In   []Buf
	Out  []Buf
	// Lo and Hi narrow the range to [Lo, Hi) of the function's [0, N)
	// when Hi > 0: one part of a Winograd convolution's tiles.
	Lo, Hi int64 `msgpack:",omitempty"`
}

func (*MatMul) Kind() Kind        { return "matmul" }
func (*PackedMatMul) Kind() Kind  { return "matmul_packed" }
func (*PackedConv1x1) Kind() Kind { return "conv1x1_packed" }
func (*QMatMul) Kind() Kind       { return "matmul_i8" }
func (*Conv2D) Kind() Kind        { return "conv2d" }
func (*DepthwiseNHWC) Kind() Kind { return "dwconv_nhwc_taps" }
func (*TapConv2D) Kind() Kind     { return "conv2d_taps" }
func (*Reduce) Kind() Kind        { return "reduce" }
func (*ArgReduce) Kind() Kind     { return "argreduce" }
func (*TopK) Kind() Kind          { return "topk" }
func (*Softmax) Kind() Kind       { return "softmax" }
func (*LayerNorm) Kind() Kind     { return "layernorm" }
func (*AddLayerNorm) Kind() Kind  { return "add_layernorm" }
func (*Attention) Kind() Kind     { return "attention" }
func (*Memcpy) Kind() Kind        { return "memcpy" }
func (*Copy) Kind() Kind          { return "copy" }
func (*Fill) Kind() Kind          { return "fill" }
func (*Gather) Kind() Kind        { return "gather" }
func (*Scatter) Kind() Kind       { return "scatter" }
func (*Iota) Kind() Kind          { return "iota" }
func (*Elementwise) Kind() Kind   { return "ew" }

// Kind tags a call over part of its range, a Winograd step over part of
// its tiles and a product of another stride apart from the whole ones,
// so that a loader from before parts refuses them rather than running
// the whole range.
func (o *NativeCall) Kind() Kind {
	if o.Hi > 0 {
		return "native_part"
	}
	return "native"
}

func (o *WinogradInput) Kind() Kind {
	if !o.Part.Whole() {
		return "winograd_input_part"
	}
	return "winograd_input"
}

func (o *WinogradProduct) Kind() Kind {
	if o.LD != 0 {
		return "winograd_product_part"
	}
	return "winograd_product"
}

func (o *WinogradOutput) Kind() Kind {
	if !o.Part.Whole() {
		return "winograd_output_part"
	}
	return "winograd_output"
}

func (o *Dispatch) Kind() Kind {
	if len(o.Offsets) > 0 {
		return "dispatch_offsets"
	}
	return "dispatch"
}

func (o *QConv2D) Kind() Kind {
	if o.XNHWC || o.OutNHWC {
		return "conv2d_i8_nhwc"
	}
	return "conv2d_i8"
}

func (o *Relayout) Kind() Kind {
	if o.ToNHWC {
		return "nchw_to_nhwc"
	}
	return "nhwc_to_nchw"
}

func (o *Pool2D) Kind() Kind {
	if o.Max {
		return "maxpool2d"
	}
	return "avgpool2d"
}

func (o *MatMul) Refs() []Ref       { return writes(o.Epilogue.refs(reads(o.A, o.B)), o.Out) }
func (o *PackedMatMul) Refs() []Ref { return writes(o.Epilogue.refs(reads(o.A, o.B)), o.Out) }
func (o *QMatMul) Refs() []Ref {
	return opt(writes(opt(reads(o.A, o.B), false, o.ZeroAt, o.Bias), o.Out), true, o.Scratch)
}
func (o *QConv2D) Refs() []Ref {
	return opt(writes(opt(reads(o.X, o.W), false, o.Bias), o.Out, o.XPad), true, o.OutT)
}
func (o *PackedConv1x1) Refs() []Ref   { return writes(o.Epilogue.refs(reads(o.X, o.W)), o.Out) }
func (o *Conv2D) Refs() []Ref          { return writes(o.Epilogue.refs(reads(o.X, o.W)), o.Out) }
func (o *DepthwiseNHWC) Refs() []Ref   { return writes(o.Epilogue.refs(reads(o.X, o.W)), o.Out) }
func (o *TapConv2D) Refs() []Ref       { return writes(o.Epilogue.refs(reads(o.X, o.W)), o.Out) }
func (o *WinogradInput) Refs() []Ref   { return writes(reads(o.X), o.V) }
func (o *WinogradProduct) Refs() []Ref { return writes(reads(o.V, o.U), o.M) }
func (o *WinogradOutput) Refs() []Ref  { return writes(o.Epilogue.refs(reads(o.M)), o.Out) }
func (o *Relayout) Refs() []Ref        { return writes(reads(o.Src), o.Dst) }
func (o *Pool2D) Refs() []Ref          { return writes(reads(o.X), o.Out) }
func (o *Reduce) Refs() []Ref          { return writes(reads(o.X), o.Out) }
func (o *ArgReduce) Refs() []Ref       { return writes(reads(o.X), o.Out) }
func (o *TopK) Refs() []Ref            { return writes(reads(o.X), o.Values, o.Indices) }
func (o *Softmax) Refs() []Ref         { return writes(reads(o.X), o.Out) }
func (o *LayerNorm) Refs() []Ref {
	return writes(opt(reads(o.X), false, o.Scale, o.Bias), o.Out)
}
func (o *AddLayerNorm) Refs() []Ref {
	return opt(writes(opt(reads(o.A, o.B), false, o.Scale, o.Bias), o.Out), true, o.Sum)
}
func (o *Attention) Refs() []Ref {
	return writes(opt(reads(o.Q, o.K, o.V), false, o.Mask), o.Out)
}
func (o *Memcpy) Refs() []Ref { return writes(reads(o.Src), o.Dst) }
func (o *Copy) Refs() []Ref   { return writes(reads(o.Src), o.Dst) }
func (o *Fill) Refs() []Ref   { return writes(nil, o.Dst) }
func (o *Gather) Refs() []Ref { return writes(reads(o.X, o.Idx), o.Out) }

// Refs: Out is read (the data it holds) and written.
func (o *Scatter) Refs() []Ref { return writes(reads(o.Out, o.Idx, o.Upd), o.Out) }
func (o *Iota) Refs() []Ref    { return writes(nil, o.Out) }

// Refs of a dispatch are all reads: which parameters a kernel writes is in
// its Kernel entry, which the GPU runtime checks.
func (o *Dispatch) Refs() []Ref { return reads(o.Args...) }

func (o *NativeCall) Refs() []Ref { return writes(reads(o.In...), o.Out...) }

func (o *Elementwise) Refs() []Ref {
	rs := make([]Ref, 0, len(o.In)+len(o.Out))
	for _, in := range o.In {
		rs = append(rs, Ref{Buf: in.Buf})
	}
	for _, out := range o.Out {
		rs = append(rs, Ref{Buf: out.Buf, Write: true})
	}
	return rs
}
