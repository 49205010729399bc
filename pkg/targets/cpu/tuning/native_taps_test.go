package tuning

import "testing"

// TestNativeTapConvDense: dense stride-2 convolutions run tap-major from
// TapConvMinChannels input channels while a panel of weights fits the
// level's bound, at every CPU level; 7x7 stride-1 ones and row kernels
// on small planes only where some level lacks AVX-512, 5x5 ones never;
// stride-1 ones with narrow rows of another width than the input's;
// stems, grouped and dilated ones not at all.
func TestNativeTapConvDense(t *testing.T) {
	shape := func(k, stride, c int64, avx512 bool) ConvShape {
		return ConvShape{KH: k, KW: k, StrideH: stride, StrideW: stride, DilH: 1, DilW: 1, Groups: 1, C: c, O: 2 * c, OH: 14, OW: 14, AVX512: avx512}
	}
	with := func(s ConvShape, f func(*ConvShape)) ConvShape { f(&s); return s }
	narrow := func(k, c, w, ow int64, avx512 bool) ConvShape {
		return ConvShape{KH: k, KW: k, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1, C: c, O: 2 * c, OH: ow, OW: ow, W: w, AVX512: avx512}
	}
	for _, c := range []struct {
		name string
		s    ConvShape
		want bool
	}{
		{"3x3 s2 256 v3", shape(3, 2, 256, false), true},
		{"3x3 s2 256 v4", shape(3, 2, 256, true), true},
		{"5x5 s2 64 v3", shape(5, 2, 64, false), true},
		{"3x3 s2 512 v3 (1.2 MB panel)", shape(3, 2, 512, false), false},
		{"3x3 s2 512 v4", shape(3, 2, 512, true), true},
		{"3x3 s2 1024 v4 (2.4 MB panel)", shape(3, 2, 1024, true), true},
		{"3x3 s2 2048 v4", shape(3, 2, 2048, true), false},
		{"3x3 s2 stem", shape(3, 2, 3, true), false},
		{"3x3 s2 288 35x35 v3 (1.4 MB input)", with(shape(3, 2, 288, false), func(s *ConvShape) { s.OH, s.OW = 17, 17 }), false},
		{"3x3 s2 288 35x35 v4", with(shape(3, 2, 288, true), func(s *ConvShape) { s.OH, s.OW = 17, 17 }), true},
		{"3x3 s2 64 56x56 v3", with(shape(3, 2, 64, false), func(s *ConvShape) { s.OH, s.OW = 28, 28 }), true},
		{"3x3 s2 32 channels", shape(3, 2, 32, false), false},
		{"3x3 s2 grouped", with(shape(3, 2, 256, true), func(s *ConvShape) { s.Groups = 32 }), false},
		{"3x3 s2 dilated", with(shape(3, 2, 256, true), func(s *ConvShape) { s.DilH, s.DilW = 2, 2 }), false},
		{"7x7 s1 64 v3", shape(7, 1, 64, false), true},
		{"7x7 s1 32 v3", shape(7, 1, 32, false), true},
		{"7x7 s1 64 v4", shape(7, 1, 64, true), false},
		{"7x7 s1 16 v3", shape(7, 1, 16, false), false},
		{"5x5 s1 64 v3", shape(5, 1, 64, false), false},
		{"3x3 s1 64 v3", shape(3, 1, 64, false), false},
		{"1x7 s1 192 v3", with(shape(7, 1, 192, false), func(s *ConvShape) { s.KH = 1 }), true},
		{"1x7 s1 192 v4", with(shape(7, 1, 192, true), func(s *ConvShape) { s.KH = 1 }), false},
		{"1x3 s1 192 v3", with(shape(3, 1, 192, false), func(s *ConvShape) { s.KH = 1 }), false},
		{"1x7 s1 192 v3 56x56", with(shape(7, 1, 192, false), func(s *ConvShape) { s.KH, s.OH, s.OW = 1, 56, 56 }), false},
		// Narrow rows of another width than the input's (narrowRows).
		{"2x2 s1 p1 512 8x8 v4", narrow(2, 512, 8, 9, true), true},
		{"2x2 s1 p1 512 8x8 v3", narrow(2, 512, 8, 9, false), true},
		{"2x2 s1 p1 256 16x16 v4", narrow(2, 256, 16, 17, true), true},
		{"2x2 s1 p1 128 32x32 v4 (rows of 33 fill 0.69)", narrow(2, 128, 32, 33, true), true},
		{"2x2 s1 p1 128 32x32 v3 (fill 0.83)", narrow(2, 128, 32, 33, false), false},
		{"2x2 s1 p1 32 8x8 (few channels)", narrow(2, 32, 8, 9, true), false},
		{"3x3 s1 p1 256 8x8 (same width: flat)", narrow(3, 256, 8, 8, true), false},
		{"2x2 s1 p1 2048 8x8 (a 2 MB panel)", narrow(2, 2048, 8, 9, true), false},
		{"2x2 s1 input width unknown", narrow(2, 512, 0, 9, true), false},
		{"2x2 s1 p1 64 -> 12 32x32 (under a panel of outputs)", with(narrow(2, 64, 32, 33, true), func(s *ConvShape) { s.O = 12 }), false},
	} {
		total := c.s.KH * c.s.KW * c.s.OH * c.s.OW
		if got := NativeTapConv(c.s, total, total); got != c.want {
			t.Errorf("%s: NativeTapConv = %v, want %v", c.name, got, c.want)
		}
	}
}
