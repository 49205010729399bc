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
func NativeTapConv(s ConvShape, live, total int64) bool {
	return s.Groups <= 1 && SplitSparseTaps(live, total)
}

// TapConvItemChannels is the output channels of one item of a tap-major
// convolution's range (a multiple of every level's tile): with the
// item's row of positions, its share of the weights (a block of 64
// channels by the live taps' input channels) stays in L2 for the next
// item, the next row.
const TapConvItemChannels = 64
