package conv

import (
	"fmt"
	"testing"
)

// TestConvS2Pack checks the assembly panel builder against its Go twin,
// at the left edge and inside the row, with a zero row among the inputs.
func TestConvS2Pack(t *testing.T) {
	if !convS2Asm {
		t.Skip("no assembly panel builder on this machine")
	}
	const w = 80
	r := newRand(3)
	x := randSlice(r, 5*w)
	zero := make([]float32, w)
	for _, nrows := range []int{1, 3, 9, 16} {
		for _, ow0 := range []int{0, 1, 8, 24} {
			var ptrs [convS2MaxRows]uintptr
			rows := make([][]float32, nrows)
			for i := range rows {
				rows[i] = x[(i%5)*w : (i%5+1)*w]
				if i%4 == 3 {
					rows[i] = zero
				}
				ptrs[i] = sliceAddr(rows[i])
			}
			got, want := poison(nrows*48), poison(nrows*48)
			convS2Pack16(&got[0], &ptrs, nrows, 8*ow0, b2int(ow0 == 0))
			convS2Pack16Go(want, rows, 8*ow0, ow0 == 0)
			checkEqual(t, fmt.Sprintf("rows %d, output column %d", nrows, ow0), got, want)
			keepAlive(x, zero)
		}
	}
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}
