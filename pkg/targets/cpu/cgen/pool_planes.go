package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// poolPlaneLanes is the width of the plane path's vectors (one zmm on
// x86-64-v4; clang splits it for narrower levels).
const poolPlaneLanes = 16

// poolPlanes reports whether a max pool takes the plane path
// (maxPoolPlanes): stride 1, no dilation, an output the padded input's
// size less the window (floor mode; ceil mode's extra windows start in
// the end padding and need pad rows of their own) and a padded plane of
// at most tuning.PoolPlaneMaxCells.
func poolPlanes(op *lir.Pool2D, sh, sw, dh, dw int64) bool {
	g := op.Geom
	hp, wp := g.H+g.PadT+g.PadB, g.W+g.PadL+g.PadR
	return op.Max && sh == 1 && sw == 1 && dh == 1 && dw == 1 && g.KH >= 1 && g.KW >= 1 &&
		g.OH == hp-g.KH+1 && g.OW == wp-g.KW+1 && g.OH > 0 && g.OW > 0 &&
		hp*wp <= tuning.PoolPlaneMaxCells
}

// maxPoolPlanes generates a stride-1 max pool one plane at a time; its
// range is the N·C planes. Each plane is copied into scratch padded with
// -Inf, which lets every pass run over the plane's flat index in full
// vectors whatever its width, with no border code: a fold over each
// row's KW columns, then, in place, over KH of those row results. That
// is KH + KW - 2 folds an output where the row kernel folds KH·KW - 1
// (a 5x5 window: 8 against 24), and on a narrow plane (a 10x10 one)
// every lane is used.
//
// The folds are the kernel's (reduce.MaxPool2D): take a cell when it is
// greater or NaN. Over a window in row-major order that fold gives the
// last NaN if there is one, else the first of the greatest values (-0
// and +0 are equal); folding each row, then the rows in order, gives the
// same cell, so the results are the kernel's bit for bit. -Inf padding
// changes no fold (it is never greater, nor NaN), as the kernel's
// skipping the cells outside the input does not.
func maxPoolPlanes(op *lir.Pool2D, inElems int64) function {
	g := op.Geom
	const l = poolPlaneLanes
	hp, wp := g.H+g.PadT+g.PadB, g.W+g.PadL+g.PadR
	up := func(n int64) int64 { return (n + l - 1) / l * l }
	nh := up(hp * wp)   // the row folds computed: every padded row
	nv := up(g.OH * wp) // the window folds computed: the output rows
	xsLen := nh + up(g.KW-1)
	hsLen := nh + l // the window folds' last vectors read up to l-1 past nh
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	// copyIn copies plane p of x into the rows of xs[k], copyOut the
	// results in hs[k] to plane p of y.
	copyIn := func(indent, p, k string) {
		w("%sfor (int64_t r = 0; r < %d; r++) {\n", indent, g.H)
		w("%s\tconst float *s = x + (%s) * %d + r * %d;\n%s\tfloat *d = xs[%s] + (r + %d) * %d + %d;\n", indent, p, g.H*g.W, g.W, indent, k, g.PadT, wp, g.PadL)
		rowCopy(&b, indent+"\t", g.W)
		w("%s}\n", indent)
	}
	copyOut := func(indent, p, k string) {
		w("%sfor (int64_t r = 0; r < %d; r++) {\n", indent, g.OH)
		w("%s\tconst float *s = hs[%s] + r * %d;\n%s\tfloat *d = y + (%s) * %d + r * %d;\n", indent, k, wp, indent, p, g.OH*g.OW, g.OW)
		rowCopy(&b, indent+"\t", g.OW)
		w("%s}\n", indent)
	}
	w("{\n")
	w("\ttypedef float vf __attribute__((vector_size(%d), aligned(4), may_alias));\n", 4*l)
	w("\ttypedef int32_t vi __attribute__((vector_size(%d), aligned(4), may_alias));\n", 4*l)
	w("\tconst float *restrict x = (const float *)args[0];\n")
	w("\tfloat *restrict y = (float *)args[1];\n")
	w("\t// xs: planes in %dx%d with -Inf around them; hs: their row folds,\n", hp, wp)
	w("\t// then (in place) their window folds. Two of each: plane p+1 is\n")
	w("\t// copied in and plane p-1 out while plane p is folded, so that no\n")
	w("\t// load waits for the stores just before it (a vector load over\n")
	w("\t// several recent stores is not forwarded from them).\n")
	w("\tfloat xs[2][%d] __attribute__((aligned(64))), hs[2][%d] __attribute__((aligned(64)));\n", xsLen, hsLen)
	w("\tfor (int64_t i = 0; i < %d; i++) xs[0][i] = xs[1][i] = -__builtin_inff();\n", xsLen)
	w("\tfor (int64_t i = %d; i < %d; i++) hs[0][i] = hs[1][i] = -__builtin_inff();\n", nh, hsLen)
	copyIn("\t", "lo", "lo & 1")
	w("\tfor (int64_t p = lo; p < hi; p++) {\n")
	w("\t\tconst float *xp = x + p * %d;\n", g.H*g.W)
	w("\t\tconst float *restrict xb = xs[p & 1];\n\t\tfloat *restrict hb = hs[p & 1];\n")
	w("\t\tif (p + 1 < hi) {\n")
	copyIn("\t\t\t", "p + 1", "(p + 1) & 1")
	w("\t\t}\n\t\tif (p > lo) {\n")
	copyOut("\t\t\t", "p - 1", "(p - 1) & 1")
	w("\t\t}\n")
	// NaN decides the fold: without one in the plane, taking a cell
	// when it is greater is the kernel's fold and one max instruction
	// (-Inf padding is no NaN); with one, the exact fold also takes a
	// NaN cell (two compares a cell).
	w("\t\tvi nn = {0};\n")
	n := g.H * g.W
	full := n / l * l
	if full > 0 {
		w("\t\tfor (int64_t i = 0; i < %d; i += %d) { const vf v = *(const vf *)(xp + i); nn |= v != v; }\n", full, l)
	}
	if full < n {
		w("\t\tfor (int64_t i = %d; i < %d; i++) nn[0] |= xp[i] != xp[i];\n", full, n)
	}
	w("\t\tint nan = 0;\n\t\tfor (int k = 0; k < %d; k++) nan |= nn[k];\n", l)
	fast := "m = t > a; a = (vf)(((vi)t & m) | ((vi)a & ~m));"
	exact := "m = (t > a) | (t != t); a = (vf)(((vi)t & m) | ((vi)a & ~m));"
	w("\t\tif (!nan) {\n")
	maxPoolPasses(&b, fast, nh, nv, g.KW, g.KH, wp)
	w("\t\t} else {\n")
	maxPoolPasses(&b, exact, nh, nv, g.KW, g.KH, wp)
	w("\t\t}\n\t}\n")
	copyOut("\t", "hi - 1", "(hi - 1) & 1")
	w("}\n")
	planes := g.N * g.C
	cells := g.OH * g.OW * (g.KH + g.KW)
	return function{
		body: b.String(),
		fn: lir.NativeFunc{N: planes, Grain: max(1, (tuning.NativePoolGrain+cells-1)/cells),
			In: []int64{inElems * 4}, Out: []int64{planes * g.OH * g.OW * 4}},
		in:  []lir.Buf{op.X},
		out: []lir.Buf{op.Out},
	}
}

// maxPoolPasses writes the plane's two folds with the fold statement
// given: each padded row's KW columns into hs, then KH of those rows in
// place.
func maxPoolPasses(b *strings.Builder, fold string, nh, nv, kw, kh, wp int64) {
	const l = poolPlaneLanes
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("\t\t\tfor (int64_t i = 0; i < %d; i += %d) {\n", nh, l)
	w("\t\t\t\tvf a = *(const vf *)(xb + i), t;\n\t\t\t\tvi m;\n\t\t\t\t(void)t;\n\t\t\t\t(void)m;\n")
	for k := int64(1); k < kw; k++ {
		w("\t\t\t\tt = *(const vf *)(xb + i + %d); %s\n", k, fold)
	}
	w("\t\t\t\t*(vf *)(hb + i) = a;\n\t\t\t}\n")
	// In place: vector i reads rows at or after its own, and stores only
	// after its loads.
	w("\t\t\tfor (int64_t i = 0; i < %d; i += %d) {\n", nv, l)
	w("\t\t\t\tvf a = *(const vf *)(hb + i), t;\n\t\t\t\tvi m;\n\t\t\t\t(void)t;\n\t\t\t\t(void)m;\n")
	for k := int64(1); k < kh; k++ {
		w("\t\t\t\tt = *(const vf *)(hb + i + %d); %s\n", k*wp, fold)
	}
	w("\t\t\t\t*(vf *)(hb + i) = a;\n\t\t\t}\n")
}

// rowCopy writes statements copying n floats from s to d (rows that do
// not overlap) as vector loads and stores of 16, 8 or 4 lanes, the last
// one ending at n (overlapping the one before, which writes the same
// values), and scalars under 4. Written out, not a loop clang
// vectorizes: over a plane's rows at constant strides it made the
// copies 16-lane scatters (slow on Zen 4 and others).
func rowCopy(b *strings.Builder, indent string, n int64) {
	for _, l := range []int64{16, 8, 4} {
		if n < l {
			continue
		}
		fmt.Fprintf(b, "%stypedef float vc%d __attribute__((vector_size(%d), aligned(4), may_alias));\n", indent, l, 4*l)
		for o := int64(0); o < n; o += l {
			o = min(o, n-l)
			fmt.Fprintf(b, "%s*(vc%d *)(d + %d) = *(const vc%d *)(s + %d);\n", indent, l, o, l, o)
		}
		return
	}
	for o := range n {
		fmt.Fprintf(b, "%sd[%d] = s[%d];\n", indent, o, o)
	}
}
