package tuning

import "testing"

// TestWinogradTile pins the rule's cases: F(4×4) where its tiles fill
// the groups of 16, F(2×2) on 7x7 planes, the direct convolution on tiny
// planes, few channels, other kernels, and where one part's scratch
// would pass WinogradMaxScratch; and the parts' sizes.
func TestWinogradTile(t *testing.T) {
	conv := func(c, o, hw int64) ConvShape {
		return ConvShape{KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1, C: c, O: o, OH: hw, OW: hw}
	}
	for _, tc := range []struct {
		name string
		s    ConvShape
		n    int64
		want int64
	}{
		{"ResNet 56x56", conv(64, 64, 56), 1, 4},
		{"ResNet 28x28 (49 of 64 lanes)", conv(128, 128, 28), 1, 4},
		{"ResNet 14x14", conv(256, 256, 14), 1, 4},
		{"ResNet 7x7", conv(512, 512, 7), 1, 2},
		{"7x7, batch 4", conv(512, 512, 7), 4, 4},
		{"4x4 plane", conv(256, 256, 4), 1, 0},
		{"few channels", conv(8, 64, 56), 1, 0},
		{"batch 8 of the first stage", conv(64, 64, 56), 8, 4},
		{"batch 64 (in parts)", conv(64, 64, 56), 64, 4},
		{"224x224 (in parts)", conv(64, 32, 224), 1, 4},
		{"4096 channels: too much scratch in a part", conv(4096, 4096, 56), 1, 0},
		{"stride 2", func() ConvShape { s := conv(64, 64, 28); s.StrideH, s.StrideW = 2, 2; return s }(), 1, 0},
		{"dilated", func() ConvShape { s := conv(64, 64, 28); s.DilH, s.DilW = 2, 2; return s }(), 1, 0},
		{"grouped", func() ConvShape { s := conv(64, 64, 28); s.Groups = 2; return s }(), 1, 0},
		{"5x5", func() ConvShape { s := conv(64, 64, 28); s.KH, s.KW = 5, 5; return s }(), 1, 0},
	} {
		if got := WinogradTile(tc.s, tc.n); got != tc.want {
			t.Errorf("%s: tile %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestWinogradPartTiles(t *testing.T) {
	for _, tc := range []struct {
		name        string
		c, o, m, tp int64
		want        int64
	}{
		{"ResNet-18's first stage: one part", 64, 64, 4, 208, 208},
		{"224x224, 64 -> 32: 1 MiB parts", 64, 32, 4, 3136, 80},
		{"256x256, 32 -> 32", 32, 32, 4, 4096, 128},
		{"7.7 MiB stays whole", 128, 128, 4, 208, 208},
		{"13 MiB in parts", 32, 32, 4, 1376, 128},
		{"512 channels: parts as large as the weights", 512, 512, 4, 4096, 256},
		{"at least 16 tiles", 1024, 8, 4, 4096, 16},
	} {
		if got := WinogradPartTiles(tc.c, tc.o, tc.m, tc.tp); got != tc.want {
			t.Errorf("%s: %d tiles a part, want %d", tc.name, got, tc.want)
		}
	}
}
