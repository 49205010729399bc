package kernels

import (
	"testing"
)

func BenchmarkFirstConvTmp(b *testing.B) {
	g := ConvGeom{N: 1, C: 3, H: 224, W: 224, O: 32, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadT: 1, PadL: 1, PadB: 1, PadR: 1, DilH: 1, DilW: 1, Groups: 1, OH: 112, OW: 112}
	r := newRand(1)
	x := randSlice(r, 3*224*224)
	w := randSlice(r, 32*27)
	out := make([]float32, 32*112*112)
	p := NewPool(1)
	defer p.Close()
	for i := 0; i < b.N; i++ {
		Conv2D(p, out, x, w, g, Epilogue{Bias: make([]float32, 32), Act: ActClamp, Min: 0, Max: 6})
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/conv")
}
