package tuning

import "testing"

// TestNativeTapConvStride2: dense stride-2 convolutions run tap-major
// from TapConvMinChannels input channels while a panel of weights fits
// the level's bound, at every CPU level; stems and grouped ones do not.
func TestNativeTapConvStride2(t *testing.T) {
	s2 := func(c, k int64, avx512 bool) ConvShape {
		return ConvShape{KH: k, KW: k, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, Groups: 1, C: c, O: 2 * c, OH: 7, OW: 7, AVX512: avx512}
	}
	for _, c := range []struct {
		name string
		s    ConvShape
		want bool
	}{
		{"3x3 256 v3", s2(256, 3, false), true},
		{"3x3 256 v4", s2(256, 3, true), true},
		{"5x5 64 v3", s2(64, 5, false), true},
		{"3x3 512 v3 (1.2 MB panel)", s2(512, 3, false), false},
		{"3x3 512 v4", s2(512, 3, true), true},
		{"3x3 1024 v4 (2.4 MB panel)", s2(1024, 3, true), true},
		{"3x3 2048 v4", s2(2048, 3, true), false},
		{"stem 3 channels", s2(3, 3, true), false},
		{"32 channels", s2(32, 3, false), false},
		{"grouped", func() ConvShape { s := s2(256, 3, true); s.Groups = 32; return s }(), false},
		{"dilated", func() ConvShape { s := s2(256, 3, true); s.DilH, s.DilW = 2, 2; return s }(), false},
	} {
		total := c.s.KH * c.s.KW * c.s.OH * c.s.OW
		if got := NativeTapConv(c.s, total, total); got != c.want {
			t.Errorf("%s: NativeTapConv = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestNativeTapConvWide: 7x7 stride-1 kernels run tap-major only where
// some level lacks AVX-512, and 5x5 ones never.
func TestNativeTapConvWide(t *testing.T) {
	wide := func(k, c int64, avx512 bool) ConvShape {
		return ConvShape{KH: k, KW: k, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1, C: c, O: c, OH: 28, OW: 28, AVX512: avx512}
	}
	for _, c := range []struct {
		name string
		s    ConvShape
		want bool
	}{
		{"7x7 64 v3", wide(7, 64, false), true},
		{"7x7 32 v3", wide(7, 32, false), true},
		{"7x7 64 v4", wide(7, 64, true), false},
		{"5x5 64 v3", wide(5, 64, false), false},
		{"7x7 16 v3", wide(7, 16, false), false},
	} {
		total := c.s.KH * c.s.KW * c.s.OH * c.s.OW
		if got := NativeTapConv(c.s, total, total); got != c.want {
			t.Errorf("%s: NativeTapConv = %v, want %v", c.name, got, c.want)
		}
	}
}
