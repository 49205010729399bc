package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// conv2d generates the function of a 2-D convolution step where the
// tuning rule (tuning.NativeConv) says generated code beats the
// runtime's kernel: a depthwise one (dw.go) or a dense one; false
// elsewhere.
func conv2d(prog *lir.Program, op *lir.Conv2D, opts Options) (function, bool) {
	g := normConv(op.Geom)
	if !convRule(tuning.ConvShape{KH: g.KH, KW: g.KW, StrideH: g.StrideH, StrideW: g.StrideW, DilH: g.DilH, DilW: g.DilW,
		Groups: g.Groups, C: g.C, O: g.O, OH: g.OH, OW: g.OW, Padded: max(g.PadT, g.PadL, g.PadB, g.PadR) > 0, AVX512: opts.AllHave("avx512f")}) {
		return function{}, false
	}
	if isDepthwise(g) {
		return dwFunc(prog, op)
	}
	return convFunc(prog, op)
}

// convRule is the tuning rule; tests replace it to compile geometries
// the rule leaves to the runtime.
var convRule = tuning.NativeConv

// normConv is g with strides, dilations and groups of 0 taken as 1, as
// the runtime's kernel takes them.
func normConv(g lir.ConvGeom) lir.ConvGeom {
	g.StrideH, g.StrideW = max(g.StrideH, 1), max(g.StrideW, 1)
	g.DilH, g.DilW = max(g.DilH, 1), max(g.DilW, 1)
	g.Groups = max(g.Groups, 1)
	return g
}

// A native convolution is a direct one over NCHW: each item of the
// function's range is (image, group of output channels, block of output
// positions), and each CPU level covers an item with register tiles of
// OCB output channels by V vectors of output positions, accumulated over
// the input channels and taps with the weights broadcast from their
// stored layout [O, C, KH, KW] and the input loaded as vectors:
//
//   - flat: stride 1 with the output as wide as the input (padding that
//     keeps the width, as "same" convolutions have): output position
//     p = oh·OW + ow reads input p + (kh·DH - PadT)·W + kw·DW - PadL, so a
//     tile covers consecutive positions of the flattened plane, across
//     rows, and small planes fill whole vectors;
//   - rows: any other geometry with a column stride of 1 or 2: a tile is
//     a run of one output row; stride 2 loads two vectors and keeps the
//     even lanes;
//   - split: rows with a column stride of 2 where the input rows a tile
//     reads (KH·C of them) fit tuning.NativeConvSplitBytes, as a stem's
//     few channels do: the tile's run of each row is copied once, its
//     even and its odd columns apart, with the padding as zeros, and
//     every channel tile of the item then reads each tap as one plain
//     load, without masks or shuffles;
//   - row pairs: rows with a column stride of 2 at most convPairWidth
//     wide (onto a 7x7 plane): an item is two rows, which AVX-512 holds
//     in one vector, a row in each half (genConvPairs).
//
// Lanes whose tap falls in the padding (or past the item) are masked off
// in the loads: AVX-512's and AVX2's masked loads never touch a
// masked-off element, so no access leaves the buffers. AVX2 and the
// fallback (NEON) also have tiles without masks where every lane is in
// the input, and the fallback clears lanes with an and where whole
// vectors stay in the buffer, loading lane by lane only at its two ends.
// The output is stored with the tail masked. The epilogue is the
// runtime's: out = act(acc + bias) + residual.
type convPlan struct {
	g     lir.ConvGeom
	flat  bool
	split bool // rows of stride 2, read from the tile's split copy
	// pairs: rows of stride 2 at most convPairWidth wide, which an item
	// takes two at a time (see genConvPairs).
	pairs    bool
	splitW   int64 // floats of one phase (even or odd) of a split row
	p        int64 // output positions per image, OH·OW
	ocg, nog int64 // output channels per item, groups of them
	pb, nb   int64 // positions per item, blocks per image (flat) or per row (rows)
	items    int64
	// Groups: cpg input and opg output channels each, npg items of
	// channels per group (nog = Groups·npg).
	cpg, opg, npg int64
	bias, res     bool
	restrictYR    bool // the output and the residual share no bytes
}

// convISA is one CPU level's side of the generated code: the vector
// type, the register tile and the masked loads and stores. Masks are
// made from lane bits (bit l for lane l).
type convISA struct {
	cond     string // the preprocessor condition that selects it ("" for the fallback)
	vl       int    // lanes
	ocb, tv  int    // tile: output channels by vectors
	acc      int    // the most accumulators a tile may have
	rv, rvi  string // the float and int vector types
	maskType string
	// loopMask qualifies the masks the inner loop reads: AVX2 keeps them
	// in memory (volatile), read by each masked load, since its 12
	// accumulators leave no register for them.
	loopMask string
	// plain: tiles whose loads all stay in the input get a copy without
	// masks (AVX2's masked loads cost a mask register's load each, and
	// the fallback's go lane by lane; AVX-512's cost nothing).
	plain bool
	// andMask: tiles whose loads stay in the buffer (all but those at its
	// two ends) load whole vectors and clear the lanes in the padding
	// with an and, instead of the fallback's lane-by-lane masked loads.
	andMask bool
	full    string                     // the lane bits of a whole vector
	mask    func(bits string) string   // the mask of lane bits
	load    func(ptr, m string) string // a masked load, zero in masked-off lanes
	store   func(ptr, v, m string) string
	// evenLanes is the lane order of a stride-2 load's even elements
	// (nil: in order); unperm puts lanes loaded that way back in order.
	// AVX2 keeps the in-lane order of one vshufps and has the epilogue
	// undo it once, instead of a lane-crossing permute per load.
	evenLanes, unperm []int
	// s2OneVector: stride-2 tiles are one vector by as many channels as
	// the accumulators allow, so each shuffled (or copied) vector feeds
	// them all; AVX-512 ran ResNet-18's 64-channel 56x56 stride-2 layers
	// 1.1x (3x3) and 1.2x (1x1) faster so, and a 32-channel 112x112 one
	// 1.3x.
	s2OneVector bool
	// half is the level's vector of half the lanes, for the last
	// positions of an item when they fit in it (a 7-wide plane's 49th
	// position, a 7-wide row): half the work of a whole vector.
	half *convISA
}

// typedefs declares the level's vector types.
func (isa *convISA) typedefs() []string {
	var out []string
	for i := isa; i != nil; i = i.half {
		out = append(out, fmt.Sprintf("typedef float %s __attribute__((vector_size(%d), unused));", i.rv, 4*i.vl),
			fmt.Sprintf("typedef int %s __attribute__((vector_size(%d), unused));", i.rvi, 4*i.vl))
	}
	return out
}

// laneMask is the int vector of lane bits: all ones in the lanes whose
// bit is set.
func (isa *convISA) laneMask(bits string) string {
	lanes := make([]string, isa.vl)
	for i := range lanes {
		lanes[i] = fmt.Sprint(1 << i)
	}
	return fmt.Sprintf("(((%s){%s} & (int)(%s)) != 0)", isa.rvi, strings.Join(lanes, ", "), bits)
}

// plainLoad is an unmasked load of a vector.
func (isa *convISA) plainLoad(ptr string) string {
	return fmt.Sprintf("({ %s r_; __builtin_memcpy(&r_, (%s), %d); r_; })", isa.rv, ptr, 4*isa.vl)
}

// even is the C expression of the even lanes of a and b (a's first), in
// the order evenLanes says.
func (isa *convISA) even(a, b string) string {
	idx := make([]string, isa.vl)
	for i := range idx {
		idx[i] = fmt.Sprint(2 * i)
		if isa.evenLanes != nil {
			idx[i] = fmt.Sprint(isa.evenLanes[i])
		}
	}
	return "__builtin_shufflevector(" + a + ", " + b + ", " + strings.Join(idx, ", ") + ")"
}

var convISAs = []*convISA{
	{
		// 32 zmm registers: 24 accumulators, 3 input vectors, and the
		// weights as embedded broadcasts; masks in k registers.
		cond: "defined(__AVX512F__)", vl: 16, ocb: 8, tv: 3, acc: 24, rv: "rv", rvi: "rvi",
		maskType: "uint16_t", full: "0xffffu", s2OneVector: true,
		mask: func(bits string) string { return "(uint16_t)(" + bits + ")" },
		load: func(ptr, m string) string {
			return "__builtin_ia32_loadups512_mask((" + ptr + "), (rv){0}, (" + m + "))"
		},
		store: func(ptr, v, m string) string {
			return "__builtin_ia32_storeups512_mask((" + ptr + "), (" + v + "), (" + m + "));"
		},
		half: &convISA{
			vl: 8, ocb: 8, tv: 1, acc: 24, rv: "rh", rvi: "rhi", maskType: "uint8_t", full: "0xffu",
			mask: func(bits string) string { return "(uint8_t)(" + bits + ")" },
			load: func(ptr, m string) string {
				return "__builtin_ia32_loadups256_mask((const rh *)(" + ptr + "), (rh){0}, (" + m + "))"
			},
			store: func(ptr, v, m string) string {
				return "__builtin_ia32_storeups256_mask((rh *)(" + ptr + "), (" + v + "), (" + m + "));"
			},
		},
	},
	{
		// 16 ymm registers: 12 accumulators, 2 input vectors and a weight
		// broadcast.
		cond: "defined(__AVX2__) && defined(__FMA__)", vl: 8, ocb: 6, tv: 2, acc: 12, rv: "rv", rvi: "rvi",
		maskType: "rvi", loopMask: "volatile ", plain: true, full: "0xffu",
		mask: func(bits string) string {
			return "(((rvi){1, 2, 4, 8, 16, 32, 64, 128} & (int)(" + bits + ")) != 0)"
		},
		load: func(ptr, m string) string {
			return "__builtin_ia32_maskloadps256((const rv *)(" + ptr + "), (" + m + "))"
		},
		store: func(ptr, v, m string) string {
			return "__builtin_ia32_maskstoreps256((rv *)(" + ptr + "), (" + m + "), (" + v + "));"
		},
		evenLanes: []int{0, 2, 8, 10, 4, 6, 12, 14},
		unperm:    []int{0, 1, 4, 5, 2, 3, 6, 7},
	},
	{
		// NEON (and any other machine): 32 registers of 4 lanes; lanes
		// under a partial mask are loaded and stored one by one.
		vl: 4, ocb: 8, tv: 3, acc: 24, rv: "rv", rvi: "rvi",
		maskType: "uint32_t", plain: true, andMask: true, full: "0xfu",
		mask: func(bits string) string { return "(uint32_t)(" + bits + ")" },
		load: func(ptr, m string) string {
			return "({ const float *p_ = (" + ptr + "); uint32_t m_ = (" + m + "); rv r_ = {0}; " +
				"if (m_ == 0xfu) __builtin_memcpy(&r_, p_, 16); " +
				"else { if (m_ & 1u) r_[0] = p_[0]; if (m_ & 2u) r_[1] = p_[1]; if (m_ & 4u) r_[2] = p_[2]; if (m_ & 8u) r_[3] = p_[3]; } r_; })"
		},
		store: func(ptr, v, m string) string {
			return "{ float *p_ = (" + ptr + "); uint32_t m_ = (" + m + "); rv v_ = (" + v + "); " +
				"if (m_ == 0xfu) __builtin_memcpy(p_, &v_, 16); " +
				"else { if (m_ & 1u) p_[0] = v_[0]; if (m_ & 2u) p_[1] = v_[1]; if (m_ & 4u) p_[2] = v_[2]; if (m_ & 8u) p_[3] = v_[3]; } }"
		},
	},
}

// planConv says how a convolution is generated, false for one the
// generator does not handle: groups that do not divide the channels, a column stride over 2, an
// activation other than the piecewise-linear ones, empty or overflowing
// sizes, or an output sharing bytes with what it reads.
func planConv(prog *lir.Program, op *lir.Conv2D) (convPlan, bool) {
	g, restrictYR, ok := checkConv(prog, op)
	if !ok || g.C%g.Groups != 0 || g.O%g.Groups != 0 {
		return convPlan{}, false
	}
	ep := op.Epilogue
	pl := convPlan{g: g, p: g.OH * g.OW, bias: ep.Bias != lir.NoBuf, res: ep.Residual != lir.NoBuf, restrictYR: restrictYR}
	pl.flat = g.StrideH == 1 && g.StrideW == 1 && g.OW == g.W
	pl.cpg, pl.opg = g.C/g.Groups, g.O/g.Groups
	// An item's channels stay in one group.
	pl.ocg = min(pl.opg, tuning.NativeConvChannels)
	pl.npg = (pl.opg + pl.ocg - 1) / pl.ocg
	pl.nog = g.Groups * pl.npg
	pl.pb = tuning.NativeConvPositions
	if !pl.flat && g.StrideW == 2 {
		// A tile's positions (at most pb) read pb + (KW-1)·DW/2 columns
		// of each phase, rounded up to whole vectors of the widest level.
		pl.splitW = (pl.pb + (g.KW-1)*g.DilW/2 + 15) / 16 * 16
		pl.split = g.KH*pl.cpg*2*pl.splitW*4 <= tuning.NativeConvSplitBytes
	}
	pl.pairs = !pl.flat && !pl.split && g.StrideW == 2 && g.OW <= convPairWidth
	switch {
	case pl.flat:
		pl.nb = (pl.p + pl.pb - 1) / pl.pb
		pl.items = g.N * pl.nog * pl.nb
	case pl.pairs:
		pl.nb = 1
		pl.items = g.N * pl.nog * ((g.OH + 1) / 2)
	default:
		pl.nb = (g.OW + pl.pb - 1) / pl.pb
		pl.items = g.N * pl.nog * g.OH * pl.nb
	}
	return pl, true
}

// checkConv is what every generated convolution needs of op: its
// geometry normalized, a column stride of 1 or 2, a piecewise-linear
// activation, sizes that are not empty and whose products stay far from
// overflow, and an output that shares no bytes with what it reads (but
// the residual, which it may replace exactly: restrictYR false).
func checkConv(prog *lir.Program, op *lir.Conv2D) (g lir.ConvGeom, restrictYR, ok bool) {
	g, restrictYR, ok = convOperands(prog, op.Geom, op.X, op.W, op.Out, op.Epilogue)
	return g, restrictYR, ok && g.StrideW <= 2
}

// convOperands is what any generated convolution needs: checkConv's
// conditions but the column stride's.
func convOperands(prog *lir.Program, geom lir.ConvGeom, x, wt, out lir.Buf, ep lir.Epilogue) (g lir.ConvGeom, restrictYR, ok bool) {
	g = normConv(geom)
	switch {
	case min(g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, g.OH, g.OW) < 1,
		min(g.PadT, g.PadL, g.PadB, g.PadR) < 0:
		return g, false, false
	}
	switch ep.Act {
	case lir.ActNone, lir.ActRelu, lir.ActLeakyRelu, lir.ActClamp:
	default:
		return g, false, false
	}
	for _, v := range [][]int64{{g.N, g.C, g.H, g.W}, {g.O, g.C, g.KH, g.KW}, {g.N, g.O, g.OH, g.OW}, {g.OH, g.StrideH, g.KH, g.DilH}, {g.OW, g.StrideW, g.KW, g.DilW}} {
		if n, ok := product(v); !ok || n > 1<<40 {
			return g, false, false
		}
	}
	for _, b := range []lir.Buf{x, wt, ep.Bias} {
		if b != lir.NoBuf && sameBytes(prog, out, b) {
			return g, false, false
		}
	}
	restrictYR = true
	if ep.Residual != lir.NoBuf && sameBytes(prog, out, ep.Residual) {
		// Each element of the residual is read just before the same
		// element of the output is written: exact aliasing is fine.
		if prog.Buffers[out].Offset != prog.Buffers[ep.Residual].Offset {
			return g, false, false
		}
		restrictYR = false
	}
	return g, restrictYR, true
}

// convFunc generates the function of a convolution the generator
// handles.
func convFunc(prog *lir.Program, op *lir.Conv2D) (function, bool) {
	pl, ok := planConv(prog, op)
	if !ok {
		return function{}, false
	}
	g := pl.g
	kk := g.KH * g.KW
	span := pl.p // positions an item may cover
	switch {
	case pl.pairs:
		span = 2 * g.OW
	case !pl.flat:
		span = g.OW
	}
	itemFlops := 2 * pl.ocg * min(pl.pb, span) * pl.cpg * kk
	f := function{fn: lir.NativeFunc{N: pl.items, Grain: max(1, tuning.NativeConvChunkFlops/itemFlops)}}
	f.in = []lir.Buf{op.X, op.W}
	f.fn.In = []int64{g.N * g.C * g.H * g.W * 4, g.O * pl.cpg * kk * 4}
	f.epilogueOut(op.Epilogue, op.Out, g.O, g.N*g.O*pl.p)

	var b strings.Builder
	mode := "rows"
	switch {
	case pl.flat:
		mode = "flat"
	case pl.split:
		mode = "split"
	case pl.pairs:
		mode = "row pairs"
	}
	convBody(&b, "conv2d "+mode, g, op.Epilogue.Act, pl.bias, pl.res, pl.restrictYR, func(isa *convISA) {
		genConvLevel(&b, &pl, op.Epilogue, isa)
	})
	f.body = b.String()
	return f, true
}

// convBody writes a convolution function's body: a comment naming what
// (kind) and its geometry, its operands (x, wt, then the bias and the
// residual where it has them, then y; y and the residual restrict-
// qualified unless they share bytes), and each CPU level's code from
// level under that level's #if.
func convBody(b *strings.Builder, kind string, g lir.ConvGeom, act lir.Activation, bias, res, restrictYR bool, level func(isa *convISA)) {
	convHeader(b, kind, g, act, bias, res, restrictYR)
	for i, isa := range convISAs {
		b.WriteString(levelCond(i, isa.cond))
		level(isa)
	}
	b.WriteString("#endif\n}\n")
}

// convHeader opens a convolution function's body: the comment and the
// operands convBody describes.
func convHeader(b *strings.Builder, kind string, g lir.ConvGeom, act lir.Activation, bias, res, restrictYR bool) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("{\n")
	w("\t/* %s: N=%d C=%d %dx%d -> O=%d %dx%d, kernel %dx%d, stride %dx%d, dilation %dx%d, pad %d,%d,%d,%d, act %s */\n",
		kind, g.N, g.C, g.H, g.W, g.O, g.OH, g.OW, g.KH, g.KW,
		g.StrideH, g.StrideW, g.DilH, g.DilW, g.PadT, g.PadL, g.PadB, g.PadR, act)
	w("\tconst float *restrict x = (const float *)args[0];\n")
	w("\tconst float *restrict wt = (const float *)args[1];\n")
	arg := 2
	if bias {
		w("\tconst float *restrict bias = (const float *)args[%d];\n", arg)
		arg++
	}
	yr := "restrict "
	if !restrictYR {
		yr = ""
	}
	if res {
		w("\tconst float *%sres = (const float *)args[%d];\n", yr, arg)
		arg++
	}
	w("\tfloat *%sy = (float *)args[%d];\n", yr, arg)
}

// genConvLevel writes one level's loop over the items of [lo, hi).
func genConvLevel(b *strings.Builder, pl *convPlan, ep lir.Epilogue, isa *convISA) {
	g := pl.g
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	vl, tv, ocb := int64(isa.vl), int64(isa.tv), int64(isa.ocb)
	// Where an item has fewer positions than the tile's vectors hold, the
	// tile has fewer vectors and more channels.
	end := pl.p // the positions tiles run over: the plane (flat) or a row
	if !pl.flat {
		end = g.OW
	}
	if need := (min(end, pl.pb) + vl - 1) / vl; need < tv {
		tv = need
		ocb = min(int64(isa.acc)/tv, pl.ocg)
	}
	if isa.s2OneVector && !pl.flat && g.StrideW == 2 {
		tv = 1
		ocb = min(int64(isa.acc), pl.ocg)
	}
	ocb = fitSets(ocb, 4*pl.cpg*g.KH*g.KW)
	// Levels whose vectors hold two rows take an item's pair in one tile;
	// the others run its rows one by one.
	pairTiles := pl.pairs && isa.s2OneVector && 2*g.OW <= vl
	w("\t{\n")
	for _, l := range isa.typedefs() {
		w("\t%s\n", l)
	}
	w("\tfor (int64_t it = lo; it < hi; it++) {\n")
	switch {
	case pl.flat:
		w("\t\tint64_t blk = it %% %d, r_ = it / %d;\n", pl.nb, pl.nb)
	case pl.pairs:
		w("\t\tint64_t pr = it %% %d, r_ = it / %d, blk = 0;\n", (g.OH+1)/2, (g.OH+1)/2)
		w("\t\t(void)blk;\n")
	default:
		w("\t\tint64_t blk = it %% %d, r_ = it / %d;\n", pl.nb*g.OH, pl.nb*g.OH)
		w("\t\tint64_t oh = blk / %d;\n", pl.nb)
		w("\t\tblk -= oh * %d;\n", pl.nb)
	}
	w("\t\tint64_t og = r_ %% %d, n = r_ / %d;\n", pl.nog, pl.nog)
	if g.Groups == 1 {
		w("\t\tint64_t oc0 = og * %d, oc1 = oc0 + %d < %d ? oc0 + %d : %d;\n", pl.ocg, pl.ocg, g.O, pl.ocg, g.O)
	} else {
		// Group grp's output channels read its input channels alone.
		w("\t\tint64_t grp = og / %d, oj = og %% %d;\n", pl.npg, pl.npg)
		w("\t\tint64_t oc0 = grp * %d + oj * %d, oc1 = oj * %d + %d < %d ? oc0 + %d : grp * %d + %d;\n",
			pl.opg, pl.ocg, pl.ocg, pl.ocg, pl.opg, pl.ocg, pl.opg, pl.opg)
	}
	// q: positions along the flattened plane (flat) or the row (rows).
	w("\t\tint64_t q0 = blk * %d, q1 = q0 + %d < %d ? q0 + %d : %d;\n", pl.pb, pl.pb, end, pl.pb, end)
	if g.Groups == 1 {
		w("\t\tconst float *xn = x + n * %d;\n", g.C*g.H*g.W)
	} else {
		w("\t\tconst float *xn = x + n * %d + grp * %d;\n", g.C*g.H*g.W, pl.cpg*g.H*g.W)
	}
	w("\t\tfloat *yn = y + n * %d;\n", g.O*pl.p)
	if pl.res {
		w("\t\tconst float *rn = res + n * %d;\n", g.O*pl.p)
	}
	if pairTiles {
		// A plane with an odd number of rows has its last one alone: the
		// rows-mode tiles (half vectors) take it.
		w("\t\tif (pr * 2 + 1 < %d) {\n", g.OH)
		genConvPairs(b, pl, ep, isa, ocb)
		if g.OH%2 == 0 {
			w("\t\t}\n")
			w("\t}\n")
			w("\t}\n")
			return
		}
		w("\t\t} else {\n")
	}
	if pl.pairs {
		w("\t\tfor (int64_t oh = pr * 2; oh < pr * 2 + 2 && oh < %d; oh++) {\n", g.OH)
	}
	w("\t\tfor (int64_t qt = q0; qt < q1; qt += %d) {\n", tv*vl)
	w("\t\t\tint64_t nq = q1 - qt;\n")
	w("\t\t\tint nv = nq >= %d ? %d : (int)((nq + %d) / %d);\n", tv*vl, tv, vl-1, vl)
	w("\t\t\t(void)nv;\n")
	// Lane bits: tm, the lanes in the item; flat: rb[kh] and cb[kw], the
	// lanes whose tap row and column are in the input; rows: cb[kw], and
	// for stride 2 the raw lanes of the two loads, cb[kw][v][0/1]; split:
	// tm only (the copy has the padding as zeros).
	w("\t\t\tuint32_t tm[%d];\n", tv)
	switch {
	case pl.split:
	case pl.flat:
		w("\t\t\tuint32_t rb[%d][%d], cb[%d][%d];\n", g.KH, tv, g.KW, tv)
	case g.StrideW == 1:
		w("\t\t\tuint32_t cb[%d][%d];\n", g.KW, tv)
	default:
		w("\t\t\tuint32_t cb[%d][%d][2];\n", g.KW, tv)
	}
	w("\t\t\tfor (int v = 0; v < %d; v++) {\n", tv)
	w("\t\t\t\ttm[v] = 0;\n")
	switch {
	case pl.split:
		w("\t\t\t\tint64_t r = q1 - qt - v * %d;\n", vl)
		w("\t\t\t\ttm[v] = r >= %d ? %s : r <= 0 ? 0u : (1u << r) - 1;\n", vl, isa.full)
	case pl.flat:
		w("\t\t\t\tfor (int k = 0; k < %d; k++) rb[k][v] = 0;\n", g.KH)
		w("\t\t\t\tfor (int k = 0; k < %d; k++) cb[k][v] = 0;\n", g.KW)
		w("\t\t\t\tfor (int l = 0; l < %d; l++) {\n", vl)
		w("\t\t\t\t\tint64_t q = qt + v * %d + l;\n", vl)
		w("\t\t\t\t\tif (q >= q1) break;\n")
		w("\t\t\t\t\tint64_t oh = q / %d, ow = q - oh * %d;\n", g.OW, g.OW)
		w("\t\t\t\t\ttm[v] |= 1u << l;\n")
		w("\t\t\t\t\tfor (int k = 0; k < %d; k++) if ((uint64_t)(oh + k * %d - %d) < %du) rb[k][v] |= 1u << l;\n", g.KH, g.DilH, g.PadT, g.H)
		w("\t\t\t\t\tfor (int k = 0; k < %d; k++) if ((uint64_t)(ow + k * %d - %d) < %du) cb[k][v] |= 1u << l;\n", g.KW, g.DilW, g.PadL, g.W)
		w("\t\t\t\t}\n")
	case g.StrideW == 1:
		w("\t\t\t\tfor (int k = 0; k < %d; k++) cb[k][v] = 0;\n", g.KW)
		w("\t\t\t\tfor (int l = 0; l < %d; l++) {\n", vl)
		w("\t\t\t\t\tint64_t ow = qt + v * %d + l;\n", vl)
		w("\t\t\t\t\tif (ow >= q1) break;\n")
		w("\t\t\t\t\ttm[v] |= 1u << l;\n")
		w("\t\t\t\t\tfor (int k = 0; k < %d; k++) if ((uint64_t)(ow + k * %d - %d) < %du) cb[k][v] |= 1u << l;\n", g.KW, g.DilW, g.PadL, g.W)
		w("\t\t\t\t}\n")
	default:
		w("\t\t\t\tfor (int k = 0; k < %d; k++) cb[k][v][0] = cb[k][v][1] = 0;\n", g.KW)
		w("\t\t\t\tfor (int l = 0; l < %d; l++) {\n", vl)
		w("\t\t\t\t\tint64_t ow = qt + v * %d + l;\n", vl)
		w("\t\t\t\t\tif (ow >= q1) break;\n")
		w("\t\t\t\t\ttm[v] |= 1u << l;\n")
		w("\t\t\t\t\tint j = 2 * l, h = j / %d;\n", vl)
		w("\t\t\t\t\tj -= h * %d;\n", vl)
		w("\t\t\t\t\tfor (int k = 0; k < %d; k++) if ((uint64_t)(ow * 2 + k * %d - %d) < %du) cb[k][v][h] |= 1u << j;\n", g.KW, g.DilW, g.PadL, g.W)
		w("\t\t\t\t}\n")
	}
	w("\t\t\t}\n")
	if pl.split {
		genConvSplit(b, pl, isa, tv)
	}
	if pl.flat && isa.plain {
		// inner: every lane of the tile's vectors reads every tap from
		// the input, so the loads need no masks.
		w("\t\t\tuint32_t all = %s;\n", isa.full)
		w("\t\t\tfor (int v = 0; v < (nv > 1 ? %d : 1); v++) {\n", tv)
		w("\t\t\t\tfor (int k = 0; k < %d; k++) all &= rb[k][v];\n", g.KH)
		w("\t\t\t\tfor (int k = 0; k < %d; k++) all &= cb[k][v];\n", g.KW)
		w("\t\t\t}\n")
		w("\t\t\tint inner = all == %s;\n", isa.full)
	}
	genChannelTiles(b, pl, ocb, "\t\t\t", func(n int64) { genConvTiles(b, pl, ep, isa, n, tv) })
	w("\t\t}\n")
	if pl.pairs {
		w("\t\t}\n")
	}
	if pairTiles {
		w("\t\t}\n")
	}
	w("\t}\n")
	w("\t}\n")
}

// genChannelTiles writes the loop over an item's output channels in
// tiles of ocb (at indent ind), whole ones then the remainder this layer
// has, each tile's code from tile(channels).
func genChannelTiles(b *strings.Builder, pl *convPlan, ocb int64, ind string, tile func(n int64)) {
	rems := map[int64]bool{}
	for oj := int64(0); oj < pl.npg; oj++ {
		if r := min(pl.ocg, pl.opg-oj*pl.ocg) % ocb; r != 0 {
			rems[r] = true
		}
	}
	fmt.Fprintf(b, "%sfor (int64_t oc = oc0; oc < oc1; oc += %d) {\n", ind, ocb)
	fmt.Fprintf(b, "%s\tint64_t no = oc1 - oc;\n", ind)
	fmt.Fprintf(b, "%s\tif (no >= %d) {\n", ind, ocb)
	tile(ocb)
	for r := ocb - 1; r > 0; r-- {
		if rems[r] {
			b.WriteString(ind + "\t} else if (no == " + fmt.Sprint(r) + ") {\n")
			tile(r)
		}
	}
	b.WriteString(ind + "\t}\n")
	b.WriteString(ind + "}\n")
}

// convPairWidth is the widest output row of a stride-2 convolution whose
// items take two rows: at most half of AVX-512's 16 lanes, where a tile
// of whole vectors (one row in each half) has twice the lanes at work of
// one row in a half vector, and every broadcast weight feeds 16 lanes
// instead of 8 (ResNet's stride-2 layers onto 7x7 planes).
const convPairWidth = 8

// genConvPairs writes an item's tiles where a vector holds two rows
// (pl.pairs, at a level with 2·OW lanes or more) and the item has both:
// lanes 0 to OW-1 are output row oh = 2·pr, lanes vl/2 on row oh+1. A
// tap's input vector is the even lanes of one load from each row's input
// row, the stride-2 shuffle of the rows-mode tiles; a row whose tap row
// falls in the padding has its load masked off.
func genConvPairs(b *strings.Builder, pl *convPlan, ep lir.Epilogue, isa *convISA, ocb int64) {
	g := pl.g
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	hv := int64(isa.vl / 2)
	w("\t\tint64_t oh = pr * 2;\n")
	// cb[kw]: the bits of the elements of a row's load whose column is
	// in the input, for each output column's even element.
	w("\t\tuint32_t cb[%d];\n", g.KW)
	w("\t\tfor (int k = 0; k < %d; k++) {\n", g.KW)
	w("\t\t\tcb[k] = 0;\n")
	w("\t\t\tfor (int ow = 0; ow < %d; ow++) if ((uint64_t)(ow * 2 + k * %d - %d) < %du) cb[k] |= 1u << (2 * ow);\n", g.OW, g.DilW, g.PadL, g.W)
	w("\t\t}\n")
	genChannelTiles(b, pl, ocb, "\t\t", func(n int64) { genConvPairTile(b, pl, ep, isa, n, hv) })
}

// genConvPairTile writes one tile of genConvPairs: ocb output channels
// by one vector of two rows, then the epilogue, each row stored with its
// own mask (the upper half moved down to lane 0 first).
func genConvPairTile(b *strings.Builder, pl *convPlan, ep lir.Epilogue, isa *convISA, ocb, hv int64) {
	g := pl.g
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	const ind = "\t\t\t\t"
	ckk := pl.cpg * g.KH * g.KW
	w(ind+"%s", isa.rv)
	for o := range ocb {
		if o > 0 {
			w(",")
		}
		w(" a%d = {0}", o)
	}
	w(";\n")
	w(ind+"const float *wo = wt + oc * %d;\n", ckk)
	w(ind+"for (int kh = 0; kh < %d; kh++) {\n", g.KH)
	w(ind+"\tint64_t ih = oh * %d + kh * %d - %d;\n", g.StrideH, g.DilH, g.PadT)
	w(ind+"\tint r0 = (uint64_t)ih < %du, r1 = (uint64_t)(ih + %d) < %du;\n", g.H, g.StrideH, g.H)
	w(ind + "\tif (!r0 && !r1) continue;\n")
	for kw := range g.KW {
		w(ind+"\t%s m%d = %s, n%d = %s;\n", isa.maskType, kw, isa.mask(fmt.Sprintf("r0 ? cb[%d] : 0", kw)), kw, isa.mask(fmt.Sprintf("r1 ? cb[%d] : 0", kw)))
	}
	// Rows in the padding are never read: their loads are masked off.
	w(ind+"\tconst float *xk = xn + ih * %d - %d;\n", g.W, g.PadL)
	w(ind+"\tconst float *wk = wo + kh * %d;\n", g.KW)
	w(ind+"\tfor (int64_t ic = 0; ic < %d; ic++) {\n", pl.cpg)
	w(ind+"\t\tconst float *xc = xk + ic * %d;\n", g.H*g.W)
	w(ind+"\t\tconst float *wc = wk + ic * %d;\n", g.KH*g.KW)
	for kw := range g.KW {
		w(ind + "\t\t{\n")
		off := kw * g.DilW
		w(ind+"\t\t\t%s x0 = %s;\n", isa.rv, isa.even(isa.load(fmt.Sprintf("xc + %d", off), fmt.Sprintf("m%d", kw)),
			isa.load(fmt.Sprintf("xc + %d", off+g.StrideH*g.W), fmt.Sprintf("n%d", kw))))
		for o := range ocb {
			w(ind+"\t\t\tfloat w%d = wc[%d];\n", o, o*ckk+kw)
		}
		for o := range ocb {
			w(ind+"\t\t\ta%d += x0 * w%d;\n", o, o)
		}
		w(ind + "\t\t}\n")
	}
	w(ind + "\t}\n")
	w(ind + "}\n")
	w(ind+"float *yo = yn + oc * %d + oh * %d;\n", pl.p, g.OW)
	if pl.res {
		w(ind+"const float *ro = rn + oc * %d + oh * %d;\n", pl.p, g.OW)
	}
	w(ind+"%s tl = %s;\n", isa.maskType, isa.mask(fmt.Sprintf("%#x", uint32(1)<<g.OW-1)))
	down := make([]string, isa.vl)
	for i := range down {
		down[i] = fmt.Sprint(int64(i)%hv + hv)
	}
	for o := range ocb {
		w(ind+"{\n"+ind+"\t%s s = a%d;\n", isa.rv, o)
		if pl.bias {
			w(ind+"\ts += bias[oc + %d];\n", o)
		}
		genAct(b, ind+"\t", isa.rv, isa.rvi, ep)
		w(ind+"\t%s u = __builtin_shufflevector(s, s, %s);\n", isa.rv, strings.Join(down, ", "))
		if pl.res {
			w(ind+"\ts += %s;\n", isa.load(fmt.Sprintf("ro + %d", int64(o)*pl.p), "tl"))
			w(ind+"\tu += %s;\n", isa.load(fmt.Sprintf("ro + %d", int64(o)*pl.p+g.OW), "tl"))
		}
		if ep.ActLast {
			genVecAct(b, ind+"\t", isa.rv, isa.rvi, "s", ep)
			genVecAct(b, ind+"\t", isa.rv, isa.rvi, "u", ep)
		}
		w(ind+"\t%s\n", isa.store(fmt.Sprintf("yo + %d", int64(o)*pl.p), "s", "tl"))
		w(ind+"\t%s\n", isa.store(fmt.Sprintf("yo + %d", int64(o)*pl.p+g.OW), "u", "tl"))
		w(ind + "}\n")
	}
}

// genConvSplit writes the copy of the input rows a split tile reads:
// sx[kh][ic] holds the columns 2·qt - PadL + 2·j (j < splitW) of input
// row oh·SH + kh·DH - PadT of channel ic, then the columns one to their
// right, zeros where they fall in the padding. Rows in the padding are
// not copied: the tiles skip them.
func genConvSplit(b *strings.Builder, pl *convPlan, isa *convISA, tv int64) {
	g := pl.g
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	vl := int64(isa.vl)
	// The tile reads tv·vl positions from qt: the first columns of each
	// phase, in whole vectors.
	sw := min(pl.splitW, (tv*vl+(g.KW-1)*g.DilW/2+vl-1)/vl*vl)
	ev, od := make([]string, vl), make([]string, vl)
	for i := range vl {
		ev[i], od[i] = fmt.Sprint(2*i), fmt.Sprint(2*i+1)
	}
	w("\t\t\tfloat sx[%d] __attribute__((aligned(64)));\n", g.KH*pl.cpg*2*pl.splitW)
	w("\t\t\tfor (int kh = 0; kh < %d; kh++) {\n", g.KH)
	w("\t\t\t\tint64_t ih = oh * %d + kh * %d - %d;\n", g.StrideH, g.DilH, g.PadT)
	w("\t\t\t\tif ((uint64_t)ih >= %du) continue;\n", g.H)
	w("\t\t\t\tfor (int64_t ic = 0; ic < %d; ic++) {\n", pl.cpg)
	w("\t\t\t\t\tconst float *xr = xn + ic * %d + ih * %d;\n", g.H*g.W, g.W)
	w("\t\t\t\t\tfloat *se = sx + (kh * %d + ic) * %d;\n", pl.cpg, 2*pl.splitW)
	w("\t\t\t\t\tfor (int64_t j = 0; j < %d; j += %d) {\n", sw, vl)
	w("\t\t\t\t\t\tint64_t c0 = 2 * (qt + j) - %d;\n", g.PadL)
	w("\t\t\t\t\t\t%s a, b;\n", isa.rv)
	w("\t\t\t\t\t\tif (c0 >= 0 && c0 + %d <= %d) {\n", 2*vl, g.W)
	w("\t\t\t\t\t\t\ta = %s;\n", isa.plainLoad("xr + c0"))
	w("\t\t\t\t\t\t\tb = %s;\n", isa.plainLoad(fmt.Sprintf("xr + c0 + %d", vl)))
	w("\t\t\t\t\t\t} else {\n")
	w("\t\t\t\t\t\t\tuint32_t ba = 0, bb = 0;\n")
	w("\t\t\t\t\t\t\tfor (int l = 0; l < %d; l++) {\n", vl)
	w("\t\t\t\t\t\t\t\tif ((uint64_t)(c0 + l) < %du) ba |= 1u << l;\n", g.W)
	w("\t\t\t\t\t\t\t\tif ((uint64_t)(c0 + %d + l) < %du) bb |= 1u << l;\n", vl, g.W)
	w("\t\t\t\t\t\t\t}\n")
	w("\t\t\t\t\t\t\ta = %s;\n", isa.load("xr + c0", isa.mask("ba")))
	w("\t\t\t\t\t\t\tb = %s;\n", isa.load(fmt.Sprintf("xr + c0 + %d", vl), isa.mask("bb")))
	w("\t\t\t\t\t\t}\n")
	w("\t\t\t\t\t\t%s e = __builtin_shufflevector(a, b, %s);\n", isa.rv, strings.Join(ev, ", "))
	w("\t\t\t\t\t\t%s o = __builtin_shufflevector(a, b, %s);\n", isa.rv, strings.Join(od, ", "))
	w("\t\t\t\t\t\t__builtin_memcpy(se + j, &e, %d);\n", 4*vl)
	w("\t\t\t\t\t\t__builtin_memcpy(se + %d + j, &o, %d);\n", pl.splitW, 4*vl)
	w("\t\t\t\t\t}\n")
	w("\t\t\t\t}\n")
	w("\t\t\t}\n")
}

// fitSets is the most output channels, up to want, whose weight rows
// (stride bytes apart, read in step) fall at most
// tuning.NativeConvStreamsPerSet to an L1 set: rows a multiple of 4 KiB
// apart (512 channels of 3x3, or 1024 of 1x1) all map to the same sets,
// and more of them than the cache has ways evict each other on every
// input channel.
func fitSets(want, stride int64) int64 {
	for ocb := want; ocb > 1; ocb-- {
		sets := map[int64]int{}
		worst := 0
		for o := range ocb {
			s := o * stride % tuning.NativeConvL1SetPeriod / 64
			sets[s]++
			worst = max(worst, sets[s])
		}
		if worst <= tuning.NativeConvStreamsPerSet {
			return ocb
		}
	}
	return 1
}

// tileLoads is how a tile loads its input vectors.
type tileLoads int

const (
	loadsMasked tileLoads = iota // the level's masked loads
	loadsPlain                   // whole vectors: every lane is in the input
	loadsAnd                     // whole vectors in the buffer, and-ed with the lane masks
	loadsSplit                   // whole vectors of the tile's split copy of the rows
)

// genConvTiles writes the tiles of ocb channels, one per vector count
// (and for the last vector of an item, a half vector where the level
// has one and the positions fit), each without masks where its loads
// stay in the input and with them elsewhere.
func genConvTiles(b *strings.Builder, pl *convPlan, ep lir.Epilogue, isa *convISA, ocb, tv int64) {
	g := pl.g
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	chw := g.C * g.H * g.W
	variants := func(vi *convISA, nv int64) {
		if pl.split {
			genConvTile(b, pl, ep, isa, vi, ocb, nv, loadsSplit)
			return
		}
		if !vi.plain {
			genConvTile(b, pl, ep, isa, vi, ocb, nv, loadsMasked)
			return
		}
		vl := int64(vi.vl)
		if pl.flat {
			// inner: every lane of the tile's vectors reads every tap
			// from the input.
			w("\t\t\t\t\tif (inner) {\n")
		} else {
			// A run of a row whose every tap is in the input and whose
			// vectors are whole.
			w("\t\t\t\t\tif (qt + %d <= q1 && qt * %d >= %d && qt * %d <= %d) {\n", nv*vl, g.StrideW, g.PadL, g.StrideW,
				g.W-1+g.PadL-(g.KW-1)*g.DilW-(g.StrideW*nv*vl-1))
		}
		genConvTile(b, pl, ep, isa, vi, ocb, nv, loadsPlain)
		if vi.andMask {
			// Every whole vector the tile loads lies in the input buffer
			// (bounds relative to x: the lowest and past the highest
			// float read).
			if pl.flat {
				w("\t\t\t\t\t} else if (n * %d + qt - %d >= 0 && n * %d + qt + %d <= %d) {\n",
					chw, g.PadT*g.W+g.PadL, chw, (g.C-1)*g.H*g.W+((g.KH-1)*g.DilH-g.PadT)*g.W-g.PadL+(g.KW-1)*g.DilW+nv*vl, g.N*chw)
			} else {
				w("\t\t\t\t\t} else if (n * %d + (oh * %d < %d ? 0 : oh * %d - %d) * %d + qt * %d - %d >= 0 &&\n", chw, g.StrideH, g.PadT, g.StrideH, g.PadT, g.W, g.StrideW, g.PadL)
				w("\t\t\t\t\t\tn * %d + (oh * %d + %d < %d ? oh * %d + %d : %d) * %d + qt * %d + %d <= %d) {\n",
					chw, g.StrideH, (g.KH-1)*g.DilH-g.PadT, g.H-1, g.StrideH, (g.KH-1)*g.DilH-g.PadT, g.H-1, g.W, g.StrideW,
					(g.C-1)*g.H*g.W-g.PadL+(g.KW-1)*g.DilW+nv*vl*g.StrideW, g.N*chw)
			}
			genConvTile(b, pl, ep, isa, vi, ocb, nv, loadsAnd)
		}
		w("\t\t\t\t\t} else {\n")
		genConvTile(b, pl, ep, isa, vi, ocb, nv, loadsMasked)
		w("\t\t\t\t\t}\n")
	}
	// A tile of tv vectors runs any count of them above 1 (the vectors
	// past the item masked off: one item of a layer at most), so only
	// the last vector of an item has tiles of its own.
	if tv > 1 {
		w("\t\t\t\t\tif (nv > 1) {\n")
		variants(isa, tv)
		w("\t\t\t\t\t} else {\n")
	}
	if isa.half != nil {
		w("\t\t\t\t\tif (nq <= %d) {\n", isa.half.vl)
		variants(isa.half, 1)
		w("\t\t\t\t\t} else {\n")
		variants(isa, 1)
		w("\t\t\t\t\t}\n")
	} else {
		variants(isa, 1)
	}
	if tv > 1 {
		w("\t\t\t\t\t}\n")
	}
}

// genConvTile writes one register tile: ocb output channels by nv
// vectors (of vi, the level's vectors or its half ones) of positions
// from qt, accumulated over the taps and input channels, then the
// epilogue and the stores. The lane bits are the level's (isa's); a half
// vector's lanes are the low bits of its first vector.
func genConvTile(b *strings.Builder, pl *convPlan, ep lir.Epilogue, isa, vi *convISA, ocb, nv int64, loads tileLoads) {
	g := pl.g
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	const ind = "\t\t\t\t\t\t"
	vl := int64(vi.vl)
	ckk := pl.cpg * g.KH * g.KW
	w(ind+"%s", vi.rv)
	for o := range ocb {
		for v := range nv {
			if o > 0 || v > 0 {
				w(",")
			}
			w(" a%d_%d = {0}", o, v)
		}
	}
	w(";\n")
	w(ind+"const float *wo = wt + oc * %d;\n", ckk)
	// rawBits are the lane bits of stride-2 load h (0 or 1) of vector v.
	rawBits := func(kw, v, h int64) string {
		if vi == isa {
			return fmt.Sprintf("cb[%d][%d][%d]", kw, v, h)
		}
		return fmt.Sprintf("(cb[%d][0][0] >> %d)", kw, h*vl) // the half vector's raw lanes are the first load's
	}
	// maskDecl declares a mask of lane bits as the loads use it.
	maskDecl := func(prefix, name, bits string) {
		if loads == loadsAnd {
			w(ind+"%s%s %s = %s;\n", prefix, vi.rvi, name, vi.laneMask(bits))
		} else {
			w(ind+"%s%s%s %s = %s;\n", prefix, vi.loopMask, vi.maskType, name, vi.mask(bits))
		}
	}
	if !pl.flat && loads != loadsPlain && loads != loadsSplit {
		for kw := range g.KW {
			for v := range nv {
				if g.StrideW == 1 {
					maskDecl("", fmt.Sprintf("m%d_%d", kw, v), fmt.Sprintf("cb[%d][%d]", kw, v))
				} else {
					maskDecl("", fmt.Sprintf("m%d_%d", kw, v), rawBits(kw, v, 0))
					maskDecl("", fmt.Sprintf("n%d_%d", kw, v), rawBits(kw, v, 1))
				}
			}
		}
	}
	w(ind+"for (int kh = 0; kh < %d; kh++) {\n", g.KH)
	if pl.flat {
		if loads != loadsPlain && g.KH > 1 {
			// A kernel row none of the tile's positions reads in the
			// input (a dilation as large as the plane) adds nothing.
			rows := make([]string, nv)
			for v := range nv {
				rows[v] = fmt.Sprintf("rb[kh][%d]", v)
			}
			w(ind+"\tif (!(%s)) continue;\n", strings.Join(rows, " | "))
		}
		if loads != loadsPlain {
			for kw := range g.KW {
				for v := range nv {
					maskDecl("\t", fmt.Sprintf("m%d_%d", kw, v), fmt.Sprintf("rb[kh][%d] & cb[%d][%d]", v, kw, v))
				}
			}
		}
		w(ind+"\tconst float *xk = xn + qt + (kh * %d - %d) * %d - %d;\n", g.DilH, g.PadT, g.W, g.PadL)
	} else {
		w(ind+"\tint64_t ih = oh * %d + kh * %d - %d;\n", g.StrideH, g.DilH, g.PadT)
		w(ind+"\tif ((uint64_t)ih >= %du) continue;\n", g.H)
		w(ind+"\tconst float *xk = xn + ih * %d + qt * %d - %d;\n", g.W, g.StrideW, g.PadL)
	}
	w(ind+"\tconst float *wk = wo + kh * %d;\n", g.KW)
	w(ind+"\tfor (int64_t ic = 0; ic < %d; ic++) {\n", pl.cpg)
	if loads == loadsSplit {
		w(ind+"\t\tconst float *xc = sx + (kh * %d + ic) * %d;\n", pl.cpg, 2*pl.splitW)
	} else {
		w(ind+"\t\tconst float *xc = xk + ic * %d;\n", g.H*g.W)
	}
	w(ind+"\t\tconst float *wc = wk + ic * %d;\n", g.KH*g.KW)
	load := func(off int64, m string) string {
		switch loads {
		case loadsPlain:
			return vi.plainLoad(fmt.Sprintf("xc + %d", off))
		case loadsAnd:
			return fmt.Sprintf("(%s)((%s)%s & %s)", vi.rv, vi.rvi, vi.plainLoad(fmt.Sprintf("xc + %d", off)), m)
		case loadsSplit:
			return vi.plainLoad(fmt.Sprintf("xc + %d", off))
		}
		return vi.load(fmt.Sprintf("xc + %d", off), m)
	}
	for kw := range g.KW {
		w(ind + "\t\t{\n")
		for v := range nv {
			off := kw*g.DilW + v*vl*g.StrideW
			if loads == loadsSplit {
				// Column 2·(qt + i) + kw·DW - PadL is phase kw·DW % 2 of
				// the copy, at i + kw·DW / 2.
				off = kw*g.DilW%2*pl.splitW + kw*g.DilW/2 + v*vl
				w(ind+"\t\t\t%s x%d = %s;\n", vi.rv, v, load(off, ""))
				continue
			}
			if g.StrideW == 1 {
				w(ind+"\t\t\t%s x%d = %s;\n", vi.rv, v, load(off, fmt.Sprintf("m%d_%d", kw, v)))
			} else {
				w(ind+"\t\t\t%s x%d = %s;\n", vi.rv, v, vi.even(load(off, fmt.Sprintf("m%d_%d", kw, v)), load(off+vl, fmt.Sprintf("n%d_%d", kw, v))))
			}
		}
		for o := range ocb {
			w(ind+"\t\t\tfloat w%d = wc[%d];\n", o, o*ckk+kw)
		}
		for o := range ocb {
			for v := range nv {
				w(ind+"\t\t\ta%d_%d += x%d * w%d;\n", o, v, v, o)
			}
		}
		w(ind + "\t\t}\n")
	}
	w(ind + "\t}\n")
	w(ind + "}\n")
	// The epilogue: act(acc + bias) + residual, stored with the tail
	// masked.
	pos := "qt"
	if !pl.flat {
		pos = fmt.Sprintf("oh * %d + qt", g.OW)
	}
	w(ind+"float *yo = yn + oc * %d + %s;\n", pl.p, pos)
	if pl.res {
		w(ind+"const float *ro = rn + oc * %d + %s;\n", pl.p, pos)
	}
	for v := range nv {
		w(ind+"%s t%d = %s;\n", vi.maskType, v, vi.mask(fmt.Sprintf("tm[%d]", v)))
	}
	rv, rvi := vi.rv, vi.rvi
	for o := range ocb {
		for v := range nv {
			if g.StrideW == 2 && vi.unperm != nil && loads != loadsSplit {
				idx := make([]string, len(vi.unperm))
				for i, l := range vi.unperm {
					idx[i] = fmt.Sprint(l)
				}
				w(ind+"{\n"+ind+"\t%s s = __builtin_shufflevector(a%d_%d, a%d_%d, %s);\n", rv, o, v, o, v, strings.Join(idx, ", "))
			} else {
				w(ind+"{\n"+ind+"\t%s s = a%d_%d;\n", rv, o, v)
			}
			if pl.bias {
				w(ind+"\ts += bias[oc + %d];\n", o)
			}
			genAct(b, ind+"\t", rv, rvi, ep)
			if pl.res {
				w(ind+"\ts += %s;\n", vi.load(fmt.Sprintf("ro + %d", int64(o)*pl.p+v*vl), fmt.Sprintf("t%d", v)))
			}
			genActLast(b, ind+"\t", rv, rvi, ep)
			w(ind+"\t%s\n", vi.store(fmt.Sprintf("yo + %d", int64(o)*pl.p+v*vl), "s", fmt.Sprintf("t%d", v)))
			w(ind + "}\n")
		}
	}
}

// genAct writes the epilogue's activation of vector s (of type rv, its
// int twin rvi) at indent ind: the runtime's piecewise-linear ones. It is
// the step before the residual's add, where the epilogue puts it there.
func genAct(b *strings.Builder, ind, rv, rvi string, ep lir.Epilogue) {
	if !ep.ActLast {
		genVecAct(b, ind, rv, rvi, "s", ep)
	}
}

// genActLast is genAct's step after the residual's add.
func genActLast(b *strings.Builder, ind, rv, rvi string, ep lir.Epilogue) {
	if ep.ActLast {
		genVecAct(b, ind, rv, rvi, "s", ep)
	}
}

// genVecAct writes the epilogue's activation of vector v.
func genVecAct(b *strings.Builder, ind, rv, rvi, v string, ep lir.Epilogue) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	r := strings.NewReplacer("$", v)
	switch ep.Act {
	case lir.ActRelu:
		w(r.Replace(ind+"$ = (%s)((%s)$ & ~($ < 0));\n"), rv, rvi)
	case lir.ActLeakyRelu:
		w("%s{\n", ind)
		w(r.Replace(ind+"\t%s k = $ < 0;\n"), rvi)
		w(r.Replace(ind+"\t$ = (%s)(((%s)($ * %s) & k) | ((%s)$ & ~k));\n"), rv, rvi, literal(ep.Alpha, computeFloat), rvi)
		w("%s}\n", ind)
	case lir.ActClamp:
		// The runtime's order: below lo is lo, else above hi is hi
		// (NaN stays).
		lo, hi := literal(ep.Min, computeFloat), literal(ep.Max, computeFloat)
		w("%s{\n", ind)
		w(r.Replace(ind+"\t%s kh = $ > %s, kl = $ < %s;\n"), rvi, hi, lo)
		w(r.Replace(ind+"\t$ = (%s)(((%s)((%s){0} + %s) & kh) | ((%s)$ & ~kh));\n"), rv, rvi, rv, hi, rvi)
		w(r.Replace(ind+"\t$ = (%s)(((%s)((%s){0} + %s) & kl) | ((%s)$ & ~kl));\n"), rv, rvi, rv, lo, rvi)
		w("%s}\n", ind)
	}
}
