package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Tap-major convolutions (lir.TapConv2D): a direct convolution
// vectorized over output channels, as ONNX Runtime's NCHWc kernels are,
// for convolutions of mostly padding. The generated conv2d vectorizes
// over output positions, and a vector spans whole rows of a small plane,
// so it runs a tap wherever one lane of a vector reads the input; here
// each register tile is a few positions of one output row that read the
// input through the same taps (a run of tapRuns' columns) by a block of
// output channels, and it visits those taps alone: DeepLabV3's ASPP 3x3
// at dilation 12 over 14x14 does 1.65 taps per position, not 9.
//
// An item of the function's range is (image, panel of lir.TapConvPanel
// output channels, output row), rows innermost, so consecutive items read
// the same panel of weights, contiguous [KH·KW, C, width] (lir.TapMajor).
// A tile accumulates, over its live taps and the input channels, each
// input value (one broadcast) times the weights of its tap and channel
// (whole vectors: a panel's width is a multiple of 16); the
// epilogue then stores each channel's positions, out = act(acc + bias)
// + residual, as scalars: a tile's few positions are contiguous in the
// output row, its channels a plane apart.

// tapISA is one CPU level's register tile.
type tapISA struct {
	cond string // the preprocessor condition; "" for the fallback
	vl   int64  // lanes of a vector
	nv   int64  // vectors of channels in a tile at most
	np   int64  // positions in a tile at most
	// blocked: an item runs its input channels in blocks
	// (tapChannelBlock), each block's tiles for every sub-block of the
	// panel's channels, its partial sums kept in memory between blocks.
	blocked bool
}

// tapISAs are the levels, best first. AVX-512: 4 vectors of 16 channels
// by 6 positions, 24 of the 32 registers accumulate, 4 hold weights;
// AVX2: 2 by 6 in 12 of 16, by channel blocks; NEON (and any other
// machine): 4 vectors of 4 by 5 in 20 of 32.
var tapISAs = []tapISA{
	{cond: "defined(__AVX512F__)", vl: 16, nv: 4, np: 6},
	{cond: "defined(__AVX2__) && defined(__FMA__)", vl: 8, nv: 2, np: 6, blocked: true},
	{vl: 4, nv: 4, np: 5},
}

// tapChannelBlock is the input channels of one block of a blocked level's
// item, or 0 where the item takes them all at once: where the input rows
// the item spans fit tuning.TapConvBlockMinInput, where one block would
// hold them all, and where a tile's work in a block would be under
// tuning.TapConvBlockMinSteps channel-taps on average. A block has as many
// channels as keep its input rows and one tile's weights for it within
// tuning.TapConvBlockBytes, a multiple of 4, at least 4.
//
// A tile covers sub of a panel's channels (AVX2: 16 of 64), so an item
// that runs all its input channels tile by tile reads its input rows
// once for each of the panel's sub-blocks, each time from L2 where they
// outgrow L1 (512 channels of 3 rows of 15: 92 KB); a block's rows stay
// in L1 for all of them, and its weights for the tiles of a row. Each
// block costs a tile a load and a store of its accumulators.
func tapChannelBlock(g lir.ConvGeom, sub int64, padded bool) int64 {
	rows := g.KH * rowCopyWidth(g) * 4 // the input a channel's rows span
	if padded {
		rows = rowCopyWidth(g) * 4
	}
	if g.C*rows <= tuning.TapConvBlockMinInput {
		return 0
	}
	cn := max(4, tuning.TapConvBlockBytes/(rows+g.KH*g.KW*sub*4)/4*4)
	if cn >= g.C || cn*liveTaps(g) < tuning.TapConvBlockMinSteps*g.OH*g.OW {
		return 0
	}
	return cn
}

// liveTaps counts the (output position, tap) pairs of g that read the
// input, not the padding.
func liveTaps(g lir.ConvGeom) int64 {
	count := func(n, stride, k, dil, pad, in int64) (live int64) {
		for o := range n {
			for t := range k {
				if i := o*stride + t*dil - pad; i >= 0 && i < in {
					live++
				}
			}
		}
		return live
	}
	return count(g.OH, g.StrideH, g.KH, g.DilH, g.PadT, g.H) * count(g.OW, g.StrideW, g.KW, g.DilW, g.PadL, g.W)
}

// tapTile is one register tile of an output row: positions [ox, ox+n)
// read the input through kernel columns [kx0, kx1).
type tapTile struct{ ox, n, kx0, kx1 int64 }

// tapTiles splits an output row into tiles of at most np positions that
// read the input through the same kernel columns, each run into tiles as
// equal as can be.
func tapTiles(g lir.ConvGeom, np int64) []tapTile {
	var tiles []tapTile
	for _, r := range colRuns(g) {
		n := r.o1 - r.o0
		k := (n + np - 1) / np
		for i := range k {
			a, b := r.o0+n*i/k, r.o0+n*(i+1)/k
			tiles = append(tiles, tapTile{a, b - a, r.t0, r.t1})
		}
	}
	return tiles
}

// rowTiles is tapTiles for an output row read through a copy of its
// input row padded with zeros (rowTilesOf): every position through every
// kernel column, the row split into tiles as equal as can be.
func rowTiles(g lir.ConvGeom, np int64) []tapTile {
	k := (g.OW + np - 1) / np
	tiles := make([]tapTile, 0, k)
	for i := range k {
		a, b := g.OW*i/k, g.OW*(i+1)/k
		tiles = append(tiles, tapTile{a, b - a, 0, g.KW})
	}
	return tiles
}

// rowTilesOf returns the tiles of an output row for a level with tiles
// of np positions, and whether they read a padded copy of each input row
// (rowTiles) rather than the image (tapTiles): for row kernels (1 x KW)
// whose padding splits an output row into more tiles than the copy does.
// A small plane's row of 17 under a 1x7 kernel is 8 tiles of its own
// (three single positions at each end, their taps cut by the padding)
// and 3 through the copy; a tile of one position keeps a quarter of the
// accumulators busy and loads a weight vector per multiply-add. The
// copy, C rows of the padded width, is made once per item.
func rowTilesOf(g lir.ConvGeom, np int64) ([]tapTile, bool) {
	tiles := tapTiles(g, np)
	if g.KH != 1 || g.KW < 2 || g.C*rowCopyWidth(g)*4 > tuning.TapConvRowCopyBytes {
		return tiles, false
	}
	if padded := rowTiles(g, np); len(padded) < len(tiles) {
		return padded, true
	}
	return tiles, false
}

// rowCopyWidth is the columns of an input row that a row's positions read
// through every tap, the padding included.
func rowCopyWidth(g lir.ConvGeom) int64 { return (g.OW-1)*g.StrideW + (g.KW-1)*g.DilW + 1 }

// tapRun is a run of output columns [o0, o1) whose live kernel columns
// are [t0, t1).
type tapRun struct{ o0, o1, t0, t1 int64 }

// colRuns splits g's output columns into runs of the same live kernel
// columns (none, [0, 0), for a column that reads only padding).
func colRuns(g lir.ConvGeom) []tapRun {
	var runs []tapRun
	for o := range g.OW {
		t0, t1 := int64(-1), int64(-1)
		for t := range g.KW {
			if i := o*g.StrideW + t*g.DilW - g.PadL; i >= 0 && i < g.W {
				if t0 < 0 {
					t0 = t
				}
				t1 = t + 1
			}
		}
		if t0 < 0 {
			t0, t1 = 0, 0 // the output is the bias alone
		}
		if n := len(runs); n > 0 && runs[n-1].t0 == t0 && runs[n-1].t1 == t1 {
			runs[n-1].o1 = o + 1
			continue
		}
		runs = append(runs, tapRun{o, o + 1, t0, t1})
	}
	return runs
}

// tapConv generates the function of a tap-major convolution, false for
// one it does not handle: more than one group, an activation other than
// the piecewise-linear ones, empty or overflowing sizes, an output
// sharing bytes with what it reads.
func tapConv(prog *lir.Program, op *lir.TapConv2D) (function, bool) {
	g, restrictYR, ok := convOperands(prog, op.Geom, op.X, op.W, op.Out, op.Epilogue)
	if !ok || g.Groups != 1 {
		return function{}, false
	}
	ep := op.Epilogue
	bias, res := ep.Bias != lir.NoBuf, ep.Residual != lir.NoBuf
	oc := int64(lir.TapConvPanel)
	nob := (g.O + oc - 1) / oc
	opad := lir.TapConvOP(g.O)
	p := g.OH * g.OW
	// An item's work, counting every tap of its row as live: the grain
	// errs toward more chunks.
	itemFlops := 2 * oc * g.OW * g.C * g.KH * g.KW
	f := function{fn: lir.NativeFunc{N: g.N * nob * g.OH, Grain: max(1, tuning.NativeConvChunkFlops/itemFlops)}}
	f.in = []lir.Buf{op.X, op.W}
	f.fn.In = []int64{g.N * g.C * g.H * g.W * 4, g.KH * g.KW * g.C * opad * 4}
	f.epilogueOut(ep, op.Out, g.O, g.N*g.O*p)

	var b strings.Builder
	convHeader(&b, "conv2d_taps", g, ep.Act, bias, res, restrictYR)
	for i, isa := range tapISAs {
		b.WriteString(levelCond(i, isa.cond))
		genTapLevel(&b, g, ep, isa, nob, opad)
	}
	b.WriteString("#endif\n}\n")
	f.body = b.String()
	return f, true
}

// genTapLevel writes one level's loop over the items of [lo, hi).
func genTapLevel(b *strings.Builder, g lir.ConvGeom, ep lir.Epilogue, isa tapISA, nob, opad int64) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	oc := int64(lir.TapConvPanel)
	sub := isa.vl * isa.nv // channels of a full tile
	tiles, padded := rowTilesOf(g, isa.np)
	wp := rowCopyWidth(g)
	var cn int64
	if isa.blocked && sub < oc {
		cn = tapChannelBlock(g, sub, padded)
	}
	w("\t{\n")
	w("\ttypedef float tv __attribute__((vector_size(%d), unused));\n", 4*isa.vl)
	rows := make([]int64, 0, 4*len(tiles))
	for _, t := range tiles {
		rows = append(rows, t.ox, t.n, t.kx0, t.kx1)
	}
	writeTable(w, "tt", rows, 4)
	if padded {
		w("\tfloat xs[%d] __attribute__((aligned(64))); /* the input row, padded */\n", g.C*wp)
	}
	w("\tfor (int64_t it = lo; it < hi; it++) {\n")
	w("\t\tint64_t oy = it %% %d, r_ = it / %d;\n", g.OH, g.OH)
	w("\t\tint64_t ob = (r_ %% %d) * %d, n = r_ / %d;\n", nob, oc, nob)
	w("\t\tint64_t oe = ob + %d < %d ? ob + %d : %d;\n", oc, opad, oc, opad)
	w("\t\tconst int64_t pw = oe - ob; /* the panel's width */\n")
	w("\t\tconst float *wpanel = wt + ob * %d;\n", g.KH*g.KW*g.C)
	w("\t\tconst float *xn = x + n * %d;\n", g.C*g.H*g.W)
	w("\t\tfloat *yn = y + n * %d + oy * %d;\n", g.O*g.OH*g.OW, g.OW)
	if padded {
		genRowCopy(b, g, wp)
	}
	if ep.Residual != lir.NoBuf {
		w("\t\tconst float *rn = res + n * %d + oy * %d;\n", g.O*g.OH*g.OW, g.OW)
	}
	if cn > 0 {
		// The row's partial sums between channel blocks: position ox's
		// channel o at part[ox * oc + o - ob].
		w("\t\tfloat part[%d] __attribute__((aligned(64)));\n", g.OW*oc)
		w("\t\tfor (int64_t c0 = 0; c0 < %d; c0 += %d) {\n", g.C, cn)
		w("\t\tconst int64_t c1 = c0 + %d < %d ? c0 + %d : %d;\n", cn, g.C, cn, g.C)
	}
	w("\t\tfor (int64_t o0 = ob; o0 < oe; o0 += %d) {\n", sub)
	w("\t\t\tint64_t nv = (oe - o0 < %d ? oe - o0 : %d) / %d;\n", sub, sub, isa.vl)
	w("\t\t\tconst float *wb = wpanel + (o0 - ob);\n")
	w("\t\t\tfor (int t = 0; t < %d; t++) {\n", len(tiles))
	w("\t\t\t\tint64_t ox0 = tt[4 * t], np = tt[4 * t + 1], kx0 = tt[4 * t + 2], kx1 = tt[4 * t + 3];\n")
	if padded {
		w("\t\t\t\tconst float *xb = xs + ox0 * %d;\n", g.StrideW)
	} else {
		w("\t\t\t\tconst float *xb = xn + ox0 * %d - %d;\n", g.StrideW, g.PadL)
	}
	w("\t\t\t\tswitch (np * 8 + nv) {\n")
	// The channel counts a tile may have: full, and the last block's rest.
	nvs := []int64{isa.nv}
	if r := ((opad - (nob-1)*oc) % sub) / isa.vl; r != 0 {
		nvs = append(nvs, r)
	}
	for np := int64(1); np <= isa.np; np++ {
		for _, nv := range nvs {
			w("\t\t\t\tcase %d: {\n", np*8+nv)
			genTapTile(b, g, ep, isa, np, nv, padded, cn > 0)
			w("\t\t\t\t\tbreak;\n\t\t\t\t}\n")
		}
	}
	w("\t\t\t\t}\n")
	w("\t\t\t}\n")
	w("\t\t}\n")
	if cn > 0 {
		w("\t\t}\n")
	}
	w("\t}\n")
	w("\t}\n")
}

// genTapTile writes one register tile: np positions by nv vectors of
// channels from o0, accumulated over the live taps of row oy and columns
// [kx0, kx1), then stored through the epilogue. A blocked tile
// accumulates input channels [c0, c1) onto the partial sums of the
// blocks before (none at c0 = 0) and stores them back to part, but for
// the last block's, which go through the epilogue.
func genTapTile(b *strings.Builder, g lir.ConvGeom, ep lir.Epilogue, isa tapISA, np, nv int64, padded, blocked bool) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	const ind = "\t\t\t\t\t"
	vl := isa.vl
	// Where the input is read: the image (rows W apart, channels a plane
	// apart), or the padded copy of the one row a row kernel reads.
	rowStride, chanStride := g.W, g.H*g.W
	if padded {
		rowStride, chanStride = 0, rowCopyWidth(g)
	}
	w(ind + "tv")
	for p := range np {
		for v := range nv {
			if p+v > 0 {
				w(",")
			}
			w(" a%d_%d = {0}", p, v)
		}
	}
	w(";\n")
	oc := int64(lir.TapConvPanel)
	partAt := func(p, v int64) string { return fmt.Sprintf("part + (ox0 + %d) * %d + (o0 - ob) + %d", p, oc, v*vl) }
	c0, c1 := "0", fmt.Sprint(g.C)
	if blocked {
		c0, c1 = "c0", "c1"
		w(ind + "if (c0 > 0) {\n")
		for p := range np {
			for v := range nv {
				w(ind+"\t__builtin_memcpy(&a%d_%d, %s, %d);\n", p, v, partAt(p, v), 4*vl)
			}
		}
		w(ind + "}\n")
	}
	w(ind+"for (int64_t ky = 0; ky < %d; ky++) {\n", g.KH)
	w(ind+"\tint64_t iy = oy * %d + ky * %d - %d;\n", g.StrideH, g.DilH, g.PadT)
	w(ind+"\tif ((uint64_t)iy >= %du) continue;\n", g.H)
	w(ind + "\tfor (int64_t kx = kx0; kx < kx1; kx++) {\n")
	w(ind+"\t\tconst float *xp = xb + iy * %d + kx * %d + %s * %d;\n", rowStride, g.DilW, c0, chanStride)
	w(ind+"\t\tconst float *wp = wb + ((ky * %d + kx) * %d + %s) * pw;\n", g.KW, g.C, c0)
	w(ind+"\t\tfor (int64_t c = %s; c < %s; c++, xp += %d, wp += pw) {\n", c0, c1, chanStride)
	for v := range nv {
		w(ind+"\t\t\ttv w%d; __builtin_memcpy(&w%d, wp + %d, %d);\n", v, v, v*vl, 4*vl)
	}
	for p := range np {
		w(ind+"\t\t\t{ const float s = xp[%d];", p*g.StrideW)
		for v := range nv {
			w(" a%d_%d += s * w%d;", p, v, v)
		}
		w(" }\n")
	}
	w(ind + "\t\t}\n")
	w(ind + "\t}\n")
	w(ind + "}\n")
	if blocked {
		w(ind+"if (c1 < %d) {\n", g.C)
		for p := range np {
			for v := range nv {
				w(ind+"\t__builtin_memcpy(%s, &a%d_%d, %d);\n", partAt(p, v), p, v, 4*vl)
			}
		}
		w(ind + "\tbreak;\n")
		w(ind + "}\n")
	}
	// The epilogue: the accumulators through memory, then each channel's
	// positions, contiguous in its output row.
	w(ind+"float acc[%d] __attribute__((aligned(64)));\n", np*nv*vl)
	for p := range np {
		for v := range nv {
			w(ind+"__builtin_memcpy(acc + %d, &a%d_%d, %d);\n", (p*nv+v)*vl, p, v, 4*vl)
		}
	}
	w(ind+"for (int64_t j = 0; j < %d && o0 + j < %d; j++) {\n", nv*vl, g.O)
	w(ind+"\tfloat *yo = yn + (o0 + j) * %d + ox0;\n", g.OH*g.OW)
	if ep.Residual != lir.NoBuf {
		w(ind+"\tconst float *ro = rn + (o0 + j) * %d + ox0;\n", g.OH*g.OW)
	}
	w(ind+"\tfor (int p = 0; p < %d; p++) {\n", np)
	w(ind+"\t\tfloat s = acc[p * %d + j];\n", nv*vl)
	if ep.Bias != lir.NoBuf {
		w(ind + "\t\ts += bias[o0 + j];\n")
	}
	if !ep.ActLast {
		genScalarAct(b, ind+"\t\t", ep)
	}
	if ep.Residual != lir.NoBuf {
		w(ind + "\t\ts += ro[p];\n")
	}
	if ep.ActLast {
		genScalarAct(b, ind+"\t\t", ep)
	}
	w(ind + "\t\tyo[p] = s;\n")
	w(ind + "\t}\n")
	w(ind + "}\n")
}

// genRowCopy writes the copy of an item's input row (a row kernel reads
// one: KH is 1) into xs, each channel's wp columns from the left padding
// on, zeros where they read padding. A row of padding alone is left as it
// is: the tiles skip it.
func genRowCopy(b *strings.Builder, g lir.ConvGeom, wp int64) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	lo, hi := min(g.PadL, wp), min(g.PadL+g.W, wp) // the columns of xs the input fills
	w("\t\t{\n")
	w("\t\t\tint64_t iy = oy * %d - %d;\n", g.StrideH, g.PadT)
	w("\t\t\tif ((uint64_t)iy < %du) {\n", g.H)
	w("\t\t\t\tfor (int64_t c = 0; c < %d; c++) {\n", g.C)
	w("\t\t\t\t\tconst float *src = xn + c * %d + iy * %d;\n", g.H*g.W, g.W)
	w("\t\t\t\t\tfloat *dst = xs + c * %d;\n", wp)
	w("\t\t\t\t\tfor (int64_t j = 0; j < %d; j++) dst[j] = 0;\n", lo)
	w("\t\t\t\t\tfor (int64_t j = %d; j < %d; j++) dst[j] = src[j - %d];\n", lo, hi, g.PadL)
	w("\t\t\t\t\tfor (int64_t j = %d; j < %d; j++) dst[j] = 0;\n", hi, wp)
	w("\t\t\t\t}\n")
	w("\t\t\t}\n")
	w("\t\t}\n")
}

// genScalarAct writes the epilogue's piecewise-linear activation of the
// float s, as the runtime's kernels apply it (NaN stays NaN).
func genScalarAct(b *strings.Builder, ind string, ep lir.Epilogue) {
	switch ep.Act {
	case lir.ActRelu:
		fmt.Fprintf(b, "%sif (s < 0) s = 0;\n", ind)
	case lir.ActLeakyRelu:
		fmt.Fprintf(b, "%sif (s < 0) s *= %s;\n", ind, literal(ep.Alpha, computeFloat))
	case lir.ActClamp:
		// The runtime's order: below lo is lo, else above hi is hi.
		fmt.Fprintf(b, "%sif (s < %s) s = %s; else if (s > %s) s = %s;\n", ind,
			literal(ep.Min, computeFloat), literal(ep.Min, computeFloat), literal(ep.Max, computeFloat), literal(ep.Max, computeFloat))
	}
}
