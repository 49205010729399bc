//go:build !amd64 || purego

package conv

func dwNHWC(out []float32, outStride int, in *[9][]float32, inStride int, w, bias []float32, c, npix int, lo, hi float32) {
	dwNHWCGo(out, outStride, in, inStride, w, bias, c, npix, lo, hi)
}
