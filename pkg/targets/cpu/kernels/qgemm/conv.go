package qgemm

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/conv"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// Integer convolutions (one group) as the product of each output row's
// positions by the weights, summed over the kernel's taps: the input is
// relaid channels last with its padding (ConvScratch's xpad, rows of C
// rounded up to 4 bytes, the padding holding the zero point, so that it
// adds nothing), where for one tap the positions of an output row are
// rows of a product a stride·C4 bytes apart; the kernels sum every tap
// into one accumulator (each tap an offset past the row's start), into
// the channels-last outT, which is then transposed into NCHW.

// ConvGeom is a convolution's geometry (conv's; Groups is 1).
type ConvGeom = conv.ConvGeom

// wide reports a convolution over at most 4 channels without dilation
// along the width (lir.QConvWide, an image's stem): the relaid input has 4
// bytes a position, so the KW positions a kernel row reads are KW
// consecutive groups, one tap of KW groups where each would be a tap of
// one group (the taps' loop costs as much as a group's products).
func wide(g *ConvGeom) bool { return g.C <= groupK && g.KW > 1 && g.DilW == 1 }

// c4 is the bytes of the relaid input at each position: C rounded up to
// whole groups of four channels.
func c4(g *ConvGeom) int { return (g.C + groupK - 1) &^ (groupK - 1) }

// tapBytes is the bytes each tap sums: c4, or KW times it where wide.
func tapBytes(g *ConvGeom) int {
	if wide(g) {
		return g.KW * c4(g)
	}
	return c4(g)
}

// taps is the kernel positions summed one after another: KH where wide,
// else KH·KW.
func taps(g *ConvGeom) int {
	if wide(g) {
		return g.KH
	}
	return g.KH * g.KW
}

func padded(g *ConvGeom) (hp, wp int) { return g.H + g.PadT + g.PadB, g.W + g.PadL + g.PadR }

// convK is the length of each output's sum, padding channels included.
func convK(g *ConvGeom) int { return taps(g) * tapBytes(g) }

// ConvPackedLen is the length in bytes of the weights packed by PackConv.
func ConvPackedLen(g ConvGeom) int { return PackedLen(convK(&g), g.O) }

// ConvScratch is the scratch one Conv call needs: bytes of the relaid
// input as uint16 (the AVX2 kernel reads it widened, the VNNI one its
// bytes) and floats of the channels-last output (one image's each).
func ConvScratch(g ConvGeom) (xpad, outT int) {
	hp, wp := padded(&g)
	return hp * wp * c4(&g) * 2, g.OH * g.OW * g.O
}

// PackConv lays out int8 weights w [O, C, KH, KW] for Conv: B [K, O]
// whose row (tap, c) holds the weights of tap kh·KW+kw and input channel
// c (zero for the channels past C); where wide, rows (kh, kw·4 + c).
func PackConv(w []int8, g ConvGeom) []byte {
	kk, tb := g.KH*g.KW, tapBytes(&g)
	if len(w) != g.O*g.C*kk {
		panic(fmt.Sprintf("qgemm.PackConv: %d weights for [%d, %d, %d, %d]", len(w), g.O, g.C, g.KH, g.KW))
	}
	wd := wide(&g)
	return pack(taps(&g)*tb, g.O, func(r, o int) int8 {
		t, c := r/tb, r%tb
		if wd {
			kw := c / groupK
			c %= groupK
			t = t*g.KW + kw
		}
		if c >= g.C {
			return 0
		}
		return w[(o*g.C+c)*kk+t]
	})
}

// Layout says which of a convolution's input and result are stored
// channels last ([N, H, W, C], [N, OH, OW, O]) instead of NCHW. The
// kernels read the input channels last and write the result so anyway:
// a channels-last input is relaid only where the kernel cannot read it as
// it is (padding, channels not a multiple of 4, int8, the AVX2 kernel's
// widened bytes), and a channels-last result needs no transpose.
type Layout struct {
	XNHWC, OutNHWC bool
}

// Conv computes out [N, O, OH, OW] = float32(Σ (x − zero)·w + bias) over
// x [N, C, H, W] uint8 (signed: int8), w packed by PackConv, bias int32
// per output channel (nil: none), summed exactly in int32 (K ≤ MaxK), the
// padding counting as zero; x and out channels last where l says so.
// xpad and outT are scratch of ConvScratch's lengths (outT unused, and
// may be nil, for a channels-last result).
func Conv(pool *parallel.Pool, g ConvGeom, l Layout, x []byte, signed bool, zero int32, w []byte, bias []int32, xpad []byte, outT, out []float32) {
	convWith(kernel(), pool, g, l, x, signed, zero, w, bias, xpad, outT, out)
}

func convWith(kern microKernel, pool *parallel.Pool, g ConvGeom, l Layout, x []byte, signed bool, zero int32, w []byte, bias []int32, xpad []byte, outT, out []float32) {
	xl, ol := ConvScratch(g)
	if l.OutNHWC {
		ol = 0
	}
	hw, p := g.H*g.W, g.OH*g.OW
	if g.N <= 0 || p <= 0 || g.O <= 0 {
		return
	}
	if len(x) < g.N*g.C*hw || len(out) < g.N*g.O*p || len(w) != ConvPackedLen(g) || len(xpad) < xl || len(outT) < ol ||
		(bias != nil && len(bias) < g.O) || convK(&g) > MaxK || g.StrideH < 1 || g.StrideW < 1 || g.DilH < 1 || g.DilW < 1 {
		panic(fmt.Sprintf("qgemm.Conv: operands do not fit %+v (x %d, w %d, out %d, scratch %d and %d)", g, len(x), len(w), len(out), len(xpad), len(outT)))
	}
	if hp, wp := g.H+g.PadT+g.PadB, g.W+g.PadL+g.PadR; (g.OH-1)*g.StrideH+(g.KH-1)*g.DilH >= hp || (g.OW-1)*g.StrideW+(g.KW-1)*g.DilW >= wp {
		panic(fmt.Sprintf("qgemm.Conv: output %dx%d reads past the padded input %dx%d", g.OH, g.OW, hp, wp))
	}
	zu := zero // the zero point of the unsigned bytes the kernels read
	if signed {
		zu += 128
	}
	_, wp := padded(&g)
	cp := c4(&g)
	offs := make([]int, 0, taps(&g))
	for kh := range g.KH {
		if wide(&g) {
			offs = append(offs, kh*g.DilH*wp*cp)
			continue
		}
		for kw := range g.KW {
			offs = append(offs, (kh*g.DilH*wp+kw*g.DilW)*cp)
		}
	}
	xa, scale := xpad[:xl/2], 1 // the input the kernels read, and its bytes an element
	var wx []uint16             // the relaid input widened, where the kernel reads that
	if kern.wide {
		wx = uint16s(xpad[:xl])
		xa, scale = xpad[:xl], 2
		for i := range offs {
			offs[i] *= 2
		}
	}
	np, gk := panels(g.O), groups(convK(&g))
	sums := w[np*gk*groupB:]
	pairs := (np + 1) / 2
	// A channels-last input the kernel reads as it is: unsigned bytes,
	// whole groups of 4 channels, no padding, not widened.
	direct := l.XNHWC && !signed && !kern.wide && cp == g.C && g.PadT == 0 && g.PadB == 0 && g.PadL == 0 && g.PadR == 0
	for n := range g.N {
		img := x[n*g.C*hw : (n+1)*g.C*hw]
		a := xa
		switch {
		case direct:
			a = img
		default:
			relayout(pool, g, img, l.XNHWC, signed, byte(zu), xa, wx)
		}
		dst := out[n*g.O*p : (n+1)*g.O*p]
		res := outT
		if l.OutNHWC {
			res = dst
		}
		pool.For(g.OH*pairs, 1, func(lo, hi int) {
			var t tile
			for task := lo; task < hi; task++ {
				oh, pr := task/pairs, task%pairs
				t.set(w, gk, np, 2*pr, g.O, sums, zu, bias)
				t.offs, t.n = offs, tapBytes(&g)/groupK
				t.a, t.lda, t.groupA = a[scale*oh*g.StrideH*wp*cp:], scale*g.StrideW*cp, kern.groupA()
				t.out, t.ldo, t.rows = res[oh*g.OW*g.O+2*pr*panelCols:], g.O, g.OW
				kern.run(&t)
				if !l.OutNHWC {
					// the task's block into NCHW while it is in cache (a
					// pass over all of outT after read it back from memory)
					vec.Transpose(dst[2*pr*panelCols*p+oh*g.OW:], p, t.out, g.O, g.OW, t.cols)
				}
			}
		})
	}
}

// relayoutRowNHWC is relayoutRow for a channels-last image x [H, W, C]:
// the input row's bytes, C of each position then z up to C4.
func relayoutRowNHWC(g ConvGeom, x []byte, signed bool, z byte, row []byte, h int) {
	in, ok := paddedRow(g, z, row, h)
	if !ok {
		return
	}
	cp := c4(&g)
	src := x[h*g.W*g.C : (h+1)*g.W*g.C]
	if cp == g.C {
		copy(in, src)
	} else {
		for w := range g.W {
			copy(in[w*cp:w*cp+g.C], src[w*g.C:(w+1)*g.C])
			fill(in[w*cp+g.C:(w+1)*cp], z)
		}
	}
	if signed {
		if cp == g.C {
			flip(in)
			return
		}
		for w := range g.W {
			flip(in[w*cp : w*cp+g.C])
		}
	}
}

// relayout writes one image of x [C, H, W] (nhwc: [H, W, C]) into xpad
// [Hp, Wp, C4] with z in the padding and the channels past C, int8
// shifted into uint8; or where wide is not nil, into wide as uint16, each
// row written as bytes first into a row of its own.
func relayout(pool *parallel.Pool, g ConvGeom, x []byte, nhwc, signed bool, z byte, xpad []byte, wide []uint16) {
	hp, wp := padded(&g)
	cp := c4(&g)
	rowOf := relayoutRow
	if nhwc {
		rowOf = relayoutRowNHWC
	}
	pool.For(hp, 4, func(lo, hi int) {
		var tmp []byte
		for ih := lo; ih < hi; ih++ {
			if wide == nil {
				rowOf(g, x, signed, z, xpad[ih*wp*cp:(ih+1)*wp*cp], ih-g.PadT)
				continue
			}
			if tmp == nil {
				tmp = make([]byte, wp*cp)
			}
			rowOf(g, x, signed, z, tmp, ih-g.PadT)
			widen(wide[ih*wp*cp:], tmp, false)
		}
	})
}

// paddedRow fills the padding of padded input row (h its input row): all
// of it where h is outside the input (false), else the columns left and
// right of the input's, returning the input's part.
func paddedRow(g ConvGeom, z byte, row []byte, h int) ([]byte, bool) {
	if h < 0 || h >= g.H {
		fill(row, z)
		return nil, false
	}
	cp := c4(&g)
	fill(row[:g.PadL*cp], z)
	fill(row[(g.PadL+g.W)*cp:], z)
	return row[g.PadL*cp : (g.PadL+g.W)*cp], true
}

// relayoutRow writes row h of x (padding where h is outside it) into row,
// the padded row channels last.
func relayoutRow(g ConvGeom, x []byte, signed bool, z byte, row []byte, h int) {
	in, ok := paddedRow(g, z, row, h)
	if !ok {
		return
	}
	cp := c4(&g)
	if cp == 4 {
		relayoutFew(g, x, signed, z, in, h)
		return
	}
	if cp != g.C {
		for w := range g.W {
			fill(in[w*cp+g.C:(w+1)*cp], z)
		}
	}
	transposeBytes(in, cp, x[h*g.W:], g.H*g.W, g.C, g.W)
	if signed {
		for w := range g.W {
			flip(in[w*cp : w*cp+g.C])
		}
	}
}

// relayoutFew is relayoutRow's positions for at most 4 channels (an
// image's stem): each position's 4 bytes assembled in a word, the
// channels past C the zero point. The byte transpose is for blocks of 16
// channels; for 3 it took a quarter of a ResNet stem's time.
func relayoutFew(g ConvGeom, x []byte, signed bool, z byte, in []byte, h int) {
	var planes [4][]byte
	var flipped uint32 // int8 shifted into uint8, the zero point's bytes not
	pad := uint32(z) * 0x01010101
	for c := range g.C {
		planes[c] = x[c*g.H*g.W+h*g.W : c*g.H*g.W+(h+1)*g.W]
		pad &^= 0xff << (8 * c)
		if signed {
			flipped |= 0x80 << (8 * c)
		}
	}
	in = in[:4*g.W]
	switch g.C {
	case 3:
		p0, p1, p2 := planes[0], planes[1], planes[2]
		for w := range g.W {
			v := uint32(p0[w]) | uint32(p1[w])<<8 | uint32(p2[w])<<16 | pad
			binary.LittleEndian.PutUint32(in[4*w:], v^flipped)
		}
	default:
		for w := range g.W {
			v := pad
			for c := range g.C {
				v |= uint32(planes[c][w]) << (8 * c)
			}
			binary.LittleEndian.PutUint32(in[4*w:], v^flipped)
		}
	}
}

// transposeBytesGo writes dst[w·ldd + c] = src[c·lds + w] for c < rows, w
// < cols: in blocks of 8×8 bytes transposed in registers (three rounds of
// swapping halves), the last block of each dimension overlapping the one
// before (it writes the same bytes again) where the size is not a
// multiple of 8; byte by byte below 8.
func transposeBytesGo(dst []byte, ldd int, src []byte, lds, rows, cols int) {
	if rows < 8 || cols < 8 {
		for c := range rows {
			for w := range cols {
				dst[w*ldd+c] = src[c*lds+w]
			}
		}
		return
	}
	// Every block lies inside the operands (checked here once): the
	// loads and stores go through pointers, without the eight bounds
	// checks each and the spills they cost.
	_ = src[(rows-1)*lds+cols-1]
	_ = dst[(cols-1)*ldd+rows-1]
	sp, dp := unsafe.Pointer(unsafe.SliceData(src)), unsafe.Pointer(unsafe.SliceData(dst))
	ld := func(off int) uint64 { return *(*uint64)(unsafe.Add(sp, off)) }
	st := func(off int, v uint64) { *(*uint64)(unsafe.Add(dp, off)) = v }
	for c0 := 0; c0 < rows; c0 += 8 {
		c := min(c0, rows-8)
		for w0 := 0; w0 < cols; w0 += 8 {
			w := min(w0, cols-8)
			s := c*lds + w
			r0, r1, r2, r3 := ld(s), ld(s+lds), ld(s+2*lds), ld(s+3*lds)
			r4, r5, r6, r7 := ld(s+4*lds), ld(s+5*lds), ld(s+6*lds), ld(s+7*lds)
			r0, r4 = swapBits(r0, r4, 32, 0x00000000ffffffff)
			r1, r5 = swapBits(r1, r5, 32, 0x00000000ffffffff)
			r2, r6 = swapBits(r2, r6, 32, 0x00000000ffffffff)
			r3, r7 = swapBits(r3, r7, 32, 0x00000000ffffffff)
			r0, r2 = swapBits(r0, r2, 16, 0x0000ffff0000ffff)
			r1, r3 = swapBits(r1, r3, 16, 0x0000ffff0000ffff)
			r4, r6 = swapBits(r4, r6, 16, 0x0000ffff0000ffff)
			r5, r7 = swapBits(r5, r7, 16, 0x0000ffff0000ffff)
			r0, r1 = swapBits(r0, r1, 8, 0x00ff00ff00ff00ff)
			r2, r3 = swapBits(r2, r3, 8, 0x00ff00ff00ff00ff)
			r4, r5 = swapBits(r4, r5, 8, 0x00ff00ff00ff00ff)
			r6, r7 = swapBits(r6, r7, 8, 0x00ff00ff00ff00ff)
			d := w*ldd + c
			st(d, r0)
			st(d+ldd, r1)
			st(d+2*ldd, r2)
			st(d+3*ldd, r3)
			st(d+4*ldd, r4)
			st(d+5*ldd, r5)
			st(d+6*ldd, r6)
			st(d+7*ldd, r7)
		}
	}
}

// swapBits exchanges the bits of a under mask<<k with the bits of b
// under mask: one round of a transpose in registers.
func swapBits(a, b uint64, k uint, mask uint64) (uint64, uint64) {
	t := (a>>k ^ b) & mask
	return a ^ t<<k, b ^ t
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}
