package cgen

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// reduceLanes is how many partial results a row reduction keeps (clang
// vectorizes independent lanes; one running value it would not, without
// -ffast-math); reduceBlock how many columns a reduction over a middle
// axis sweeps together.
const (
	reduceLanes = 16
	reduceBlock = 64
)

// reduceRuns views a reduction of shape over axes as [outer, red, inner]:
// dims of size 1 dropped, neighbours of the same kind merged. It is false
// when more than one run of reduced dims remains (kept dims between
// them), which stays on the Go kernel.
func reduceRuns(shape, axes []int64) (outer, red, inner int64, ok bool) {
	isRed := make([]bool, len(shape))
	for _, a := range axes {
		if a < 0 || a >= int64(len(shape)) {
			return 0, 0, 0, false
		}
		isRed[a] = true
	}
	outer, red, inner = 1, 1, 1
	seen, after := false, false // a reduced dim seen; a kept dim after it
	for d, n := range shape {
		if n < 0 {
			return 0, 0, 0, false
		}
		switch {
		case n == 1:
		case isRed[d] && after:
			return 0, 0, 0, false
		case isRed[d]:
			red *= n
			seen = true
		case seen:
			inner *= n
			after = true
		default:
			outer *= n
		}
	}
	return outer, red, inner, true
}

// reduce generates the function of an f32 reduction whose reduced dims
// form one run ([outer, red, inner] after reduceRuns). Sums, means and
// products accumulate in double, as the Go kernel does (reduce.Reduce),
// in another order (lanes), so they agree within rounding; max and min
// are exact, NaN when the slice holds one (the kernel's result too),
// with the sign of a zero maximum of +0 and -0 unspecified. Its range is
// outer rows when inner is 1, else outer times blocks of reduceBlock
// columns.
func reduce(prog *lir.Program, op *lir.Reduce) (function, bool) {
	if op.DType != tensor.F32 || sameBytes(prog, op.X, op.Out) {
		return function{}, false
	}
	o, r, in, ok := reduceRuns(op.Shape, op.Axes)
	if !ok {
		return function{}, false
	}
	n, ok := product([]int64{o, r, in})
	if !ok || n == 0 || n > 1<<40 {
		return function{}, false
	}
	acc, init, fold, final := "double", "0.0", "%s += %s", "(float)%s"
	switch op.Fn {
	case lir.ReduceSum:
	case lir.ReduceMean:
		final = fmt.Sprintf("(float)(%%s / %d.0)", r)
	case lir.ReduceProd:
		init, fold = "1.0", "%s *= %s"
	case lir.ReduceMax:
		acc, init, fold, final = "float", "-rlx__inff()", "%[1]s = %[2]s > %[1]s ? %[2]s : %[1]s", "%s"
	case lir.ReduceMin:
		acc, init, fold, final = "float", "rlx__inff()", "%[1]s = %[2]s < %[1]s ? %[2]s : %[1]s", "%s"
	default:
		return function{}, false
	}
	extreme := acc == "float"
	// step folds value v into accumulator a (and, for max and min, its
	// NaN detector f: the largest magnitude's bits, which a NaN's exceed
	// +Inf's; an integer max, where a flag of v != v OR-ed in became a
	// vector of booleans that clang packed to bytes, and spilled, at
	// x86-64-v3).
	step := func(a, f, v string) string {
		s := fmt.Sprintf(fold, a, v) + ";"
		if extreme {
			s += fmt.Sprintf(" { const uint32_t u_ = rlx__f2u(%s) & 0x7fffffffu; %s = u_ > %s ? u_ : %s; }", v, f, f, f)
		}
		return s
	}
	result := func(a, f string) string {
		s := fmt.Sprintf(final, a)
		if extreme {
			s = fmt.Sprintf("%s > 0x7f800000u ? rlx__nanf() : %s", f, s)
		}
		return s
	}
	conv := "(double)"
	if extreme {
		conv = ""
	}
	var b strings.Builder
	b.WriteString("{\n\tconst float *x = (const float *)args[0];\n\tfloat *y = (float *)args[1];\n")
	var tasks, grain int64
	if in == 1 {
		tasks, grain = o, max(1, tuning.NativeEwGrain/r)
		full, tail := r-r%reduceLanes, r%reduceLanes
		// The lanes as vector types: with the row's length a constant,
		// clang unrolls a loop over an array of lanes completely and then
		// leaves it scalar (a 7x7 global pool's rows of 49 ran at a
		// quarter of long rows' rate; numbers in docs/perf/native.md).
		// The tail is one more vector, its missing lanes the identity,
		// and the lanes fold to one as a tree of vector halves: folding
		// an array of lanes in scalar code cost short rows (a sum over
		// 256 columns) as much as their loads.
		fmt.Fprintf(&b, "\ttypedef float rlx_vf __attribute__((vector_size(%d)));\n", 4*reduceLanes)
		fmt.Fprintf(&b, "\ttypedef int32_t rlx_vi __attribute__((vector_size(%d)));\n", 4*reduceLanes)
		vacc, size := "rlx_vf", 4
		if !extreme {
			fmt.Fprintf(&b, "\ttypedef double rlx_vd __attribute__((vector_size(%d)));\n", 8*reduceLanes)
			vacc, size = "rlx_vd", 8
		}
		for w := reduceLanes / 2; w >= 2; w /= 2 {
			fmt.Fprintf(&b, "\ttypedef %s rlx_a%d __attribute__((vector_size(%d)));\n", acc, w, size*w)
			fmt.Fprintf(&b, "\ttypedef int32_t rlx_i%d __attribute__((vector_size(%d)));\n", w, 4*w)
		}
		b.WriteString("\tfor (int64_t t = lo; t < hi; t++) {\n")
		fmt.Fprintf(&b, "\t\tconst float *xr = x + t * %d;\n", r)
		fmt.Fprintf(&b, "\t\t%s va = (%s){} + %s;\n\t\trlx_vi vf = (rlx_vi){};\n", vacc, vacc, init)
		fold := func(ind, v string) {
			switch op.Fn {
			case lir.ReduceSum, lir.ReduceMean:
				fmt.Fprintf(&b, "%sva += __builtin_convertvector(%s, rlx_vd);\n", ind, v)
			case lir.ReduceProd:
				fmt.Fprintf(&b, "%sva *= __builtin_convertvector(%s, rlx_vd);\n", ind, v)
			default:
				cmp := ">"
				if op.Fn == lir.ReduceMin {
					cmp = "<"
				}
				// vf: step's NaN detector, a lane at a time.
				fmt.Fprintf(&b, "%s{ const rlx_vi m = %s %s va; va = (rlx_vf)((m & (rlx_vi)%s) | (~m & (rlx_vi)va)); vf = __builtin_elementwise_max(vf, (rlx_vi)%s & 0x7fffffff); }\n", ind, v, cmp, v, v)
			}
		}
		if full > 0 {
			fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i += %d) {\n\t\t\trlx_vf v;\n\t\t\t__builtin_memcpy(&v, xr + i, sizeof v);\n", full, reduceLanes)
			fold("\t\t\t", "v")
			b.WriteString("\t\t}\n")
		}
		if tail > 0 {
			fmt.Fprintf(&b, "\t\t{\n\t\t\trlx_vf v = (rlx_vf){} + (float)(%s);\n\t\t\t__builtin_memcpy(&v, xr + %d, %d);\n", init, full, 4*tail)
			fold("\t\t\t", "v")
			b.WriteString("\t\t}\n")
		}
		// The tree: each step folds a vector's upper half onto its lower.
		op2 := map[lir.ReduceFn]string{lir.ReduceSum: "%s + %s", lir.ReduceMean: "%s + %s", lir.ReduceProd: "%s * %s",
			lir.ReduceMax: "__builtin_elementwise_max(%s, %s)", lir.ReduceMin: "__builtin_elementwise_min(%s, %s)"}[op.Fn]

		prev, prevF := "va", "vf"
		for w := reduceLanes / 2; w >= 2; w /= 2 {
			cur, curF := fmt.Sprintf("h%d", w), fmt.Sprintf("g%d", w)
			fmt.Fprintf(&b, "\t\tconst rlx_a%d %s = %s;\n", w, cur, fmt.Sprintf(op2, halfOf(prev, w, 0), halfOf(prev, w, 1)))
			if extreme {
				fmt.Fprintf(&b, "\t\tconst rlx_i%d %s = __builtin_elementwise_max(%s, %s);\n", w, curF, halfOf(prevF, w, 0), halfOf(prevF, w, 1))
			}
			prev, prevF = cur, curF
		}
		fmt.Fprintf(&b, "\t\tconst %s a = %s;\n", acc, fmt.Sprintf(op2, prev+"[0]", prev+"[1]"))
		flag := "0"
		if extreme {
			fmt.Fprintf(&b, "\t\tconst uint32_t f = (uint32_t)(%s[0] > %s[1] ? %s[0] : %s[1]);\n", prevF, prevF, prevF, prevF)
			flag = "f"
		}
		fmt.Fprintf(&b, "\t\ty[t] = %s;\n\t}\n", result("a", flag))
	} else {
		blocks := (in + reduceBlock - 1) / reduceBlock
		tasks, grain = o*blocks, max(1, tuning.NativeEwGrain/(r*min(in, reduceBlock)))
		b.WriteString("\tfor (int64_t t = lo; t < hi; t++) {\n")
		fmt.Fprintf(&b, "\t\tconst int64_t p = t / %d, j0 = (t - p * %d) * %d;\n", blocks, blocks, reduceBlock)
		fmt.Fprintf(&b, "\t\tconst int64_t w = %d - j0 < %d ? %d - j0 : %d;\n", in, reduceBlock, in, reduceBlock)
		fmt.Fprintf(&b, "\t\tconst float *xb = x + p * %d + j0;\n\t\tfloat *yb = y + p * %d + j0;\n", r*in, in)
		fmt.Fprintf(&b, "\t\t%s a[%d];\n\t\tuint32_t f[%d];\n", acc, reduceBlock, reduceBlock)
		fmt.Fprintf(&b, "\t\tfor (int64_t j = 0; j < w; j++) { a[j] = %s; f[j] = 0; }\n", init)
		fmt.Fprintf(&b, "\t\tfor (int64_t i = 0; i < %d; i++) {\n", r)
		fmt.Fprintf(&b, "\t\t\tconst float *xr = xb + i * %d;\n", in)
		fmt.Fprintf(&b, "\t\t\tfor (int64_t j = 0; j < w; j++) { const %s v = %sxr[j]; %s }\n\t\t}\n", acc, conv, step("a[j]", "f[j]", "v"))
		fmt.Fprintf(&b, "\t\tfor (int64_t j = 0; j < w; j++) yb[j] = %s;\n\t}\n", result("a[j]", "f[j]"))
	}
	b.WriteString("}\n")
	return function{
		body: b.String(),
		fn:   lir.NativeFunc{N: tasks, Grain: grain, In: []int64{n * 4}, Out: []int64{o * in * 4}},
		in:   []lir.Buf{op.X},
		out:  []lir.Buf{op.Out},
	}, true
}
