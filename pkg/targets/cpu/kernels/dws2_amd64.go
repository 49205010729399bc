//go:build amd64 && !purego

package kernels

//go:noescape
func dwS2RowsAVX2(dst *float32, ldd int, r0, r1, r2 *float32, srcStep, n, blocks, last int, w *dwS2Weights)

// dwS2Rows runs the span's vector blocks on n output rows: dst rows ldd
// floats apart, input rows srcStep floats apart from rows[k] (kernel row
// k of the first output row).
func dwS2Rows(dst []float32, ldd int, rows *[3][]float32, srcStep, n int, sp dwS2Span, w *dwS2Weights) {
	if !hasAVX2FMA {
		dwS2RowsGo(dst, ldd, rows, srcStep, n, sp, w)
		return
	}
	// Bounds: the last row's last block writes up to column end-1 and
	// reads input columns up to 2·end-1.
	_ = dst[(n-1)*ldd+sp.end-1]
	for k := range rows {
		_ = rows[k][(n-1)*srcStep+2*sp.end-1]
	}
	dwS2RowsAVX2(&dst[0], 4*ldd, &rows[0][0], &rows[1][0], &rows[2][0], 4*srcStep, n, sp.blocks, 4*sp.last, w)
}
