package parallel

import (
	"fmt"
	"testing"
)

// BenchmarkFor times one For of empty and of short chunks at several
// pool sizes: the fixed cost a kernel pays to run on the pool, which
// decides how small a kernel may be before more threads make it slower.
func BenchmarkFor(b *testing.B) {
	for _, threads := range []int{2, 4, 8, 16} {
		for _, work := range []int{0, 2000} {
			b.Run(fmt.Sprintf("threads=%d/work=%d", threads, work), func(b *testing.B) {
				p := NewPool(threads)
				defer p.Close()
				sink := make([]float64, 64*threads)
				n := 4 * threads
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					p.For(n, 1, func(lo, hi int) {
						for c := lo; c < hi; c++ {
							s := sink[8*c]
							for k := 0; k < work; k++ {
								s = s*0.999 + 1
							}
							sink[8*c] = s
						}
					})
				}
			})
		}
	}
}
