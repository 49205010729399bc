package tuning

// Native depthwise convolutions: which depthwise Conv2D steps (one input
// channel per group, every channel its own group) the cpu target
// compiles to C (pkg/targets/cpu/cgen, dw.go) instead of running the
// runtime's direct loop (pkg/targets/cpu/kernels/conv), and how the
// generated code is split into work.

// NativeDepthwise reports whether generated code runs a depthwise
// convolution (any channel multiplier): every one with a column stride of
// 1 or 2 but those the runtime's 3x3 path takes (3x3, no dilation).
//
// The runtime runs other kernels (5x5, 7x7, dilated) as one whole-plane
// multiply-add per tap, a few GFLOP/s (docs/perf/native.md); the
// generated code keeps a tile of output rows in registers, loads each
// input row once per column tap for all of them, and knows the plane's
// edges when it is built. On
// BenchmarkDepthwise (one thread, Zen 4) it ran 7x7 and 5x5 layers
// 13-48x (stride 1) and 17x (stride 2) the runtime at x86-64-v4, 9-32x
// and 14x at x86-64-v3, and a dilated 3x3 12x; in the operator sweep the
// 7x7 and 5x5 points went from 0.09-0.18x ONNX Runtime to 2-2.3x.
//
// Undilated 3x3 stays with the runtime's Go assembly: the generated code
// is faster on small planes, but those run channels last in a model
// (ChannelsLastMaxPlane), and on large ones it is as fast at stride 1 and
// slower at stride 2 (two loads and a shuffle per tap, 0.6-0.9x);
// MobileNetV2 ran the same with or without it. docs/perf/native.md has
// the numbers.
func NativeDepthwise(s ConvShape) bool {
	return s.StrideW <= 2 && !(s.KH == 3 && s.KW == 3 && s.DilH == 1 && s.DilW == 1)
}

// depthwise reports whether s has one input channel per group, every
// channel its own group (and more than one of them).
func depthwise(s ConvShape) bool {
	return s.Groups > 1 && s.Groups == s.C && s.O%s.C == 0
}

// Work split of a native depthwise convolution. The function's range is
// (image, output channel, block of output rows); each CPU level tiles a
// block with register tiles of rows by vectors along them.
const (
	// NativeDwRows is the output rows of one item: a multiple of every
	// tile height (1 to NativeDwTileRows rows), so only a plane's last
	// block has a partial tile, and a 56x56 plane splits into 3 items
	// per channel.
	NativeDwRows = 24

	// NativeDwTileRows is the most output rows of one register tile:
	// each loaded input row feeds up to KH of them, and more rows add
	// code without fewer loads per multiply-add.
	NativeDwTileRows = 8

	// NativeDwTileTaps bounds the code of one register tile: rows times
	// vectors times kernel taps, its multiply-adds. Fewer rows than the
	// registers allow still load each input row for several of them
	// (3 rows of 7x7 taps load 9 rows for 21 rows of taps), and a 7x7
	// layer's function stays near 100 KB of C per level.
	NativeDwTileTaps = 600

	// NativeDwChunkFlops is the least work of one chunk of a native
	// depthwise convolution's range: enough that one call through purego
	// costs about 1% of the chunk at the generated code's rate
	// (docs/perf/native.md), while a 14x14 plane with 240 channels of 5x5
	// (MobileNetV3, 2.4 MFLOP) still splits into 9 chunks.
	NativeDwChunkFlops = 256 << 10
)
