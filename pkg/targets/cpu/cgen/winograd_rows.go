package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
)

// Winograd's transforms by rows (AVX-512). The 16 tiles of a group lie
// m columns apart along rows of tiles, so the elements a lane reads at
// one point of its patch, or writes at one point of its block, are
// every m-th column of a row: the transforms load (and store) whole
// rows of the plane and sort them into lanes with shuffles, instead of
// one gather (or scatter) per point of the patch. A group may straddle
// rows of tiles (and images): each run of its lanes along one row of
// tiles is a segment, loaded on its own and blended in by its lanes.
// Planes of few tiles a row make many segments, yet even a 7x7 plane's
// (two tiles a row at F(4x4)) ran faster so than gathered
// (docs/perf/native.md). The other levels keep their gathers: AVX2 by
// rows is untried (its two-vector shuffles cost more instructions), and
// NEON's code goes lane by lane either way.

// segments is what genSegments needs of a step's tiles.
type segments struct {
	tiles, perImage, tw, m int64
	// pad is the padding before the first tile's corner; image and row
	// are the element strides of an image and a row; h and w the plane's
	// bounds.
	padT, padL  int64
	image, row  int64
	h, w        int64
	loads       int64 // vectors a row of a segment takes (its mask count)
	blockColumn bool  // masks bound the segment's own columns (output), not the plane's
}

// genSegments writes the segments of an item's group tg of 16 tiles:
// nseg of them, each with its lanes (slanes), the row of the plane of
// its tiles' first row (shr), the offset in channel 0 of the column
// that lane 0 would start at (sbase), and per vector k of a row the
// lanes whose column lies in the plane (smask[s][k]; for an output, in
// the segment's own blocks too).
func genSegments(b *strings.Builder, s segments) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("\t\tint nseg = 0;\n")
	w("\t\tint64_t sbase[16], shr[16];\n")
	w("\t\tuint16_t slanes[16], smask[16][%d];\n", s.loads)
	w("\t\tfor (int64_t l = 0; l < 16 && tg * 16 + l < %d;) {\n", s.tiles)
	w("\t\t\tint64_t t = tg * 16 + l, n = t / %d, r = t %% %d, tr = r / %d, tc = r %% %d;\n", s.perImage, s.perImage, s.tw, s.tw)
	w("\t\t\tint64_t run = %d - tc;\n", s.tw)
	w("\t\t\tif (run > 16 - l) run = 16 - l;\n")
	w("\t\t\tif (run > %d - t) run = %d - t;\n", s.tiles, s.tiles)
	w("\t\t\tint64_t vb = (tc - l) * %d - %d; /* lane 0's column */\n", s.m, s.padL)
	if s.blockColumn {
		w("\t\t\tint64_t cs = tc * %d, ce = (tc + run) * %d < %d ? (tc + run) * %d : %d;\n", s.m, s.m, s.w, s.m, s.w)
	} else {
		w("\t\t\tint64_t cs = 0, ce = %d;\n", s.w)
	}
	w("\t\t\tshr[nseg] = tr * %d - %d;\n", s.m, s.padT)
	w("\t\t\tsbase[nseg] = n * %d + shr[nseg] * %d + vb;\n", s.image, s.row)
	w("\t\t\tslanes[nseg] = (uint16_t)(((1u << run) - 1u) << l);\n")
	w("\t\t\tfor (int k = 0; k < %d; k++) {\n", s.loads)
	w("\t\t\t\tint64_t lo_ = cs - (vb + 16 * k), hi_ = ce - (vb + 16 * k);\n")
	w("\t\t\t\tif (lo_ < 0) lo_ = 0;\n")
	w("\t\t\t\tif (hi_ > 16) hi_ = 16;\n")
	w("\t\t\t\tsmask[nseg][k] = hi_ > lo_ ? (uint16_t)(((1u << hi_) - 1u) & ~((1u << lo_) - 1u)) : 0;\n")
	w("\t\t\t}\n")
	w("\t\t\tnseg++;\n")
	w("\t\t\tl += run;\n")
	w("\t\t}\n")
}

// evens and odds are the shuffle indices of the even and the odd
// elements of two 16-lane vectors; low and high interleave the first
// (last) 8 lanes of two.
var evens, odds, low, high = func() (e, o, lo, hi string) {
	var es, os, ls, hs []string
	for i := range 16 {
		es = append(es, fmt.Sprint(2*i))
		os = append(os, fmt.Sprint(2*i+1))
	}
	for i := range 8 {
		ls = append(ls, fmt.Sprint(i), fmt.Sprint(16+i))
		hs = append(hs, fmt.Sprint(8+i), fmt.Sprint(24+i))
	}
	return strings.Join(es, ", "), strings.Join(os, ", "), strings.Join(ls, ", "), strings.Join(hs, ", ")
}()

// genInputRow writes vectors d0..d(m+1) of an input patch's row i by
// segments: lane l of dj is column m·l + j of the segment's row i past
// its lane-0 column, zero in the padding. xc is the channel's plane.
func genInputRow(b *strings.Builder, ind string, m, i, row, h int64) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	a := m + 2
	for j := range a {
		w(ind+"rv d%d = {0};\n", j)
	}
	b.WriteString(ind + "for (int s = 0; s < nseg; s++) {\n")
	w(ind+"\tif ((uint64_t)(shr[s] + %d) >= %du) continue;\n", i, h)
	// The segment's lane-0 column may lie before the plane (its lanes
	// start mid-row, or in the padding): those columns are masked off,
	// and the address is formed without C pointer arithmetic.
	w(ind+"\tconst float *p = (const float *)((uintptr_t)xc + (uintptr_t)((sbase[s] + %d) * 4));\n", i*row)
	for k := range m + 1 {
		w(ind+"\trv a%d = __builtin_ia32_loadups512_mask(p + %d, (rv){0}, smask[s][%d]);\n", k, 16*k, k)
	}
	switch m {
	case 2:
		w(ind+"\trv p0 = __builtin_shufflevector(a0, a1, %s);\n", evens)
		w(ind+"\trv p1 = __builtin_shufflevector(a0, a1, %s);\n", odds)
	case 4:
		w(ind+"\trv e0 = __builtin_shufflevector(a0, a1, %s), o0 = __builtin_shufflevector(a0, a1, %s);\n", evens, odds)
		w(ind+"\trv e1 = __builtin_shufflevector(a2, a3, %s), o1 = __builtin_shufflevector(a2, a3, %s);\n", evens, odds)
		w(ind+"\trv p0 = __builtin_shufflevector(e0, e1, %s), p2 = __builtin_shufflevector(e0, e1, %s);\n", evens, odds)
		w(ind+"\trv p1 = __builtin_shufflevector(o0, o1, %s), p3 = __builtin_shufflevector(o0, o1, %s);\n", evens, odds)
	}
	// The patch's last two columns are the next tile's first two.
	next := "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15"
	w(ind+"\trv p%d = __builtin_shufflevector(p0, a%d, %s, 16);\n", m, m, next)
	w(ind+"\trv p%d = __builtin_shufflevector(p1, a%d, %s, 17);\n", m+1, m, next)
	for j := range a {
		w(ind+"\td%d = __builtin_ia32_selectps_512(slanes[s], p%d, d%d);\n", j, j, j)
	}
	b.WriteString(ind + "}\n")
}

// genOutputRow stores row i of the output blocks of channel o, whose
// column j is vector s<j> (lane l: tile l), by segments: interleaved
// into rows of columns, the residual added and the activation after it
// applied there, stored masked to the segment's columns.
func genOutputRow(b *strings.Builder, ind string, m, i, row, h int64, res bool, ep lir.Epilogue) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	switch m {
	case 2:
		w(ind+"rv c0 = __builtin_shufflevector(s0, s1, %s), c1 = __builtin_shufflevector(s0, s1, %s);\n", low, high)
	case 4:
		w(ind+"rv al = __builtin_shufflevector(s0, s2, %s), ah = __builtin_shufflevector(s0, s2, %s);\n", low, high)
		w(ind+"rv bl = __builtin_shufflevector(s1, s3, %s), bh = __builtin_shufflevector(s1, s3, %s);\n", low, high)
		w(ind+"rv c0 = __builtin_shufflevector(al, bl, %s), c1 = __builtin_shufflevector(al, bl, %s);\n", low, high)
		w(ind+"rv c2 = __builtin_shufflevector(ah, bh, %s), c3 = __builtin_shufflevector(ah, bh, %s);\n", low, high)
	}
	b.WriteString(ind + "for (int s = 0; s < nseg; s++) {\n")
	w(ind+"\tif ((uint64_t)(shr[s] + %d) >= %du) continue;\n", i, h)
	// As for the input: lane 0's column may lie before the row.
	w(ind+"\tuintptr_t at = (uintptr_t)((sbase[s] + %d) * 4);\n", i*row)
	b.WriteString(ind + "\tfloat *yp = (float *)((uintptr_t)yo + at);\n")
	if res {
		b.WriteString(ind + "\tconst float *rp = (const float *)((uintptr_t)ro + at);\n")
	}
	for k := range m {
		b.WriteString(ind + "\t{\n")
		w(ind+"\t\trv z = c%d;\n", k)
		if res {
			w(ind+"\t\tz += __builtin_ia32_loadups512_mask(rp + %d, (rv){0}, smask[s][%d]);\n", 16*k, k)
			if ep.ActLast {
				genVecAct(b, ind+"\t\t", "rv", "rvi", "z", ep)
			}
		}
		w(ind+"\t\t__builtin_ia32_storeups512_mask(yp + %d, z, smask[s][%d]);\n", 16*k, k)
		b.WriteString(ind + "\t}\n")
	}
	b.WriteString(ind + "}\n")
}
