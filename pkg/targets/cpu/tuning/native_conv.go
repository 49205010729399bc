package tuning

// Native convolutions: which Conv2D steps the cpu target compiles to C
// (pkg/targets/cpu/cgen, conv.go) instead of running the runtime's
// implicit-GEMM kernel, and how the generated code is split into work.
// Measurements: BenchmarkConv2D (ResNet-18's layers) and
// BenchmarkConv2DSweep in pkg/targets/cpu/cgen (conv_test.go), one
// thread, the runtime's kernel and the generated code of each level in
// the same run (Zen 4; ratios are of GFLOP/s, best of 20 runs).

// ConvShape is what the rule reads of a convolution: its kernel, steps,
// dilation, groups, channel counts and output plane.
type ConvShape struct {
	KH, KW           int64
	StrideH, StrideW int64
	DilH, DilW       int64
	Groups           int64
	C, O             int64 // input and output channels (all groups)
	OH, OW           int64
	W                int64 // the input's width (0: unknown)
	// Padded is whether the convolution pads its input: a 1x1 kernel with
	// padding is no plain product (its border is the bias alone), so the
	// runtime runs it as a general implicit GEMM, not as a packed one.
	Padded bool
	// AVX512 is whether every CPU level the code is built for has
	// AVX-512 (x86-64-v4): one program serves all of an artifact's
	// levels, so the rule reads what the weakest of them has.
	AVX512 bool
}

// NativeConv reports whether generated code runs a convolution: a
// direct one with one group, and either every step 1, a kernel of more
// than one tap (or one tap with padding, where every level has AVX-512)
// and at least NativeConvMinChannels input channels, or
// (where every level the code is built for has AVX-512) steps of 2, no
// dilation and either NativeConvMinChannels input channels or a row of
// more than 3 taps (a stem's 7x7 over 3 channels), 1x1 kernels
// included; and, at any level, kernels of several taps over few
// channels at stride 1 or 2 on small planes (NativeConvFewChannelsPlane).
//
// Stride 1: on the sweep (3x3, 5x5, 7x7, 3x1, 1x3 and dilated 3x3
// kernels; planes of 2x2 to 112x112; 8 to 1024 channels) these ran 1.2x
// to 3.7x the runtime's implicit GEMM at x86-64-v4 and 1.05x to 3x at
// x86-64-v3: the runtime packs an im2col panel for every tile, which
// costs most where the reduction (C·KH·KW) or the plane is small, while
// the generated code reads the input in place and the weights as
// broadcasts, at 85-95% of the FMA peak.
//
// Stride 2: a tap is the even lanes of two loads, one shuffle more per
// vector (or, with few channels, one plain load from a tile's copy of
// its rows split into even and odd columns). AVX-512 masks the lanes in
// the padding off for free and shares each shuffled vector among 24
// channels; on BenchmarkConv2D and BenchmarkConv2DSweep (one thread,
// Zen 4, shared; best of 5-20, 2026-11-27) x86-64-v4 ran ResNet-18's
// 3x3 stride-2 layers 1.0-1.3x the runtime, its 1x1 shortcuts 1.4-1.6x,
// its 7x7 stem over 3 channels 1.0-1.3x (docs/perf/native.md has the
// model's per-step times), the sweep's 3x3 ones 1.1-1.4x, 5x5 1.8x and 1x1
// 1.1-1.4x. A 3x3 over 3 channels ran 0.95-1x: copying a row's columns
// costs about as much as a few of its taps, which pays over a row of 7
// taps but not of 3, so with few channels it takes only wider kernels.
// In the operator sweep against ONNX Runtime (1 thread) the 3x3
// stride-2 points went 0.56x to 0.68x (256 channels, 14x14) and 0.78x to
// 0.93x (64, 56x56), the 1x1 one 0.84x to 0.85x, the stem 1.03x to 1.12x;
// with rows of 8 or fewer taken two a vector (cgen's row pairs) the
// 256-channel 14x14 point went to 0.87x (docs/perf/ops.md, run 5).
// Unpadded 1x1 ones no longer reach this rule: SubsampleStrided1x1 makes
// them stride-1 products first, which ran faster from 256 channels up.
// AVX2's masked loads cost a mask register's load each and its 12
// accumulators share a shuffle among 6 channels: x86-64-v3 ran the 3x3
// ones 0.5-1x and the stem 0.85-1.1x, so an artifact with an x86-64-v3
// level (one program serves all its levels) leaves stride 2 to the
// runtime, or to tap-major code (NativeTapConv, checked first: from 64
// input channels at every level).
//
// A 1x1 stride-1 convolution with padding (ConvTranspose k3 s2's 1x1
// phase, with its output padding) is no plain product: the runtime runs
// it as its general implicit GEMM. There the generated code ran 1.2-1.95x
// the runtime at x86-64-v4 (BenchmarkConv2DSweep's 1x1s1p* points,
// 2026-11-27) and 0.7-1.3x at x86-64-v3 against the runtime's AVX2 GEMM
// (GODEBUG=cpu.avx512f=off), so it takes them where every level has
// AVX-512.
//
// Unpadded 1x1 stride-1 convolutions are plain products, which the
// runtime runs as its packed GEMM. Where every level has AVX-512 the
// generated code takes those over small planes (NativeConv1x1MaxPlane).
//
// It leaves to the runtime
//
//   - the other 1x1 stride-1 convolutions without padding, where the
//     generated code ran 0.9-1.4x the runtime's packed GEMM at x86-64-v4
//     and 0.6-1x at x86-64-v3;
//   - other strides, and dilated stride-2 kernels (not measured);
//   - column kernels (KH x 1) over large planes with many channels
//     (NativeConvColumnMaxPlane);
//   - grouped 1x1 convolutions at x86-64-v3 (nativeGrouped); depthwise
//     ones are NativeDepthwise's;
//   - at stride 1, fewer input channels than NativeConvMinChannels (an
//     image model's first layer): the input channels are the inner loop,
//     and with 3 of them a tile's set-up per row of taps (masks,
//     pointers) and its epilogue cost as much as its multiply-adds
//     (0.6-1.3x).
//
// The rule is the same for armv8.2-a (no AVX-512: stride 1 only), whose
// code (4-lane NEON vectors, the same tiles) is tested under qemu but was
// not timed on hardware.
func NativeConv(s ConvShape) bool {
	if depthwise(s) {
		return NativeDepthwise(s)
	}
	if s.Groups != 1 {
		return nativeGrouped(s)
	}
	small := s.C < NativeConvMinChannels && s.KH*s.KW > 1 && s.OH*s.OW <= NativeConvFewChannelsPlane
	if s.KW == 1 && s.KH > 1 && s.C >= NativeConvColumnChannels && s.OH*s.OW > NativeConvColumnMaxPlane {
		return false
	}
	if s.StrideH == 1 && s.StrideW == 1 {
		plain1x1 := s.KH*s.KW == 1 && s.AVX512 && s.OH*s.OW <= NativeConv1x1MaxPlane && s.C >= NativeConv1x1MinChannels
		return (s.KH*s.KW > 1 || s.Padded && s.AVX512) && s.C >= NativeConvMinChannels || small || plain1x1
	}
	stride2 := s.StrideH == 2 && s.StrideW == 2 && s.DilH == 1 && s.DilW == 1
	return stride2 && (s.AVX512 && (s.C >= NativeConvMinChannels || s.KW > 3) || small)
}

// NativeConvColumnMaxPlane and NativeConvColumnChannels bound the
// column kernels (KH x 1: a video model's temporal kt x 1 x 1 convolution
// imported as one over the plane [T, H·W]) that generated code runs: at
// least NativeConvColumnChannels input channels over more than
// NativeConvColumnMaxPlane output positions stay on the runtime's
// implicit GEMM. A column kernel reuses no input across taps within a
// row, so a tile's loads per multiply-add are a 1x1's over C·KH channels,
// and like the unpadded 1x1s (left to the runtime above) the GEMM's
// packed panels won on large planes. BenchmarkConv2D's harness (one
// thread, Zen 4, 2026-11-28), runtime against x86-64-v4, GFLOP/s: 3x1
// over [8, 3136] with 192 channels 97 against 73, 96 channels 90 against
// 72, 64 channels 84 against 73, 32 channels 68 against 74; over
// [32, 784] with 192 channels 95 against 77; over [8, 784] 87 against 93
// and over [4, 784] with 480 channels 102 against 110 (smaller planes:
// generated code). Row kernels (1x3 over [3136, 8]: 54 against 98) and
// square ones on large planes (3x3 over 64x224x224: 55 against 90) keep
// generated code.
const (
	NativeConvColumnMaxPlane = 16384
	NativeConvColumnChannels = 64
)

// NativeConvFewChannelsPlane is the largest output plane (positions) on
// which a convolution over fewer than NativeConvMinChannels input
// channels runs as generated code anyway: the runtime's implicit GEMM
// packs its im2col panels row run by row run, which costs most per
// multiply-add where rows are short and the reduction (C·KH·KW) small.
// BenchmarkConv2DSweep (one thread, Zen 4, 2026-11-28), generated code
// against the runtime, 3x3 kernels over 3 channels: stride 1 at 32x32
// 1.5x (x86-64-v3) and 3x (x86-64-v4), at 56x56 0.7x and 1.05x; stride 2
// into 14x14 2.9x and 4.4x, into 28x28 2.1x and 3.5x, into 56x56 0.7x
// and 1.05x. Tiny images (CIFAR's 32x32) and downscaled inputs have
// these planes; full-size stems stay on the rule above.
const NativeConvFewChannelsPlane = 32 * 32

// nativeGrouped reports whether generated code runs a grouped
// convolution that is not depthwise (ResNeXt's 3x3 with 4-8 channels a
// group, RegNet's, grouped 1x1s): each group is a dense convolution of
// its own channels, the same register tiles over fewer input channels.
// The runtime's implicit GEMM handles groups one small product at a time:
// on BenchmarkConv2DSweep (one thread, Zen 4, shared, 2026-11-27) the
// generated code ran 3x3 stride 1 and 2 with 2 to 32 channels a group
// 1.4-10x the runtime at x86-64-v3 and 2-15x at x86-64-v4 (32 groups of
// 4 channels over 56x56: 2.6-2.8x), a grouped 1x1 0.6x at x86-64-v3 and
// 1.2x at x86-64-v4: 1x1 kernels only where every level has AVX-512
// (docs/perf/native.md has the rates). Strides over 2 stay on the runtime.
func nativeGrouped(s ConvShape) bool {
	if s.StrideH > 2 || s.StrideW > 2 || s.C%s.Groups != 0 || s.O%s.Groups != 0 {
		return false
	}
	return s.KH*s.KW > 1 || s.AVX512
}

// NativeConv1x1MaxPlane and NativeConv1x1MinChannels bound the unpadded
// 1x1 stride-1 convolutions generated code takes where every level has
// AVX-512: output planes of at most NativeConv1x1MaxPlane positions, at
// least NativeConv1x1MinChannels input channels. On small planes the
// GEMM's packed panels have few columns to amortize their packing and
// edge tiles over, while the generated code's tiles run over the flat
// plane. In ResNet-50 (`rlxrun bench --profile`, one thread, Zen 4,
// 2026-11-28) its 14x14 1x1 layers (256 <-> 1024 channels) ran 8-15%
// faster generated, its 28x28 ones within 3% either way and its 56x56
// ones -5% to +13%; Inception-v3's 17x17 ones out of 768 channels 3-11%
// faster; BenchmarkConv2DSweep's 512 -> 512 at 7x7 95 against 74
// GFLOP/s. With 16 input channels (16 -> 96 at 112x112) the two tied;
// smaller planes with so few were not measured.
const (
	NativeConv1x1MaxPlane    = 24 * 24
	NativeConv1x1MinChannels = 32
)

// NativeConvMinChannels is the fewest input channels of a native
// convolution: 8 channels of 3x3 ran 1.7x (x86-64-v3) and 2.1x
// (x86-64-v4) the runtime, 3 channels 0.6x and 1x.
const NativeConvMinChannels = 8

// Work split of a native convolution. The function's range is
// (image, group of output channels, block of output positions); each
// CPU level tiles an item with its own register tile.
const (
	// NativeConvChannels is the output channels of one item: a multiple
	// of every level's register tile (8 channels by 3 vectors for
	// AVX-512 and NEON, 6 by 2 for AVX2; 24 or 12 by 1 vector where an
	// item's positions fill one), so only a layer's last group has a
	// partial tile, and enough that the weights an item reads stay in L1
	// and L2 over a whole block of positions.
	NativeConvChannels = 24

	// NativeConvPositions is the output positions of one item (along the
	// flattened plane, or along a row where rows are tiled one by one): a
	// multiple of every level's tile width (3 vectors of 16 lanes, 2 of
	// 8, 3 of 4).
	NativeConvPositions = 48

	// NativeConvChunkFlops is the least work of one chunk of a native
	// convolution's range: 2 MFLOP is about 25 µs at the generated
	// code's rate, so one call through purego (about 0.1 µs) costs under
	// 1%, while a 7x7 plane with 512 channels still splits into a few
	// chunks per thread.
	NativeConvChunkFlops = 2 << 20

	// NativeConvL1SetPeriod is the span of addresses after which the L1
	// data cache's sets repeat (64 sets of 64 bytes on Zen 4 and on
	// Intel's cores since Sandy Bridge), and NativeConvStreamsPerSet the
	// most weight rows a register tile reads at once that may fall in
	// one set: 6 of the 8 ways, leaving two for the input rows. A tile
	// has fewer output channels where more would fall together (weight
	// rows 4 KiB apart): 24 channels of 512x3x3 weights ran at a third
	// of the speed of 12.
	NativeConvL1SetPeriod   = 4096
	NativeConvStreamsPerSet = 6

	// NativeConvSplitBytes is the most bytes of a stride-2 tile's split
	// copy of its input rows (KH·C rows, each's even and odd columns
	// apart; on the stack): a 7x7 stem over 3 channels takes 10.5 KiB,
	// which stays in L1 beside the weights.
	NativeConvSplitBytes = 16 << 10
)

// Work split of the generated Winograd steps (cgen/winograd.go).
const (
	// WinogradInputChannels and WinogradOutputChannels are the channels
	// of one item of the input and output transforms: an item computes
	// its 16 tiles' positions (a division per lane) once for them all.
	WinogradInputChannels  = 16
	WinogradOutputChannels = 16

	// WinogradChunkLanes is the least work of one chunk of a transform's
	// range, in tile-channels: each costs a patch's gathers or a block's
	// scatters and the transform, some tens of ns, so a chunk of 2048
	// runs long enough (tens of µs) for a call through purego not to count,
	// and a layer of 7x7 planes (one group of 16 tiles) still splits into
	// a few chunks per thread.
	WinogradChunkLanes = 2048
)
