package norm

import "math"

// layerNormRowGo normalizes one row, out = (x-mean)/sqrt(var+eps)·scale +
// bias, mean and variance in float64: each sum in eight lanes and a scalar
// tail, the order the assembly twin sums in.
func layerNormRowGo(out, x, scale, bias []float32, eps float32) {
	n4 := len(x) &^ 3
	sum := sum4Go(x[:n4]) + sumTail(x[n4:])
	mean := sum / float64(len(x))
	ss := sqDev4Go(x[:n4], mean) + sqDevTail(x[n4:], mean)
	normAffineGo(out[:len(x)], x, scale, bias, mean, layerNormRstd(ss, len(x), eps))
}

func layerNormRstd(ss float64, n int, eps float32) float64 {
	return 1 / math.Sqrt(ss/float64(n)+float64(eps))
}

// sum4Go sums x (len a multiple of 4) in eight lanes (see norm_amd64.s).
func sum4Go(x []float32) float64 {
	var l [8]float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		for j, v := range x[i : i+8] {
			l[j] += float64(v)
		}
	}
	if i < len(x) {
		for j, v := range x[i : i+4] {
			l[j] += float64(v)
		}
	}
	return fold8(&l)
}

// sqDev4Go sums (x-mean)² (len(x) a multiple of 4) in eight lanes.
func sqDev4Go(x []float32, mean float64) float64 {
	var l [8]float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		for j, v := range x[i : i+8] {
			d := float64(v) - mean
			l[j] += d * d
		}
	}
	if i < len(x) {
		for j, v := range x[i : i+4] {
			d := float64(v) - mean
			l[j] += d * d
		}
	}
	return fold8(&l)
}

// fold8 adds eight lanes as the assembly does: t_j = l_j + l_{j+4}, then
// (t0+t1)+(t2+t3).
func fold8(l *[8]float64) float64 {
	t0, t1, t2, t3 := l[0]+l[4], l[1]+l[5], l[2]+l[6], l[3]+l[7]
	return (t0 + t1) + (t2 + t3)
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
