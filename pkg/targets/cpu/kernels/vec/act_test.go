package vec

import (
	"math"
	"testing"
)

// TestGeluVec checks the vector GELU against the float64 definition over a
// dense range and the special values: within 8 float32 ulps (the float32
// lanes measured 6.45 at worst, near x = -13.1 where results approach the
// bottom of the normal range, over a sweep ten times as dense as this one;
// the Go path, 2), and results below the normal float32 range either that
// close or flushed to zero.
func TestGeluVec(t *testing.T) {
	var xs []float32
	for v := -14.0; v <= 14; v += 0.00271 {
		xs = append(xs, float32(v))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-8, -1e-8, 87, -87, 200, -200,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	got := append([]float32(nil), xs...)
	geluVec(got)
	for i, x := range xs {
		want := 0.5 * float64(x) * math.Erfc(-float64(x)/math.Sqrt2)
		g := float64(got[i])
		if math.IsNaN(want) || math.IsInf(want, 0) {
			if !(math.IsNaN(want) && math.IsNaN(g)) && g != want {
				t.Errorf("gelu(%g) = %g, want %g", x, g, want)
			}
			continue
		}
		w32 := float32(want)
		ulp := math.Abs(float64(math.Nextafter32(w32, float32(math.Inf(1)))) - float64(w32))
		if math.Abs(want) < 0x1p-126 && g == 0 {
			continue // flushed
		}
		if d := math.Abs(g - want); d > 8*ulp && d > 1e-44 {
			t.Errorf("gelu(%g) = %g, want %g (%.1f ulp)", x, g, want, d/ulp)
		}
	}
}

func BenchmarkGeluVec(b *testing.B) {
	src := make([]float32, 4096)
	for i := range src {
		src[i] = float32(i%200-100) * 0.05
	}
	x := make([]float32, len(src))
	for i := 0; i < b.N; i++ {
		copy(x, src)
		geluVec(x)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/elem")
}
