package cgen

import (
	"fmt"
	"math"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/winograd"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Winograd convolutions (lir.WinogradInput, WinogradProduct,
// WinogradOutput; the math is in pkg/targets/cpu/kernels/winograd).
// Vectors run across tiles: lane l of a vector is tile 16·g + l of a
// group g of 16, so the products are the direct convolution's register
// tiles over a 1x1 kernel (vectors of tiles times broadcast weights), and
// the transforms are straight-line code over whole vectors with the
// matrices' coefficients as constants. A tile's patch is gathered and its
// block of the output scattered, lane by lane where the level has no
// such instruction; lanes past the last tile, or whose element falls in
// the padding or past the plane, are masked off.

// winogradInput generates the input transform, false for a step the
// generator does not handle.
func winogradInput(prog *lir.Program, op *lir.WinogradInput) (function, bool) {
	g := normConv(op.Geom)
	t, err := winograd.For(int(op.Tile))
	if err != nil || !winogradIndexable(g) || sameBytes(prog, op.X, op.V) {
		return function{}, false
	}
	th, tw, nt, tp := g.WinogradTiles(op.Tile)
	a := int64(t.Alpha)
	groups := tp / 16
	cb := min(g.C, tuning.WinogradInputChannels)
	nc := (g.C + cb - 1) / cb
	f := function{fn: lir.NativeFunc{N: groups * nc, Grain: max(1, tuning.WinogradChunkLanes/(16*cb))}}
	ld, local := winogradPart(&f, op.Part, tp, nc)
	f.in, f.out = []lir.Buf{op.X}, []lir.Buf{op.V}
	f.fn.In = []int64{g.N * g.C * g.H * g.W * 4}
	f.fn.Out = []int64{a * a * g.C * ld * 4}

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("{\n\t/* winograd_input F(%dx%d, 3x3): N=%d C=%d %dx%d, pad %d,%d, tiles %dx%d (%d, %d with padding) */\n",
		op.Tile, op.Tile, g.N, g.C, g.H, g.W, g.PadT, g.PadL, th, tw, nt, tp)
	w("\tconst float *restrict x = (const float *)args[0];\n")
	w("\tfloat *restrict v = (float *)args[1];\n")
	winogradLevels(&b, func(isa *convISA) {
		vl := int64(isa.vl)
		sub := 16 / vl
		w("\tfor (int64_t it = lo; it < hi; it++) {\n")
		w("\t\tint64_t tg = it / %d, c0 = it %% %d * %d, c1 = c0 + %d < %d ? c0 + %d : %d;\n", nc, nc, cb, cb, g.C, cb, g.C)
		rows := rowsISA(isa) // by rows of the plane (winograd_rows.go)
		if !rows {
			// Each lane's tile: the offset of its patch's corner in x (of
			// channel 0), and which of its rows and columns are in the input.
			genTileLanes(&b, isa, tileLanes{tiles: nt, perImage: th * tw, tw: tw, m: op.Tile, span: a,
				padT: g.PadT, padL: g.PadL, image: g.C * g.H * g.W, row: g.W, h: g.H, w: g.W})
		}
		w("\t\tfor (int sv = 0; sv < %d; sv++) {\n", sub)
		if rows {
			sg := segments{tiles: nt, perImage: th * tw, tw: tw, m: op.Tile, padT: g.PadT, padL: g.PadL,
				image: g.C * g.H * g.W, row: g.W, h: g.H, w: g.W, loads: op.Tile + 1}
			if isa.vl == 8 {
				sg.loads, sg.shifted = op.Tile, op.Tile
			}
			genSegments(&b, "\t\t\t", isa, sg)
		} else {
			w("\t\t\t%s ib;\n", isa.rvi)
			w("\t\t\t__builtin_memcpy(&ib, base + sv * %d, %d);\n", vl, 4*vl)
		}
		w("\t\t\tfor (int64_t c = c0; c < c1; c++) {\n")
		w("\t\t\t\tconst float *xc = x + c * %d;\n", g.H*g.W)
		w("\t\t\t\tfloat *vc = v + c * %d + %s * 16 + sv * %d;\n", ld, local, vl)
		// Row by row of the patch: its row gathered, then f = d·B of
		// that row; then column by column Bᵀ·f, stored. A row or a column
		// at a time keeps a dozen vectors live, where the whole patch
		// and its transform would spill.
		w("\t\t\t\t%s f[%d][%d];\n", isa.rv, a, a)
		for i := range a {
			w("\t\t\t\t{\n")
			if rows {
				genInputRow(&b, "\t\t\t\t\t", isa, op.Tile, i, g.W, g.H)
			} else {
				for j := range a {
					w("\t\t\t\t\t%s d%d = %s;\n", isa.rv, j, winogradGather(isa, "xc", fmt.Sprintf("ib + %d", i*g.W+int64(j)), fmt.Sprintf("rb[sv][%d] & cbits[sv][%d]", i, j)))
				}
			}
			for j := range a {
				w("\t\t\t\t\tf[%d][%d] = %s;\n", i, j, linear(t.BT[j], func(k int) string { return fmt.Sprintf("d%d", k) }))
			}
			w("\t\t\t\t}\n")
		}
		for j := range a {
			for i := range a {
				w("\t\t\t\t{ %s r_ = %s; __builtin_memcpy(vc + %d, &r_, %d); }\n", isa.rv,
					linear(t.BT[i], func(k int) string { return fmt.Sprintf("f[%d][%d]", k, j) }), (i*a+j)*g.C*ld, 4*vl)
			}
		}
		w("\t\t\t}\n")
		w("\t\t}\n")
		w("\t}\n")
	})
	w("}\n")
	f.body = b.String()
	return f, true
}

// winogradPart sets f's range to a part's tile groups (an item is a tile
// group's block of channels, per blocks to a group) and returns the tiles
// the scratch holds and the C expression of a group's place in it: tg
// itself for every tile, tg modulo the part's groups for a part (a part
// starts at a multiple of its size), so that the one function serves
// every part.
func winogradPart(f *function, r lir.TileRange, tp, per int64) (ld int64, local string) {
	if r.Whole() {
		return tp, "tg"
	}
	f.lo, f.hi = r.T0/16*per, r.T1/16*per
	return r.LD, fmt.Sprintf("(tg %% %d)", r.LD/16)
}

// winogradProduct generates the products M[p] = U[p]·V[p]: items of
// (point, group of output channels, block of tiles), register tiles of
// the level's channels by vectors of tiles, the weights broadcast.
func winogradProduct(prog *lir.Program, op *lir.WinogradProduct) (function, bool) {
	if op.TP%16 != 0 || min(op.P, op.C, op.O, op.TP) < 1 || sameBytes(prog, op.M, op.V) || sameBytes(prog, op.M, op.U) {
		return function{}, false
	}
	for _, v := range [][]int64{{op.P, max(op.C, op.O), op.TP}, {op.P, op.O + winograd.Block, op.C}} {
		if n, ok := product(v); !ok || n > 1<<40 {
			return function{}, false
		}
	}
	og := min(op.O, tuning.NativeConvChannels)
	nog := (op.O + og - 1) / og
	tb := int64(tuning.NativeConvPositions)
	ntb := (op.TP + tb - 1) / tb
	itemFlops := 2 * og * min(tb, op.TP) * op.C
	ld := op.Stride()
	f := function{fn: lir.NativeFunc{N: op.P * nog * ntb, Grain: max(1, tuning.NativeConvChunkFlops/itemFlops)}}
	f.in, f.out = []lir.Buf{op.V, op.U}, []lir.Buf{op.M}
	f.fn.In = []int64{op.P * op.C * ld * 4, int64(winograd.ULen(int(op.P), int(op.O), int(op.C))) * 4}
	f.fn.Out = []int64{op.P * op.O * ld * 4}

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("{\n\t/* winograd_product: %d points of [%d x %d] x [%d x %d] */\n", op.P, op.O, op.C, op.C, op.TP)
	w("\tconst float *restrict v = (const float *)args[0];\n")
	w("\tconst float *restrict u = (const float *)args[1];\n")
	w("\tfloat *restrict m = (float *)args[2];\n")
	winogradLevels(&b, func(isa *convISA) {
		vl := int64(isa.vl)
		// Fewer tiles than the tile's vectors hold: fewer vectors, more
		// channels (each vector of tiles loaded feeds them all).
		tv := min(int64(isa.tv), op.TP/vl)
		// Whole blocks of U's channels (winograd.Block): a tile starts
		// on a block; blocks are 16·C bytes apart, and too many of them
		// in one L1 set evict each other.
		ocb := min(int64(isa.acc)/tv, og)
		if ocb >= winograd.Block {
			ocb = winograd.Block * fitSets(ocb/winograd.Block, 4*winograd.Block*op.C)
		}
		w("\tfor (int64_t it = lo; it < hi; it++) {\n")
		w("\t\tint64_t blk = it %% %d, r_ = it / %d;\n", ntb, ntb)
		w("\t\tint64_t gi = r_ %% %d, p = r_ / %d;\n", nog, nog)
		w("\t\tint64_t oc0 = gi * %d, oc1 = oc0 + %d < %d ? oc0 + %d : %d;\n", og, og, op.O, og, op.O)
		w("\t\tint64_t t0 = blk * %d, t1 = t0 + %d < %d ? t0 + %d : %d;\n", tb, tb, op.TP, tb, op.TP)
		w("\t\tconst float *vp = v + p * %d;\n", op.C*ld)
		w("\t\tconst float *up = u + p * %d;\n", (op.O+winograd.Block-1)/winograd.Block*winograd.Block*op.C)
		w("\t\tfloat *mp = m + p * %d;\n", op.O*ld)
		// Blocks are whole vectors (TP and the block a multiple of 16).
		w("\t\tfor (int64_t t = t0; t < t1; ) {\n")
		w("\t\t\tint64_t nv = (t1 - t) / %d;\n", vl)
		w("\t\t\tif (nv > %d) nv = %d;\n", tv, tv)
		rems := map[int64]bool{}
		for gi := int64(0); gi < nog; gi++ {
			if r := min(og, op.O-gi*og) % ocb; r != 0 {
				rems[r] = true
			}
		}
		w("\t\t\tfor (int64_t oc = oc0; oc < oc1; oc += %d) {\n", ocb)
		w("\t\t\t\tint64_t no = oc1 - oc;\n")
		tiles := func(nc int64) {
			for nv := tv; nv >= 1; nv-- {
				switch {
				case nv == tv && tv > 1:
					w("\t\t\t\t\tif (nv == %d) {\n", nv)
				case nv == tv:
					w("\t\t\t\t\t{\n")
				case nv == 1:
					w("\t\t\t\t\t} else {\n")
				default:
					w("\t\t\t\t\t} else if (nv == %d) {\n", nv)
				}
				genWinoTile(&b, op, isa, nc, nv)
			}
			w("\t\t\t\t\t}\n")
		}
		w("\t\t\t\tif (no >= %d) {\n", ocb)
		tiles(ocb)
		for r := ocb - 1; r > 0; r-- {
			if rems[r] {
				w("\t\t\t\t} else if (no == %d) {\n", r)
				tiles(r)
			}
		}
		w("\t\t\t\t}\n")
		w("\t\t\t}\n")
		w("\t\t\tt += nv * %d;\n", vl)
		w("\t\t}\n")
		w("\t}\n")
	})
	w("}\n")
	f.body = b.String()
	return f, true
}

// genWinoTile writes one register tile of the products: nc output
// channels from oc by nv vectors of tiles from t, summed over the input
// channels.
func genWinoTile(b *strings.Builder, op *lir.WinogradProduct, isa *convISA, nc, nv int64) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	const ind = "\t\t\t\t\t\t"
	vl := int64(isa.vl)
	w(ind+"%s", isa.rv)
	for o := range nc {
		for j := range nv {
			if o > 0 || j > 0 {
				w(",")
			}
			w(" a%d_%d = {0}", o, j)
		}
	}
	w(";\n")
	w(ind+"const float *uo = up + oc * %d; /* block oc / %d */\n", op.C, winograd.Block)
	w(ind + "const float *vt = vp + t;\n")
	w(ind+"for (int64_t c = 0; c < %d; c++) {\n", op.C)
	for j := range nv {
		w(ind+"\t%s x%d = %s;\n", isa.rv, j, isa.plainLoad(fmt.Sprintf("vt + c * %d + %d", op.Stride(), j*vl)))
	}
	for o := range nc {
		w(ind+"\tfloat w%d = uo[%d + c * %d];\n", o, o/winograd.Block*winograd.Block*op.C+o%winograd.Block, winograd.Block)
	}
	for o := range nc {
		for j := range nv {
			w(ind+"\ta%d_%d += x%d * w%d;\n", o, j, j, o)
		}
	}
	w(ind + "}\n")
	for o := range nc {
		for j := range nv {
			w(ind+"__builtin_memcpy(mp + (oc + %d) * %d + t + %d, &a%d_%d, %d);\n", o, op.Stride(), j*vl, o, j, 4*vl)
		}
	}
}

// winogradOutput generates the output transform with the epilogue,
// false for a step the generator does not handle (an activation other
// than the piecewise-linear ones, or an output sharing bytes with what
// it reads but the residual exactly).
func winogradOutput(prog *lir.Program, op *lir.WinogradOutput) (function, bool) {
	g := normConv(op.Geom)
	t, err := winograd.For(int(op.Tile))
	if err != nil || !winogradIndexable(g) {
		return function{}, false
	}
	ep := op.Epilogue
	if !winogradInline(ep.Act) {
		return function{}, false
	}
	for _, b := range []lir.Buf{op.M, ep.Bias} {
		if b != lir.NoBuf && sameBytes(prog, op.Out, b) {
			return function{}, false
		}
	}
	bias, res := ep.Bias != lir.NoBuf, ep.Residual != lir.NoBuf
	if res && sameBytes(prog, op.Out, ep.Residual) && prog.Buffers[op.Out].Offset != prog.Buffers[ep.Residual].Offset {
		return function{}, false
	}
	th, tw, nt, tp := g.WinogradTiles(op.Tile)
	a, m := int64(t.Alpha), op.Tile
	groups := tp / 16
	ob := min(g.O, tuning.WinogradOutputChannels)
	no := (g.O + ob - 1) / ob
	plane := g.OH * g.OW
	f := function{fn: lir.NativeFunc{N: groups * no, Grain: max(1, tuning.WinogradChunkLanes/(16*ob))}}
	ld, local := winogradPart(&f, op.Part, tp, no)
	f.in = []lir.Buf{op.M}
	f.fn.In = []int64{a * a * g.O * ld * 4}
	f.epilogueOut(ep, op.Out, g.O, g.N*g.O*plane)

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("{\n\t/* winograd_output F(%dx%d, 3x3): N=%d O=%d %dx%d, tiles %dx%d (%d, %d with padding), act %s */\n",
		m, m, g.N, g.O, g.OH, g.OW, th, tw, nt, tp, ep.Act)
	w("\tconst float *restrict mm = (const float *)args[0];\n")
	arg := 1
	if bias {
		w("\tconst float *restrict bias = (const float *)args[%d];\n", arg)
		arg++
	}
	if res {
		// The residual may be the output itself: each element is read
		// just before the same element is written.
		w("\tconst float *res = (const float *)args[%d];\n", arg)
		arg++
		w("\tfloat *y = (float *)args[%d];\n", arg)
	} else {
		w("\tfloat *restrict y = (float *)args[%d];\n", arg)
	}
	winogradLevels(&b, func(isa *convISA) {
		vl := int64(isa.vl)
		sub := 16 / vl
		w("\tfor (int64_t it = lo; it < hi; it++) {\n")
		w("\t\tint64_t tg = it / %d, o0 = it %% %d * %d, o1 = o0 + %d < %d ? o0 + %d : %d;\n", no, no, ob, ob, g.O, ob, g.O)
		rows := rowsISA(isa) // by rows of the plane (winograd_rows.go)
		if !rows {
			// Each lane's tile: the offset of its block's corner in y (of
			// channel 0), and which of its rows and columns are in the plane.
			genTileLanes(&b, isa, tileLanes{tiles: nt, perImage: th * tw, tw: tw, m: m, span: m,
				image: g.O * plane, row: g.OW, h: g.OH, w: g.OW})
		}
		w("\t\tfor (int sv = 0; sv < %d; sv++) {\n", sub)
		if rows {
			genSegments(&b, "\t\t\t", isa, segments{tiles: nt, perImage: th * tw, tw: tw, m: m,
				image: g.O * plane, row: g.OW, h: g.OH, w: g.OW, loads: m, blockColumn: true})
		} else {
			w("\t\t\t%s ib;\n", isa.rvi)
			w("\t\t\t__builtin_memcpy(&ib, base + sv * %d, %d);\n", vl, 4*vl)
		}
		w("\t\t\tfor (int64_t o = o0; o < o1; o++) {\n")
		w("\t\t\t\tconst float *mo = mm + o * %d + %s * 16 + sv * %d;\n", ld, local, vl)
		w("\t\t\t\tfloat *yo = y + o * %d;\n", plane)
		if res {
			w("\t\t\t\tconst float *ro = res + o * %d;\n", plane)
		}
		// Column by column of the tile's sums q: e = Aᵀ·q of that
		// column; then each output of e·A.
		w("\t\t\t\t%s e[%d][%d];\n", isa.rv, m, a)
		for j := range a {
			w("\t\t\t\t{\n")
			for k := range a {
				w("\t\t\t\t\t%s q%d = %s;\n", isa.rv, k, isa.plainLoad(fmt.Sprintf("mo + %d", (k*a+j)*g.O*ld)))
			}
			for i := range m {
				w("\t\t\t\t\te[%d][%d] = %s;\n", i, j, linear(t.AT[i], func(k int) string { return fmt.Sprintf("q%d", k) }))
			}
			w("\t\t\t\t}\n")
		}
		for i := range m {
			if rows {
				w("\t\t\t\t{\n")
				for j := range m {
					sj := fmt.Sprintf("s%d", j)
					w("\t\t\t\t\t%s %s = %s;\n", isa.rv, sj, linear(t.AT[j], func(k int) string { return fmt.Sprintf("e[%d][%d]", i, k) }))
					if bias {
						w("\t\t\t\t\t%s += bias[o];\n", sj)
					}
					if !ep.ActLast {
						genVecAct(&b, "\t\t\t\t\t", isa.rv, isa.rvi, sj, ep)
					}
				}
				genOutputRow(&b, "\t\t\t\t\t", isa, m, i, g.OW, g.OH, res, ep)
				w("\t\t\t\t}\n")
				continue
			}
			for j := range m {
				w("\t\t\t\t{\n")
				w("\t\t\t\t\t%s s = %s;\n", isa.rv, linear(t.AT[j], func(k int) string { return fmt.Sprintf("e[%d][%d]", i, k) }))
				if bias {
					w("\t\t\t\t\ts += bias[o];\n")
				}
				genAct(&b, "\t\t\t\t\t", isa.rv, isa.rvi, ep)
				bits := fmt.Sprintf("rb[sv][%d] & cbits[sv][%d]", i, j)
				idx := fmt.Sprintf("ib + %d", i*g.OW+j)
				if res {
					w("\t\t\t\t\ts += %s;\n", winogradGather(isa, "ro", idx, bits))
				}
				genActLast(&b, "\t\t\t\t\t", isa.rv, isa.rvi, ep)
				w("\t\t\t\t\t%s\n", winogradScatter(isa, "yo", idx, "s", bits))
				w("\t\t\t\t}\n")
			}
		}
		w("\t\t\t}\n")
		w("\t\t}\n")
		w("\t}\n")
	})
	w("}\n")
	f.body = b.String()
	return f, true
}

// WinogradActivation reports whether generated code runs a Winograd
// convolution whose epilogue applies act: the output transform applies
// the piecewise-linear ones itself (winogradInline), and the smooth ones
// (ewActivation) are split off into an elementwise region after it
// (splitActivation), as for every other generated convolution.
func WinogradActivation(act lir.Activation) bool {
	_, split := ewActivation[act]
	return winogradInline(act) || split
}

// winogradInline reports whether the generated output transform applies
// act: the piecewise-linear activations.
func winogradInline(act lir.Activation) bool {
	switch act {
	case lir.ActNone, lir.ActRelu, lir.ActLeakyRelu, lir.ActClamp:
		return true
	}
	return false
}

// tileLanes is what genTileLanes needs of a step's tiles: how many, per
// image and per row of tiles, the tile m, the rows and columns a tile
// spans from its corner (the patch's m+2, or the block's m), the padding
// before the corner, the element strides of an image and a row, and the
// plane's bounds.
type tileLanes struct {
	tiles, perImage, tw, m, span int64
	padT, padL                   int64
	image, row                   int64
	h, w                         int64
}

// genTileLanes writes the lanes of an item's group tg of 16 tiles:
// base[l], the offset of lane l's corner in the plane of channel 0 (0
// past the last tile), and for each vector sv of the level's lanes the
// bits of the lanes whose row i (rb[sv][i]) or column i (cbits[sv][i])
// of the span lies in the plane.
func genTileLanes(b *strings.Builder, isa *convISA, t tileLanes) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	vl := int64(isa.vl)
	sub := 16 / vl
	w("\t\tint32_t base[16];\n\t\tuint32_t rb[%d][%d], cbits[%d][%d];\n", sub, t.span, sub, t.span)
	w("\t\tfor (int sv = 0; sv < %d; sv++) for (int i = 0; i < %d; i++) rb[sv][i] = cbits[sv][i] = 0;\n", sub, t.span)
	w("\t\tfor (int l = 0; l < 16; l++) {\n")
	w("\t\t\tint64_t t = tg * 16 + l;\n")
	w("\t\t\tbase[l] = 0;\n")
	w("\t\t\tif (t >= %d) continue;\n", t.tiles)
	w("\t\t\tint64_t n = t / %d, r = t %% %d;\n", t.perImage, t.perImage)
	w("\t\t\tint64_t h0 = r / %d * %d - %d, w0 = r %% %d * %d - %d;\n", t.tw, t.m, t.padT, t.tw, t.m, t.padL)
	w("\t\t\tbase[l] = (int32_t)(n * %d + h0 * %d + w0);\n", t.image, t.row)
	w("\t\t\tfor (int i = 0; i < %d; i++) {\n", t.span)
	w("\t\t\t\tif ((uint64_t)(h0 + i) < %du) rb[l / %d][i] |= 1u << (l %% %d);\n", t.h, vl, vl)
	w("\t\t\t\tif ((uint64_t)(w0 + i) < %du) cbits[l / %d][i] |= 1u << (l %% %d);\n", t.w, vl, vl)
	w("\t\t\t}\n")
	w("\t\t}\n")
}

// winogradIndexable reports whether every element index of g's input
// and output fits the 32-bit lanes that gathers and scatters take.
func winogradIndexable(g lir.ConvGeom) bool {
	for _, v := range [][]int64{{g.N, g.C, g.H, g.W}, {g.N, g.O, g.OH, g.OW}} {
		if n, ok := product(v); !ok || n >= math.MaxInt32-int64(g.W)*8 {
			return false
		}
	}
	return true
}

// winogradLevels writes each CPU level's code from level under that
// level's #if, with its vector types.
func winogradLevels(b *strings.Builder, level func(isa *convISA)) {
	for i, isa := range convISAs {
		b.WriteString(levelCond(i, isa.cond))
		b.WriteString("\t{\n")
		for _, l := range isa.typedefs() {
			fmt.Fprintf(b, "\t%s\n", l)
		}
		level(isa)
		b.WriteString("\t}\n")
	}
	b.WriteString("#endif\n")
}

// winogradGather is the C expression of the vector whose lane l is
// base[idx[l]] where bit l of bits is set, else zero.
func winogradGather(isa *convISA, base, idx, bits string) string {
	switch isa.vl {
	case 16:
		return fmt.Sprintf("__builtin_ia32_gathersiv16sf((rv){0}, %s, %s, (uint16_t)(%s), 4)", base, idx, bits)
	case 8:
		return fmt.Sprintf("__builtin_ia32_gatherd_ps256((rv){0}, %s, %s, (rv)%s, 4)", base, idx, isa.mask(bits))
	}
	return fmt.Sprintf("({ %s i_ = (%s); uint32_t b_ = (%s); %s r_ = {0}; for (int l_ = 0; l_ < %d; l_++) if (b_ >> l_ & 1u) r_[l_] = (%s)[i_[l_]]; r_; })",
		isa.rvi, idx, bits, isa.rv, isa.vl, base)
}

// winogradScatter is the C statement storing lane l of vector v at
// base[idx[l]] where bit l of bits is set.
func winogradScatter(isa *convISA, base, idx, v, bits string) string {
	if isa.vl == 16 {
		return fmt.Sprintf("__builtin_ia32_scattersiv16sf(%s, (uint16_t)(%s), %s, %s, 4);", base, bits, idx, v)
	}
	return fmt.Sprintf("{ %s i_ = (%s); uint32_t b_ = (%s); for (int l_ = 0; l_ < %d; l_++) if (b_ >> l_ & 1u) (%s)[i_[l_]] = (%s)[l_]; }",
		isa.rvi, idx, bits, isa.vl, base, v)
}

// linear is the C expression Σ_k coef[k]·term(k) over the non-zero
// coefficients (±1 as an addition or a subtraction).
func linear(coef []float64, term func(k int) string) string {
	var b strings.Builder
	for k, c := range coef {
		switch {
		case c == 0:
			continue
		case c == 1 || c == -1:
			if c < 0 {
				b.WriteString(" - ")
			} else if b.Len() > 0 {
				b.WriteString(" + ")
			}
			b.WriteString(term(k))
		default:
			if c < 0 {
				b.WriteString(" - ")
			} else if b.Len() > 0 {
				b.WriteString(" + ")
			}
			fmt.Fprintf(&b, "%s * %s", literal(math.Abs(c), computeFloat), term(k))
		}
	}
	if b.Len() == 0 {
		return "0"
	}
	s := b.String()
	if strings.HasPrefix(s, " - ") {
		return "-" + s[3:]
	}
	return s
}
