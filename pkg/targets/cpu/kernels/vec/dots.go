package vec

// dotsGo is the portable twin of the assembly Dots: s[j] is the dot
// product of q with row j of k (rows ldk apart). Both are tested against
// each other within float32 rounding (the assembly sums in 32 lanes and
// fuses each product into its sum).
func dotsGo(s, q, k []float32, ldk int) {
	d := len(q)
	for j := range s {
		row := k[j*ldk : j*ldk+d]
		var a0, a1, a2, a3 float32
		i := 0
		for ; i+4 <= d; i += 4 {
			a0 += q[i] * row[i]
			a1 += q[i+1] * row[i+1]
			a2 += q[i+2] * row[i+2]
			a3 += q[i+3] * row[i+3]
		}
		for ; i < d; i++ {
			a0 += q[i] * row[i]
		}
		s[j] = (a0 + a1) + (a2 + a3)
	}
}

// dotsCheck panics unless k holds len(s) rows of len(q), ldk apart.
func dotsCheck(s, q, k []float32, ldk int) {
	if len(s) == 0 {
		return
	}
	if ldk < len(q) || len(k) < (len(s)-1)*ldk+len(q) {
		panic("vec: Dots: k is shorter than its rows")
	}
}
