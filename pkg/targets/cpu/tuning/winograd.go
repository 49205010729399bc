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
		scratch := 4 * (m + 2) * (m + 2) * (s.C + s.O) * WinogradPartTiles(s.C, s.O, m, tp)
		if t >= 16 && 4*t >= 3*tp && scratch <= WinogradMaxScratch {
			return m
		}
	}
	return 0
}

// WinogradMaxScratch is the most bytes of a Winograd convolution's
// scratch (the transformed input and the products of one part of its
// tiles, (m+2)² values per tile and channel, in the arena while the
// convolution runs). Parts keep it near WinogradPartBytes but where the
// weights are large; the bound keeps a layer of thousands of channels
// (parts of hundreds of tiles) direct rather than grow the arena by
// hundreds of MB where the direct convolution needs none.
const WinogradMaxScratch = 32 << 20

// WinogradPartTiles returns how many of a Winograd convolution's tp
// tiles one part holds (tp: all at once): the three steps run part by
// part, so that the scratch the input transform writes is still in the
// cache when the products read it, and theirs when the output
// transform does. Before parts a convolution's scratch went to memory
// and back at every step, and large planes ran at about half the speed
// (docs/perf/native.md, "Winograd in parts"). A part holds about
// WinogradPartBytes of scratch, a multiple of 16 tiles, but at least C·O/(C+O) tiles: each
// part reads the transformed weights (α²·C·O floats) once more, so a
// part's scratch is kept at least that large. A scratch of at most
// WinogradPartFrom stays whole.
func WinogradPartTiles(c, o, m, tp int64) int64 {
	perTile := 4 * (m + 2) * (m + 2) * (c + o)
	if perTile*tp <= WinogradPartFrom {
		return tp
	}
	p := max(WinogradPartBytes/perTile, c*o/(c+o))
	p = max(16, (p+15)/16*16)
	return min(p, tp)
}

// WinogradPartBytes is the scratch of one part of a Winograd
// convolution's tiles: about one core's L2 on Zen 4 (1 MiB; 2 MiB on
// Intel's server cores). Over the large-plane layers of
// BenchmarkWinograd, parts of 512 KiB to 4 MiB ran alike, all of them
// 1.5-2.6x faster than the whole plane at once, and layers whose whole
// scratch is under 8 MiB as fast as before.
const WinogradPartBytes = 1 << 20

// WinogradPartFrom is the largest scratch a Winograd convolution keeps
// whole: 8 MiB, a quarter of Zen 4's L3, where the whole scratch ran as
// fast as parts (BenchmarkWinograd's 32 channels over 112x112, 7.2 MiB,
// and 128 over 56x56, 7.7 MiB), and ResNets' layers at batch 1 (3.8 MiB
// and less) keep the code they were measured with.
const WinogradPartFrom = 8 << 20

// WinogradMinChannels is the fewest input and output channels of a
// Winograd convolution: the transforms cost per tile and channel, the
// products per pair of channels.
const WinogradMinChannels = 16
