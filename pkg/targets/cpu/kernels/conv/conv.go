package conv

import (
	"fmt"
	"math"
	"sync"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// ConvGeom is the geometry of a 2-D convolution over NCHW input: x [N, C, H,
// W], weights [O, C/Groups, KH, KW], output [N, O, OH, OW]. Strides and
// dilations of 0 are taken as 1. Padding is zero; PadB and PadR only shape
// OH and OW, which the caller computes (floor or ceil mode alike): any
// window cell outside the input reads zero.
type ConvGeom struct {
	N, C, H, W             int
	O, KH, KW              int
	StrideH, StrideW       int
	PadT, PadL, PadB, PadR int
	DilH, DilW             int
	Groups                 int
	OH, OW                 int
}

// GeomOf is the kernels' geometry of an LIR convolution (lir's int64
// fields as ints).
func GeomOf(g lir.ConvGeom) ConvGeom {
	return ConvGeom{N: int(g.N), C: int(g.C), H: int(g.H), W: int(g.W), O: int(g.O), KH: int(g.KH), KW: int(g.KW),
		StrideH: int(g.StrideH), StrideW: int(g.StrideW), PadT: int(g.PadT), PadL: int(g.PadL), PadB: int(g.PadB), PadR: int(g.PadR),
		DilH: int(g.DilH), DilW: int(g.DilW), Groups: int(g.Groups), OH: int(g.OH), OW: int(g.OW)}
}

func (g *ConvGeom) normalize() {
	g.StrideH, g.StrideW = max(g.StrideH, 1), max(g.StrideW, 1)
	g.DilH, g.DilW = max(g.DilH, 1), max(g.DilW, 1)
	g.Groups = max(g.Groups, 1)
}

// Conv2D computes out = ep(conv(x, w)) in NCHW. ep.Bias is per output
// channel ([O]); ep.Residual has out's layout. out must not overlap x, w,
// Bias or Residual.
//
// Each (image, group) is one Gemm, weights [O/G, C/G·KH·KW] times the
// im2col matrix [C/G·KH·KW, OH·OW], which is never built: the Gemm's B
// packing reads the input directly (implicit GEMM). A 1×1, stride-1,
// unpadded convolution reads the input as a plain matrix. Convolutions with
// one input channel per group (depthwise, any channel multiplier) take a
// direct loop instead, but for one group of a single input channel onto
// tuning.ConvOneChannelGemmRows output channels or more.
func Conv2D(p *parallel.Pool, out, x, w []float32, g ConvGeom, ep gemm.Epilogue) {
	g.normalize()
	if g.C%g.Groups != 0 || g.O%g.Groups != 0 || min(g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, g.OH, g.OW) < 0 {
		panic(fmt.Sprintf("kernels: Conv2D: bad geometry %+v", g))
	}
	cg, og := g.C/g.Groups, g.O/g.Groups
	kg := cg * g.KH * g.KW
	s := g.OH * g.OW
	if len(x) < g.N*g.C*g.H*g.W || len(w) < g.O*kg || len(out) < g.N*g.O*s {
		panic(fmt.Sprintf("kernels: Conv2D: slices of %d, %d, %d elements for %+v", len(x), len(w), len(out), g))
	}
	if ep.Bias != nil && len(ep.Bias) < g.O {
		panic(fmt.Sprintf("kernels: Conv2D: bias has %d elements, want %d", len(ep.Bias), g.O))
	}
	if ep.Residual != nil && len(ep.Residual) < g.N*g.O*s {
		panic(fmt.Sprintf("kernels: Conv2D: residual has %d elements, want %d", len(ep.Residual), g.N*g.O*s))
	}
	if g.N == 0 || g.O == 0 || s == 0 {
		return
	}
	if cg == 1 && g.KH*g.KW > 0 && (g.Groups > 1 || og < tuning.ConvOneChannelGemmRows) {
		convDirect(p, out, x, w, &g, &ep)
		return
	}
	hw := g.H * g.W
	pointwise := g.KH == 1 && g.KW == 1 && g.StrideH == 1 && g.StrideW == 1 &&
		g.PadT == 0 && g.PadL == 0 && g.OH == g.H && g.OW == g.W
	// Stride-2 convolutions read the input's column phases (see convB),
	// unless every panel is built straight from the input (convS2Packs).
	var phases []float32
	if !pointwise && g.StrideW == 2 && g.DilW == 1 && !(convS2Asm && convS2Packs(&g, cg)) {
		buf := splitPhases(p, x[:g.N*g.C*hw], g.N*g.C, g.H, g.W)
		defer phasePool.Put(buf)
		phases = *buf
	}
	one := func(t int, q *parallel.Pool) {
		n, gi := t/g.Groups, t%g.Groups
		xs := x[(n*g.C+gi*cg)*hw : (n*g.C+(gi+1)*cg)*hw]
		cb := convB{x: xs, g: &g}
		if phases != nil {
			per := 2 * g.H * phaseWidth(g.W) // phase floats per plane
			cb.phases = phases[(n*g.C+gi*cg)*per : (n*g.C+(gi+1)*cg)*per]
		}
		var src gemm.BSource = cb
		if pointwise {
			src = gemm.Dense(xs, hw)
		}
		e := gemm.Epi{Act: ep.Act, Alpha: ep.Alpha, Lo: ep.Min, Hi: ep.Max, BiasPerRow: true, Ldr: s, ActLast: ep.ActLast}
		if ep.Bias != nil {
			e.Bias = ep.Bias[gi*og : (gi+1)*og]
		}
		o0 := (n*g.O + gi*og) * s
		if ep.Residual != nil {
			e.Res = ep.Residual[o0 : o0+og*s]
		}
		// A pointwise convolution with few output channels reads the
		// input in place: packing it cost as much as the few tiles each
		// panel feeds (32->16 channels at 112x112 ran faster in place,
		// 24->144 at 56x56 slightly slower, so 64 rows is the cut). So
		// does one with a long reduction, whatever its output channels
		// (tuning.ConvPointwiseDirectK).
		args := gemm.Args{M: og, N: s, K: kg, A: w[gi*og*kg : (gi+1)*og*kg], Lda: kg, B: src,
			C: out[o0 : o0+og*s], Ldc: s, Ep: e, DirectB: pointwise && (og <= pointwiseDirectRows || kg >= tuning.ConvPointwiseDirectK)}
		gemm.Run(q, &args)
	}
	tasks := g.N * g.Groups
	if p.Threads() > 1 && tasks >= p.Threads() && og*s*kg < tuning.ConvSplitWork {
		p.For(tasks, 1, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				one(t, nil)
			}
		})
		return
	}
	for t := 0; t < tasks; t++ {
		one(t, p)
	}
}

// pointwiseDirectRows is the most output channels (per group) for which a
// 1×1 convolution reads its input in place instead of packing it.
const pointwiseDirectRows = tuning.ConvPointwiseDirectRows

// convB is the im2col matrix of one image's group of input channels, read
// straight from the input: row p = (ci·KH + kh)·KW + kw, column j = oh·OW + ow.
//
// Along an output row, a tap reads input columns ow·StrideW + kw·DilW -
// PadL: contiguous for stride 1, and for stride 2 contiguous in one of the
// input's two column phases (x split into even and odd columns once per
// call: phases). Those runs are copied into the panels; only a dilated or
// wider-strided convolution reads element by element.
type convB struct {
	x      []float32 // the group's channels, [C/G, H, W]
	g      *ConvGeom
	phases []float32 // stride 2: [C/G][2][H][phaseW], else nil
}

// phasePool recycles splitPhases buffers: a fresh one per convolution
// cost as much as the split itself (allocation and zeroing).
var phasePool = sync.Pool{New: func() any { return new([]float32) }}

// phaseBorder is the zeros on each side of a phase row: with them a tap's
// whole span of outputs along a row, padding included, is one contiguous
// run of its phase row (for left padding up to 2·phaseBorder), so the
// packing copies whole 16-float panel rows instead of a zero, a shifted
// run and a memmove per panel (MobileNetV2's first layer: its packing took
// a fraction of the time it had).
const phaseBorder = 2

// phaseWidth is the length of a bordered phase row of an input w wide.
func phaseWidth(w int) int { return (w+1)/2 + 2*phaseBorder }

// splitPhases makes the stride-2 column phases of x's planes into a buffer
// from phasePool: [plane][phase][row][phaseWidth], phase index i (column
// 2i+phase) at i+phaseBorder, every slot that is no input column zero.
// Put it back when done. The planes are split across p's threads: done
// on one, the split was a serial part of every stride-2 convolution
// (with the packing of B, a fifth of ResNet-18's 3x3/2 ones at 2
// threads).
func splitPhases(p *parallel.Pool, x []float32, planes, h, w int) *[]float32 {
	pw, pb := (w+1)/2, phaseWidth(w)
	buf := phasePool.Get().(*[]float32)
	*buf = grow(*buf, planes*2*h*pb)
	out := *buf
	p.For(planes, max(1, tuning.GrainWork/(h*w)), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			for ih := 0; ih < h; ih++ {
				even := out[((c*2)*h+ih)*pb : ((c*2)*h+ih+1)*pb]
				odd := out[((c*2+1)*h+ih)*pb : ((c*2+1)*h+ih+1)*pb]
				clear(even[:phaseBorder])
				clear(odd[:phaseBorder])
				deinterleave2(even[phaseBorder:phaseBorder+pw], odd[phaseBorder:phaseBorder+pw], x[(c*h+ih)*w:(c*h+ih+1)*w])
				clear(even[phaseBorder+pw:])
				clear(odd[phaseBorder+w/2:]) // an odd width leaves the slot of column w
			}
		}
	})
	return buf
}

// panelWriter writes values one column after another into nr-wide panels
// (see gemm.BSource).
type panelWriter struct {
	dst     []float32
	o, c    int // next index in dst, column within the panel
	nr, hop int // panel width; the jump from a panel row's end to the next panel's
}

func (pw *panelWriter) zeros(n int) {
	for n > 0 {
		k := min(n, pw.nr-pw.c)
		clear(pw.dst[pw.o : pw.o+k])
		pw.advance(k)
		n -= k
	}
}

func (pw *panelWriter) copy(src []float32) {
	if n := len(src) / 16; pw.nr == 16 && pw.c == 0 && n > 0 {
		// Whole panel rows, one after another (the runs of a small-channel
		// convolution are exactly these).
		copyRows16(pw.dst[pw.o:], 16+pw.hop, src, n)
		pw.o += n * (16 + pw.hop)
		src = src[n*16:]
	}
	for len(src) > 0 {
		k := min(len(src), pw.nr-pw.c)
		copy(pw.dst[pw.o:pw.o+k], src[:k])
		pw.advance(k)
		src = src[k:]
	}
}

// copyRowsGo is copyRows in Go.
func copyRowsGo(dst []float32, dstStride int, src []float32, srcStride, rows, n int) {
	for r := 0; r < rows; r++ {
		copy(dst[r*dstStride:r*dstStride+n], src[r*srcStride:r*srcStride+n])
	}
}

// copyRows16Go is copyRows16 in Go.
func copyRows16Go(dst []float32, dstStride int, src []float32, n int) {
	for i := 0; i < n; i++ {
		copy(dst[i*dstStride:i*dstStride+16], src[i*16:i*16+16])
	}
}

func (pw *panelWriter) advance(k int) {
	pw.o += k
	if pw.c += k; pw.c == pw.nr {
		pw.c = 0
		pw.o += pw.hop
	}
}

func (s convB) Pack(dst []float32, nr, p0, kb, j0, w int) {
	if s.packS2(dst, nr, p0, kb, j0, w, func(panel []float32, j0, w int) { s.packRuns(panel, nr, p0, kb, j0, w) }) {
		return
	}
	s.packRuns(dst, nr, p0, kb, j0, w)
}

// packRuns packs by runs of input columns (the column phases at stride 2).
func (s convB) packRuns(dst []float32, nr, p0, kb, j0, w int) {
	g := s.g
	hw := g.H * g.W
	khw := g.KH * g.KW
	pw0 := phaseWidth(g.W)
	runs := g.DilW == 1 && (g.StrideW == 1 || (g.StrideW == 2 && s.phases != nil))
	var buf [64]float32 // a gathered block of a strided row's taps
	for p := 0; p < kb; p++ {
		pp := p0 + p
		ci, rem := pp/khw, pp%khw
		kh, kw := rem/g.KW, rem%g.KW
		plane := s.x[ci*hw : (ci+1)*hw]
		ihOff := kh*g.DilH - g.PadT
		iwOff := kw*g.DilW - g.PadL // input column of output column 0
		// Output columns whose input column is inside the row, and where a
		// run starts in its source row.
		owLo, owHi := validRange(iwOff, g.StrideW, g.W, g.OW)
		ph := ((iwOff % 2) + 2) % 2
		shift := (iwOff - ph) / 2 // stride 2: phase index = ow + shift
		oh, ow := j0/g.OW, j0%g.OW
		out := panelWriter{dst: dst, o: p * nr, nr: nr, hop: nr*kb - nr}
		for left := w; left > 0; {
			span := min(left, g.OW-ow)
			ih := oh*g.StrideH + ihOff
			switch {
			case ih < 0 || ih >= g.H:
				out.zeros(span)
			case runs:
				var prow []float32
				if g.StrideW == 2 {
					prow = s.phases[((ci*2+ph)*g.H+ih)*pw0 : ((ci*2+ph)*g.H+ih+1)*pw0]
					if lo, hi := ow+shift+phaseBorder, ow+span+shift+phaseBorder; lo >= 0 && hi <= len(prow) {
						out.copy(prow[lo:hi]) // the borders hold the padding
						break
					}
				}
				// [ow, ow+span) = zeros below owLo, a run, zeros from owHi.
				a := min(max(ow, owLo), ow+span)
				b := min(max(a, owHi), ow+span)
				out.zeros(a - ow)
				if b > a {
					if g.StrideW == 1 {
						row := plane[ih*g.W : (ih+1)*g.W]
						out.copy(row[a+iwOff : b+iwOff])
					} else {
						out.copy(prow[a+shift+phaseBorder : b+shift+phaseBorder])
					}
				}
				out.zeros(ow + span - b)
			default:
				row := plane[ih*g.W : (ih+1)*g.W]
				iw := ow*g.StrideW + iwOff
				if iw >= 0 && iw+(span-1)*g.StrideW < len(row) {
					// Every tap inside the row (a patchify stem's, say):
					// gather blocks of it and copy them into the panels
					// as runs, not element by element.
					for t := 0; t < span; {
						k := min(span-t, len(buf))
						for i := range buf[:k] {
							buf[i] = row[iw]
							iw += g.StrideW
						}
						out.copy(buf[:k])
						t += k
					}
					break
				}
				for t := 0; t < span; t++ {
					var v float32
					if uint(iw) < uint(len(row)) {
						v = row[iw]
					}
					iw += g.StrideW
					out.dst[out.o] = v
					out.advance(1)
				}
			}
			left -= span
			ow = 0
			oh++
		}
		if out.c != 0 {
			out.zeros(nr - out.c)
		}
	}
}

var dwSmallPool = sync.Pool{New: func() any { return new(dwSmall) }}

// convDirect handles one input channel per group (depthwise convolution):
// output channel o reads input channel o/(O/G) only, so each output plane
// is a sum of KH·KW shifted, scaled input rows: axpys. A strided conv first
// splits each input row into its stride phases (columns j·s+ph), so every
// tap becomes a contiguous axpy too.
func convDirect(p *parallel.Pool, out, x, w []float32, g *ConvGeom, ep *gemm.Epilogue) {
	s := g.OH * g.OW
	if dwNHWCApplies(g) {
		// Small planes go channels last (see depthwiseNHWC), ReLU or a
		// clamp applied in the taps' pass, anything else after.
		clo, chi, act := clampOf(ep)
		depthwiseNHWC(p, out, x, w, g, ep.Bias, clo, chi)
		if act != vec.ActNone || ep.Residual != nil {
			for n := 0; n < g.N; n++ {
				e := gemm.Epi{Act: act, Alpha: ep.Alpha, Lo: ep.Min, Hi: ep.Max, Ldr: s, ActLast: ep.ActLast}
				if ep.Residual != nil {
					e.Res = ep.Residual[n*g.O*s : (n+1)*g.O*s]
				}
				e.Apply(out[n*g.O*s:(n+1)*g.O*s], s, 0, 0, g.O, s)
			}
		}
		return
	}
	hw := g.H * g.W
	khw := g.KH * g.KW
	og := g.O / g.Groups
	st := g.StrideW
	phaseW := (g.W + st - 1) / st // the longest phase row
	grain := max(1, tuning.GrainWork/max(1, s*khw))
	// 3x3, dilation 1, stride 1 or 2 (MobileNet's depthwise layers): one
	// nine-tap pass per output row instead of nine axpys.
	fast3x3 := g.KH == 3 && g.KW == 3 && g.DilH == 1 && g.DilW == 1 && (st == 1 || st == 2) &&
		g.PadL <= 2 && g.PadT <= 2
	// Paddings of 1 (and rows of 16 or more) read the plane in place (dwPlane).
	span, inPlace := dwPlan(g)
	// Other small planes take the flat path (dwSmall), which splits strides itself.
	useSmall := fast3x3 && !inPlace && g.StrideH == st && g.H*g.W <= smallPlane
	zero := make([]float32, max(g.OW+8, g.W))
	p.For(g.N*g.O, grain, func(lo, hi int) {
		var phases []float32 // [st][H][phaseW] of the current input plane
		// The small-plane path's buffers, from a pool: a fresh set per
		// chunk (zeroed, some 50 KiB at 112x112) per call cost more than
		// a chunk's work on 2 threads (32@112x112 ran no faster than on 1).
		small := dwSmallPool.Get().(*dwSmall)
		defer dwSmallPool.Put(small)
		lastPlane := -1
		for t := lo; t < hi; t++ {
			n, o := t/g.O, t%g.O
			ci := o / og
			plane := n*g.C + ci
			xp := x[plane*hw : (plane+1)*hw]
			if st > 1 && plane != lastPlane && !useSmall && !inPlace {
				if phases == nil {
					phases = make([]float32, st*g.H*phaseW)
				}
				if st == 2 {
					for ih := 0; ih < g.H; ih++ {
						even := phases[ih*phaseW : (ih+1)*phaseW]
						odd := phases[(g.H+ih)*phaseW : (g.H+ih+1)*phaseW]
						deinterleave2(even, odd, xp[ih*g.W:(ih+1)*g.W])
					}
				}
				for ph := 0; ph < st && st != 2; ph++ {
					for ih := 0; ih < g.H; ih++ {
						row := phases[(ph*g.H+ih)*phaseW : (ph*g.H+ih+1)*phaseW]
						j := 0
						for iw := ph; iw < g.W; iw += st {
							row[j] = xp[ih*g.W+iw]
							j++
						}
					}
				}
				lastPlane = plane
			}
			op := out[t*s : (t+1)*s]
			wk := w[o*khw : (o+1)*khw]
			if fast3x3 {
				bias := float32(0)
				if ep.Bias != nil {
					bias = ep.Bias[o]
				}
				rows := dwRows{plane: xp, phases: phases, w: g.W, h: g.H, phaseW: phaseW, st: st}
				gp := g
				if inPlace || useSmall {
					// A padding of 1 reads the plane in place (dwPlane);
					// other small planes run as one flat nine-tap pass over
					// a zero-bordered copy (dwSmall).
					clo, chi := float32(math.Inf(-1)), float32(math.Inf(1))
					act := ep.Act
					switch {
					case ep.ActLast: // after the residual
					case act == vec.ActRelu:
						clo, act = 0, vec.ActNone
					case act == vec.ActClamp:
						clo, chi, act = ep.Min, ep.Max, vec.ActNone
					}
					if inPlace {
						dwPlane(op, xp, g, span, wk, bias, clo, chi, zero)
					} else {
						small.plane(op, xp, g, wk, bias, clo, chi)
					}
					e := gemm.Epi{BiasPerRow: true, Act: act, Alpha: ep.Alpha, Lo: ep.Min, Hi: ep.Max, Ldr: s, ActLast: ep.ActLast}
					if ep.Residual != nil {
						e.Res = ep.Residual[n*g.O*s : (n+1)*g.O*s]
					}
					e.Apply(out[n*g.O*s:(n+1)*g.O*s], s, o, 0, 1, s)
					continue
				}
				// ReLU and clamp are applied in the row pass itself.
				clo, chi, act := float32(math.Inf(-1)), float32(math.Inf(1)), ep.Act
				switch {
				case ep.ActLast: // after the residual
				case act == vec.ActRelu:
					clo, act = 0, vec.ActNone
				case act == vec.ActClamp:
					clo, chi, act = ep.Min, ep.Max, vec.ActNone
				}
				depthwise3x3(op, gp, wk, bias, clo, chi, &rows, zero)
				e := gemm.Epi{BiasPerRow: true, Act: act, Alpha: ep.Alpha, Lo: ep.Min, Hi: ep.Max, Ldr: s, ActLast: ep.ActLast}
				if ep.Residual != nil {
					e.Res = ep.Residual[n*g.O*s : (n+1)*g.O*s]
				}
				e.Apply(out[n*g.O*s:(n+1)*g.O*s], s, o, 0, 1, s)
				continue
			}
			clear(op)
			for kh := 0; kh < g.KH; kh++ {
				for kw := 0; kw < g.KW; kw++ {
					wv := wk[kh*g.KW+kw]
					c := kw*g.DilW - g.PadL // input column of output 0
					owLo, owHi := validRange(c, st, g.W, g.OW)
					if owLo >= owHi {
						continue
					}
					ph := ((c % st) + st) % st
					shift := (c - ph) / st // phase index = ow + shift
					for oh := 0; oh < g.OH; oh++ {
						ih := oh*g.StrideH + kh*g.DilH - g.PadT
						if ih < 0 || ih >= g.H {
							continue
						}
						orow := op[oh*g.OW+owLo : oh*g.OW+owHi]
						var src []float32
						if st == 1 {
							src = xp[ih*g.W+owLo+c : ih*g.W+owHi+c]
						} else {
							base := (ph*g.H + ih) * phaseW
							src = phases[base+owLo+shift : base+owHi+shift]
						}
						vec.Axpy(orow, src, wv)
					}
				}
			}
			e := gemm.Epi{Bias: ep.Bias, BiasPerRow: true, Act: ep.Act, Alpha: ep.Alpha, Lo: ep.Min, Hi: ep.Max, Ldr: s, ActLast: ep.ActLast}
			if ep.Residual != nil {
				e.Res = ep.Residual[n*g.O*s : (n+1)*g.O*s]
			}
			e.Apply(out[n*g.O*s:(n+1)*g.O*s], s, o, 0, 1, s)
		}
	})
}

// validRange returns the outputs [lo, hi) of a dimension with n outputs
// whose input index lo·stride + off lies in [0, size).
func validRange(off, stride, size, n int) (lo, hi int) {
	if off < 0 {
		lo = (-off + stride - 1) / stride
	}
	if size-1-off < 0 {
		return 0, 0
	}
	hi = min(n, (size-1-off)/stride+1)
	return min(lo, hi), hi
}

func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
