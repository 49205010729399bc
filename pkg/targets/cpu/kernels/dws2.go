package kernels

// A 3x3 depthwise convolution at stride 2 (MobileNet's downsampling
// layers), read straight from the NCHW input plane: output column j takes
// input columns 2j-1, 2j and 2j+1 (left padding 1). Eight outputs of one
// row come from two vectors of each of their three input rows: the even
// and odd columns of x[2j0 : 2j0+16] and the even columns of
// x[2j0-1 : 2j0+15] are one in-lane shuffle each, in the same permuted
// lane order, so nine FMAs and one permute at the end give the eight
// outputs. No phase planes are written and read back: the input (4.8 MB
// for 96 channels at 112x112, just written by the expansion before it) is
// read once, which is what the layer's time is (the phase-split path read
// it, wrote the phases and read those: 430-510 us against ~250 here).

// dwS2Span is where the vector blocks of one output row of a stride-2
// plane go: a first block of eight outputs at column 0 (its one padding
// tap made in registers), blocks at columns 8, 16, ... (blocks of them),
// and a last one at column last (overlapping the one before it) when
// last > 0. Columns from end on are computed one by one.
type dwS2Span struct {
	blocks, last, end int
}

// dwS2Plan returns the vector span of a stride-2 3x3 plane, and false
// where the geometry has none (left padding other than 1, or rows too
// short for one block).
func dwS2Plan(g *ConvGeom) (dwS2Span, bool) {
	if g.KH != 3 || g.KW != 3 || g.StrideH != 2 || g.StrideW != 2 || g.DilH != 1 || g.DilW != 1 || g.PadL != 1 {
		return dwS2Span{}, false
	}
	// A block at output column j0 reads input columns 2j0-1 .. 2j0+15
	// (column -1 being the padding at j0 = 0).
	jmax := min(g.OW-8, (g.W-16)/2)
	if jmax < 0 || g.W < 16 {
		return dwS2Span{}, false
	}
	sp := dwS2Span{blocks: jmax / 8, end: jmax + 8}
	if jmax%8 != 0 {
		sp.last = jmax
	}
	return sp, true
}

// dwS2Plane computes one output plane op (OH×OW) of input plane xp (H×W)
// for a geometry dwS2Plan accepts: clamp(bias + Σ w·x, lo, hi) with the
// nine products added in tap order. zero is at least W zero floats.
func dwS2Plane(op, xp []float32, g *ConvGeom, sp dwS2Span, wk []float32, bias, lo, hi float32, zero []float32) {
	var w dwS2Weights
	copy(w[:9], wk[:9])
	w[9], w[10], w[11] = bias, lo, hi
	var rows [3][]float32
	// Output rows whose three input rows all lie inside go as one call.
	ohA := (g.PadT + 1) / 2
	ohB := min(g.OH, (g.H-3+g.PadT)/2+1)
	for oh := 0; oh < g.OH; oh++ {
		for k := range rows {
			ih := 2*oh - g.PadT + k
			if ih >= 0 && ih < g.H {
				rows[k] = xp[ih*g.W:]
			} else {
				rows[k] = zero[:g.W]
			}
		}
		n := 1
		if oh == ohA && ohB > ohA {
			n = ohB - ohA
		}
		dwS2Rows(op[oh*g.OW:], g.OW, &rows, 2*g.W, n, sp, &w)
		if sp.end < g.OW {
			// Odd widths: the last column's right tap is padding.
			for r := oh; r < oh+n; r++ {
				for k := range rows {
					if r > oh {
						rows[k] = xp[(2*r-g.PadT+k)*g.W:]
					}
				}
				dwS2Edge(op[r*g.OW+sp.end:(r+1)*g.OW], sp.end, g.W, &rows, &w)
			}
		}
		oh += n - 1
	}
}

// dwS2Weights is the nine taps (row by row), the bias and the clamp bounds.
type dwS2Weights [12]float32

// dwS2Edge computes outputs j0, j0+1, ... of one row into dst one by one,
// skipping taps that fall outside the input rows (width iw).
func dwS2Edge(dst []float32, j0, iw int, rows *[3][]float32, w *dwS2Weights) {
	for i := range dst {
		j := j0 + i
		acc := w[9]
		for k, r := range rows {
			for kw := 0; kw < 3; kw++ {
				if c := 2*j - 1 + kw; c >= 0 && c < iw {
					acc += w[3*k+kw] * r[c]
				}
			}
		}
		dst[i] = clamp32(acc, w[10], w[11])
	}
}

// dwS2RowsGo is the portable twin of the assembly row kernel: n output
// rows (dst rows ldd floats apart, input rows srcStep floats apart from
// rows[k]) over the span's blocks.
func dwS2RowsGo(dst []float32, ldd int, rows *[3][]float32, srcStep, n int, sp dwS2Span, w *dwS2Weights) {
	for r := 0; r < n; r++ {
		d := dst[r*ldd:]
		block := func(j0 int) {
			for j := j0; j < j0+8; j++ {
				acc := w[9]
				for k := range rows {
					x := rows[k][r*srcStep+2*j:]
					var left float32 // column -1: the padding
					if j > 0 {
						left = rows[k][r*srcStep+2*j-1]
					}
					acc += w[3*k] * left
					acc += w[3*k+1] * x[0]
					acc += w[3*k+2] * x[1]
				}
				d[j] = clamp32(acc, w[10], w[11])
			}
		}
		for b := 0; b <= sp.blocks; b++ {
			block(8 * b)
		}
		if sp.last > 0 {
			block(sp.last)
		}
	}
}
