package specialize

import "github.com/rlx-project/rlx/pkg/lir"

// Caps are what a backend's kernels can do, as far as specialization's
// decisions depend on them (passes.go). The zero value asks for nothing:
// contiguous operands, weights as they are, every value NCHW (the GPU
// targets). A backend fills in what its kernels compute and where they
// pay; the thresholds behind its answers are the backend's (the CPU's
// are in pkg/targets/cpu/tuning).
type Caps struct {
	// StridedAttention: the attention kernel reads its operands with
	// per-head and row strides (ViewOf), so the slices and transposes
	// feeding it can be views (views.go).
	StridedAttention bool

	// Int8Products: products of quantized values run as integer products
	// (matmul_i8, int8.go), their int8 weights packed by Packer.PackInt8.
	Int8Products bool
	// Int8MinK: products summing fewer terms (a matmul's K, a
	// convolution's C·KH·KW) stay in f32 (tuning.Int8MinK).
	Int8MinK int64

	// Packer packs weights into the kernels' layouts at build time; nil
	// packs nothing, which also turns off every kernel that reads packed
	// weights (matmul_packed, conv1x1_packed, channels-last stretches).
	Packer Packer

	// PackedConv1x1 reports whether a 1x1 convolution of geometry g runs
	// as the transposed product with Wᵀ packed (conv1x1_packed); nil: never.
	PackedConv1x1 func(g lir.ConvGeom) bool

	// ChannelsLast reports whether a convolution of geometry g runs
	// channels last (a 1x1 one as matmul_packed over [N·H·W, C], a
	// depthwise one as dwconv_nhwc_taps): the kernel computes it and the
	// plane is one where it pays. nil: never.
	ChannelsLast func(g lir.ConvGeom) bool
	// Int8ChannelsLast: integer convolutions (conv2d_i8) read their
	// input and write their result channels last or NCHW alike (their
	// kernel relays an NCHW input itself and transposes to an NCHW
	// result), so they join channels-last stretches wherever a neighbour
	// runs so, without relayout steps. Only with ChannelsLast.
	Int8ChannelsLast bool

	// WinogradTile returns m where a 3x3, stride-1 convolution of
	// geometry g whose epilogue applies act runs as Winograd's F(m×m,
	// 3×3) (winograd_input, winograd_product, winograd_output, its
	// weights transformed when the artifact is loaded), 0 where it runs
	// as itself. nil: never.
	WinogradTile func(g lir.ConvGeom, act lir.Activation) int64
	// WinogradPart returns how many of the tp tiles of such a
	// convolution at tile m one part holds: the three steps run part by
	// part over scratch of one part's size (lir.TileRange). nil or tp:
	// every tile at once.
	WinogradPart func(g lir.ConvGeom, m, tp int64) int64

	// InPlaceConcat: a concat's operands may be computed straight into
	// their blocks of its result (concat.go), which puts buffers at
	// offsets inside another value's block: every kernel must take a
	// buffer at any offset that is a multiple of its element size.
	InPlaceConcat bool

	// StridedElementwise: an elementwise region reads an operand through
	// any non-negative strides from any offset that is a multiple of its
	// element size, so a slice only such regions read is a view of its
	// source (slices.go).
	StridedElementwise bool

	// SubsampleStrided: a 1x1 convolution with a stride above 1 and no
	// padding runs as a slice of every stride-th position and the
	// convolution at stride 1 (subsample.go), where the backend's stride-1
	// products are faster than its strided ones.
	SubsampleStrided bool

	// SparseTaps reports whether a convolution of whose total (tap,
	// output position) pairs only live read the input, not the padding,
	// runs split into rectangles of the same live taps (sparsetaps.go):
	// more, smaller steps that multiply no padding. nil: never.
	SparseTaps func(live, total int64) bool

	// TapConv reports whether a one-group convolution of geometry g runs
	// as conv2d_taps (lir.TapConv2D, its weights laid out tap-major at
	// build time): kernels vectorized over output channels that visit
	// each output position's live taps alone. It is decided after
	// SparseTaps' split, which a backend with it leaves nil. nil: never.
	TapConv func(g lir.ConvGeom) bool
}

// Packer lays out weights the way a backend's kernels read them.
type Packer interface {
	// Layout names the panel layout PackB produces; it is part of each
	// packed weight's name, which the loader checks against the machine's.
	Layout() string
	// PackB packs the row-major [k, n] matrix b into the layout.
	PackB(k, n int, b []float32) ([]float32, error)
	// DepthwiseTaps lays out the [c, 1, KH, KW] weights of a depthwise
	// convolution (taps = KH·KW) tap-major, as [taps, c].
	DepthwiseTaps(w []float32, c, taps int) []float32
	// PackInt8 packs the row-major int8 [k, n] weight b of an integer
	// product (lir.QMatMul): the layout is the same on every CPU.
	PackInt8(k, n int, b []int8) []byte
	// PackInt8Conv packs the int8 [O, C, KH, KW] weight w of an integer
	// convolution of geometry g (lir.QConv2D).
	PackInt8Conv(w []int8, g lir.ConvGeom) []byte
	// WinogradLen is the length of F(m×m, 3×3)'s U for the [o, c, 3, 3]
	// weights of a convolution, which the loader derives from them
	// (artifact.DeriveWinograd).
	WinogradLen(o, c, m int) (int, error)
}

// Pointwise reports whether g is a 1x1 convolution that is a plain
// product over its channels: stride 1, no padding or dilation, one group.
func Pointwise(g lir.ConvGeom) bool {
	return g.KH == 1 && g.KW == 1 && g.Groups == 1 && g.StrideH == 1 && g.StrideW == 1 &&
		g.DilH == 1 && g.DilW == 1 && g.PadT == 0 && g.PadL == 0 && g.PadB == 0 && g.PadR == 0
}
