//go:build !amd64 || purego

package conv

// dwRowsVec runs the span's blocks on n output rows of input rows iw
// wide (the portable twin: no vector path here).
func dwRowsVec(dst []float32, ldd int, rows *[3][]float32, srcStep, n int, sp dwSpan, w *dwWeights) {
	dwRowsGo(dst, ldd, rows, srcStep, n, sp, w, srcStep/sp.stride)
}
