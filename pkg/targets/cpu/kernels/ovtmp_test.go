package kernels

import (
	"testing"
)

func BenchmarkGemmCallTmp(b *testing.B) {
	p := NewPool(1)
	defer p.Close()
	r := newRand(1)
	m, n, k := 12, 32, 8
	x, y, c := randSlice(r, m*k), randSlice(r, k*n), make([]float32, m*n)
	packed := PackB(k, n, y, n)
	b.ReportAllocs()
	for b.Loop() {
		GemmPacked(p, m, n, k, x, k, packed, c, n, Epilogue{})
	}
}
