//go:build amd64 && !purego

package norm

import (
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

//go:noescape
func sum4AVX2(x *float32, n int) float64

//go:noescape
func sqDev4AVX2(x *float32, n int, mean float64) float64

//go:noescape
func normAffine4AVX2(out, x, scale, bias *float32, n int, mean, rstd float64)

// layerNormRow normalizes one row (see layerNormRowGo, whose results it
// gives bit for bit), four float64 lanes at a time.
func layerNormRow(out, x, scale, bias []float32, eps float32) {
	n4 := len(x) &^ 3
	if !vec.AVX2FMA || n4 == 0 {
		layerNormRowGo(out, x, scale, bias, eps)
		return
	}
	_ = out[len(x)-1]
	sum := sum4AVX2(&x[0], n4) + sumTail(x[n4:])
	mean := sum / float64(len(x))
	ss := sqDev4AVX2(&x[0], n4, mean) + sqDevTail(x[n4:], mean)
	rstd := layerNormRstd(ss, len(x), eps)
	var sp, bp *float32
	if scale != nil {
		sp = &scale[:len(x)][0]
	}
	if bias != nil {
		bp = &bias[:len(x)][0]
	}
	normAffine4AVX2(&out[0], &x[0], sp, bp, n4, mean, rstd)
	normAffineGo(out[n4:len(x)], x[n4:], tailOf(scale, n4), tailOf(bias, n4), mean, rstd)
}

// rmsNormRow is RMSNorm's row (see rmsNormRowGo, whose results it gives
// bit for bit): the layer norm's squared deviations and affine pass, from
// a mean of 0.
func rmsNormRow(out, x, scale []float32, eps float32) {
	n4 := len(x) &^ 3
	if !vec.AVX2FMA || n4 == 0 {
		rmsNormRowGo(out, x, scale, eps)
		return
	}
	_ = out[len(x)-1]
	ss := sqDev4AVX2(&x[0], n4, 0) + sqDevTail(x[n4:], 0)
	rstd := layerNormRstd(ss, len(x), eps)
	var sp *float32
	if scale != nil {
		sp = &scale[:len(x)][0]
	}
	normAffine4AVX2(&out[0], &x[0], sp, nil, n4, 0, rstd)
	normAffineGo(out[n4:len(x)], x[n4:], tailOf(scale, n4), nil, 0, rstd)
}
