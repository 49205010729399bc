package conv

import "unsafe"

// The B panels of a 3x3 stride-2 convolution with left padding 1 and few
// input channels (MobileNetV2's first layer, 3 channels at 224x224) built
// straight from the NCHW input: for 16 outputs of one output row, each
// (channel, kernel row) input row gives the three panel rows of its taps,
// columns 2j-1, 2j and 2j+1, as in-lane shuffles of the row's loads (the
// stride-2 depthwise kernel's trick, dwinplace.go), instead of splitting
// the input into column phases and copying runs out of them (a large
// share of the layer's time in MobileNetV2).

// convS2MaxRows bounds channels × kernel rows of the fast path.
const convS2MaxRows = 16

// convS2Packs reports whether every panel of the geometry takes the fast
// path: the shape, and output rows of whole panels whose last panel's
// taps end inside the input row (so no panel needs the column phases).
func convS2Packs(g *ConvGeom, cg int) bool {
	return convS2Shape(g, cg) && g.OW%16 == 0 && 2*(g.OW-16)+31 <= g.W-1
}

// convS2Shape is the geometry the fast packer handles panel by panel.
func convS2Shape(g *ConvGeom, cg int) bool {
	return g.KH == 3 && g.KW == 3 && g.StrideH == 2 && g.StrideW == 2 && g.DilH == 1 && g.DilW == 1 &&
		g.PadL == 1 && cg*3 <= convS2MaxRows && g.W >= 32
}

// packS2 packs the panels of [j0, j0+w) (whole panels of 16: kb = all of
// K from row 0) that lie inside one output row with their taps inside the
// input row, and hands the rest to slow; it reports false (doing nothing)
// where the shape or the call does not fit.
func (s convB) packS2(dst []float32, nr, p0, kb, j0, w int, slow func(dst []float32, j0, w int)) bool {
	g := s.g
	cg := len(s.x) / (g.H * g.W)
	if !convS2Asm || nr != 16 || p0 != 0 || kb != cg*9 || !convS2Shape(g, cg) {
		return false
	}
	hw := g.H * g.W
	zero := make([]float32, g.W)
	var rows [convS2MaxRows]uintptr
	rowsOf := -1 // the output row rows holds the input rows of
	for q := 0; q*16 < w; q++ {
		js, wq := j0+16*q, min(16, w-16*q)
		oh, ow0 := js/g.OW, js%g.OW
		panel := dst[q*16*kb : (q+1)*16*kb]
		if wq < 16 || ow0+16 > g.OW || 2*ow0+31 > g.W-1 {
			slow(panel, js, wq)
			continue
		}
		if oh != rowsOf {
			// The panels of one output row read the same input rows.
			rowsOf = oh
			for ci := 0; ci < cg; ci++ {
				for kh := 0; kh < 3; kh++ {
					row := zero
					if ih := 2*oh - g.PadT + kh; ih >= 0 && ih < g.H {
						row = s.x[ci*hw+ih*g.W : ci*hw+(ih+1)*g.W]
					}
					rows[ci*3+kh] = sliceAddr(row)
				}
			}
		}
		left := 0
		if ow0 == 0 {
			left = 1
		}
		convS2Pack16(&panel[0], &rows, cg*3, 8*ow0, left)
	}
	keepAlive(s.x, zero)
	return true
}

// sliceAddr is the address of s's first element.
func sliceAddr(s []float32) uintptr { return uintptr(unsafe.Pointer(&s[0])) }
