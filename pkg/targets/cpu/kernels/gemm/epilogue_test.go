package gemm

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// TestEpiApplyVec: epi.apply, whose rows go through the vector pass where
// the CPU has one, gives the same bits as the Go row loop it replaces,
// over bias per row or column, ReLU, clamps (inverted and NaN bounds
// too), the residual, NaNs and signed zeros in the data, and ragged widths.
func TestEpiApplyVec(t *testing.T) {
	r := newRand(7)
	const ldc = 45
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, 6, float32(math.Inf(-1))}
	for _, act := range []vec.Activation{vec.ActNone, vec.ActRelu, vec.ActClamp, vec.ActSigmoid} {
		for _, bounds := range [][2]float32{{0, 6}, {1, -1}, {float32(math.NaN()), 2}, {-1, float32(math.Inf(1))}} {
			for _, bias := range []int{0, 1, 2} { // none, per column, per row
				for _, res := range []bool{false, true} {
					for _, cols := range []int{1, 7, 8, 9, 16, 33, 40} {
						c := randSlice(r, 5*ldc)
						for i, v := range special {
							c[i*7%len(c)] = v
						}
						e := epi{act: act, lo: bounds[0], hi: bounds[1], ldr: ldc}
						switch bias {
						case 1:
							e.bias = randSlice(r, ldc)
						case 2:
							e.bias, e.biasPerRow = randSlice(r, 5), true
						}
						if res {
							e.res = randSlice(r, 5*ldc)
						}
						got := append([]float32(nil), c...)
						want := append([]float32(nil), c...)
						e.apply(got, ldc, 1, 3, 3, cols)
						for i := 1; i < 4; i++ {
							e.applyRow(want[i*ldc+3:i*ldc+3+cols], i, 3)
						}
						tag := fmt.Sprintf("act %v bounds %v bias %d res %v cols %d", act, bounds, bias, res, cols)
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(isNaN(got[i]) && isNaN(want[i])) {
								t.Fatalf("%s: [%d] = %v (%#x), want %v (%#x)", tag, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
							}
						}
					}
				}
			}
		}
	}
}
