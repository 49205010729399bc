package conv

import (
	"fmt"
	"testing"
)

// TestConvS2Pack checks the assembly panel builder against its Go twin,
// at the left edge and inside the row, with a zero row among the inputs.
func TestConvS2Pack(t *testing.T) {
	if !convS2Asm {
		t.Skip("needs hardware: no assembly panel builder on this machine")
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

// convS2Pack16Go is the test's portable twin of convS2Pack16 (the
// kernel has no Go form: packS2 runs only with AVX2): for each of the
// nrows input rows (row i starting at rows[i]), the three panel rows of
// its taps for the 16 outputs whose middle tap is column off/4 + 2j
// (dst rows of 16, three per input row); left marks off = 0, where the
// left tap of output 0 is the padding.
func convS2Pack16Go(dst []float32, rows [][]float32, off int, left bool) {
	c0 := off / 4
	for i, row := range rows {
		for j := 0; j < 16; j++ {
			c := c0 + 2*j
			var l float32
			if !(left && j == 0) {
				l = row[c-1]
			}
			dst[(3*i)*16+j] = l
			dst[(3*i+1)*16+j] = row[c]
			dst[(3*i+2)*16+j] = row[c+1]
		}
	}
}
