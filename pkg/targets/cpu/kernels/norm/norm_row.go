package norm

import "math"

// layerNormRowGo normalizes one row, out = (x-mean)/sqrt(var+eps)·scale +
// bias, mean and variance in float64: each sum in sixteen lanes and a scalar
// tail, the order the assembly twin sums in.
func layerNormRowGo(out, x, scale, bias []float32, eps float32) {
	n4 := len(x) &^ 3
	sum := sum4Go(x[:n4]) + sumTail(x[n4:])
	mean := sum / float64(len(x))
	ss := sqDev4Go(x[:n4], mean) + sqDevTail(x[n4:], mean)
	normAffineGo(out[:len(x)], x, scale, bias, mean, layerNormRstd(ss, len(x), eps))
}

// rmsNormRowGo is RMSNorm's row: layerNormRowGo's passes with the mean
// taken as 0, x·rstd·scale[j] in float64, rounded once.
func rmsNormRowGo(out, x, scale []float32, eps float32) {
	n4 := len(x) &^ 3
	ss := sqDev4Go(x[:n4], 0) + sqDevTail(x[n4:], 0)
	normAffineGo(out[:len(x)], x, scale, nil, 0, layerNormRstd(ss, len(x), eps))
}

func layerNormRstd(ss float64, n int, eps float32) float64 {
	return 1 / math.Sqrt(ss/float64(n)+float64(eps))
}

// sum4Go sums x (len a multiple of 4) in sixteen lanes (see
// norm_amd64.s).
func sum4Go(x []float32) float64 {
	var l [16]float64
	i := 0
	for ; i+16 <= len(x); i += 16 {
		for j, v := range x[i : i+16] {
			l[j] += float64(v)
		}
	}
	for _, w := range []int{8, 4} {
		if i+w <= len(x) {
			for j, v := range x[i : i+w] {
				l[j] += float64(v)
			}
			i += w
		}
	}
	return fold16(&l)
}

// sqDev4Go sums (x-mean)² (len(x) a multiple of 4) in sixteen lanes.
func sqDev4Go(x []float32, mean float64) float64 {
	var l [16]float64
	i := 0
	for ; i+16 <= len(x); i += 16 {
		for j, v := range x[i : i+16] {
			d := float64(v) - mean
			l[j] += d * d
		}
	}
	for _, w := range []int{8, 4} {
		if i+w <= len(x) {
			for j, v := range x[i : i+w] {
				d := float64(v) - mean
				l[j] += d * d
			}
			i += w
		}
	}
	return fold16(&l)
}

// fold16 adds sixteen lanes as the assembly does: u_j = l_j + l_{j+8},
// t_j = u_j + u_{j+4}, then (t0+t1)+(t2+t3).
func fold16(l *[16]float64) float64 {
	var u [4]float64
	for j := range u {
		u[j] = (l[j] + l[j+8]) + (l[j+4] + l[j+12])
	}
	return (u[0] + u[1]) + (u[2] + u[3])
}

func sumTail(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

func sqDevTail(x []float32, mean float64) float64 {
	var s float64
	for _, v := range x {
		d := float64(v) - mean
		s += d * d
	}
	return s
}

// normAffineGo writes out[j] = ((x[j]-mean)·rstd)·scale[j] + bias[j] in
// float64, rounded once; a nil scale or bias is left out.
func normAffineGo(out, x, scale, bias []float32, mean, rstd float64) {
	for j, v := range x[:len(out)] {
		y := (float64(v) - mean) * rstd
		if scale != nil {
			y *= float64(scale[j])
		}
		if bias != nil {
			y += float64(bias[j])
		}
		out[j] = float32(y)
	}
}

// tailOf is s[i:], or nil for a nil s.
func tailOf(s []float32, i int) []float32 {
	if s == nil {
		return nil
	}
	return s[i:]
}
