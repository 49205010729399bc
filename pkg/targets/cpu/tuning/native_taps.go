package tuning

// Tap-major convolutions: which convolutions the cpu target runs as
// conv2d_taps (lir.TapConv2D: generated code vectorized over output
// channels that visits each output position's live taps alone; cgen's
// tapconv.go), and how that code is split into work.

// NativeTapConv reports whether a one-group convolution of shape s, whose
// (tap, output position) pairs read the input live of total times (the
// rest read the padding), runs tap-major where native code is built: at
// most half of them live, SplitSparseTaps' bound. The generated conv2d
// vectorizes over output positions, so on planes narrower than a vector
// it runs a tap wherever one of a vector's lanes reads the input;
// DeepLabV3's ASPP 3x3 at dilation 12 over 14x14 (960 -> 256 channels)
// has 1.65 live taps per position and ran 3 of 9 taps per position so.
// Split into rectangles of the same live taps (the portable build's
// route) it spent a fifth of its time on window copies and ran the
// corners' products at 4 rows.
//
// Dense stride-2 convolutions too, where every level has AVX-512, with
// at least TapConvMinChannels input channels and an item's
// weights (its 64 output channels by every tap and input channel) within
// TapConvItemWeightBytes: the generated conv2d's stride-2 tiles shuffle
// the even lanes out of two loads per tap, while tap-major tiles
// broadcast each input once for 64 channels. BenchmarkConv2D's harness
// (one thread, Zen 4, best of 3 at 30 runs, 2026-11-28), 3x3 stride 2,
// GFLOP/s of the generated conv2d against tap-major: 128 -> 256 channels
// onto 14x14 94 / 106, 160 -> 160 onto 7x7 89 / 100, 256 -> 512 onto 7x7
// 90 / 95, 400 -> 400 onto 7x7 78 / 88, 64 -> 128 onto 28x28 93 / 103;
// 512 -> 512 onto 7x7 (item weights 1.2 MB) 76 / 75, and over 3 or 32
// channels (stems) tap-major lost (0.7-0.95x).
func NativeTapConv(s ConvShape, live, total int64) bool {
	if s.Groups > 1 {
		return false
	}
	if SplitSparseTaps(live, total) {
		return true
	}
	if s.KW == 1 && s.KH >= TapConvColumnMinTaps && s.StrideH == 1 && s.StrideW == 1 && s.DilH == 1 &&
		s.OH*s.OW <= TapConvColumnMaxPlane && s.C >= TapConvMinChannels {
		return true
	}
	return s.AVX512 && s.StrideH == 2 && s.StrideW == 2 && s.DilH == 1 && s.DilW == 1 &&
		s.C >= TapConvMinChannels && s.KH*s.KW*s.C*TapConvItemChannels*4 <= TapConvItemWeightBytes
}

// TapConvColumnMinTaps and TapConvColumnMaxPlane bound the column kernels
// (KH x 1, stride 1, as Inception's factorized 7x1 and 5x1 layers) that
// run tap-major at every CPU level, over at least
// TapConvMinChannels input channels. On small planes the
// generated conv2d's vectors of output positions leave lanes idle (289
// positions of 17x17 take 19 vectors of 16) and load every tap, masked,
// where a tall kernel's top and bottom taps read padding; tap-major tiles
// run over output channels and visit live taps alone. BenchmarkConv2DSweep
// (one thread, Zen 4, best of 3, 2026-11-28), GFLOP/s of the generated
// conv2d against tap-major at x86-64-v3 / x86-64-v4: 7x1 over 192
// channels at 17x17 74 / 111 against 109 / 122, over 160 channels 75 / 115
// against 112 / 120, 5x1 over 96 channels at 14x14 98 / 107 against 110 /
// 114; at 28x28 (7x1, 64 channels) 94 / 110 against 91 / 109, even, and
// 3x1 kernels mixed (over 384 channels at 8x8 98 / 114 against 83 / 118;
// over 64 at 28x28 93 / 106 against 100 / 99), so they stay.
const (
	TapConvColumnMinTaps  = 5
	TapConvColumnMaxPlane = 20 * 20
)

// TapConvMinChannels is the fewest input channels of a dense (not
// sparse-tap) convolution NativeTapConv takes, stride 2 or a column
// kernel: stride 2 over 3 or 32 channels (stems) lost tap-major, and
// column kernels were measured from 64. With TapConvItemWeightBytes it
// bounds the stride-2 ones: an item reads its block of weights once per
// output row, which stays in a 1 MiB L2 (Zen 4's; Intel's since Ice Lake
// hold 1.25-2 MiB) only up to about its size.
const (
	TapConvMinChannels     = 64
	TapConvItemWeightBytes = 1 << 20
)

// TapConvItemChannels is the output channels of one item of a tap-major
// convolution's range (a multiple of every level's tile): with the
// item's row of positions, its share of the weights (a block of 64
// channels by the live taps' input channels) stays in L2 for the next
// item, the next row.
const TapConvItemChannels = 64
