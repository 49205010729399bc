package cgen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// poolUnroll bounds the window cells an output's loop body folds one by
// one (each a load in the body); a larger window accumulates in the
// output row one kernel row at a time.
const poolUnroll = 32

// poolClasses is how many classes of rows (and of columns) get code of
// their own (their kernel rows or columns constants); the outputs of the
// rarer ones (large paddings or kernels) share code that checks every
// cell. Five cover a 5x5 window with padding 2 at stride 1.
const poolClasses = 5

// poolLanes is the width of the explicit vectors of the interior loop of
// strides 1 and 2: one zmm register on x86-64-v4, two ymm on x86-64-v3,
// four q registers on arm64 (clang splits the vector type to the level's
// registers). A run of interior columns narrower than that (a 14x14 or
// 7x7 plane's: GoogLeNet's inception pools) takes the widest of 8 and 4
// lanes that fits it: scalar, it ran at a third of ONNX Runtime's speed.
const poolLanes = 16

// vecLanes is the width of the vectors over a run of n interior columns:
// poolLanes, 8 or 4, the widest no wider than the run (0: none fits).
func vecLanes(n int64) int64 {
	for _, l := range []int64{poolLanes, 8, 4} {
		if n >= l {
			return l
		}
	}
	return 0
}

// vecTypes are the C vector types of l lanes of floats and of int32.
func vecTypes(l int64) (vf, vi string) {
	if l == poolLanes {
		return "vf", "vi"
	}
	return fmt.Sprintf("vf%d", l), fmt.Sprintf("vi%d", l)
}

// pool2d generates the function of a 2-D max or average pool over NCHW
// f32; its range is the N·C·OH output rows.
//
// Each output folds its window in the runtime kernel's order (kernel
// rows, then columns within a row), skipping the cells outside the
// input, so its results are the kernel's bit for bit (reduce.MaxPool2D,
// reduce.AvgPool2D): max starts from -Inf and takes a cell when it is
// greater or NaN (the last NaN wins, and the first of equal values, so
// -0 and +0 keep their order); average starts from +0, adds in order and
// divides by the float32 product of the rows' and columns' counts of
// cells (padding included or not, as the kernel counts them).
//
// Which cells of a window lie inside the input depends on its output
// row's and column's classes, known at build time: the rows (and
// columns) whose windows lie wholly inside form one class, and each
// distance from an edge another. Every row class gets its own code with
// its kernel rows as constants; in it, the interior columns are one loop
// along the row without checks (explicit vectors for strides 1 and 2,
// else a loop clang vectorizes), and each class of border columns a loop
// of its own constant cells. The vectorized max takes the greater of a
// cell and the running value, which is the kernel's fold when no cell is
// NaN; it also folds every cell times zero into a sum that turns NaN
// when any cell is NaN or infinite, and a row where that happens is
// computed again with the kernel's own comparison.
func pool2d(prog *lir.Program, op *lir.Pool2D, opts Options) (function, bool) {
	g := op.Geom
	if min(g.N, g.C, g.H, g.W, g.OH, g.OW, g.PadT, g.PadL, g.PadB, g.PadR, g.StrideH, g.StrideW, g.DilH, g.DilW) < 0 || g.KH <= 0 || g.KW <= 0 {
		return function{}, false
	}
	rows, ok := product([]int64{g.N, g.C, g.OH})
	outElems, ok1 := product([]int64{rows, g.OW})
	inElems, ok2 := product([]int64{g.N, g.C, g.H, g.W})
	cells, ok3 := product([]int64{g.OW, g.KH, g.KW})
	// Sizes that keep every index the code forms far from overflow, and
	// the build's walk over each dimension's outputs and cells short.
	const most = 1 << 40
	if !ok || !ok1 || !ok2 || !ok3 || outElems == 0 || outElems > most || inElems > most || cells > most ||
		max(g.KH, g.KW, g.StrideH, g.StrideW, g.DilH, g.DilW, g.PadT, g.PadL, g.PadB, g.PadR) > 1<<20 ||
		g.OH*g.KH > 1<<24 || g.OW*g.KW > 1<<24 {
		return function{}, false
	}
	// Output and input never share bytes in a planned program; if they
	// did, the kernel's result would depend on its order of writes.
	if sameBytes(prog, op.X, op.Out) {
		return function{}, false
	}
	p := &poolGen{g: g, sh: max(g.StrideH, 1), sw: max(g.StrideW, 1), dh: max(g.DilH, 1), dw: max(g.DilW, 1),
		max: op.Max, includePad: op.CountIncludePad}
	if poolPlanes(op, p.sh, p.sw, p.dh, p.dw) {
		return maxPoolPlanes(op, inElems), true
	}
	rowClasses := p.classes(g.OH, p.sh, g.KH, p.dh, g.PadT, g.PadB, g.H)
	colClasses := p.classes(g.OW, p.sw, g.KW, p.dw, g.PadL, g.PadR, g.W)

	// The bytes read: up to the largest row and column of the last
	// plane any window reads (every window's cells are its rows' times
	// its columns', so that cell is read).
	maxIh, maxIw := int64(-1), int64(-1)
	for _, c := range rowClasses {
		if c.klo < c.khi {
			for _, s := range c.outs {
				maxIh = max(maxIh, (s.hi-1)*p.sh-g.PadT+(c.khi-1)*p.dh)
			}
		}
	}
	for _, c := range colClasses {
		if c.klo < c.khi {
			for _, s := range c.outs {
				maxIw = max(maxIw, (s.hi-1)*p.sw-g.PadL+(c.khi-1)*p.dw)
			}
		}
	}
	reads := int64(0)
	if maxIh >= 0 && maxIw >= 0 {
		reads = ((g.N*g.C-1)*g.H*g.W + maxIh*g.W + maxIw + 1) * 4
	}

	b := &p.b
	b.WriteString("{\n")
	for _, l := range []int64{poolLanes, 8, 4} {
		vf, vi := vecTypes(l)
		fmt.Fprintf(b, "\ttypedef float %s __attribute__((vector_size(%d), aligned(4), may_alias));\n", vf, 4*l)
		fmt.Fprintf(b, "\ttypedef int32_t %s __attribute__((vector_size(%d), aligned(4), may_alias));\n", vi, 4*l)
	}
	b.WriteString("\tconst float *restrict x = (const float *)args[0];\n")
	b.WriteString("\tfloat *restrict y = (float *)args[1];\n")
	b.WriteString("\tfor (int64_t r = lo; r < hi; r++) {\n")
	fmt.Fprintf(b, "\t\tconst int64_t p = r / %d, oh = r - p * %d;\n", g.OH, g.OH)
	fmt.Fprintf(b, "\t\tconst float *xp = x + p * %d;\n", g.H*g.W)
	fmt.Fprintf(b, "\t\tfloat *yr = y + r * %d;\n", g.OW)
	fmt.Fprintf(b, "\t\tconst int64_t ih0 = oh * %d%s;\n", p.sh, plus(-g.PadT))
	b.WriteString("\t\t(void)xp;\n\t\t(void)ih0;\n")
	// The most common classes first, each with code of its own; rows of
	// classes past poolClasses share code that checks every cell.
	bySize := func(a, b poolClass) int { return int(b.size() - a.size()) }
	slices.SortStableFunc(rowClasses, bySize)
	slices.SortStableFunc(colClasses, bySize)
	own := rowClasses[:min(len(rowClasses), poolClasses)]
	for i, rc := range own {
		switch {
		case len(own) == len(rowClasses) && len(own) == 1:
			b.WriteString("\t\t{\n")
		case i == 0:
			fmt.Fprintf(b, "\t\tif (%s) {\n", rc.cond("oh"))
		case i < len(rowClasses)-1:
			fmt.Fprintf(b, "\t\t} else if (%s) {\n", rc.cond("oh"))
		default:
			b.WriteString("\t\t} else {\n")
		}
		// rb: the index in the plane of the first cell of the first
		// valid kernel row of output column 0 (negative where the window
		// starts left of the input).
		fmt.Fprintf(b, "\t\t\tconst int64_t rb = (oh * %d%s) * %d%s;\n", p.sh, plus(rc.klo*p.dh-g.PadT), g.W, plus(-g.PadL))
		b.WriteString("\t\t\t(void)rb;\n")
		for j, cc := range colClasses {
			switch {
			case cc.klo == 0 && cc.khi == g.KW:
				p.interior(rc, cc)
			case j < poolClasses:
				p.border(rc, cc)
			default:
				p.checked(cc)
			}
		}
	}
	if len(own) < len(rowClasses) {
		b.WriteString("\t\t} else {\n")
		for _, cc := range colClasses {
			p.checked(cc)
		}
	}
	b.WriteString("\t\t}\n\t}\n}\n")

	f := function{
		body: b.String(),
		fn: lir.NativeFunc{N: rows, Grain: max(1, (tuning.NativePoolGrain+cells-1)/cells),
			In: []int64{reads}, Out: []int64{outElems * 4}},
		in:  []lir.Buf{op.X},
		out: []lir.Buf{op.Out},
	}
	return f, true
}

// poolGen writes one pool function's body.
type poolGen struct {
	b              strings.Builder
	g              lir.PoolGeom
	sh, sw, dh, dw int64
	max            bool
	includePad     bool
}

// span is a range [lo, hi) of outputs.
type span struct{ lo, hi int64 }

// poolClass is a class of output rows (or columns): those whose windows
// have the kernel rows [klo, khi) inside the input and, for an average,
// count the same cells.
type poolClass struct {
	klo, khi int64
	count    int64
	outs     []span
}

func (c poolClass) size() int64 {
	n := int64(0)
	for _, s := range c.outs {
		n += s.hi - s.lo
	}
	return n
}

// cond is the C condition that index v is one of the class's outputs.
func (c poolClass) cond(v string) string {
	var terms []string
	for _, s := range c.outs {
		if s.hi == s.lo+1 {
			terms = append(terms, fmt.Sprintf("%s == %d", v, s.lo))
		} else {
			terms = append(terms, fmt.Sprintf("(%s >= %d && %s < %d)", v, s.lo, v, s.hi))
		}
	}
	if len(terms) == 1 {
		return strings.TrimSuffix(strings.TrimPrefix(terms[0], "("), ")")
	}
	return strings.Join(terms, " || ")
}

// classes splits one dimension's n outputs into classes, in the order
// of their first output: output o's window has cells at o·stride - pad +
// i·dil for i < k; those in [0, size) are inside the input, and the
// kernel counts those in [0, size), or in [-pad, size + padEnd) with the
// padding included.
func (p *poolGen) classes(n, stride, k, dil, pad, padEnd, size int64) []poolClass {
	lo, hi := int64(0), size
	if p.includePad {
		lo, hi = -pad, size+padEnd
	}
	var cs []poolClass
	index := map[[3]int64]int{}
	for o := range n {
		first := o*stride - pad
		klo, khi := k, int64(0)
		count := int64(0)
		for i := range k {
			pos := first + i*dil
			if pos >= 0 && pos < size {
				klo, khi = min(klo, i), max(khi, i+1)
			}
			if !p.max && pos >= lo && pos < hi {
				count++
			}
		}
		if klo >= khi {
			klo, khi = 0, 0
		}
		key := [3]int64{klo, khi, count}
		ci, ok := index[key]
		if !ok {
			ci = len(cs)
			index[key] = ci
			cs = append(cs, poolClass{klo: klo, khi: khi, count: count})
		}
		c := &cs[ci]
		if m := len(c.outs); m > 0 && c.outs[m-1].hi == o {
			c.outs[m-1].hi++
		} else {
			c.outs = append(c.outs, span{o, o + 1})
		}
	}
	return cs
}

// divisor is an average's divisor for a row class and a column class:
// the float32 product of their counts, as the kernel computes it.
func (p *poolGen) divisor(rc, cc poolClass) string {
	return literal(float64(float32(rc.count)*float32(cc.count)), computeFloat)
}

// init is the fold's starting value.
func (p *poolGen) init() string {
	if p.max {
		return "(-__builtin_inff())"
	}
	return "0.0f"
}

// exact is the statement folding t into a as the kernel does (scalars,
// or vectors of lanes l, 0 for scalars; m is the vector mask).
func (p *poolGen) exact(l int64) string {
	vf, vi := vecTypes(l)
	switch {
	case !p.max:
		return "a = a + t;"
	case l > 0:
		return fmt.Sprintf("m = (t > a) | (t != t); a = (%s)(((%s)t & m) | ((%s)a & ~m));", vf, vi, vi)
	}
	return "a = (t > a || t != t) ? t : a;"
}

// fast is the max fold of the scalar interior loop: the greater of t and
// a (a machine max), and t folded into n, which turns NaN when a cell is
// NaN or infinite (the vector loops' is maxTree).
func (p *poolGen) fast() string {
	return "a = t > a ? t : a; n = n + t * 0.0f;"
}

// cellOffsets are the window's cells of a row class at an interior
// column, in the kernel's order, as offsets from the first one's index.
func (p *poolGen) cellOffsets(rc poolClass) []int64 {
	var offs []int64
	for kh := rc.klo; kh < rc.khi; kh++ {
		for kw := range p.g.KW {
			offs = append(offs, (kh-rc.klo)*p.dh*p.g.W+kw*p.dw)
		}
	}
	return offs
}

// interior writes the interior columns of a row class.
func (p *poolGen) interior(rc, cc poolClass) {
	b := &p.b
	lo, hi := cc.outs[0].lo, cc.outs[0].hi // the interior is one run
	offs := p.cellOffsets(rc)
	store := func(ind, idx, a string) {
		if p.max {
			fmt.Fprintf(b, "%syr[%s] = %s;\n", ind, idx, a)
		} else {
			fmt.Fprintf(b, "%syr[%s] = %s / %s;\n", ind, idx, a, p.divisor(rc, cc))
		}
	}
	switch {
	case len(offs) == 0:
		fmt.Fprintf(b, "\t\t\tfor (int64_t ow = %d; ow < %d; ow++) {\n", lo, hi)
		fmt.Fprintf(b, "\t\t\t\tconst float a = %s;\n", p.init())
		store("\t\t\t\t", "ow", "a")
		b.WriteString("\t\t\t}\n")
	case len(offs) > poolUnroll:
		p.byRows(rc, cc, lo, hi)
	case vecLanes(hi-lo) > 0 && (p.sw == 1 || p.sw == 2):
		l := vecLanes(hi - lo)
		vf, vi := vecTypes(l)
		b.WriteString("\t\t\t{\n")
		fmt.Fprintf(b, "\t\t\t\t%s a, t, n = {0};\n\t\t\t\t%s m;\n\t\t\t\t(void)m;\n\t\t\t\t(void)n;\n", vf, vi)
		loop := func(fold string, checked bool) {
			fmt.Fprintf(b, "\t\t\t\tfor (int64_t o0 = %d; o0 < %d; o0 += %d) {\n", lo, hi, l)
			// The last vector ends at the run's end, overlapping the one
			// before it (its outputs are computed twice, the same).
			fmt.Fprintf(b, "\t\t\t\t\tconst int64_t o = o0 < %d ? o0 : %d;\n", hi-l, hi-l)
			fmt.Fprintf(b, "\t\t\t\t\tconst float *q = xp + rb + o * %d;\n", p.sw)
			if checked {
				p.maxTree(offs, l)
				b.WriteString("\t\t\t\t}\n")
				return
			}
			for i, off := range offs {
				load := p.vload(off, l)
				if i == 0 {
					fmt.Fprintf(b, "\t\t\t\t\ta = %s;\n", load)
					if checked {
						b.WriteString("\t\t\t\t\tn = n + a * 0.0f;\n")
					} else if !p.max {
						b.WriteString("\t\t\t\t\ta = 0.0f + a;\n")
					}
					continue
				}
				fmt.Fprintf(b, "\t\t\t\t\tt = %s; %s\n", load, fold)
			}
			if p.max {
				fmt.Fprintf(b, "\t\t\t\t\t*(%s *)(yr + o) = a;\n", vf)
			} else {
				fmt.Fprintf(b, "\t\t\t\t\t*(%s *)(yr + o) = a / %s;\n", vf, p.divisor(rc, cc))
			}
			b.WriteString("\t\t\t\t}\n")
		}
		if !p.max {
			loop(p.exact(l), false)
		} else {
			loop("", true) // maxTree
			fmt.Fprintf(b, "\t\t\t\tconst %s bad = n != n;\n\t\t\t\tint32_t any = 0;\n", vi)
			fmt.Fprintf(b, "\t\t\t\tfor (int i = 0; i < %d; i++) any |= bad[i];\n", l)
			b.WriteString("\t\t\t\tif (any) {\n")
			loop(p.exact(l), false)
			b.WriteString("\t\t\t\t}\n")
		}
		b.WriteString("\t\t\t}\n")
	default:
		loop := func(fold string, checked bool) {
			fmt.Fprintf(b, "\t\t\tfor (int64_t ow = %d; ow < %d; ow++) {\n", lo, hi)
			fmt.Fprintf(b, "\t\t\t\tconst int64_t c = rb + ow * %d;\n", p.sw)
			for i, off := range offs {
				if i == 0 {
					fmt.Fprintf(b, "\t\t\t\tfloat a = xp[c], t;\n\t\t\t\t(void)t;\n")
					if checked {
						b.WriteString("\t\t\t\tfloat n = a * 0.0f;\n")
					} else if !p.max {
						b.WriteString("\t\t\t\ta = 0.0f + a;\n")
					}
					continue
				}
				fmt.Fprintf(b, "\t\t\t\tt = xp[c + %d]; %s\n", off, fold)
			}
			store("\t\t\t\t", "ow", "a")
			if checked {
				b.WriteString("\t\t\t\tbad |= n != n;\n")
			}
			b.WriteString("\t\t\t}\n")
		}
		if !p.max {
			loop(p.exact(0), false)
		} else {
			b.WriteString("\t\t\t{\n\t\t\tint32_t bad = 0;\n")
			loop(p.fast(), true)
			b.WriteString("\t\t\tif (bad) {\n")
			loop(p.exact(0), false)
			b.WriteString("\t\t\t}\n\t\t\t}\n")
		}
	}
}

// maxTree writes the body of the vectorized max loop's fast fold: the
// cells' vectors loaded, their maximum as a balanced tree of pairs (the
// left one kept where neither is greater: the first of the greatest in
// the kernel's order, as its fold keeps it, for cells that are not NaN),
// stored, and their sum, times zero, added into n, which turns NaN where
// a cell is NaN or infinite (the row is then computed again with the
// kernel's own fold). The tree's depth is the log of the cells where the
// fold's chain was one operation per cell: on 14x14 planes, with two
// vectors a row, that chain bounded the loop.
func (p *poolGen) maxTree(offs []int64, l int64) {
	b := &p.b
	vf, vi := vecTypes(l)
	var vals, sums []string
	for i, off := range offs {
		fmt.Fprintf(b, "\t\t\t\t\tconst %s c%d = %s;\n", vf, i, p.vload(off, l))
		vals = append(vals, fmt.Sprintf("c%d", i))
	}
	sums = vals
	tmp := 0
	for len(vals) > 1 {
		var next []string
		for i := 0; i+1 < len(vals); i += 2 {
			x, y := vals[i], vals[i+1]
			fmt.Fprintf(b, "\t\t\t\t\tconst %s m%d = %s > %s;\n", vi, tmp, y, x)
			fmt.Fprintf(b, "\t\t\t\t\tconst %s x%d = (%s)(((%s)%s & m%d) | ((%s)%s & ~m%d));\n", vf, tmp, vf, vi, y, tmp, vi, x, tmp)
			next = append(next, fmt.Sprintf("x%d", tmp))
			tmp++
		}
		if len(vals)%2 == 1 {
			next = append(next, vals[len(vals)-1])
		}
		vals = next
	}
	for len(sums) > 1 {
		var next []string
		for i := 0; i+1 < len(sums); i += 2 {
			fmt.Fprintf(b, "\t\t\t\t\tconst %s s%d = %s + %s;\n", vf, tmp, sums[i], sums[i+1])
			next = append(next, fmt.Sprintf("s%d", tmp))
			tmp++
		}
		if len(sums)%2 == 1 {
			next = append(next, sums[len(sums)-1])
		}
		sums = next
	}
	fmt.Fprintf(b, "\t\t\t\t\tn = n + %s * 0.0f;\n", sums[0])
	fmt.Fprintf(b, "\t\t\t\t\t*(%s *)(yr + o) = %s;\n", vf, vals[0])
}

// vload is the vector of one cell (at offset off from q) of l
// consecutive outputs: a load at stride 1; at stride 2, the even
// elements of the 2l-1 floats from q + off, loaded as [0, l) and
// [l-1, 2l-1) so that no float outside the windows is read.
func (p *poolGen) vload(off, l int64) string {
	vf, _ := vecTypes(l)
	if p.sw == 1 {
		return fmt.Sprintf("*(const %s *)(q + %d)", vf, off)
	}
	idx := make([]string, 0, l)
	for i := int64(0); i < l/2; i++ {
		idx = append(idx, strconv.FormatInt(2*i, 10))
	}
	for i := l / 2; i < l; i++ {
		idx = append(idx, strconv.FormatInt(l+2*i-(l-1), 10))
	}
	return fmt.Sprintf("__builtin_shufflevector(*(const %s *)(q + %d), *(const %s *)(q + %d), %s)", vf, off, vf, off+l-1, strings.Join(idx, ", "))
}

// byRows writes the interior columns [lo, hi) of a row class whose window
// is too large to unroll: one kernel row at a time, accumulating in the
// output row.
func (p *poolGen) byRows(rc, cc poolClass, lo, hi int64) {
	b, g := &p.b, p.g
	fmt.Fprintf(b, "\t\t\tfor (int64_t ow = %d; ow < %d; ow++) yr[ow] = %s;\n", lo, hi, p.init())
	fmt.Fprintf(b, "\t\t\tfor (int64_t kh = 0; kh < %d; kh++) {\n", rc.khi-rc.klo)
	fmt.Fprintf(b, "\t\t\t\tconst int64_t cb = rb + kh * %d;\n", p.dh*g.W)
	fmt.Fprintf(b, "\t\t\t\tfor (int64_t ow = %d; ow < %d; ow++) {\n", lo, hi)
	fmt.Fprintf(b, "\t\t\t\t\tconst int64_t c = cb + ow * %d;\n", p.sw)
	b.WriteString("\t\t\t\t\tfloat a = yr[ow], t;\n")
	if g.KW <= poolUnroll {
		for kw := range g.KW {
			fmt.Fprintf(b, "\t\t\t\t\tt = xp[c + %d]; %s\n", kw*p.dw, p.exact(0))
		}
	} else {
		fmt.Fprintf(b, "\t\t\t\t\tfor (int64_t kw = 0; kw < %d; kw++) { t = xp[c + kw * %d]; %s }\n", g.KW, p.dw, p.exact(0))
	}
	b.WriteString("\t\t\t\t\tyr[ow] = a;\n\t\t\t\t}\n\t\t\t}\n")
	if !p.max {
		fmt.Fprintf(b, "\t\t\tfor (int64_t ow = %d; ow < %d; ow++) yr[ow] = yr[ow] / %s;\n", lo, hi, p.divisor(rc, cc))
	}
}

// border writes a class of border columns of a row class: each output's
// constant cells folded in order.
func (p *poolGen) border(rc, cc poolClass) {
	b, g := &p.b, p.g
	for _, s := range cc.outs {
		fmt.Fprintf(b, "\t\t\tfor (int64_t ow = %d; ow < %d; ow++) {\n", s.lo, s.hi)
		b.WriteString("\t\t\t\tfloat a = " + p.init() + ", t;\n\t\t\t\t(void)t;\n")
		if rc.klo < rc.khi && cc.klo < cc.khi {
			fmt.Fprintf(b, "\t\t\t\tconst int64_t c = rb + ow * %d%s;\n", p.sw, plus(cc.klo*p.dw))
			fmt.Fprintf(b, "\t\t\t\tfor (int64_t kh = 0; kh < %d; kh++)\n", rc.khi-rc.klo)
			fmt.Fprintf(b, "\t\t\t\t\tfor (int64_t kw = 0; kw < %d; kw++) { t = xp[c + kh * %d + kw * %d]; %s }\n",
				cc.khi-cc.klo, p.dh*g.W, p.dw, p.exact(0))
		}
		if p.max {
			b.WriteString("\t\t\t\tyr[ow] = a;\n")
		} else {
			fmt.Fprintf(b, "\t\t\t\tyr[ow] = a / %s;\n", p.divisor(rc, cc))
		}
		b.WriteString("\t\t\t}\n")
	}
}

// plus is " + v", " - |v|" or nothing for 0.
func plus(v int64) string {
	switch {
	case v > 0:
		return fmt.Sprintf(" + %d", v)
	case v < 0:
		return fmt.Sprintf(" - %d", -v)
	}
	return ""
}

// checked writes the outputs of a column class checking every cell: for
// the classes of columns (and rows) past poolClasses.
func (p *poolGen) checked(cc poolClass) {
	b, g := &p.b, p.g
	for _, s := range cc.outs {
		fmt.Fprintf(b, "\t\t\tfor (int64_t ow = %d; ow < %d; ow++) {\n", s.lo, s.hi)
		fmt.Fprintf(b, "\t\t\t\tconst int64_t iw0 = ow * %d%s;\n", p.sw, plus(-g.PadL))
		b.WriteString("\t\t\t\tfloat a = " + p.init() + ", t;\n")
		fmt.Fprintf(b, "\t\t\t\tfor (int64_t kh = 0; kh < %d; kh++) {\n", g.KH)
		fmt.Fprintf(b, "\t\t\t\t\tconst int64_t ih = ih0 + kh * %d;\n", p.dh)
		fmt.Fprintf(b, "\t\t\t\t\tif (ih < 0 || ih >= %d) continue;\n", g.H)
		fmt.Fprintf(b, "\t\t\t\t\tfor (int64_t kw = 0; kw < %d; kw++) {\n", g.KW)
		fmt.Fprintf(b, "\t\t\t\t\t\tconst int64_t iw = iw0 + kw * %d;\n", p.dw)
		fmt.Fprintf(b, "\t\t\t\t\t\tif (iw >= 0 && iw < %d) { t = xp[ih * %d + iw]; %s }\n", g.W, g.W, p.exact(0))
		b.WriteString("\t\t\t\t\t}\n\t\t\t\t}\n")
		if p.max {
			b.WriteString("\t\t\t\tyr[ow] = a;\n")
		} else {
			// The counts as the kernel counts them.
			hlo, hhi, wlo, whi := int64(0), g.H, int64(0), g.W
			if p.includePad {
				hlo, hhi, wlo, whi = -g.PadT, g.H+g.PadB, -g.PadL, g.W+g.PadR
			}
			b.WriteString("\t\t\t\tint64_t nr = 0, nc = 0;\n")
			fmt.Fprintf(b, "\t\t\t\tfor (int64_t k = 0; k < %d; k++) nr += ih0 + k * %d >= %d && ih0 + k * %d < %d;\n", g.KH, p.dh, hlo, p.dh, hhi)
			fmt.Fprintf(b, "\t\t\t\tfor (int64_t k = 0; k < %d; k++) nc += iw0 + k * %d >= %d && iw0 + k * %d < %d;\n", g.KW, p.dw, wlo, p.dw, whi)
			b.WriteString("\t\t\t\tyr[ow] = a / ((float)nr * (float)nc);\n")
		}
		b.WriteString("\t\t\t}\n")
	}
}
