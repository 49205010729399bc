//go:build amd64 && !purego

package gemm

import (
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

//go:noescape
func epiRowAVX2(c, bias, res *float32, n int, flags uint, bv, lo, hi float32)

// epiRowVec applies the tile epilogue flags (epiBiasCol: bias[j],
// epiBiasRow: bv, epiClamp: [lo, hi], epiRes: res[j]) to c[j] for j below
// a multiple of 8, in AVX2 where the CPU has it, and returns how many
// elements it did: the caller finishes the rest in Go, in the same order,
// so the result is the same bits either way.
func epiRowVec(c, bias, res []float32, flags uint, bv, lo, hi float32) int {
	n := len(c) &^ 7
	if n == 0 || !vec.AVX2FMA {
		return 0
	}
	var bp, rp *float32
	if flags&epiBiasCol != 0 {
		bp = &bias[:n][0]
	}
	if flags&epiRes != 0 {
		rp = &res[:n][0]
	}
	epiRowAVX2(&c[0], bp, rp, n, flags, bv, lo, hi)
	return n
}
