package kernels

// axpyGo is the portable twin of the assembly axpy; both are tested against
// each other.
func axpyGo(dst, src []float32, a float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += a * src[i]
	}
}
