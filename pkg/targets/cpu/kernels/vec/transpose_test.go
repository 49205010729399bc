package vec

import (
	"fmt"
	"testing"
)

// TestTranspose checks the blocked transpose against the element loop on
// sizes around the 8×8 blocks, with padded leading dimensions, and that it
// writes nothing outside the result.
func TestTranspose(t *testing.T) {
	r := newRand(31)
	for _, rows := range []int{0, 1, 7, 8, 9, 16, 23, 49} {
		for _, cols := range []int{0, 1, 5, 8, 15, 16, 33, 96} {
			for _, pad := range []int{0, 3} {
				lds, ldd := cols+pad, rows+pad
				src := randSlice(r, max(rows*lds, 1))
				got, want := poison(max(cols*ldd, 1)), poison(max(cols*ldd, 1))
				Transpose(got, ldd, src, lds, rows, cols)
				for i := 0; i < rows; i++ {
					for j := 0; j < cols; j++ {
						want[j*ldd+i] = src[i*lds+j]
					}
				}
				checkEqual(t, fmt.Sprintf("Transpose %dx%d pad %d", rows, cols, pad), got, want)
			}
		}
	}
}
