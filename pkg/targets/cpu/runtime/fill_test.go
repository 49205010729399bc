package runtime

import (
	"bytes"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestFill compares fill with a store per element for every dtype, value
// and a range of lengths (the doubling copy's edges among them).
func TestFill(t *testing.T) {
	dts := []tensor.DType{tensor.F32, tensor.F64, tensor.F16, tensor.BF16, tensor.I64, tensor.I32, tensor.I16, tensor.I8, tensor.U8, tensor.Bool}
	for _, dt := range dts {
		for _, v := range []float64{0, math.Copysign(0, -1), 1.5, -3, math.NaN(), math.Inf(-1)} {
			for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 1000} {
				size := dt.Size()
				want := make([]byte, n*size)
				for i := 0; i < n; i++ {
					store(want, dt, int64(i), []float64{v})
				}
				got := bytes.Repeat([]byte{0xAB}, n*size)
				fill(got, dt, v)
				if !bytes.Equal(got, want) {
					t.Fatalf("fill %s %v n=%d: % x, want % x", dt, v, n, got, want)
				}
			}
		}
	}
}

func BenchmarkFill(b *testing.B) {
	dst := make([]byte, 4<<20)
	b.SetBytes(int64(len(dst)))
	b.Run("fill", func(b *testing.B) {
		for range b.N {
			fill(dst, tensor.F32, -1)
		}
	})
	b.Run("store", func(b *testing.B) {
		one := []float64{-1}
		for range b.N {
			for i := range int64(len(dst) / 4) {
				store(dst, tensor.F32, i, one)
			}
		}
	})
}
