package data

import "testing"

// The transposes of BenchmarkCopy* are those of the operator sweep
// (docs/perf/ops.md): a 2-D transpose with rows a power of two
// apart and one not, and NCHW to NHWC.
func benchCopy(b *testing.B, dstStrides, srcStrides, shape []int) {
	n := prod(shape)
	src, dst := make([]float32, n), make([]float32, n)
	b.SetBytes(int64(8 * n))
	for b.Loop() {
		Copy(nil, dst, 0, dstStrides, src, 0, srcStrides, shape)
	}
}

func BenchmarkCopyTranspose1024(b *testing.B) {
	benchCopy(b, []int{1024, 1}, []int{1, 1024}, []int{1024, 1024})
}

func BenchmarkCopyTranspose1000(b *testing.B) {
	benchCopy(b, []int{1000, 1}, []int{1, 1000}, []int{1000, 1000})
}

func BenchmarkCopyNCHWToNHWC(b *testing.B) {
	benchCopy(b, []int{112 * 64, 64, 1}, []int{112, 1, 112 * 112}, []int{112, 112, 64})
}

// BenchmarkGatherRowsOf1 is a nearest 2x resize's gather along the last
// axis of 1x256x56x28: rows of one element.
func BenchmarkGatherRowsOf1(b *testing.B) {
	x := make([]float32, 256*56*28)
	out := make([]float32, 256*56*56)
	idx := make([]int64, 56)
	for i := range idx {
		idx[i] = int64(i / 2)
	}
	b.SetBytes(int64(4 * (len(x) + len(out))))
	for b.Loop() {
		if err := Gather(nil, out, x, 256*56, 28, 1, idx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopySmall is the copy of one step of an unrolled recurrence (a
// [1, 8] slice of [time, 1, 8]): per-call overhead, not bandwidth.
func BenchmarkCopySmall(b *testing.B) {
	src, dst := make([]float32, 512*8), make([]float32, 8)
	b.ReportAllocs()
	for b.Loop() {
		Copy(nil, dst, 0, []int{8, 1}, src, 40, []int{8, 1}, []int{1, 8})
	}
}
