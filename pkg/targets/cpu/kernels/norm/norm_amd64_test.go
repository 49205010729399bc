//go:build amd64 && !purego

package norm

import (
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// TestRowSumTwins checks the assembly's float64 sums against their Go
// twins bit for bit, on values spread over many magnitudes so that any
// other order of the additions gives other bits (TestLayerNormRowTwins
// sees them only through float32 results, which mostly hide the order).
func TestRowSumTwins(t *testing.T) {
	if !vec.AVX2FMA {
		t.Skip("no AVX2")
	}
	r := newRand(3)
	for n := 4; n <= 100; n += 4 {
		x := randSlice(r, n)
		for i := range x {
			x[i] *= float32(math.Pow(2, float64(r.IntN(40)-20)))
		}
		if got, want := sum4AVX2(&x[0], n), sum4Go(x); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("n=%d: sum4AVX2 %v, Go twin %v", n, got, want)
		}
		mean := 0.37
		if got, want := sqDev4AVX2(&x[0], n, mean), sqDev4Go(x, mean); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("n=%d: sqDev4AVX2 %v, Go twin %v", n, got, want)
		}
	}
}
