package kernels

import "runtime"

// dot9Go is the portable twin of the assembly dot9.
func dot9Go(dst []float32, src *[9][]float32, w *[9]float32, bias, lo, hi float32) {
	for i := range dst {
		acc := bias
		for t := range src {
			acc += w[t] * src[t][i]
		}
		dst[i] = clamp32(acc, lo, hi)
	}
}

// clamp32 clamps v to [lo, hi]; NaN stays NaN.
func clamp32(v, lo, hi float32) float32 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func deinterleave2Go(even, odd, src []float32) {
	for i := range even {
		even[i], odd[i] = src[2*i], src[2*i+1]
	}
}

func keepAlive9(src *[9][]float32) { runtime.KeepAlive(src) }

// dwRows gives the input rows of one plane: the plane itself for stride 1,
// or its rows split by stride phase (columns j*st+ph) for stride 2.
type dwRows struct {
	plane  []float32 // stride 1
	phases []float32 // stride > 1: [st][H][phaseW]
	w, h   int
	phaseW int
	st     int
}

// from returns the input from row ih, column (phase index) j of phase ph
// to the end of the buffer, so a kernel can walk down the rows.
func (r *dwRows) from(ph, ih, j int) []float32 {
	if r.st == 1 {
		return r.plane[ih*r.w+j:]
	}
	return r.phases[(ph*r.h+ih)*r.phaseW+j:]
}

func (r *dwRows) row(ph, ih int) []float32 {
	if r.st == 1 {
		return r.plane[ih*r.w : (ih+1)*r.w]
	}
	b := (ph*r.h + ih) * r.phaseW
	return r.phases[b : b+r.phaseW]
}

// depthwise3x3 runs one output plane of a 3x3 depthwise convolution with
// dilation 1 and stride 1 or 2: each output row is one dot9 over the nine
// taps' shifted input rows (a zero row where the tap's input row is
// padding); the one or two columns at each edge whose taps fall in the
// padding are computed directly.
func depthwise3x3(op []float32, g *ConvGeom, wk []float32, bias, clo, chi float32, in *dwRows, zero []float32) {
	st := g.StrideW
	var w [9]float32
	copy(w[:], wk[:9])
	// Output columns whose three taps all read inside the input, and each
	// tap's phase and shift (phase index = output column + shift).
	lo, hi := 0, g.OW
	var ph, shift [3]int
	for kw := 0; kw < 3; kw++ {
		c := kw - g.PadL
		l, h := validRange(c, st, g.W, g.OW)
		lo, hi = max(lo, l), min(hi, h)
		ph[kw] = ((c % st) + st) % st
		shift[kw] = (c - ph[kw]) / st
	}
	if lo > hi {
		lo = hi
	}
	var src [9][]float32
	var valid [3]bool
	var rows [3][2][]float32 // [kh][phase]
	// Rows whose three input rows are all inside the input go through the
	// vector kernel in one call; the rest (and the edge columns) below.
	ohA := (g.PadT + g.StrideH - 1) / g.StrideH
	ohB := min(g.OH, (g.H-3+g.PadT)/g.StrideH+1)
	bulk := false
	if lo < hi && ohB > ohA && g.H-3+g.PadT >= 0 {
		rowStride := in.w
		if st > 1 {
			rowStride = in.phaseW
		}
		for kh := 0; kh < 3; kh++ {
			ih := ohA*g.StrideH + kh - g.PadT
			for kw := 0; kw < 3; kw++ {
				src[kh*3+kw] = in.from(ph[kw], ih, lo+shift[kw])
			}
		}
		bulk = dot9Rows(op[ohA*g.OW+lo:], g.OW, &src, g.StrideH*rowStride, ohB-ohA, hi-lo, &w, bias, clo, chi)
	}
	for oh := 0; oh < g.OH; oh++ {
		orow := op[oh*g.OW : (oh+1)*g.OW]
		for kh := 0; kh < 3; kh++ {
			ih := oh*g.StrideH + kh - g.PadT
			valid[kh] = ih >= 0 && ih < g.H
			if !valid[kh] {
				continue
			}
			for p := 0; p < st; p++ {
				rows[kh][p] = in.row(p, ih)
			}
		}
		if lo < hi && !(bulk && oh >= ohA && oh < ohB) {
			for kh := 0; kh < 3; kh++ {
				for kw := 0; kw < 3; kw++ {
					if valid[kh] {
						src[kh*3+kw] = rows[kh][ph[kw]][lo+shift[kw] : hi+shift[kw]]
					} else {
						src[kh*3+kw] = zero[:hi-lo]
					}
				}
			}
			dot9(orow[lo:hi], &src, &w, bias, clo, chi)
		}
		for ow := 0; ow < g.OW; ow++ {
			if ow == lo && lo < hi {
				ow = hi - 1
				continue
			}
			acc := bias
			for kh := 0; kh < 3; kh++ {
				if !valid[kh] {
					continue
				}
				for kw := 0; kw < 3; kw++ {
					iw := ow*st + kw - g.PadL
					if iw < 0 || iw >= g.W {
						continue
					}
					acc += w[kh*3+kw] * rows[kh][iw&(st-1)][iw>>(st-1)] // st is 1 or 2
				}
			}
			orow[ow] = clamp32(acc, clo, chi)
		}
	}
}
