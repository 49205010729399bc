package kernels

import (
	"math"
	"testing"
)

// TestAxpy checks the assembly axpy against the Go twin on every length
// through two vector widths, unaligned starts included. FMA rounds once, so
// the two may differ by an ulp.
func TestAxpy(t *testing.T) {
	for n := 0; n <= 80; n++ {
		for off := 0; off < 3; off++ {
			src := make([]float32, n+off)
			d1 := make([]float32, n+off)
			for i := range src {
				src[i] = float32(math.Sin(float64(i)))
				d1[i] = float32(math.Cos(float64(i)))
			}
			d2 := append([]float32(nil), d1...)
			axpy(d1[off:], src[off:], 1.7)
			axpyGo(d2[off:], src[off:], 1.7)
			for i := range d1 {
				if d := math.Abs(float64(d1[i] - d2[i])); d > 1e-6*math.Max(1, math.Abs(float64(d2[i]))) {
					t.Fatalf("n=%d off=%d: element %d = %g, want %g", n, n, i, d1[i], d2[i])
				}
			}
		}
	}
}

func BenchmarkAxpy(b *testing.B) {
	x := make([]float32, 112)
	y := make([]float32, 112)
	for i := 0; i < b.N; i++ {
		axpy(y, x, 0.5)
	}
}
