package vec

import "math"

// expf32 constants (see softmax32_amd64.s): the clamp, log2(e), ln2 in two
// parts and the polynomial of (e^r - 1 - r)/r².
const (
	exp32Lo    = float32(-87.33654)
	exp32Log2e = float32(1.44269504088896341)
	exp32Ln2Hi = float32(0.693359375)
	exp32Ln2Lo = float32(-2.12194440e-4)
)

var exp32Poly = [6]float32{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}

// expf32 is e^d in float32 for d <= 0 (about 1 ulp): 0 below exp32Lo
// (-Inf included), NaN for NaN. The scalar twin of expSub32AVX2's lanes.
func expf32(d float32) float32 {
	if d != d {
		return d
	}
	if d < exp32Lo {
		return 0
	}
	n := float32(math.RoundToEven(float64(d * exp32Log2e)))
	r := float32(math.FMA(float64(-n), float64(exp32Ln2Hi), float64(d)))
	r = float32(math.FMA(float64(-n), float64(exp32Ln2Lo), float64(r)))
	p := exp32Poly[0]
	for _, c := range exp32Poly[1:] {
		p = float32(math.FMA(float64(r), float64(p), float64(c)))
	}
	p = float32(math.FMA(float64(r*r), float64(p), float64(r))) + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// expSub32Go sets x[i] = expf32((x[i]-m)·scale) and returns the sum of the
// results in float64, summed as expSub32AVX2 sums (lane i%8 over 8-blocks,
// then fold8) with a tail past the last 8-block added in order.
func expSub32Go(x []float32, m, scale float32) float64 {
	var l [8]float64
	n8 := len(x) &^ 7
	for i := 0; i < n8; i += 8 {
		for j := range 8 {
			e := expf32((x[i+j] - m) * scale)
			x[i+j] = e
			l[j] += float64(e)
		}
	}
	return expSub32Tail(x[n8:], m, scale, fold8(&l))
}

// expSub32Tail sets x[i] = expf32((x[i]-m)·scale) and adds the results to
// s in order.
func expSub32Tail(x []float32, m, scale float32, s float64) float64 {
	for i, v := range x {
		e := expf32((v - m) * scale)
		x[i] = e
		s += float64(e)
	}
	return s
}

// maxNaN32Go is the largest element of x (-Inf when empty), NaN when any is
// NaN (as Go's max is); four running maxima, for the loop's throughput.
func maxNaN32Go(x []float32) float32 {
	ninf := float32(math.Inf(-1))
	m0, m1, m2, m3 := ninf, ninf, ninf, ninf
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		m0, m1, m2, m3 = max(m0, v[0]), max(m1, v[1]), max(m2, v[2]), max(m3, v[3])
	}
	for ; i < len(x); i++ {
		m0 = max(m0, x[i])
	}
	return max(max(m0, m1), max(m2, m3))
}

// fold8 adds eight lanes as the assembly does: t_j = l_j + l_{j+4}, then
// (t0+t1)+(t2+t3).
func fold8(l *[8]float64) float64 {
	t0, t1, t2, t3 := l[0]+l[4], l[1]+l[5], l[2]+l[6], l[3]+l[7]
	return (t0 + t1) + (t2 + t3)
}
