package vec

import (
	"math"
	"testing"
)

// TestExpSub checks the vector exp against math.Exp: every result within 1
// float32 ulp, the sum within 1e-12 relative, NaN kept, underflow to 0.
func TestExpSub(t *testing.T) {
	var xs []float32
	for v := -110.0; v <= 3; v += 0.0131 {
		xs = append(xs, float32(v))
	}
	xs = append(xs, float32(math.Inf(-1)), -1e30, 0, float32(math.NaN()), 1e-20)
	for _, m := range []float64{0, 2.5, -3} {
		got := append([]float32(nil), xs...)
		sum := ExpSub(got, m)
		var want float64
		for i, x := range xs {
			e := math.Exp(float64(x) - m)
			if math.IsNaN(e) {
				if !math.IsNaN(float64(got[i])) {
					t.Errorf("exp(NaN) = %g", got[i])
				}
				continue
			}
			want += e
			w32 := float32(e)
			ulp := float64(math.Nextafter32(w32, float32(math.Inf(1))) - w32)
			if d := math.Abs(float64(got[i]) - e); d > ulp && d > 1e-44 {
				t.Errorf("exp(%g - %g) = %g, want %g (%.1f ulp)", x, m, got[i], e, d/ulp)
			}
		}
		if !math.IsNaN(sum) {
			t.Errorf("sum with a NaN element = %g, want NaN", sum)
		}
		// The sum over the finite elements alone.
		fin := append([]float32(nil), xs[:len(xs)-2]...)
		s := ExpSub(fin, m)
		var w float64
		for _, x := range xs[:len(xs)-2] {
			w += math.Exp(float64(x) - m)
		}
		if math.Abs(s-w) > 1e-7*w {
			t.Errorf("sum %g, want %g", s, w)
		}
	}
}
