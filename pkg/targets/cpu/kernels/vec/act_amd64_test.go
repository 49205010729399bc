//go:build amd64 && !purego

package vec

import (
	"math"
	"testing"
)

// TestGeluAVX2Pairs: the sixteen-lane passes (two interleaved chains) give
// the same bits as the eight-lane loop, lane for lane.
func TestGeluAVX2Pairs(t *testing.T) {
	if !AVX2FMA {
		t.Skip("needs hardware: no AVX2+FMA")
	}
	var xs []float32
	for v := -15.0; v <= 15; v += 0.0137 {
		xs = append(xs, float32(v))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 87, -87, 200, -200,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	for len(xs)%16 != 0 {
		xs = append(xs, 0.5)
	}
	pairs := append([]float32(nil), xs...)
	geluAVX2(&pairs[0], len(pairs))
	singles := append([]float32(nil), xs...)
	for i := 0; i < len(singles); i += 8 {
		geluAVX2(&singles[i], 8)
	}
	for i := range xs {
		if math.Float32bits(pairs[i]) != math.Float32bits(singles[i]) {
			t.Fatalf("gelu(%g): %g in pairs, %g alone", xs[i], pairs[i], singles[i])
		}
	}
}

// TestExpSub32AVX512 checks the 16-lane exp-and-sum against the 8-lane
// one bit for bit (elements and sum): lengths multiples of 8 from 8 to
// 80, with NaN, -Inf and values below the clamp among them.
func TestExpSub32AVX512(t *testing.T) {
	if !AVX512F {
		t.Skip("needs hardware: no AVX-512")
	}
	r := newRand(12)
	for n := 8; n <= 80; n += 8 {
		x := randSlice(r, n)
		for i := range x {
			x[i] = x[i]*60 - 50
		}
		x[n/2] = float32(math.Inf(-1))
		x[n-3] = -300
		if n%32 == 24 { // a NaN sum on some lengths only
			x[13] = float32(math.NaN())
		}
		a, b := append([]float32(nil), x...), append([]float32(nil), x...)
		sa, sb := expSub32AVX512(&a[0], n, 0.5, 0.7), expSub32AVX2(&b[0], n, 0.5, 0.7)
		if math.Float64bits(sa) != math.Float64bits(sb) && !(sa != sa && sb != sb) {
			t.Fatalf("n=%d: sum %v, 8-lane %v", n, sa, sb)
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("n=%d: element %d = %v (%#x), 8-lane %v (%#x)", n, i, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
			}
		}
	}
}
