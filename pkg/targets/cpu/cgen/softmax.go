package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// softmaxBlock is how many columns of a strided softmax (an axis that is
// not the last) one task sweeps together: their running maxima and sums
// stay in registers and each pass over the axis reads rows of that many
// contiguous floats, which clang vectorizes.
const softmaxBlock = 64

// softmaxLanes is how many partial maxima and sums a row softmax keeps:
// one zmm register of floats on x86-64-v4, two ymm on x86-64-v3.
const softmaxLanes = 16

// softmaxSumBlock is how many of its exponentials a lane of a row
// softmax sums in float before it adds them to its double sum: 16 terms
// of at most 1 round to within 16 float32 ulps of their sum at worst,
// about 1e-6 relative, and a few ulps in practice.
const softmaxSumBlock = 16

// softmax generates the function of a softmax or log_softmax over the
// middle dim of f32 X viewed as [Outer, Axis, Inner]: exponentials in
// float with the math header's expf and logf (within a few ulp), their
// sum in double, as the Go kernel sums, of float sums of
// softmaxSumBlock terms. Its range is
// Outer rows when Inner is 1, else Outer times the blocks of
// softmaxBlock columns.
//
// Edge values follow the Go kernel (norm.Softmax): a slice holding a NaN,
// or whose maximum is ±Inf (all -Inf included), gives NaN everywhere;
// -Inf elements of a slice with a finite maximum give 0 (log: -Inf).
// Out may be X itself: every pass reads an element before it writes it.
func softmax(prog *lir.Program, op *lir.Softmax) (function, bool) {
	o, a, in := op.Outer, op.Axis, op.Inner
	n, ok := product([]int64{o, a, in})
	if !ok || o <= 0 || a <= 0 || in <= 0 || n > 1<<40 {
		return function{}, false
	}
	// A partial overlap would make the result depend on the order of
	// writes; the planner never makes one, and in place is fine.
	if op.X != op.Out && sameBytes(prog, op.X, op.Out) {
		return function{}, false
	}
	var b strings.Builder
	b.WriteString("{\n")
	b.WriteString("\tconst float *x = (const float *)args[0];\n")
	b.WriteString("\tfloat *y = (float *)args[1];\n")
	var tasks, grain int64
	if in == 1 {
		tasks, grain = o, max(1, tuning.NativeEwGrain/a)
		softmaxRows(&b, a, op.Log)
	} else {
		blocks := (in + softmaxBlock - 1) / softmaxBlock
		tasks, grain = o*blocks, max(1, tuning.NativeEwGrain/(a*min(in, softmaxBlock)))
		fmt.Fprintf(&b, "\tfor (int64_t t = lo; t < hi; t++) {\n")
		fmt.Fprintf(&b, "\t\tconst int64_t p = t / %d, j0 = (t - p * %d) * %d;\n", blocks, blocks, softmaxBlock)
		fmt.Fprintf(&b, "\t\tconst int64_t w = %d - j0 < %d ? %d - j0 : %d;\n", in, softmaxBlock, in, softmaxBlock)
		fmt.Fprintf(&b, "\t\tconst float *xb = x + p * %d + j0;\n\t\tfloat *yb = y + p * %d + j0;\n", a*in, a*in)
		fmt.Fprintf(&b, "\t\tfloat m[%d], f[%d], sf[%d];\n\t\tdouble s[%d];\n\t\tint32_t nan[%d];\n", softmaxBlock, softmaxBlock, softmaxBlock, softmaxBlock, softmaxBlock)
		b.WriteString("\t\tfor (int64_t j = 0; j < w; j++) { m[j] = -rlx__inff(); s[j] = 0.0; sf[j] = 0.0f; nan[j] = 0; }\n")
		fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) {\n", a)
		fmt.Fprintf(&b, "\t\t\tconst float *xr = xb + i * %d;\n", in)
		b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) {\n\t\t\t\tconst float v = xr[j];\n\t\t\t\tm[j] = v > m[j] ? v : m[j];\n\t\t\t\tnan[j] |= v != v;\n\t\t\t}\n\t\t}\n")
		fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) {\n", a)
		fmt.Fprintf(&b, "\t\t\tconst float *xr = xb + i * %d;\n\t\t\tfloat *yr = yb + i * %d;\n", in, in)
		// Each column sums softmaxSumBlock rows in float, then adds them
		// to its double (see softmaxRows).
		fold := fmt.Sprintf("\t\t\tif (i %% %d == %d || i == %d) for (int64_t j = 0; j < w; j++) { s[j] += sf[j]; sf[j] = 0.0f; }\n", softmaxSumBlock, softmaxSumBlock-1, a-1)
		if op.Log {
			b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) sf[j] += rlx_expf(xr[j] - m[j]);\n" + fold + "\t\t}\n")
			b.WriteString("\t\tfor (int64_t j = 0; j < w; j++) f[j] = nan[j] || rlx__absf(m[j]) == rlx__inff() ? rlx__nanf() : m[j] + rlx_logf((float)s[j]);\n")
			fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) {\n", a)
			fmt.Fprintf(&b, "\t\t\tconst float *xr = xb + i * %d;\n\t\t\tfloat *yr = yb + i * %d;\n", in, in)
			b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) yr[j] = xr[j] - f[j];\n\t\t}\n")
		} else {
			b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) {\n\t\t\t\tconst float e = rlx_expf(xr[j] - m[j]);\n\t\t\t\tyr[j] = e;\n\t\t\t\tsf[j] += e;\n\t\t\t}\n" + fold + "\t\t}\n")
			b.WriteString("\t\tfor (int64_t j = 0; j < w; j++) f[j] = nan[j] || rlx__absf(m[j]) == rlx__inff() ? rlx__nanf() : (float)(1.0 / s[j]);\n")
			fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) {\n", a)
			fmt.Fprintf(&b, "\t\t\tfloat *yr = yb + i * %d;\n", in)
			b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) yr[j] *= f[j];\n\t\t}\n")
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return function{
		body: b.String(),
		fn:   lir.NativeFunc{N: tasks, Grain: grain, In: []int64{n * 4}, Out: []int64{n * 4}},
		in:   []lir.Buf{op.X},
		out:  []lir.Buf{op.Out},
	}, true
}

// softmaxRows writes the body of a row softmax (Inner 1) over rows of a
// elements, task r being row r. The lanes are vector types and fold as a
// tree of vector halves, as the row reductions' do: written as arrays of
// lanes over a row of constant length, clang unrolled a row of 128
// completely and left most of it scalar (docs/perf/native.md).
func softmaxRows(b *strings.Builder, a int64, log bool) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	const l = softmaxLanes
	full, tail := a-a%l, a%l
	w("\ttypedef float rlx_vf __attribute__((vector_size(%d)));\n", 4*l)
	w("\ttypedef int32_t rlx_vi __attribute__((vector_size(%d)));\n", 4*l)
	w("\ttypedef double rlx_vd __attribute__((vector_size(%d)));\n", 8*l)
	for h := l / 2; h >= 2; h /= 2 {
		w("\ttypedef float rlx_f%d __attribute__((vector_size(%d)));\n", h, 4*h)
		w("\ttypedef int32_t rlx_i%d __attribute__((vector_size(%d)));\n", h, 4*h)
		w("\ttypedef double rlx_d%d __attribute__((vector_size(%d)));\n", h, 8*h)
	}
	w("\tfor (int64_t r = lo; r < hi; r++) {\n")
	w("\t\tconst float *xr = x + r * %d;\n\t\tfloat *yr = y + r * %d;\n", a, a)
	w("\t\trlx_vf mv = (rlx_vf){} - rlx__inff();\n\t\trlx_vi nv = (rlx_vi){};\n")
	step := "{ const rlx_vi g = v > mv; mv = (rlx_vf)((g & (rlx_vi)v) | (~g & (rlx_vi)mv)); nv |= v != v; }"
	if full > 0 {
		w("\t\tfor (int64_t i = 0; i < %d; i += %d) {\n\t\t\trlx_vf v;\n\t\t\t__builtin_memcpy(&v, xr + i, sizeof v);\n\t\t\t%s\n\t\t}\n", full, l, step)
	}
	if tail > 0 {
		w("\t\t{\n\t\t\trlx_vf v = (rlx_vf){} - rlx__inff();\n\t\t\t__builtin_memcpy(&v, xr + %d, %d);\n\t\t\t%s\n\t\t}\n", full, 4*tail, step)
	}
	// mv holds no NaN (v > mv is false for one), so max is exact here.
	writeTree(b, "\t\t", l, "rlx_f", "float", "m", "mv", "mh", "__builtin_elementwise_max(%s, %s)")
	writeTree(b, "\t\t", l, "rlx_i", "int32_t", "nan", "nv", "nh", "%s | %s")
	w("\t\tif (nan || rlx__absf(m) == rlx__inff()) {\n")
	w("\t\t\tfor (int64_t i = 0; i < %d; i++) yr[i] = rlx__nanf();\n\t\t\tcontinue;\n\t\t}\n", a)
	// The exponentials and their sums in an array of lanes, which clang
	// vectorizes (an exponential loop apart from the sums, over a chunk
	// the sums then read, it left scalar), one block of lanes a step:
	// unrolled over a whole row of constant length, it went scalar.
	// Each lane sums softmaxSumBlock of its exponentials in float, then
	// adds that to its double: summed in double throughout, the loop ran
	// half as fast at x86-64-v3 (the conversions) and 1.6x slower at v4.
	store := "yr[i + l] = e;"
	if log {
		store = ""
	}
	w("\t\tfloat sl[%d] __attribute__((aligned(64)));\n", l)
	w("\t\tdouble sd[%d] __attribute__((aligned(64)));\n", l)
	w("\t\tfor (int l = 0; l < %d; l++) { sl[l] = 0.0f; sd[l] = 0.0; }\n", l)
	if full > 0 {
		const blk = softmaxSumBlock * l
		w("\t\tfor (int64_t i0 = 0; i0 < %d; i0 += %d) {\n", full, blk)
		w("\t\t\tconst int64_t i1 = i0 + %d < %d ? i0 + %d : %d;\n", blk, full, blk, full)
		w("\t\t\t#pragma clang loop unroll(disable)\n")
		w("\t\t\tfor (int64_t i = i0; i < i1; i += %d)\n", l)
		w("\t\t\t\tfor (int l = 0; l < %d; l++) {\n\t\t\t\t\tconst float e = rlx_expf(xr[i + l] - m);\n\t\t\t\t\t%s\n\t\t\t\t\tsl[l] += e;\n\t\t\t\t}\n", l, store)
		w("\t\t\tfor (int l = 0; l < %d; l++) { sd[l] += sl[l]; sl[l] = 0.0f; }\n", l)
		w("\t\t}\n")
	}
	if tail > 0 {
		w("\t\tfor (int64_t i = %d; i < %d; i++) {\n\t\t\tconst float e = rlx_expf(xr[i] - m);\n\t\t\t%s\n\t\t\tsl[i - %d] += e;\n\t\t}\n", full, a, strings.ReplaceAll(store, "i + l", "i"), full)
		w("\t\tfor (int l = 0; l < %d; l++) sd[l] += sl[l];\n", l)
	}
	w("\t\trlx_vd sv;\n\t\t__builtin_memcpy(&sv, sd, sizeof sv);\n")
	writeTree(b, "\t\t", l, "rlx_d", "double", "s", "sv", "sh", "%s + %s")
	if log {
		w("\t\tconst float ls = m + rlx_logf((float)s);\n")
		w("\t\tfor (int64_t i = 0; i < %d; i++) yr[i] = xr[i] - ls;\n", a)
	} else {
		w("\t\tconst float inv = (float)(1.0 / s);\n")
		w("\t\tfor (int64_t i = 0; i < %d; i++) yr[i] *= inv;\n", a)
	}
	w("\t}\n")
}
