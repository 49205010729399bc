package vec

import (
	"fmt"
	"testing"
)

// BenchmarkExpSub32 times ExpSub32 over rows of attention scores: the
// row lengths of a short and a long key block.
func BenchmarkExpSub32(b *testing.B) {
	for _, n := range []int{200, 1024} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%37) * 0.1
			}
			buf := make([]float32, n)
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				copy(buf, x)
				ExpSub32(buf, 3.6, 0.5)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/elem")
		})
	}
}
