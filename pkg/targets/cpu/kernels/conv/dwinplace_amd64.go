//go:build amd64 && !purego

package conv

import (
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

//go:noescape
func dwS1RowsAVX2(dst *float32, ldd int, r0, r1, r2 *float32, srcStep, n, blocks, last int, w *dwWeights)

//go:noescape
func dwS2RowsAVX2(dst *float32, ldd int, r0, r1, r2 *float32, srcStep, n, blocks, last int, w *dwWeights)

// dwRowsVec runs the span's vector blocks on n output rows: dst rows ldd
// floats apart, input rows srcStep floats apart from rows[k] (kernel row
// k of the first output row), srcStep/stride floats wide.
func dwRowsVec(dst []float32, ldd int, rows *[3][]float32, srcStep, n int, sp dwSpan, w *dwWeights) {
	if !vec.AVX2FMA {
		dwRowsGo(dst, ldd, rows, srcStep, n, sp, w, srcStep/sp.stride)
		return
	}
	// Bounds: the last row's last block writes up to column end-1 and
	// reads input columns up to stride·end-1 (stride 1: the last block's
	// right tap past the row is made in registers).
	_ = dst[(n-1)*ldd+sp.end-1]
	for k := range rows {
		_ = rows[k][(n-1)*srcStep+sp.stride*sp.end-1]
	}
	// Called directly, not through a func value: that would lose
	// go:noescape and put w on the heap, one allocation per plane.
	if sp.stride == 1 {
		dwS1RowsAVX2(&dst[0], 4*ldd, &rows[0][0], &rows[1][0], &rows[2][0], 4*srcStep, n, sp.blocks, 4*sp.last, w)
		return
	}
	dwS2RowsAVX2(&dst[0], 4*ldd, &rows[0][0], &rows[1][0], &rows[2][0], 4*srcStep, n, sp.blocks, 4*sp.last, w)
}
