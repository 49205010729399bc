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

// softmax generates the function of a softmax or log_softmax over the
// middle dim of f32 X viewed as [Outer, Axis, Inner]: exponentials in
// float with the math header's expf and logf (within a few ulp), their
// sum in double, as the Go kernel sums. Its range is
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
		fmt.Fprintf(&b, "\tfor (int64_t r = lo; r < hi; r++) {\n")
		fmt.Fprintf(&b, "\t\tconst float *xr = x + r * %d;\n\t\tfloat *yr = y + r * %d;\n", a, a)
		// Lanes of independent partial maxima and sums (no -ffast-math:
		// clang vectorizes these, not a reduction into one float).
		fmt.Fprintf(&b, "\t\tfloat mv[%d];\n\t\tdouble sv[%d];\n\t\tint32_t nv[%d];\n", softmaxLanes, softmaxLanes, softmaxLanes)
		fmt.Fprintf(&b, "\t\tfor (int l = 0; l < %d; l++) { mv[l] = -rlx__inff(); sv[l] = 0.0; nv[l] = 0; }\n", softmaxLanes)
		fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i += %d)\n", a-a%softmaxLanes, softmaxLanes)
		fmt.Fprintf(&b, "\t\t\tfor (int l = 0; l < %d; l++) {\n\t\t\t\tconst float v = xr[i + l];\n\t\t\t\tmv[l] = v > mv[l] ? v : mv[l];\n\t\t\t\tnv[l] |= v != v;\n\t\t\t}\n", softmaxLanes)
		fmt.Fprintf(&b, "\t\tfor (int64_t i = %d; i < %d; i++) {\n\t\t\tconst float v = xr[i];\n\t\t\tmv[0] = v > mv[0] ? v : mv[0];\n\t\t\tnv[0] |= v != v;\n\t\t}\n", a-a%softmaxLanes, a)
		b.WriteString("\t\tfloat m = -rlx__inff();\n\t\tint32_t nan = 0;\n")
		fmt.Fprintf(&b, "\t\tfor (int l = 0; l < %d; l++) { m = mv[l] > m ? mv[l] : m; nan |= nv[l]; }\n", softmaxLanes)
		b.WriteString("\t\tif (nan || rlx__absf(m) == rlx__inff()) {\n")
		fmt.Fprintf(&b, "\t\t\tfor (int64_t i = 0; i < %d; i++) yr[i] = rlx__nanf();\n\t\t\tcontinue;\n\t\t}\n", a)
		store := "yr[i + l] = e;"
		if op.Log {
			store = ""
		}
		fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i += %d)\n", a-a%softmaxLanes, softmaxLanes)
		fmt.Fprintf(&b, "\t\t\tfor (int l = 0; l < %d; l++) {\n\t\t\t\tconst float e = rlx_expf(xr[i + l] - m);\n\t\t\t\t%s\n\t\t\t\tsv[l] += e;\n\t\t\t}\n", softmaxLanes, store)
		fmt.Fprintf(&b, "\t\tfor (int64_t i = %d; i < %d; i++) {\n\t\t\tconst float e = rlx_expf(xr[i] - m);\n\t\t\t%s\n\t\t\tsv[0] += e;\n\t\t}\n", a-a%softmaxLanes, a, strings.ReplaceAll(store, "i + l", "i"))
		b.WriteString("\t\tdouble s = 0.0;\n")
		fmt.Fprintf(&b, "\t\tfor (int l = 0; l < %d; l++) s += sv[l];\n", softmaxLanes)
		if op.Log {
			b.WriteString("\t\tconst float ls = m + rlx_logf((float)s);\n")
			fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) yr[i] = xr[i] - ls;\n", a)
		} else {
			b.WriteString("\t\tconst float inv = (float)(1.0 / s);\n")
			fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) yr[i] *= inv;\n", a)
		}
		b.WriteString("\t}\n")
	} else {
		blocks := (in + softmaxBlock - 1) / softmaxBlock
		tasks, grain = o*blocks, max(1, tuning.NativeEwGrain/(a*min(in, softmaxBlock)))
		fmt.Fprintf(&b, "\tfor (int64_t t = lo; t < hi; t++) {\n")
		fmt.Fprintf(&b, "\t\tconst int64_t p = t / %d, j0 = (t - p * %d) * %d;\n", blocks, blocks, softmaxBlock)
		fmt.Fprintf(&b, "\t\tconst int64_t w = %d - j0 < %d ? %d - j0 : %d;\n", in, softmaxBlock, in, softmaxBlock)
		fmt.Fprintf(&b, "\t\tconst float *xb = x + p * %d + j0;\n\t\tfloat *yb = y + p * %d + j0;\n", a*in, a*in)
		fmt.Fprintf(&b, "\t\tfloat m[%d], f[%d];\n\t\tdouble s[%d];\n\t\tint32_t nan[%d];\n", softmaxBlock, softmaxBlock, softmaxBlock, softmaxBlock)
		b.WriteString("\t\tfor (int64_t j = 0; j < w; j++) { m[j] = -rlx__inff(); s[j] = 0.0; nan[j] = 0; }\n")
		fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) {\n", a)
		fmt.Fprintf(&b, "\t\t\tconst float *xr = xb + i * %d;\n", in)
		b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) {\n\t\t\t\tconst float v = xr[j];\n\t\t\t\tm[j] = v > m[j] ? v : m[j];\n\t\t\t\tnan[j] |= v != v;\n\t\t\t}\n\t\t}\n")
		fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) {\n", a)
		fmt.Fprintf(&b, "\t\t\tconst float *xr = xb + i * %d;\n\t\t\tfloat *yr = yb + i * %d;\n", in, in)
		if op.Log {
			b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) s[j] += rlx_expf(xr[j] - m[j]);\n\t\t}\n")
			b.WriteString("\t\tfor (int64_t j = 0; j < w; j++) f[j] = nan[j] || rlx__absf(m[j]) == rlx__inff() ? rlx__nanf() : m[j] + rlx_logf((float)s[j]);\n")
			fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) {\n", a)
			fmt.Fprintf(&b, "\t\t\tconst float *xr = xb + i * %d;\n\t\t\tfloat *yr = yb + i * %d;\n", in, in)
			b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) yr[j] = xr[j] - f[j];\n\t\t}\n")
		} else {
			b.WriteString("\t\t\tfor (int64_t j = 0; j < w; j++) {\n\t\t\t\tconst float e = rlx_expf(xr[j] - m[j]);\n\t\t\t\tyr[j] = e;\n\t\t\t\ts[j] += e;\n\t\t\t}\n\t\t}\n")
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
