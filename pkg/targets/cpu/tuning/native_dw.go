package tuning

// Native depthwise convolutions: which depthwise Conv2D steps (one input
// channel per group, every channel its own group) the cpu target
// compiles to C (pkg/targets/cpu/cgen, dw.go) instead of running the
// runtime's direct loop (pkg/targets/cpu/kernels/conv), and how the
// generated code is split into work.

// NativeDepthwise reports whether generated code runs a depthwise
// convolution (any channel multiplier): every one with a column stride of
// 1 or 2 but those the runtime's 3x3 path takes (3x3, no dilation).
// The runtime's path for other kernels (5x5, 7x7, dilated) adds one
// whole-plane multiply-add per tap, at 3-4 GFLOP/s; the generated code
// keeps a tile of output rows in registers, loads each input row once
// per column tap for all of them, and knows the plane's edges when it is
// built: see docs/perf/native.md (2026-11-27) for the sweep's points,
// 7x7 and 5x5 at stride 1 and 2. The runtime's 3x3 path (Go assembly,
// nine taps per pass, channels last on small planes) measured at least
// as fast as the generated code on MobileNetV2's layers, so 3x3 stays
// there.
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
	// depthwise convolution's range: 256 KFLOP is about 10 µs at the
	// generated code's rate, so one call through purego (about 0.1 µs)
	// costs about 1%, while a 14x14 plane with 240 channels of 5x5
	// (MobileNetV3, 2.4 MFLOP) still splits into 9 chunks.
	NativeDwChunkFlops = 256 << 10
)
