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
