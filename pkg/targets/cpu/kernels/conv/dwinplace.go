package conv

// 3x3 depthwise convolutions at stride 1 and 2 with a left padding of 1
// (MobileNet's), read straight from the NCHW input plane, eight outputs
// of a row at a time.
//
// Stride 1: the three taps of a kernel row are unaligned loads one column
// apart, straight into the FMAs; the first and last block of a row make
// their padding column in registers. This replaced a copy of each plane
// into a zero border (32@112x112 and 144@56x56 read and wrote 1.6-1.8 MB
// more for it).
//
// Stride 2: output column j takes input columns 2j-1, 2j and 2j+1. The
// even and odd columns of x[2j0 : 2j0+16] and the even columns of
// x[2j0-1 : 2j0+15] are one in-lane shuffle each, in the same permuted
// lane order, so nine FMAs and one permute at the end give the eight
// outputs. This replaced splitting the plane into four phase planes and
// reading those back (96@112x112 in MobileNetV2 ran much faster).

// dwSpan is where the vector blocks of one output row go: a first block
// of eight outputs at column 0, blocks at columns 8, 16, ... (blocks of
// them), and a last one at column last (overlapping the one before it)
// when last > 0. Columns from end on are computed one by one.
type dwSpan struct {
	stride            int
	blocks, last, end int
}

// dwPlan returns the vector span of a 3x3 plane, and false where the
// geometry has none: stride other than 1 or 2 (the same both ways),
// dilation, a left padding other than 1 (and at stride 1 a right one),
// or rows too short.
func dwPlan(g *ConvGeom) (dwSpan, bool) {
	if g.KH != 3 || g.KW != 3 || g.StrideH != g.StrideW || g.DilH != 1 || g.DilW != 1 || g.PadL != 1 || g.W < 16 {
		return dwSpan{}, false
	}
	switch g.StrideW {
	case 1:
		// Blocks at 8b read columns 8b-1 .. 8b+8: inside for 8b <= W-9;
		// the block at W-8 makes column W (padding) in registers.
		if g.PadR != 1 || g.OW != g.W {
			return dwSpan{}, false
		}
		return dwSpan{stride: 1, blocks: (g.W - 9) / 8, last: g.W - 8, end: g.W}, true
	case 2:
		// A block at j0 reads columns 2j0-1 .. 2j0+15 (-1 the padding).
		jmax := min(g.OW-8, (g.W-16)/2)
		if jmax < 0 {
			return dwSpan{}, false
		}
		sp := dwSpan{stride: 2, blocks: jmax / 8, end: jmax + 8}
		if jmax%8 != 0 {
			sp.last = jmax
		}
		return sp, true
	}
	return dwSpan{}, false
}

// dwWeights is the nine taps (row by row), the bias and the clamp bounds.
type dwWeights [12]float32

// dwPlane computes one output plane op (OH×OW) of input plane xp (H×W)
// for a geometry dwPlan accepts: clamp(bias + Σ w·x, lo, hi) with the
// nine products added in tap order. zero is at least W zero floats.
func dwPlane(op, xp []float32, g *ConvGeom, sp dwSpan, wk []float32, bias, lo, hi float32, zero []float32) {
	var w dwWeights
	copy(w[:9], wk[:9])
	w[9], w[10], w[11] = bias, lo, hi
	st := sp.stride
	var rows [3][]float32
	// Output rows whose three input rows all lie inside go as one call.
	ohA := (g.PadT + st - 1) / st
	ohB := min(g.OH, (g.H-3+g.PadT)/st+1)
	for oh := 0; oh < g.OH; oh++ {
		for k := range rows {
			if ih := st*oh - g.PadT + k; ih >= 0 && ih < g.H {
				rows[k] = xp[ih*g.W:]
			} else {
				rows[k] = zero[:g.W]
			}
		}
		n := 1
		if oh == ohA && ohB > ohA {
			n = ohB - ohA
		}
		dwRowsVec(op[oh*g.OW:], g.OW, &rows, st*g.W, n, sp, &w)
		if sp.end < g.OW {
			// Stride 2, odd widths: the last column's right tap is padding.
			for r := oh; r < oh+n; r++ {
				for k := range rows {
					if r > oh {
						rows[k] = xp[(st*r-g.PadT+k)*g.W:]
					}
				}
				dwEdge(op[r*g.OW+sp.end:(r+1)*g.OW], sp.end, st, g.W, &rows, &w)
			}
		}
		oh += n - 1
	}
}

// dwEdge computes outputs j0, j0+1, ... of one row into dst one by one,
// skipping taps that fall outside the input rows (width iw).
func dwEdge(dst []float32, j0, st, iw int, rows *[3][]float32, w *dwWeights) {
	for i := range dst {
		j := j0 + i
		acc := w[9]
		for k, r := range rows {
			for kw := 0; kw < 3; kw++ {
				if c := st*j - 1 + kw; c >= 0 && c < iw {
					acc += w[3*k+kw] * r[c]
				}
			}
		}
		dst[i] = clamp32(acc, w[10], w[11])
	}
}

// dwRowsGo is the portable twin of the assembly row kernels: n output
// rows (dst rows ldd floats apart, input rows srcStep floats apart from
// rows[k]) over the span's blocks. The padding column at each end of a
// row is a zero tap, as in the assembly.
func dwRowsGo(dst []float32, ldd int, rows *[3][]float32, srcStep, n int, sp dwSpan, w *dwWeights, iw int) {
	for r := 0; r < n; r++ {
		d := dst[r*ldd:]
		block := func(j0 int) {
			for j := j0; j < j0+8; j++ {
				acc := w[9]
				for k := range rows {
					x := rows[k][r*srcStep:]
					for kw := 0; kw < 3; kw++ {
						var v float32 // the padding
						if c := sp.stride*j - 1 + kw; c >= 0 && c < iw {
							v = x[c]
						}
						acc += w[3*k+kw] * v
					}
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
