package vec

import (
	"math"
	"testing"
)

// TestAddWiden checks the assembly widening row sum against the Go twin,
// bit for bit, on every width through two column blocks, unaligned starts,
// and one to three rows with strides wider than the block.
func TestAddWiden(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for off := 0; off < 3; off++ {
			for rows := 1; rows <= 3; rows++ {
				stride := n + 5
				xs := make([]float32, off+rows*stride)
				a1 := make([]float64, n+off)
				for i := range xs {
					xs[i] = float32(math.Sin(float64(i))) * 1e3
				}
				for i := range a1 {
					a1[i] = math.Cos(float64(i)) / 3
				}
				a2 := append([]float64(nil), a1...)
				AddWiden(a1[off:], xs[off:], rows, stride)
				addWidenGo(a2[off:], xs[off:], rows, stride)
				for i := range a1 {
					if a1[i] != a2[i] {
						t.Fatalf("n=%d off=%d rows=%d: element %d = %v, want %v", n, off, rows, i, a1[i], a2[i])
					}
				}
			}
		}
	}
}
