package tuning

import "github.com/rlx-project/rlx/pkg/lir"

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
// Row kernels on small planes and kernels of 7x7 and more, at stride 1,
// where some level lacks AVX-512 (TapConvRowMaxPlane,
// TapConvWideMinTaps). Stride-1 kernels whose output rows are narrow and
// not the input's width, at every level (narrowRows). Dense stride-2
// convolutions too, with at least TapConvMinChannels input channels and
// a panel of weights
// (lir.TapConvPanel output channels by every tap and input channel)
// within TapConvPanelMaxBytes: the generated conv2d's stride-2 tiles
// shuffle the even lanes out of two loads per tap (and at x86-64-v3 it
// ran 0.5-1x the runtime, so stride 2 there went to the runtime's
// implicit GEMM), while tap-major tiles broadcast each input once for a
// tile's channels.
// BenchmarkConv2D's and BenchmarkConv2DSweep's harness (one thread, Zen
// 4, best of 2-3, 2026-11-29), 3x3 stride 2, GFLOP/s of tap-major
// against the generated conv2d at x86-64-v4 and against the runtime's
// AVX2 kernels (GODEBUG=cpu.avx512f=off) at x86-64-v3 (the 1.2 MB
// panel mixed from run to run):
//
//	channels, plane    panel     x86-64-v4   x86-64-v3
//	64 -> 128, 56      0.15 MB   108 / 98    101 / 83
//	128 -> 256, 28     0.3 MB    110 / 102    92 / 80
//	256 -> 512, 14     0.6 MB    106 / 95     83 / 64
//	512 -> 512, 14     1.2 MB    103 / 91     44-66 / 56-62
//	768 -> 768, 14     1.8 MB     93 / 82     52 / 60
//	1024 -> 1024, 14   2.4 MB     89 / 63     49 / 62
//	5x5, 64 -> 64, 28  0.4 MB    111 / 92     94 / 52
//
// AVX2's tile is 16 channels of the panel's 64, so it reads a quarter of
// each 256-byte row of the panel, and the item's input rows once for
// each quarter: from L3, past L2's size, it lost, on the panel's size
// and on the input's. Inception-v3's Mixed_6a (288 -> 384 channels, 35x35
// onto 17x17 unpadded: a 0.66 MB panel over a 1.4 MB input) ran 73-81
// against the runtime's 78-84 (and 60 against 72 in the model), its
// Mixed_7a (192 -> 320, 17x17 onto 8x8: 0.44 MB over 0.22 MB) 86-94
// against 57-76; the 64 -> 128 layer at 56x56 above reads 0.8 MB. The
// bound is coarse: ResNet-50's 128 -> 128 layer at 56x56 (a 1.6 MB input)
// ran 65-81 tap-major against 41-76, and stays on the runtime. Over
// 3 or 32 channels (stems) tap-major lost to the generated conv2d at
// x86-64-v4 (0.7-0.95x). The same rule serves armv8.2-a, whose tap-major
// code is tested under qemu but was not timed on hardware.
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
	if !s.AVX512 && s.KH == 1 && s.KW >= TapConvColumnMinTaps && s.StrideH == 1 && s.StrideW == 1 && s.DilW == 1 &&
		s.OH*s.OW <= TapConvRowMaxPlane && s.C >= TapConvMinChannels {
		return true
	}
	if !s.AVX512 && s.KH >= TapConvWideMinTaps && s.KW >= TapConvWideMinTaps && s.StrideH == 1 && s.StrideW == 1 &&
		s.DilH == 1 && s.DilW == 1 && s.C >= TapConvWideMinChannels {
		return true
	}
	if narrowRows(s) {
		return s.KH*s.KW*s.C*lir.TapConvPanel*4 <= TapConvPanelMaxBytes
	}
	if s.StrideH != 2 || s.StrideW != 2 || s.DilH != 1 || s.DilW != 1 || s.C < TapConvMinChannels {
		return false
	}
	panel := s.KH * s.KW * s.C * lir.TapConvPanel * 4
	if s.AVX512 {
		return panel <= TapConvPanelMaxBytesAVX512
	}
	// The input the convolution reads (its span of rows and columns,
	// padding included, which is close enough).
	input := s.C * ((s.OH-1)*s.StrideH + s.KH) * ((s.OW-1)*s.StrideW + s.KW) * 4
	return panel <= TapConvPanelMaxBytes && input <= TapConvPanelMaxBytes
}

// narrowRows reports a stride-1, undilated convolution of several taps
// over at least TapConvMinChannels input channels whose output rows are
// not the input's width (unpadded, or an even kernel padded on both
// sides: ConvTranspose k4 s2 p1's 2x2 phase convolution) and fill the
// generated conv2d's vectors of positions (16 lanes where every level
// has AVX-512, else 8) to less than TapConvNarrowRowFill: where rows keep
// the input's width the generated code runs the flattened plane and fills
// its vectors, but here it tiles row by row, and a row of 9 takes a
// vector of 16 (of 17, two). Tap-major tiles run along output channels
// instead; BenchmarkConv2DSweep ran them faster on every such shape
// measured, 2x2 padded by 1 (rows of 9, 17 and 33) and unpadded 3x3s, at
// x86-64-v4 and -v3 (docs/perf/ops.md, "ConvTranspose onto small planes").
// A tap-major tile is a panel's output channels, so at least one panel
// of them (lir.TapConvPanel): a DCGAN's last ConvTranspose (64 -> 3
// channels, k4 s2 p1 over 32x32: a 2x2 phase convolution onto 12
// channels in rows of 33) ran slower tap-major.
func narrowRows(s ConvShape) bool {
	if s.StrideH != 1 || s.StrideW != 1 || s.DilH != 1 || s.DilW != 1 || s.KH*s.KW < 2 ||
		s.C < TapConvMinChannels || s.O < lir.TapConvPanel || s.W <= 0 || s.OW == s.W {
		return false
	}
	lanes := int64(8)
	if s.AVX512 {
		lanes = 16
	}
	return float64(s.OW) < TapConvNarrowRowFill*float64((s.OW+lanes-1)/lanes*lanes)
}

// TapConvNarrowRowFill is the least fill of the generated conv2d's
// position vectors at which narrowRows leaves a convolution to it.
const TapConvNarrowRowFill = 0.75

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

// TapConvRowMaxPlane bounds the row kernels (1 x KW, stride 1, KW at
// least TapConvColumnMinTaps, as Inception's factorized 1x7 and 1x5
// layers) over at least TapConvMinChannels input channels that run
// tap-major where some level lacks AVX-512: through a padded copy of each
// input row (cgen's rowTilesOf), so a row's tiles are whole, not cut at
// both ends into single positions by the padding. BenchmarkConv2DSweep
// (one thread, Zen 4, best of 3, 2026-11-29), GFLOP/s of the generated
// conv2d against tap-major at x86-64-v3: 1x7 over 160 channels at 17x17
// 71 / 102, over 192 at 17x17 63 / 101, over 64 at 28x28 79 / 99, 1x5
// over 96 at 14x14 82 / 102; at x86-64-v4 they were even (102 / 99, 100
// / 99, 103 / 103, 103 / 99), so there the generated code keeps them.
const TapConvRowMaxPlane = 28 * 28

// TapConvWideMinTaps and TapConvWideMinChannels bound the wide kernels
// (KH and KW both at least TapConvWideMinTaps, stride 1, undilated) over
// at least TapConvWideMinChannels input channels that run tap-major where
// some level lacks AVX-512. AVX2's 16 registers hold the generated
// conv2d a smaller tile than AVX-512's 32, which a 7x7 kernel's loads per
// multiply-add make the bottleneck. BenchmarkConv2DSweep (one thread, Zen
// 4, best of 3, 2026-11-29), GFLOP/s of the generated conv2d against
// tap-major at x86-64-v3: 7x7 over 32 channels at 28x28 51 / 86, over 64
// at 28x28 55 / 76, over 128 at 14x14 47 / 61; at x86-64-v4 the generated
// code won (109 / 99, 109 / 106, 97 / 89), and 5x5 kernels were even at
// x86-64-v3 (over 32 at 28x28 95 / 95 and at 56x56 96 / 101, over 64 at
// 14x14 95 / 81), so they keep it.
const (
	TapConvWideMinTaps     = 7
	TapConvWideMinChannels = 32
)

// TapConvMinChannels is the fewest input channels of a dense (not
// sparse-tap) convolution NativeTapConv takes, stride 2 or a column
// kernel: stride 2 over 3 or 32 channels (stems) lost tap-major, and
// column kernels were measured from 64.
//
// TapConvPanelMaxBytes and TapConvPanelMaxBytesAVX512 bound a stride-2
// one's panel of weights, which an item reads once per output row: the
// largest measured that won, where some level lacks AVX-512 and where
// every level has it (NativeTapConv's table). Where some level lacks
// AVX-512, TapConvPanelMaxBytes bounds the input it reads as well. L2 is 1 MiB on Zen 4 and
// 1.25-2 MiB on Intel's since Ice Lake.
const (
	TapConvMinChannels         = 64
	TapConvPanelMaxBytes       = 1 << 20
	TapConvPanelMaxBytesAVX512 = 5 << 19 // 2.5 MiB
)

// TapConvRowCopyBytes bounds the copy of an input row, padded, that
// tap-major code reads a row kernel's (1 x KW) input through, on the
// stack beside the tile: it stays in L1 with the weights' stream.
const TapConvRowCopyBytes = 24 << 10

// TapConvBlockBytes and TapConvBlockMinInput shape the channel blocks of
// a blocked level's tap-major item (cgen's tapChannelBlock; AVX2, whose
// tile covers 16 of a panel's 64 channels): items whose input rows span
// more than TapConvBlockMinInput, half again a 32 KiB L1, run their input
// channels in blocks, each block's input rows and one tile's weights for
// it within TapConvBlockBytes, half of L1, so that both stay there while
// the block runs every tile of the row for each sub-block of channels.
// BenchmarkConv2D's and BenchmarkConv2DSweep's harness at x86-64-v3 (one
// thread, Zen 4, medians of 3, 2026-11-29), GFLOP/s unblocked / blocked:
// 3x3 stride 2 over 512 channels at 14x14 (92 KB of rows) 52 / 72, 7x7
// over 128 at 14x14 (72 KB) 57 / 67, over 64 at 28x28 (61 KB) 73 / 81;
// at 44-50 KB (3x3 stride 2 over 64 at 56x56, 128 at 28x28, 256 at
// 14x14; 7x1 over 64 at 28x28) the two were within this VM's noise.
// Each block costs a tile a load and a store of its accumulators: with
// fewer than TapConvBlockMinSteps (input channel, live tap) pairs per
// position in a block, as DeepLabV3's ASPP at dilation 12 over 14x14
// has (1.65 live taps a position, 12 channels a block), that cost and
// the dispatch of a tile outweighed the reads saved: it ran 0.6x.
const (
	TapConvBlockBytes    = 16 << 10
	TapConvBlockMinInput = 48 << 10
	TapConvBlockMinSteps = 64
)
