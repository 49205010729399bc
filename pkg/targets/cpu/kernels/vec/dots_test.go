package vec

import (
	"math"
	"testing"
)

// TestDots checks Dots (the assembly where the CPU has it) against a
// float64 reference and the Go twin on every length through the 32- and
// 8-column steps and the scalar tail, rows packed and strided, unaligned
// starts: within float32 rounding of the sum of |q_i·k_i|.
func TestDots(t *testing.T) {
	for d := 0; d <= 75; d++ {
		for _, pad := range []int{0, 3} {
			for _, off := range []int{0, 1} {
				n, ldk := 5, d+pad
				q := make([]float32, d+off)
				k := make([]float32, n*ldk+off+1)
				for i := range q {
					q[i] = float32(math.Sin(float64(3*i + 1)))
				}
				for i := range k {
					k[i] = float32(math.Cos(float64(i)))
				}
				got, twin := make([]float32, n), make([]float32, n)
				Dots(got, q[off:], k[off:], ldk)
				dotsGo(twin, q[off:], k[off:], ldk)
				for j := range n {
					var want, mag float64
					for i := range d {
						p := float64(q[off+i]) * float64(k[off+j*ldk+i])
						want += p
						mag += math.Abs(p)
					}
					tol := 1e-6 * (mag + 1e-30)
					if e := math.Abs(float64(got[j]) - want); e > tol {
						t.Fatalf("d=%d pad=%d off=%d row %d: Dots %g, want %g", d, pad, off, j, got[j], want)
					}
					if e := math.Abs(float64(twin[j]) - want); e > tol {
						t.Fatalf("d=%d pad=%d off=%d row %d: twin %g, want %g", d, pad, off, j, twin[j], want)
					}
				}
			}
		}
	}
	Dots(nil, []float32{1}, nil, 1) // no rows: nothing read
}

// TestDotsShortK: rows past k's end are refused before any is read.
func TestDotsShortK(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a k shorter than its rows")
		}
	}()
	Dots(make([]float32, 3), make([]float32, 8), make([]float32, 20), 8)
}
