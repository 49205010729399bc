package conv

import (
	"runtime"

	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

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

// smallPlane is the largest input plane (H·W) dwSmall takes, of those the
// in-place kernel (dwPlane) does not (paddings other than 1, rows under
// 16); larger planes go row by row, so that the padded copy does not
// double their memory traffic.
const smallPlane = tuning.DwSmallPlane

// dwSmall runs 3x3 depthwise planes (stride 1 or 2, dilation 1) of up to
// smallPlane inputs, where per-row work would dominate a row kernel. The input plane is copied into a zero border, so that
// every output is interior, and for stride 2 split by the parity of its
// rows and columns into four phase planes, so that every tap is a
// stride-1 read of one of them. Then, read as one flat row, output (r, c)
// sits at r·pitch + c and each tap at a fixed offset, and the whole plane
// is one nine-tap vector pass over (OH-1)·pitch + OW elements: no per-row
// work, no edge columns. The border columns in between are computed and
// dropped as the rows are copied out. Buffers are reused from plane to
// plane of one geometry.
type dwSmall struct {
	key      dwSmallKey // the geometry the buffers are laid out for
	hp, wp   int        // the padded plane
	hp2, wp2 int        // rows and columns of each phase plane
	ph       []float32  // stride 1: the padded plane; stride 2: [row parity][column parity][hp2][wp2]
	row      []float32  // stride 2: one padded row before its split
	flat     []float32  // outputs at the phase pitch
}

// dwSmallKey is what fixes which cells of dwSmall's buffers a plane writes.
type dwSmallKey struct{ h, w, padT, padL, oh, ow, st int }

func (d *dwSmall) plane(op, xp []float32, g *ConvGeom, wk []float32, bias, lo, hi float32) {
	st := g.StrideW
	hp := max(st*(g.OH-1)+3, g.H+g.PadT)
	wp := max(st*(g.OW-1)+3, g.W+g.PadL)
	hp2, wp2 := hp, wp
	if st == 2 {
		hp2, wp2 = (hp+1)/2, (wp+1)/2
	}
	if key := (dwSmallKey{g.H, g.W, g.PadT, g.PadL, g.OH, g.OW, st}); d.key != key || d.ph == nil {
		// Zeroed once: each plane of one geometry rewrites the same cells
		// (the buffers come from a pool, so the key is the whole geometry:
		// another padding would leave other cells written).
		*d = dwSmall{key: key, hp: hp, wp: wp, hp2: hp2, wp2: wp2, ph: make([]float32, st*st*hp2*wp2),
			row: make([]float32, 2*wp2), flat: make([]float32, hp2*wp2)}
	}
	c0, c1 := max(0, -g.PadL), min(g.W, wp-g.PadL) // input columns that land inside
	ih0, ih1 := max(0, -g.PadT), min(g.H, hp-g.PadT)
	if st == 2 && c0 == 0 && c1 == g.W && g.PadL >= 0 && ih0 < ih1 {
		// Whole input rows split straight into the phases, every other
		// row in one call (rows of one parity land in consecutive rows of
		// their phase planes): padded column PadL+i holds input column i.
		h := g.PadL / 2
		for ih := ih0; ih < min(ih0+2, ih1); ih++ {
			r := ih + g.PadT
			even := ((r%2)*2*hp2 + r/2) * wp2 // row r's even columns; its odd ones follow hp2 rows on
			odd := even + hp2*wp2
			rows := (ih1 - ih + 1) / 2
			src := xp[ih*g.W:]
			if g.PadL%2 == 0 {
				deinterleaveRows(d.ph[even+h:], d.ph[odd+h:], wp2, src, 2*g.W, rows, g.W)
			} else {
				deinterleaveRows(d.ph[odd+h:], d.ph[even+h+1:], wp2, src, 2*g.W, rows, g.W)
			}
		}
		ih0 = ih1
	}
	if st == 1 && c0 < c1 && ih0 < ih1 {
		r := ih0 + g.PadT
		copyRows(d.ph[r*wp+c0+g.PadL:], wp, xp[ih0*g.W+c0:], g.W, ih1-ih0, c1-c0)
		ih0 = ih1
	}
	for ih := ih0; ih < ih1 && c0 < c1; ih++ {
		r := ih + g.PadT
		even := ((r%2)*2*hp2 + r/2) * wp2 // row r's even columns; its odd ones follow hp2 rows on
		odd := even + hp2*wp2
		if c0 == 0 && c1 == g.W && g.PadL >= 0 {
			// Split the input row straight into the phases: padded column
			// PadL+i holds input column i.
			src := xp[ih*g.W : (ih+1)*g.W]
			h := g.PadL / 2
			if g.PadL%2 == 0 {
				deinterleave2(d.ph[even+h:even+wp2], d.ph[odd+h:odd+wp2], src)
			} else {
				deinterleave2(d.ph[odd+h:odd+wp2], d.ph[even+h+1:even+wp2], src)
			}
			continue
		}
		copy(d.row[c0+g.PadL:c1+g.PadL], xp[ih*g.W+c0:ih*g.W+c1])
		deinterleave2(d.ph[even:even+wp2], d.ph[odd:odd+wp2], d.row[:2*wp2])
	}
	n := (g.OH-1)*wp2 + g.OW
	var w [9]float32
	copy(w[:], wk[:9])
	var src [9][]float32
	for kh := 0; kh < 3; kh++ {
		for kw := 0; kw < 3; kw++ {
			base := kh*wp2 + kw
			if st == 2 {
				base = ((kh%2)*2+kw%2)*hp2*wp2 + (kh/2)*wp2 + kw/2
			}
			src[kh*3+kw] = d.ph[base : base+n]
		}
	}
	if g.OW >= 16 && dot9Rows(op, g.OW, &src, wp2, g.OH, g.OW, &w, bias, lo, hi) {
		// Rows long enough for whole vectors: straight into the output, row
		// by row, with no border columns and no copy out.
		return
	}
	t := d.flat[:n]
	dot9(t, &src, &w, bias, lo, hi)
	copyRows(op, g.OW, t, wp2, g.OH, g.OW)
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
	if bulk && ohA == 0 && ohB == g.OH && lo == 0 && hi == g.OW {
		return // every output was interior: the vector call did them all
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
