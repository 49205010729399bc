//go:build !amd64 || purego

package kernels

// dwS2Rows runs the span's vector blocks on n output rows (the portable
// twin: no vector path here).
func dwS2Rows(dst []float32, ldd int, rows *[3][]float32, srcStep, n int, sp dwS2Span, w *dwS2Weights) {
	dwS2RowsGo(dst, ldd, rows, srcStep, n, sp, w)
}
