package vec

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
			Axpy(d1[off:], src[off:], 1.7)
			axpyGo(d2[off:], src[off:], 1.7)
			for i := range d1 {
				if d := math.Abs(float64(d1[i] - d2[i])); d > 1e-6*math.Max(1, math.Abs(float64(d2[i]))) {
					t.Fatalf("n=%d off=%d: element %d = %g, want %g", n, off, i, d1[i], d2[i])
				}
			}
		}
	}
}

// TestAxpy4 checks the four-row assembly form against the Go twin.
func TestAxpy4(t *testing.T) {
	a := [4]float32{0.5, -1.25, 2, 0.75}
	for n := 0; n <= 70; n++ {
		var s [4][]float32
		for r := range s {
			s[r] = make([]float32, n)
			for i := range s[r] {
				s[r][i] = float32(math.Sin(float64(i*4 + r)))
			}
		}
		d1 := make([]float32, n)
		for i := range d1 {
			d1[i] = float32(i)
		}
		d2 := append([]float32(nil), d1...)
		Axpy4(d1, s[0], s[1], s[2], s[3], &a)
		axpy4Go(d2, s[0], s[1], s[2], s[3], &a)
		for i := range d1 {
			if d := math.Abs(float64(d1[i] - d2[i])); d > 1e-5*math.Max(1, math.Abs(float64(d2[i]))) {
				t.Fatalf("n=%d: element %d = %g, want %g", n, i, d1[i], d2[i])
			}
		}
	}
}

func BenchmarkAxpy(b *testing.B) {
	x := make([]float32, 112)
	y := make([]float32, 112)
	for i := 0; i < b.N; i++ {
		Axpy(y, x, 0.5)
	}
}
