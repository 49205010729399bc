package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// argReduce generates the function of an f32 ArgMax or ArgMin over the
// middle dim of X viewed as [Outer, Axis, Inner], writing int64 indices:
// the runtime kernel's results exactly (reduce.ArgReduce): the first
// index of the extreme, and a NaN counts as the extreme (the first NaN
// wins). Each lane keeps its own best value and index, replaced where a
// value is strictly better or a NaN while the best is not, so within a
// lane the first of equals stays; the lanes then fold, the lowest index
// among those holding a NaN, else among those holding the extreme.
//
// Rows (Inner 1) are one task each, 16 lanes over their elements in
// vector types; other axes sweep blocks of reduceBlock columns, a lane
// per column. Rows of 2^31 or more elements stay on the runtime (the
// lanes hold int32 indices), and so does an empty axis (-1 everywhere).
func argReduce(prog *lir.Program, op *lir.ArgReduce) (function, bool) {
	o, a, in := op.Outer, op.Axis, op.Inner
	n, ok := product([]int64{o, a, in})
	if op.DType != tensor.F32 || !ok || o <= 0 || a <= 0 || in <= 0 || a >= 1<<31 || n > 1<<40 || sameBytes(prog, op.X, op.Out) {
		return function{}, false
	}
	// better is the C test that v replaces best b (both floats).
	cmp := ">"
	if !op.Max {
		cmp = "<"
	}
	better := func(v, b string) string {
		return fmt.Sprintf("(%[1]s %[3]s %[2]s) | ((%[1]s != %[1]s) & (%[2]s == %[2]s))", v, b, cmp)
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("{\n\t/* %s: [%d, %d, %d] */\n", map[bool]string{true: "argmax", false: "argmin"}[op.Max], o, a, in)
	w("\tconst float *x = (const float *)args[0];\n\tint64_t *y = (int64_t *)args[1];\n")
	var tasks, grain int64
	if in == 1 {
		tasks, grain = o, max(1, tuning.NativeEwGrain/a)
		argRows(&b, a, better, op.Max)
	} else {
		blocks := (in + reduceBlock - 1) / reduceBlock
		tasks, grain = o*blocks, max(1, tuning.NativeEwGrain/(a*min(in, reduceBlock)))
		w("\tfor (int64_t t = lo; t < hi; t++) {\n")
		w("\t\tconst int64_t p = t / %d, j0 = (t - p * %d) * %d;\n", blocks, blocks, reduceBlock)
		w("\t\tconst int64_t w = %d - j0 < %d ? %d - j0 : %d;\n", in, reduceBlock, in, reduceBlock)
		w("\t\tconst float *xb = x + p * %d + j0;\n\t\tint64_t *yb = y + p * %d + j0;\n", a*in, in)
		w("\t\tint64_t j = 0;\n")
		// AVX-512: 16 columns at a time with their bests in registers;
		// over arrays of the block's columns clang made the selects
		// masked stores, slow on Zen 4 (x86-64-v4 ran below x86-64-v3),
		// while AVX2 ran the arrays 2-3x faster than the registers.
		const l = reduceLanes
		w("#if defined(__AVX512F__)\n")
		w("\t\ttypedef float rlx_vf __attribute__((vector_size(%d)));\n", 4*l)
		w("\t\ttypedef int32_t rlx_vi __attribute__((vector_size(%d)));\n", 4*l)
		w("\t\tfor (; j + %d <= w; j += %d) {\n", l, l)
		w("\t\t\trlx_vf bv;\n\t\t\t__builtin_memcpy(&bv, xb + j, sizeof bv);\n\t\t\trlx_vi bi = (rlx_vi){};\n")
		w("\t\t\tfor (int32_t k = 1; k < %d; k++) {\n", a)
		w("\t\t\t\trlx_vf v;\n\t\t\t\t__builtin_memcpy(&v, xb + j + (int64_t)k * %d, sizeof v);\n", in)
		w("\t\t\t\tconst rlx_vi t_ = %s;\n", better("v", "bv"))
		w("\t\t\t\tbv = (rlx_vf)((t_ & (rlx_vi)v) | (~t_ & (rlx_vi)bv));\n")
		w("\t\t\t\tbi = (t_ & k) | (~t_ & bi);\n")
		w("\t\t\t}\n")
		w("\t\t\tfor (int l = 0; l < %d; l++) yb[j + l] = bi[l];\n", l)
		w("\t\t}\n")
		w("#endif\n")
		w("\t\tconst int64_t j1 = j;\n")
		w("\t\tfloat bv[%d];\n\t\tint32_t bi[%d];\n", reduceBlock, reduceBlock)
		w("\t\tfor (j = j1; j < w; j++) { bv[j] = xb[j]; bi[j] = 0; }\n")
		w("\t\tfor (int32_t k = 1; k < %d; k++) {\n", a)
		w("\t\t\tconst float *xr = xb + (int64_t)k * %d;\n", in)
		w("\t\t\tfor (j = j1; j < w; j++) {\n")
		w("\t\t\t\tconst float v = xr[j], c = bv[j];\n")
		w("\t\t\t\tconst int t_ = %s;\n", better("v", "c"))
		w("\t\t\t\tbv[j] = t_ ? v : c;\n\t\t\t\tbi[j] = t_ ? k : bi[j];\n")
		w("\t\t\t}\n\t\t}\n")
		w("\t\tfor (j = j1; j < w; j++) yb[j] = bi[j];\n")
		w("\t}\n")
	}
	w("}\n")
	return function{
		body: b.String(),
		fn:   lir.NativeFunc{N: tasks, Grain: grain, In: []int64{n * 4}, Out: []int64{o * in * 8}},
		in:   []lir.Buf{op.X},
		out:  []lir.Buf{op.Out},
	}, true
}

// argRows writes the row case of argReduce: rows of a elements, task r
// being row r, the lanes as vector types folded as a tree of vector
// halves (see softmaxRows for why not arrays of lanes).
func argRows(b *strings.Builder, a int64, better func(v, b string) string, isMax bool) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	const l = reduceLanes
	w("\ttypedef float rlx_vf __attribute__((vector_size(%d)));\n", 4*l)
	w("\ttypedef int32_t rlx_vi __attribute__((vector_size(%d)));\n", 4*l)
	for h := l / 2; h >= 2; h /= 2 {
		w("\ttypedef int32_t rlx_i%d __attribute__((vector_size(%d)));\n", h, 4*h)
		w("\ttypedef float rlx_f%d __attribute__((vector_size(%d)));\n", h, 4*h)
	}
	iota := make([]string, l)
	for i := range iota {
		iota[i] = fmt.Sprint(i)
	}
	// The first vector's lanes start the lanes; where the row is shorter,
	// the missing lanes hold the identity and an index past every real
	// one, so they win nothing.
	ident := "rlx__inff()"
	if isMax {
		ident = "-rlx__inff()"
	}
	first := min(a, l)
	w("\tfor (int64_t r = lo; r < hi; r++) {\n")
	w("\t\tconst float *xr = x + r * %d;\n", a)
	w("\t\trlx_vf bv = (rlx_vf){} + %s;\n", ident)
	w("\t\trlx_vi bi = (rlx_vi){} + 0x7fffffff;\n")
	w("\t\tfor (int i = 0; i < %d; i++) { bv[i] = xr[i]; bi[i] = i; }\n", first)
	w("\t\trlx_vi idx = (rlx_vi){%s};\n", strings.Join(iota, ", "))
	full := a - a%l
	if full > l {
		w("\t\tfor (int64_t i = %d; i < %d; i += %d) {\n", l, full, l)
		w("\t\t\trlx_vf v;\n\t\t\t__builtin_memcpy(&v, xr + i, sizeof v);\n")
		w("\t\t\tidx += %d;\n", l)
		w("\t\t\tconst rlx_vi t_ = %s;\n", better("v", "bv"))
		w("\t\t\tbv = (rlx_vf)((t_ & (rlx_vi)v) | (~t_ & (rlx_vi)bv));\n")
		w("\t\t\tbi = (t_ & idx) | (~t_ & bi);\n")
		w("\t\t}\n")
	}
	if tail := max(full, l); tail < a {
		// The last elements, each onto its lane: the largest indices, so
		// each lane still sees its elements in order.
		w("\t\tfor (int64_t i = %d; i < %d; i++) {\n", tail, a)
		w("\t\t\tconst float v = xr[i], c = bv[i %% %d];\n", l)
		w("\t\t\tif (%s) { bv[i %% %d] = v; bi[i %% %d] = (int32_t)i; }\n", better("v", "c"), l, l)
		w("\t\t}\n")
	}
	// The fold: the lowest index among NaN lanes, else among the lanes
	// holding the extreme.
	ext := "__builtin_elementwise_min(%s, %s)"
	if isMax {
		ext = "__builtin_elementwise_max(%s, %s)"
	}
	w("\t\tconst rlx_vi isn = bv != bv;\n")
	writeTree(b, "\t\t", l, "rlx_i", "int32_t", "anyn", "isn", "nh", "%s | %s")
	w("\t\trlx_vf ev = (rlx_vf)(~isn & (rlx_vi)bv);\n")
	writeTree(b, "\t\t", l, "rlx_f", "float", "m", "ev", "mh", ext)
	w("\t\tconst rlx_vi sel = anyn ? isn : (bv == m) & ~isn;\n")
	w("\t\tconst rlx_vi ci = (sel & bi) | (~sel & ((rlx_vi){} + 0x7fffffff));\n")
	writeTree(b, "\t\t", l, "rlx_i", "int32_t", "best", "ci", "ih", "__builtin_elementwise_min(%s, %s)")
	w("\t\ty[r] = best;\n")
	w("\t}\n")
}
