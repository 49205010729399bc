package cgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// A native depthwise convolution (one input channel per group, Groups
// == C, O = C·mult) is a direct one over NCHW: each item of the
// function's range is (image, output channel, block of output rows), and
// each CPU level covers an item with register tiles of R output rows by
// V vectors of positions along them. Every input row a tile needs is
// loaded once per column tap (kw) and feeds the R rows' accumulators it
// is a tap row of, with the channel's weights broadcast: a 7x7 kernel
// over 6 rows loads 12 input rows for 42 rows of taps.
//
// The column tiles of a row are known when the code is generated (the
// plane's width, padding and strides are constants), so each tile's
// loads are specialized: a vector whose lanes all read the input is a
// plain load, one reaching into the padding or past the row a masked
// load with a constant mask (AVX-512 and AVX2 masked loads never touch a
// masked-off element; the fallback's are lane by lane with the lanes
// known), and one wholly in the padding no load at all. Runs of interior
// tiles, alike but for their column, share one loop. Stride 2 loads two
// vectors and keeps the even lanes, as the dense convolution does. The
// epilogue is the runtime's: out = act(acc + bias) + residual.
type dwPlan struct {
	g          lir.ConvGeom
	mult       int64 // output channels per input channel
	rb, nrb    int64 // output rows per item, row blocks per plane
	items      int64
	bias, res  bool
	restrictYR bool
}

// dwMaxTaps is the most kernel taps of a generated depthwise
// convolution.
const dwMaxTaps = 1024

// isDepthwise reports whether g (normalized) has one input channel per
// group and every channel its own group: a depthwise convolution, with
// mult = O/C output channels per input channel.
func isDepthwise(g lir.ConvGeom) bool {
	return g.Groups == g.C && g.C >= 1 && g.O%g.C == 0
}

// planDw says how a depthwise convolution is generated, false for one
// the generator does not handle (see checkConv), or whose code would be
// too large: a kernel of over dwMaxTaps taps (the taps are unrolled), or
// rows so wide that the build's walk over their column tiles is long.
func planDw(prog *lir.Program, op *lir.Conv2D) (dwPlan, bool) {
	g, restrictYR, ok := checkConv(prog, op)
	if !ok || !isDepthwise(g) || g.KH*g.KW > dwMaxTaps || g.OW*g.KW > 1<<20 {
		return dwPlan{}, false
	}
	ep := op.Epilogue
	pl := dwPlan{g: g, mult: g.O / g.C, bias: ep.Bias != lir.NoBuf, res: ep.Residual != lir.NoBuf, restrictYR: restrictYR}
	pl.rb = min(g.OH, tuning.NativeDwRows)
	pl.nrb = (g.OH + pl.rb - 1) / pl.rb
	pl.items = g.N * g.O * pl.nrb
	return pl, true
}

// dwFunc generates the function of a depthwise convolution the
// generator handles.
func dwFunc(prog *lir.Program, op *lir.Conv2D) (function, bool) {
	pl, ok := planDw(prog, op)
	if !ok {
		return function{}, false
	}
	g := pl.g
	kk := g.KH * g.KW
	itemFlops := 2 * pl.rb * g.OW * kk
	f := function{fn: lir.NativeFunc{N: pl.items, Grain: max(1, tuning.NativeDwChunkFlops/itemFlops)}}
	f.in = []lir.Buf{op.X, op.W}
	f.fn.In = []int64{g.N * g.C * g.H * g.W * 4, g.O * kk * 4}
	f.epilogueOut(op.Epilogue, op.Out, g.O, g.N*g.O*g.OH*g.OW)

	var b strings.Builder
	convBody(&b, "depthwise conv2d", g, op.Epilogue.Act, pl.bias, pl.res, pl.restrictYR, func(isa *convISA) {
		genDwLevel(&b, &pl, op.Epilogue, isa)
	})
	f.body = b.String()
	return f, true
}

// dwTile is one column tile of a row: nv vectors of positions from q
// (a constant, or the loop's qt where loop is set: a run of interior
// tiles from q to end).
type dwTile struct {
	q, nv int64
	loop  bool
	end   int64
}

// dwLoad is how one load of a tile reads: not at all (every lane in the
// padding or past the row), whole, or masked with the lane bits.
type dwLoad struct {
	skip, plain bool
	bits        uint32
}

// dwLoadAt is the load of the vector of vl lanes from input column c0:
// lane j is wanted where j is a multiple of sw below lim and its column
// is in [0, width).
func dwLoadAt(c0, vl, sw, lim, width int64) dwLoad {
	var l dwLoad
	plain := true
	for j := range vl {
		c := c0 + j
		if c < 0 || c >= width {
			plain = false
			continue
		}
		if j%sw == 0 && j < lim {
			l.bits |= 1 << j
		}
	}
	l.skip = l.bits == 0
	l.plain = plain && !l.skip
	return l
}

// genDwLevel writes one level's loop over the items of [lo, hi).
func genDwLevel(b *strings.Builder, pl *dwPlan, ep lir.Epilogue, isa *convISA) {
	g := pl.g
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	// Rows narrower than the level's half vector use the half vector.
	vi := isa
	if isa.half != nil && g.OW <= int64(isa.half.vl) {
		vi = isa.half
	}
	vl := int64(vi.vl)
	tv := min((g.OW+vl-1)/vl, int64(isa.acc/6))
	// Tile rows: as many as the accumulators allow, but a tile of at
	// most tuning.NativeDwTileTaps multiply-adds (code size).
	rows := max(1, min(int64(isa.acc)/tv, tuning.NativeDwTileRows, g.OH, tuning.NativeDwTileTaps/(tv*g.KH*g.KW)))
	tw := tv * vl
	// The column tiles: interior ones (whole vectors, every load plain)
	// in runs share a loop.
	interior := func(q int64) bool {
		if q+tw > g.OW {
			return false
		}
		for kw := range g.KW {
			for v := range tv {
				c0 := (q+v*vl)*g.StrideW + kw*g.DilW - g.PadL
				for h := range g.StrideW {
					if l := dwLoadAt(c0+h*vl, vl, g.StrideW, vl, g.W); !l.plain {
						return false
					}
				}
			}
		}
		return true
	}
	var tiles []dwTile
	for q := int64(0); q < g.OW; q += tw {
		t := dwTile{q: q, nv: min(tv, (g.OW-q+vl-1)/vl)}
		if interior(q) {
			if n := len(tiles); n > 0 && tiles[n-1].loop && tiles[n-1].end == q {
				tiles[n-1].end = q + tw
				continue
			}
			t.loop, t.end = true, q+tw
		}
		tiles = append(tiles, t)
	}
	w("\t{\n")
	for _, l := range isa.typedefs() {
		w("\t%s\n", l)
	}
	w("\tfor (int64_t it = lo; it < hi; it++) {\n")
	w("\t\tint64_t blk = it %% %d, r_ = it / %d;\n", pl.nrb, pl.nrb)
	w("\t\tint64_t o = r_ %% %d, n = r_ / %d;\n", g.O, g.O)
	w("\t\tconst float *xc = x + (n * %d + o / %d) * %d;\n", g.C, pl.mult, g.H*g.W)
	w("\t\tconst float *wc = wt + o * %d;\n", g.KH*g.KW)
	w("\t\tfloat *yc = y + (n * %d + o) * %d;\n", g.O, g.OH*g.OW)
	if pl.res {
		w("\t\tconst float *rc = res + (n * %d + o) * %d;\n", g.O, g.OH*g.OW)
	}
	if pl.bias {
		w("\t\tfloat bo = bias[o];\n")
	}
	w("\t\tint64_t oh1 = blk * %d + %d < %d ? blk * %d + %d : %d;\n", pl.rb, pl.rb, g.OH, pl.rb, pl.rb, g.OH)
	w("\t\tfor (int64_t oh0 = blk * %d; oh0 < oh1; oh0 += %d) {\n", pl.rb, rows)
	for _, t := range tiles {
		if t.loop {
			w("\t\t\tfor (int64_t qt = %d; qt < %d; qt += %d) {\n", t.q, t.end, tw)
		} else {
			w("\t\t\t{\n\t\t\t\tconst int64_t qt = %d;\n", t.q)
		}
		genDwTile(b, pl, ep, vi, rows, t)
		w("\t\t\t}\n")
	}
	w("\t\t}\n")
	w("\t}\n")
	w("\t}\n")
}

// genDwTile writes one register tile: rows output rows from oh0 by t.nv
// vectors of positions from qt, then the epilogue and the stores of the
// rows in the item.
func genDwTile(b *strings.Builder, pl *dwPlan, ep lir.Epilogue, vi *convISA, rows int64, t dwTile) {
	g := pl.g
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	const ind = "\t\t\t\t"
	vl, sw := int64(vi.vl), g.StrideW
	w(ind+"%s", vi.rv)
	for r := range rows {
		for v := range t.nv {
			if r > 0 || v > 0 {
				w(",")
			}
			w(" a%d_%d = {0}", r, v)
		}
	}
	w(";\n")
	// The loads of vector v at column tap kw (stride 2: two, h = 0, 1).
	load := func(kw, v, h int64) dwLoad {
		if t.loop {
			return dwLoad{plain: true}
		}
		c0 := (t.q+v*vl)*sw + kw*g.DilW - g.PadL + h*vl
		want := min(vl, g.OW-t.q-v*vl) // output lanes of the vector
		// Lanes of load h are elements h·vl + j of the 2·vl the stride-2
		// pair covers: output lane (h·vl + j)/2.
		return dwLoadAt(c0, vl, sw, want*sw-h*vl, g.W)
	}
	// Input row j of the tile (ih = oh0·SH + j - PadT) is tap row kh of
	// output row r where j = r·SH + kh·DH.
	type use struct{ r, kh int64 }
	uses := map[int64][]use{}
	var js []int64
	for r := range rows {
		for kh := range g.KH {
			j := r*g.StrideH + kh*g.DilH
			if uses[j] == nil {
				js = append(js, j)
			}
			uses[j] = append(uses[j], use{r, kh})
		}
	}
	slices.Sort(js)
	for _, j := range js {
		w(ind+"if ((uint64_t)(oh0 * %d + %d) < %du) {\n", g.StrideH, j-g.PadT, g.H)
		w(ind+"\tconst float *xr = xc + (oh0 * %d + %d) * %d + qt * %d;\n", g.StrideH, j-g.PadT, g.W, sw)
		for kw := range g.KW {
			var xs []int64
			for v := range t.nv {
				off := kw*g.DilW - g.PadL + v*vl*sw
				ld := func(h int64) string {
					l := load(kw, v, h)
					ptr := fmt.Sprintf("xr + %d", off+h*vl)
					switch {
					case l.skip:
						return fmt.Sprintf("(%s){0}", vi.rv)
					case l.plain:
						return vi.plainLoad(ptr)
					}
					return vi.load(ptr, vi.mask(fmt.Sprintf("0x%xu", l.bits)))
				}
				if sw == 1 {
					if load(kw, v, 0).skip {
						continue
					}
					w(ind+"\t%s x%d_%d = %s;\n", vi.rv, kw, v, ld(0))
				} else {
					if load(kw, v, 0).skip && load(kw, v, 1).skip {
						continue
					}
					w(ind+"\t%s x%d_%d = %s;\n", vi.rv, kw, v, vi.even(ld(0), ld(1)))
				}
				xs = append(xs, v)
			}
			for _, u := range uses[j] {
				for _, v := range xs {
					w(ind+"\ta%d_%d += x%d_%d * wc[%d];\n", u.r, v, kw, v, u.kh*g.KW+kw)
				}
			}
		}
		w(ind + "}\n")
	}
	// The epilogue: act(acc + bias) + residual, the rows in the item and
	// the lanes in the row stored.
	rv, rvi := vi.rv, vi.rvi
	for r := range rows {
		cl := ind
		if r > 0 {
			w(ind+"if (oh0 + %d < oh1) {\n", r)
			cl += "\t"
		}
		w(cl+"float *yo = yc + (oh0 + %d) * %d + qt;\n", r, g.OW)
		if pl.res {
			w(cl+"const float *ro = rc + (oh0 + %d) * %d + qt;\n", r, g.OW)
		}
		for v := range t.nv {
			if sw == 2 && vi.unperm != nil {
				idx := make([]string, len(vi.unperm))
				for i, l := range vi.unperm {
					idx[i] = fmt.Sprint(l)
				}
				w(cl+"{\n"+cl+"\t%s s = __builtin_shufflevector(a%d_%d, a%d_%d, %s);\n", rv, r, v, r, v, strings.Join(idx, ", "))
			} else {
				w(cl+"{\n"+cl+"\t%s s = a%d_%d;\n", rv, r, v)
			}
			if pl.bias {
				w("%s\ts += bo;\n", cl)
			}
			genAct(b, cl+"\t", rv, rvi, ep)
			lanes := vl
			if !t.loop {
				lanes = min(vl, g.OW-t.q-v*vl)
			}
			m := vi.mask(fmt.Sprintf("0x%xu", uint32(1)<<lanes-1))
			if pl.res {
				if lanes == vl {
					w(cl+"\ts += %s;\n", vi.plainLoad(fmt.Sprintf("ro + %d", v*vl)))
				} else {
					w(cl+"\ts += %s;\n", vi.load(fmt.Sprintf("ro + %d", v*vl), m))
				}
			}
			genActLast(b, cl+"\t", rv, rvi, ep)
			if lanes == vl {
				w(cl+"\t__builtin_memcpy(yo + %d, &s, %d);\n", v*vl, 4*vl)
			} else {
				w(cl+"\t%s\n", vi.store(fmt.Sprintf("yo + %d", v*vl), "s", m))
			}
			w("%s}\n", cl)
		}
		if r > 0 {
			w(ind + "}\n")
		}
	}
}
