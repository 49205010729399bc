package tuning

// WinogradTile returns m where generated code runs a convolution of n
// images as Winograd's F(m×m, 3×3), 0 where the direct convolution
// (NativeConv) is the better.
//
// Winograd takes (m+2)²/(9·m²) of the direct convolution's multiplies
// (F(4×4): 0.25, F(2×2): 0.44) as (m+2)² matrix products of the tiles by
// the channels, at the cost of the transforms (gathers of each tile's
// patch, scatters of its block: per tile and channel, not per channel
// pair) and of weights (m+2)²/9 as large. Its vectors run across tiles,
// 16 to a group, so a plane whose tiles leave a group mostly empty (7x7
// with F(4×4): 4 tiles) wastes what it saves.
func WinogradTile(s ConvShape, n int64) int64 {
	if s.KH != 3 || s.KW != 3 || s.StrideH != 1 || s.StrideW != 1 || s.DilH != 1 || s.DilW != 1 || s.Groups != 1 {
		return 0
	}
	if s.C < WinogradMinChannels || s.O < WinogradMinChannels {
		return 0
	}
	for _, m := range []int64{4, 2} {
		t := n * ((s.OH + m - 1) / m) * ((s.OW + m - 1) / m)
		tp := (t + 15) / 16 * 16
		scratch := 4 * (m + 2) * (m + 2) * (s.C + s.O) * tp
		if t >= 16 && 4*t >= 3*tp && scratch <= WinogradMaxScratch {
			return m
		}
	}
	return 0
}

// WinogradMaxScratch is the most bytes of a Winograd convolution's
// scratch (the transformed input and the products, (m+2)² values per
// tile and channel, in the arena while the convolution runs): 2.25x the
// input and output at F(4×4), which at large batches would grow the
// arena by hundreds of MB (ResNet-18's first stage at batch 64: 230 MB)
// where the direct convolution needs none. 32 MiB keeps batch 8 of
// ResNet-18 on Winograd.
const WinogradMaxScratch = 32 << 20

// WinogradMinChannels is the fewest input and output channels of a
// Winograd convolution: the transforms cost per tile and channel, the
// products per pair of channels.
const WinogradMinChannels = 16
