package vec

// axpyGo is the portable twin of the assembly axpy; both are tested against
// each other.
func axpyGo(dst, src []float32, a float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += a * src[i]
	}
}

func axpy4Go(dst []float32, s0, s1, s2, s3 []float32, a *[4]float32) {
	n := len(dst)
	s0, s1, s2, s3 = s0[:n], s1[:n], s2[:n], s3[:n]
	for i := range dst {
		dst[i] += a[0]*s0[i] + a[1]*s1[i] + a[2]*s2[i] + a[3]*s3[i]
	}
}
