package vec

import (
	"math"
	"testing"
)

// TestExpf32 checks the scalar float32 exp against float64 math.Exp over
// [-90, 0]: within 2 ulp where the result is normal, 0 below the clamp.
func TestExpf32(t *testing.T) {
	for i := 0; i <= 900000; i++ {
		d := float32(-90 * float64(i) / 900000)
		got := expf32(d)
		want := math.Exp(float64(d))
		if d < exp32Lo {
			if got != 0 {
				t.Fatalf("expf32(%g) = %g, want 0 below the clamp", d, got)
			}
			continue
		}
		if e := math.Abs(float64(got)-want) / want; e > 2.5e-7 {
			t.Fatalf("expf32(%g) = %g, want %g (relative error %.2g)", d, got, want, e)
		}
	}
	if got := expf32(float32(math.Inf(-1))); got != 0 {
		t.Errorf("expf32(-Inf) = %g", got)
	}
	if got := expf32(float32(math.NaN())); got == got {
		t.Errorf("expf32(NaN) = %g", got)
	}
}

// TestExpSub32Twins checks the vector exp-and-sum against its Go twin:
// results within 1 ulp of each other, sums within 1e-12 relative, NaN
// and -Inf handled alike; lengths around the 8-lane blocks.
func TestExpSub32Twins(t *testing.T) {
	r := newRand(11)
	for n := 0; n <= 70; n++ {
		x := randSlice(r, n)
		for i := range x {
			x[i] = x[i]*40 - 40
		}
		if n > 5 {
			x[3] = float32(math.Inf(-1))
			x[n-1] = -100
		}
		for _, withNaN := range []bool{false, true} {
			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			if withNaN && n > 9 {
				a[9], b[9] = float32(math.NaN()), float32(math.NaN())
			}
			sa, sb := ExpSub32(a, 0.5, 0.3), expSub32Go(b, 0.5, 0.3)
			if math.Abs(sa-sb) > 1e-12*math.Abs(sb) && !(sa != sa && sb != sb) {
				t.Fatalf("n=%d nan=%v: sum %g, Go twin %g", n, withNaN, sa, sb)
			}
			for i := range a {
				if a[i] != a[i] && b[i] != b[i] {
					continue
				}
				if d := math.Abs(float64(a[i]) - float64(b[i])); d > 1.2e-7*float64(b[i]) {
					t.Fatalf("n=%d nan=%v: element %d = %g, Go twin %g", n, withNaN, i, a[i], b[i])
				}
			}
		}
	}
}

// TestMaxNaN32Twins checks the vector maximum against the Go one on
// lengths around the 8-lane blocks, with NaN and ±Inf anywhere.
func TestMaxNaN32Twins(t *testing.T) {
	r := newRand(12)
	for n := 0; n <= 40; n++ {
		for _, special := range []float32{0, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			for pos := 0; pos < max(n, 1); pos++ {
				x := randSlice(r, n)
				if special != 0 && n > 0 {
					x[pos] = special
				}
				got, want := MaxNaN32(x), maxNaN32Go(x)
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("n=%d special %g at %d: %g, want %g", n, special, pos, got, want)
				}
			}
		}
	}
}
