package tensor

import (
	"math"
	"testing"
)

// TestF16RoundTrip checks every half float widens and narrows back to
// itself, and that narrowing rounds to nearest even.
func TestF16RoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if math.IsNaN(float64(f)) {
			if g := F32ToF16(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("NaN %#04x narrowed to %#04x", h, g)
			}
			continue
		}
		if g := F32ToF16(f); g != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, g)
		}
	}
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e-8, 0},
		{1 + 1.0/2048, 0x3c00}, // halfway between 1 and the next half: ties to even
		{1 + 3.0/2048, 0x3c02},
		{5.96046448e-8, 0x0001}, // smallest subnormal
	} {
		if got := F32ToF16(c.f); got != c.want {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
}

func TestBF16(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{{1, 0x3f80}, {-2, 0xc000}, {1 + 1.0/256, 0x3f80}, {1 + 3.0/256, 0x3f82}} {
		if got := F32ToBF16(c.f); got != c.want {
			t.Errorf("F32ToBF16(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
		if back := BF16ToF32(c.want); F32ToBF16(back) != c.want {
			t.Errorf("bf16 %#04x does not round trip", c.want)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		d    DType
		v    int64
		want int64
	}{
		{I8, 300, 44}, {I8, -129, 127}, {U8, -1, 255}, {U8, 256, 0},
		{I16, 40000, -25536}, {I32, 1 << 32, 0}, {I32, 1<<31 + 5, -(1 << 31) + 5},
		{I64, 1 << 40, 1 << 40}, {Bool, 7, 1}, {Bool, 0, 0}, {Bool, -3, 1}, {F32, 300, 300},
	} {
		if got := c.d.Wrap(c.v); got != c.want {
			t.Errorf("%s.Wrap(%d) = %d, want %d", c.d, c.v, got, c.want)
		}
	}
}
