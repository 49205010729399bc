package tuning

// Compile-time rules: the CPU backend's capabilities (pkg/targets) read
// these when specialize's decision passes ask whether a convolution runs
// packed or channels last. Measurements: docs/perf/scheduling.md.

// Conv1x1PackedMaxHW is the largest plane (H·W) on which a 1x1
// convolution runs as the transposed product outᵀ = xᵀ·Wᵀ with Wᵀ
// packed at build time (conv1x1_packed). On a small plane the NCHW
// product's columns are the plane's positions, too few to fill the
// micro-kernel's column tiles, while the transposed product tiles over
// the output channels instead. Once the plane alone makes full tiles the
// plain product is the faster one, so the rule stops there: the bound
// takes a 7x7 plane (MobileNet's last stage) and leaves 14x14 out.
const Conv1x1PackedMaxHW = 100

// ChannelsLastMaxPlane is the largest input plane (H·W) of a convolution
// that runs channels last (a stretch of 1x1 and depthwise convolutions
// whose values are stored NHWC). On small planes NCHW rows are too short
// for full vectors in a depthwise convolution and too narrow for full
// column tiles in a 1x1 one; channels last, both run along the channels.
// The bound takes MobileNet's 28x28 stage, where the depthwise layers
// gain far more than the stretch's extra relayout costs, and leaves the
// larger planes, whose NCHW rows are long enough, in NCHW.
const ChannelsLastMaxPlane = 28 * 28

// SubsampleStrided1x1 is whether a 1x1 convolution with a stride above 1
// and no padding runs as a copy of every stride-th position and the
// convolution at stride 1 (specialize's Caps.SubsampleStrided): every
// such convolution, at every CPU level. The strided form reads its input
// through gathers, or at x86-64-v4 through generated code whose rate fell
// with the channel count (the even lanes of two loads per vector, a
// broadcast weight shared by few positions); the subsampled one is a
// plain product, which the packed and channels-last kernels run at their
// full rate, for a copy of 1/O of its work. On the operator sweep (one
// thread, Zen 4, 2026-11-28, ORT/rlx): 1024->2048 over 14x14 0.64 ->
// 1.11, 512->1024 over 28x28 0.72 -> 1.06, 256->512 over 28x28 0.85 ->
// 0.94, and 64->128 over 56x56 1.44 -> 1.11 (its product of 64 input
// channels gains least from the full rate); ResNet-50 7% faster;
// ResNet-18 about 1% slower at x86-64-v4 (its three small shortcuts) and
// 3-7% faster portable and at x86-64-v3 (docs/perf/ops.md).
const SubsampleStrided1x1 = true

// SplitSparseTaps reports whether a convolution of whose total (tap,
// output position) pairs only live read the input runs split into
// rectangles of the same live taps (specialize's sparsetaps.go): at most
// half. The kernels vectorize over output positions, so on a plane
// narrower than a vector each masked tap costs as much as a live one,
// while each rectangle costs a slice of its input, a step and its part of
// a concat. DeepLabV3's ASPP 3x3 at dilation 12 over 14x14 (960 -> 256
// channels, 18% live) is the case; a "same" 3x3 over 7x7 is 73% live and
// stays whole.
func SplitSparseTaps(live, total int64) bool { return 2*live <= total }

// Int8Products reports whether products of quantized values (an 8-bit
// operand minus its zero point times an int8 weight) run as integer
// products (specialize's Caps.Int8Products, lir.QMatMul) where the CPUs
// they are built for run the integer kernel named (qgemm.Int8Kernel):
// with AVX-512 VNNI one vpdpbusd does four times the multiply-adds of an
// f32 FMA, and the products beat ONNX Runtime's own integer kernels on
// the operator sweep; with AVX2 alone vpmaddwd sums int16 pairs exactly
// at up to twice the f32 rate (docs/perf/ops.md measures both). The
// pure-Go twin ("go": arm64, or amd64 built purego) is far slower than
// the f32 products, so those stay in f32.
func Int8Products(kernel string) bool { return kernel == "vnni" || kernel == "avx2" }

// Int8MinK is the fewest terms a product's sums (K; a convolution's
// C·KH·KW) must have to run as an integer product on the kernel named
// (Int8Products); shorter ones stay in f32. An integer convolution pays
// fixed costs per output position that the f32 ones do not (its input
// relaid channels last, its result written channels last and transposed
// into NCHW), which short sums do not earn back: in a QDQ MobileNetV2 at
// one thread with VNNI, K = 16-27 ran at 0.4-0.7x of f32 (the 112x112
// 16 -> 96 expansion the worst), K = 32 even, K ≥ 64 at 1.5-2.3x. The
// AVX2 kernel's sums are slower and it widens its input too: there K =
// 16-32 ran at 0.48-0.94x of f32, K = 64 at 0.93-0.99x, K = 96-960 at
// 1.02-1.46x (docs/perf/ops.md, "Integer products on AVX2").
func Int8MinK(kernel string) int64 {
	if kernel == "avx2" {
		return 96
	}
	return 32
}
