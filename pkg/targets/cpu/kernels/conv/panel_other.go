//go:build !amd64 || purego

package conv

func copyRows16(dst []float32, dstStride int, src []float32, n int) {
	copyRows16Go(dst, dstStride, src, n)
}

func copyRows(dst []float32, dstStride int, src []float32, srcStride, rows, n int) {
	copyRowsGo(dst, dstStride, src, srcStride, rows, n)
}
