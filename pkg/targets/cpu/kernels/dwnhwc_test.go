package kernels

import (
	"math"
	"testing"
)

// TestDwNHWCTwins checks the channels-last tap kernel against its Go twin:
// channel counts around the 64- and 8-channel blocks, several pixels with
// input and output strides, NaN passing the clamp, and nothing written
// past each pixel's channels.
func TestDwNHWCTwins(t *testing.T) {
	r := newRand(41)
	for _, c := range []int{8, 16, 56, 64, 72, 136, 192} {
		for _, npix := range []int{1, 3} {
			var in [9][]float32
			for k := range in {
				in[k] = randSlice(r, (npix-1)*(c+8)+c)
			}
			in[4][c/2] = float32(math.NaN())
			w, bias := randSlice(r, 9*c), randSlice(r, c)
			got, want := poison((npix-1)*(c+4)+c+4), poison((npix-1)*(c+4)+c+4)
			dwNHWC(got, c+4, &in, c+8, w, bias, c, npix, -0.5, 0.75)
			dwNHWCGo(want, c+4, &in, c+8, w, bias, c, npix, -0.5, 0.75)
			for i := range got {
				g, e := got[i], want[i]
				if g != e && !(g != g && e != e) && math.Abs(float64(g-e)) > 1e-6 {
					t.Fatalf("c=%d npix=%d: element %d = %g, Go twin %g", c, npix, i, g, e)
				}
			}
		}
	}
}
