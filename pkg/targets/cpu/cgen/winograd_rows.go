package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
)

// Winograd's transforms by rows (AVX-512, AVX2). The tiles of a group lie
// m columns apart along rows of tiles, so the elements a lane reads at
// one point of its patch, or writes at one point of its block, are
// every m-th column of a row: the transforms load (and store) whole
// rows of the plane and sort them into lanes with shuffles, instead of
// one gather (or scatter) per point of the patch. A group may straddle
// rows of tiles (and images): each run of its lanes along one row of
// tiles is a segment, loaded on its own and blended in by its lanes.
// Planes of few tiles a row make many segments, yet even a 7x7 plane's
// (two tiles a row at F(4x4)) ran faster so than gathered
// (docs/perf/native.md).
//
// AVX2 does it 8 lanes at a time with shuffles that stay within 128-bit
// halves: a 4x4 transpose in each half of four vectors of a row (F(4x4):
// each half one tile's four columns) gives the lanes' columns with the
// tiles in the order 0 2 4 6 1 3 5 7, and one lane-crossing permute a
// vector puts them back in order; the last two columns of a patch come
// from a second set of loads a tile further on. Shuffles across halves
// (the AVX-512 code at 8 lanes) cost about as much as the gathers. NEON's
// code keeps its lane-by-lane gathers.

// segments is what genSegments needs of a step's tiles.
type segments struct {
	tiles, perImage, tw, m int64
	// pad is the padding before the first tile's corner; image and row
	// are the element strides of an image and a row; h and w the plane's
	// bounds.
	padT, padL  int64
	image, row  int64
	h, w        int64
	loads       int64 // vectors a row of a segment takes from its lane-0 column
	shifted     int64 // and from m columns further on (AVX2's input)
	blockColumn bool  // masks bound the segment's own columns (output), not the plane's
}

// rowsISA reports whether level isa runs the transforms by rows.
func rowsISA(isa *convISA) bool { return isa.vl == 16 || isa.vl == 8 }

// genSegments writes the segments of the level's vector sv of an item's
// group tg of 16 tiles: nseg of them, each with its lanes (slanes, a
// mask), the row of the plane of its tiles' first row (shr), the offset
// in channel 0 of the column that lane 0 would start at (sbase), and per
// vector k of a row the lanes whose column lies in the plane (smask[s][k]
// and, at 8 lanes, its bits sbits[s][k]; then the shifted loads'; for an
// output, in the segment's own blocks too).
func genSegments(b *strings.Builder, ind string, isa *convISA, s segments) {
	w := func(format string, args ...any) { fmt.Fprintf(b, ind+format, args...) }
	vl := int64(isa.vl)
	nl := s.loads + s.shifted
	w("int nseg = 0;\n")
	w("int64_t sbase[%d], shr[%d];\n", vl, vl)
	w("%s slanes[%d], smask[%d][%d];\n", isa.maskType, vl, vl, nl)
	if vl == 8 {
		w("uint32_t sbits[%d][%d];\n", vl, nl)
	}
	w("for (int64_t l = 0; l < %d && tg * 16 + sv * %d + l < %d;) {\n", vl, vl, s.tiles)
	w("\tint64_t t = tg * 16 + sv * %d + l, n = t / %d, r = t %% %d, tr = r / %d, tc = r %% %d;\n", vl, s.perImage, s.perImage, s.tw, s.tw)
	w("\tint64_t run = %d - tc;\n", s.tw)
	w("\tif (run > %d - l) run = %d - l;\n", vl, vl)
	w("\tif (run > %d - t) run = %d - t;\n", s.tiles, s.tiles)
	w("\tint64_t vb = (tc - l) * %d - %d; /* lane 0's column */\n", s.m, s.padL)
	if s.blockColumn {
		w("\tint64_t cs = tc * %d, ce = (tc + run) * %d < %d ? (tc + run) * %d : %d;\n", s.m, s.m, s.w, s.m, s.w)
	} else {
		w("\tint64_t cs = 0, ce = %d;\n", s.w)
	}
	w("\tshr[nseg] = tr * %d - %d;\n", s.m, s.padT)
	w("\tsbase[nseg] = n * %d + shr[nseg] * %d + vb;\n", s.image, s.row)
	w("\tslanes[nseg] = %s;\n", isa.mask("((1u << run) - 1u) << l"))
	w("\tfor (int k = 0; k < %d; k++) {\n", nl)
	w("\t\tint64_t c0_ = vb + %d * (k %% %d) + (k < %d ? 0 : %d);\n", vl, s.loads, s.loads, s.m)
	w("\t\tint64_t lo_ = cs - c0_, hi_ = ce - c0_;\n")
	w("\t\tif (lo_ < 0) lo_ = 0;\n")
	w("\t\tif (hi_ > %d) hi_ = %d;\n", vl, vl)
	w("\t\tuint32_t bits_ = hi_ > lo_ ? ((1u << hi_) - 1u) & ~((1u << lo_) - 1u) : 0;\n")
	if vl == 8 {
		w("\t\tsbits[nseg][k] = bits_;\n")
	}
	w("\t\tsmask[nseg][k] = %s;\n", isa.mask("bits_"))
	w("\t}\n")
	w("\tnseg++;\n")
	w("\tl += run;\n")
	w("}\n")
}

// Shuffle indices of 16-lane vectors: the even and the odd elements of
// two; the first and the last 8 lanes of two interleaved; the second's
// first (second) lane shifted in.
const (
	evens16 = "0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30"
	odds16  = "1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31"
	low16   = "0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23"
	high16  = "8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31"
	next16  = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16"
	next216 = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17"
)

// Shuffle indices of 8-lane vectors within 128-bit halves (AVX2's
// unpcklps, unpckhps, shufps), and the lane orders they leave tiles in
// (F(4x4): 0 2 4 6 1 3 5 7; F(2x2): 0 1 4 5 2 3 6 7) with their inverses.
const (
	unpackLo8 = "0, 8, 1, 9, 4, 12, 5, 13"
	unpackHi8 = "2, 10, 3, 11, 6, 14, 7, 15"
	pairLo8   = "0, 1, 8, 9, 4, 5, 12, 13"
	pairHi8   = "2, 3, 10, 11, 6, 7, 14, 15"
	evens8    = "0, 2, 8, 10, 4, 6, 12, 14"
	odds8     = "1, 3, 9, 11, 5, 7, 13, 15"
	order4    = "0, 2, 4, 6, 1, 3, 5, 7"
	unorder4  = "0, 4, 1, 5, 2, 6, 3, 7"
	order2    = "0, 1, 4, 5, 2, 3, 6, 7" // its own inverse
)

// genInputRow writes vectors d0..d(m+1) of an input patch's row i by
// segments: lane l of dj is column m·l + j of the segment's row i past
// its lane-0 column, zero in the padding. xc is the channel's plane.
func genInputRow(b *strings.Builder, ind string, isa *convISA, m, i, row, h int64) {
	w := func(format string, args ...any) { fmt.Fprintf(b, ind+format, args...) }
	vl := int64(isa.vl)
	a := m + 2
	for j := range a {
		w("%s d%d = {0};\n", isa.rv, j)
	}
	w("for (int s = 0; s < nseg; s++) {\n")
	w("\tif ((uint64_t)(shr[s] + %d) >= %du) continue;\n", i, h)
	// The segment's lane-0 column may lie before the plane (its lanes
	// start mid-row, or in the padding): those columns are masked off,
	// and the address is formed without C pointer arithmetic.
	w("\tconst float *p = (const float *)((uintptr_t)xc + (uintptr_t)((sbase[s] + %d) * 4));\n", i*row)
	if vl == 16 {
		for k := range m + 1 {
			w("\trv a%d = %s;\n", k, isa.load(fmt.Sprintf("p + %d", 16*k), fmt.Sprintf("smask[s][%d]", k)))
		}
		switch m {
		case 2:
			w("\trv p0 = __builtin_shufflevector(a0, a1, %s);\n", evens16)
			w("\trv p1 = __builtin_shufflevector(a0, a1, %s);\n", odds16)
		case 4:
			w("\trv e0 = __builtin_shufflevector(a0, a1, %s), o0 = __builtin_shufflevector(a0, a1, %s);\n", evens16, odds16)
			w("\trv e1 = __builtin_shufflevector(a2, a3, %s), o1 = __builtin_shufflevector(a2, a3, %s);\n", evens16, odds16)
			w("\trv p0 = __builtin_shufflevector(e0, e1, %s), p2 = __builtin_shufflevector(e0, e1, %s);\n", evens16, odds16)
			w("\trv p1 = __builtin_shufflevector(o0, o1, %s), p3 = __builtin_shufflevector(o0, o1, %s);\n", evens16, odds16)
		}
		// The patch's last two columns are the next tile's first two.
		w("\trv p%d = __builtin_shufflevector(p0, a%d, %s);\n", m, m, next16)
		w("\trv p%d = __builtin_shufflevector(p1, a%d, %s);\n", m+1, m, next216)
		for j := range a {
			w("\td%d = __builtin_ia32_selectps_512(slanes[s], p%d, d%d);\n", j, j, j)
		}
		w("}\n")
		return
	}
	// AVX2: m vectors from lane 0's column, m from a tile further on
	// (the patch's last two columns, as the next tile's first two).
	for k := range 2 * m {
		off := 8*(k%m) + (k/m)*m
		w("\trv a%d = %s;\n", k, isa.load(fmt.Sprintf("p + %d", off), fmt.Sprintf("smask[s][%d]", k)))
	}
	unorder := unorder4
	switch m {
	case 2:
		unorder = order2
		w("\trv p0 = __builtin_shufflevector(a0, a1, %s), p1 = __builtin_shufflevector(a0, a1, %s);\n", evens8, odds8)
		w("\trv p2 = __builtin_shufflevector(a2, a3, %s), p3 = __builtin_shufflevector(a2, a3, %s);\n", evens8, odds8)
	case 4:
		w("\trv t0 = __builtin_shufflevector(a0, a1, %s), t1 = __builtin_shufflevector(a0, a1, %s);\n", unpackLo8, unpackHi8)
		w("\trv t2 = __builtin_shufflevector(a2, a3, %s), t3 = __builtin_shufflevector(a2, a3, %s);\n", unpackLo8, unpackHi8)
		w("\trv p0 = __builtin_shufflevector(t0, t2, %s), p1 = __builtin_shufflevector(t0, t2, %s);\n", pairLo8, pairHi8)
		w("\trv p2 = __builtin_shufflevector(t1, t3, %s), p3 = __builtin_shufflevector(t1, t3, %s);\n", pairLo8, pairHi8)
		w("\trv u0 = __builtin_shufflevector(a4, a5, %s), u2 = __builtin_shufflevector(a6, a7, %s);\n", unpackLo8, unpackLo8)
		w("\trv p4 = __builtin_shufflevector(u0, u2, %s), p5 = __builtin_shufflevector(u0, u2, %s);\n", pairLo8, pairHi8)
	}

	for j := range a {
		w("\td%d = __builtin_ia32_blendvps256(d%d, __builtin_shufflevector(p%d, p%d, %s), (rv)slanes[s]);\n", j, j, j, j, unorder)
	}
	w("}\n")
}

// genOutputRow stores row i of the output blocks of channel o, whose
// column j is vector s<j> (lane l: tile l), by segments: interleaved
// into rows of columns, the residual added and the activation after it
// applied there, stored masked to the segment's columns.
func genOutputRow(b *strings.Builder, ind string, isa *convISA, m, i, row, h int64, res bool, ep lir.Epilogue) {
	w := func(format string, args ...any) { fmt.Fprintf(b, ind+format, args...) }
	vl := int64(isa.vl)
	switch {
	case vl == 16 && m == 2:
		w("rv c0 = __builtin_shufflevector(s0, s1, %s), c1 = __builtin_shufflevector(s0, s1, %s);\n", low16, high16)
	case vl == 16 && m == 4:
		w("rv al = __builtin_shufflevector(s0, s2, %s), ah = __builtin_shufflevector(s0, s2, %s);\n", low16, high16)
		w("rv bl = __builtin_shufflevector(s1, s3, %s), bh = __builtin_shufflevector(s1, s3, %s);\n", low16, high16)
		w("rv c0 = __builtin_shufflevector(al, bl, %s), c1 = __builtin_shufflevector(al, bl, %s);\n", low16, high16)
		w("rv c2 = __builtin_shufflevector(ah, bh, %s), c3 = __builtin_shufflevector(ah, bh, %s);\n", low16, high16)
	case m == 2:
		// Tiles in the order 0 1 4 5 2 3 6 7, then pairs interleaved
		// within halves: columns in order.
		w("rv q0 = __builtin_shufflevector(s0, s0, %s), q1 = __builtin_shufflevector(s1, s1, %s);\n", order2, order2)
		w("rv c0 = __builtin_shufflevector(q0, q1, %s), c1 = __builtin_shufflevector(q0, q1, %s);\n", unpackLo8, unpackHi8)
	case m == 4:
		// Tiles in the order 0 2 4 6 1 3 5 7, then a 4x4 transpose in
		// each half: each half one tile's four columns.
		for j := range 4 {
			w("rv q%d = __builtin_shufflevector(s%d, s%d, %s);\n", j, j, j, order4)
		}
		w("rv t0 = __builtin_shufflevector(q0, q1, %s), t1 = __builtin_shufflevector(q0, q1, %s);\n", unpackLo8, unpackHi8)
		w("rv t2 = __builtin_shufflevector(q2, q3, %s), t3 = __builtin_shufflevector(q2, q3, %s);\n", unpackLo8, unpackHi8)
		w("rv c0 = __builtin_shufflevector(t0, t2, %s), c1 = __builtin_shufflevector(t0, t2, %s);\n", pairLo8, pairHi8)
		w("rv c2 = __builtin_shufflevector(t1, t3, %s), c3 = __builtin_shufflevector(t1, t3, %s);\n", pairLo8, pairHi8)
	}
	w("for (int s = 0; s < nseg; s++) {\n")
	w("\tif ((uint64_t)(shr[s] + %d) >= %du) continue;\n", i, h)
	// As for the input: lane 0's column may lie before the row.
	w("\tuintptr_t at = (uintptr_t)((sbase[s] + %d) * 4);\n", i*row)
	w("\tfloat *yp = (float *)((uintptr_t)yo + at);\n")
	if res {
		w("\tconst float *rp = (const float *)((uintptr_t)ro + at);\n")
	}
	for k := range m {
		mk := fmt.Sprintf("smask[s][%d]", k)
		w("\t{\n")
		w("\t\t%s z = c%d;\n", isa.rv, k)
		if res {
			w("\t\tz += %s;\n", isa.load(fmt.Sprintf("rp + %d", vl*k), mk))
			if ep.ActLast {
				genVecAct(b, ind+"\t\t", isa.rv, isa.rvi, "z", ep)
			}
		}
		if vl == 16 {
			w("\t\t%s\n", isa.store(fmt.Sprintf("yp + %d", vl*k), "z", mk))
		} else {
			// Whole vectors go plain, only a row's ends take vmaskmovps.
			w("\t\tif (sbits[s][%d] == %s) __builtin_memcpy(yp + %d, &z, %d);\n", k, isa.full, vl*k, 4*vl)
			w("\t\telse %s\n", isa.store(fmt.Sprintf("yp + %d", vl*k), "z", mk))
		}
		w("\t}\n")
	}
	w("}\n")
}
