//go:build !amd64 || purego

package norm

func layerNormRow(out, x, scale, bias []float32, eps float32) {
	layerNormRowGo(out, x, scale, bias, eps)
}

func rmsNormRow(out, x, scale []float32, eps float32) {
	rmsNormRowGo(out, x, scale, eps)
}
