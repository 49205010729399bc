package cgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// copyISA is one CPU level of a transposing copy: the sides of its
// square register tiles, one vector of 4-byte elements per tile row,
// largest first, each a multiple of the next.
type copyISA struct {
	cond  string // the preprocessor test of the level; "" for the fallback
	tiles []int
}

// copyISAs are the levels, first match wins: 16x16 tiles in zmm
// registers, 8x8 in ymm, and 4x4 in 16-byte vectors (NEON, SSE). The
// smaller sides of a level take the edges of an item the larger leave,
// so that a dim of 12 still moves through registers at x86-64-v4.
var copyISAs = []copyISA{
	{cond: "defined(__AVX512F__)", tiles: []int{16, 8, 4}},
	{cond: "defined(__AVX2__)", tiles: []int{8, 4}},
	{tiles: []int{4}},
}

// copyStripA and copyBlockB are the extent of one work item along the
// source's contiguous dim (a cache line of 4-byte elements, so each
// source line an item touches is read whole) and along the
// destination's contiguous dim. Both are multiples of every tile side.
const (
	copyStripA = 16
	copyBlockB = 128
)

// transposePlan is a copy of 4-byte elements in the form the generated
// code walks: coalesced dims, among them a (source stride 1) and b
// (destination stride 1); the others are the outer dims.
type transposePlan struct {
	sh, ds, ss []int64 // the outer dims: sizes and strides
	la, lb     int64   // the lengths of a and b
	sa, db     int64   // the destination's stride along a, the source's along b
}

// planTranspose says how the generated code walks op, false where it
// does not handle it: element sizes other than 4, negative strides, a
// destination that writes an element twice, and copies that are not
// transposes (a dim contiguous in both views is a row copy, which the
// runtime does with memmove) or whose tile dims are too short for tiles.
func planTranspose(op *lir.Copy) (transposePlan, bool) {
	p, ok := planCopy(op)
	return p, ok && tuning.NativeTranspose(p.la, p.lb)
}

// planCopy is op's coalesced view split into a (source stride 1), b
// (destination stride 1) and the outer dims; false where op is no such
// copy (see coalesceCopy), or a dim is contiguous in both views.
func planCopy(op *lir.Copy) (transposePlan, bool) {
	var p transposePlan
	sh, ds, ss, ok := coalesceCopy(op)
	if !ok {
		return p, false
	}
	a, b := -1, -1
	for d := range sh {
		if ss[d] == 1 {
			a = d
		}
		if ds[d] == 1 {
			b = d
		}
	}
	if a < 0 || b < 0 || a == b {
		return p, false
	}
	p.la, p.lb, p.sa, p.db = sh[a], sh[b], ds[a], ss[b]
	for d := range sh {
		if d != a && d != b {
			p.sh, p.ds, p.ss = append(p.sh, sh[d]), append(p.ds, ds[d]), append(p.ss, ss[d])
		}
	}
	return p, true
}

// copyPrologue writes what every generated copy starts with: the two
// views' bases (op's offsets applied) and the loop over the items of
// [lo, hi).
func copyPrologue(w func(string, ...any), op *lir.Copy) {
	w("{\n")
	w("\tconst uint32_t *restrict x = (const uint32_t *)args[0] + %d;\n", op.SrcOff)
	w("\tuint32_t *restrict y = (uint32_t *)args[1] + %d;\n", op.DstOff)
	w("\tfor (int64_t t = lo; t < hi; t++) {\n")
}

// walkOuter writes the step of an item's source and destination
// pointers s and d to its place in the outer dims, from r, the index of
// its outer position (last dim fastest).
func (p *transposePlan) walkOuter(w func(string, ...any)) {
	for dim := len(p.sh) - 1; dim >= 0; dim-- {
		w("\t\t{ const int64_t k = r %% %d; r /= %d; s += k * %d; d += k * %d; }\n", p.sh[dim], p.sh[dim], p.ss[dim], p.ds[dim])
	}
}

// reach is the extent of op's source and destination views under p, in
// elements from the buffers' starts: offsets and strides are
// non-negative.
func (p *transposePlan) reach(op *lir.Copy) (src, dst int64) {
	src, dst = op.SrcOff+(p.la-1)+(p.lb-1)*p.db, op.DstOff+(p.la-1)*p.sa+(p.lb-1)
	for d := range p.sh {
		src += (p.sh[d] - 1) * p.ss[d]
		dst += (p.sh[d] - 1) * p.ds[d]
	}
	return src, dst
}

// coalesceCopy is op's view in the form the generated copies walk, as
// the runtime's kernel coalesces it: dims of 1 dropped, a dim merged into
// the one before it where both views step through them as one; false for
// element sizes other than 4, negative strides and destinations that
// write an element twice.
func coalesceCopy(op *lir.Copy) (sh, ds, ss []int64, ok bool) {
	r := len(op.Shape)
	if op.ElemSize != 4 || r == 0 || len(op.DstStrides) != r || len(op.SrcStrides) != r {
		return nil, nil, nil, false
	}
	for i, n := range op.Shape {
		if n <= 0 {
			return nil, nil, nil, false
		}
		if op.DstStrides[i] < 0 || op.SrcStrides[i] < 0 {
			return nil, nil, nil, false
		}
		if n == 1 {
			continue
		}
		if k := len(sh) - 1; k >= 0 && ds[k] == op.DstStrides[i]*n && ss[k] == op.SrcStrides[i]*n {
			sh[k] *= n
			ds[k], ss[k] = op.DstStrides[i], op.SrcStrides[i]
			continue
		}
		sh, ds, ss = append(sh, n), append(ds, op.DstStrides[i]), append(ss, op.SrcStrides[i])
	}
	return sh, ds, ss, injective(sh, ds)
}

// injective reports whether a view of shape sh and non-negative strides
// st reaches every element at its own index: with the dims in order of
// stride, each stride passes the reach of the dims below it. (Views that
// fail it may still be injective; they are not what the planner makes.)
func injective(sh, st []int64) bool {
	order := make([]int, len(sh))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return int(st[x] - st[y]) })
	reach := int64(0)
	for _, d := range order {
		if st[d] <= reach {
			return false
		}
		reach += (sh[d] - 1) * st[d]
	}
	return true
}

// copyFunc generates the function of a transposing copy (see
// planTranspose), false where the step stays on the runtime's kernel.
// Its range is the outer dims times strips of copyStripA along a times
// blocks of copyBlockB along b; each item moves its full tiles through
// registers and the rest of it element by element.
func copyFunc(prog *lir.Program, op *lir.Copy) (function, bool) {
	if op.Src == op.Dst || sameBytes(prog, op.Src, op.Dst) {
		return function{}, false
	}
	p, ok := planTranspose(op)
	if !ok {
		if f, ok := interleaveFunc(op); ok {
			return f, true
		}
		return deinterleaveFunc(op)
	}
	outer, ok := product(p.sh)
	if !ok {
		return function{}, false
	}
	stripsA := (p.la + copyStripA - 1) / copyStripA
	blocksB := (p.lb + copyBlockB - 1) / copyBlockB
	n, ok := product([]int64{outer, stripsA, blocksB, copyStripA * copyBlockB})
	if !ok || n > 1<<50 {
		return function{}, false
	}
	srcReach, dstReach := p.reach(op)
	items := outer * stripsA * blocksB
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	copyPrologue(w, op)
	// The item's place: block of b fastest, then strip of a, then the
	// outer dims, last fastest.
	w("\t\tint64_t r = t / %d;\n", blocksB)
	w("\t\tconst int64_t b0 = (t - r * %d) * %d;\n", blocksB, copyBlockB)
	w("\t\tconst int64_t a0 = (r %% %d) * %d;\n", stripsA, copyStripA)
	w("\t\tr /= %d;\n", stripsA)
	w("\t\tconst uint32_t *s = x + a0 + b0 * %d;\n", p.db)
	w("\t\tuint32_t *d = y + a0 * %d + b0;\n", p.sa)
	p.walkOuter(w)
	w("\t\tconst int64_t na = %d - a0 < %d ? %d - a0 : %d;\n", p.la, copyStripA, p.la, copyStripA)
	w("\t\tconst int64_t nb = %d - b0 < %d ? %d - b0 : %d;\n", p.lb, copyBlockB, p.lb, copyBlockB)
	for i, isa := range copyISAs {
		b.WriteString(levelCond(i, isa.cond))
		copyLevel(&b, isa.tiles, p)
	}
	w("#endif\n")
	w("\t}\n}\n")
	return function{
		body: b.String(),
		fn: lir.NativeFunc{N: items, Grain: max(1, tuning.NativeCopyGrain/(min(p.la, copyStripA)*min(p.lb, copyBlockB))),
			In: []int64{(srcReach + 1) * 4}, Out: []int64{(dstReach + 1) * 4}},
		in:  []lir.Buf{op.Src},
		out: []lir.Buf{op.Dst},
	}, true
}

// copyLevel writes one level's walk of an item: the tiles of the first
// side over the part of na x nb they cover whole, those of each next
// side over what they cover whole beyond it, and the elements left
// over one by one. A tile is loaded as T rows of the source (along a),
// transposed in registers and stored as T rows of the destination
// (along b).
func copyLevel(b *strings.Builder, tiles []int, p transposePlan) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	for k, T := range tiles {
		w("\t\t{\n")
		w("\t\t\ttypedef float rlx_cv __attribute__((vector_size(%d), aligned(4), may_alias));\n", 4*T)
		w("\t\t\tconst int64_t fa = na - na %% %d, fb = nb - nb %% %d;\n", T, T)
		if k == 0 {
			w("\t\t\tfor (int64_t j = 0; j < fb; j += %d)\n", T)
			w("\t\t\t\tfor (int64_t i = 0; i < fa; i += %d) {\n", T)
			copyTile(b, T, p)
			w("\t\t\t\t}\n")
		} else {
			// What the larger side left: its rows past its columns, then
			// the rows past its rows.
			P := tiles[k-1]
			w("\t\t\tconst int64_t pa = na - na %% %d, pb = nb - nb %% %d;\n", P, P)
			w("\t\t\tfor (int64_t i = 0; i < fa; i += %d)\n", T)
			w("\t\t\t\tfor (int64_t j = i < pa ? pb : 0; j < fb; j += %d) {\n", T)
			copyTile(b, T, p)
			w("\t\t\t\t}\n")
		}
		w("\t\t}\n")
	}
	T := tiles[len(tiles)-1]
	w("\t\t{\n")
	w("\t\t\tconst int64_t fa = na - na %% %d, fb = nb - nb %% %d;\n", T, T)
	// At most 3 elements a row or column are left: vectorized, clang
	// makes them gathers and scatters, which cost more than the tiles.
	w("\t\t\t#pragma clang loop vectorize(disable)\n")
	w("\t\t\tfor (int64_t i = 0; i < na; i++)\n")
	w("\t\t\t\t#pragma clang loop vectorize(disable)\n")
	w("\t\t\t\tfor (int64_t j = i < fa ? fb : 0; j < nb; j++)\n")
	w("\t\t\t\t\td[i * %d + j] = s[i + j * %d];\n", p.sa, p.db)
	w("\t\t}\n")
}

// copyTile writes the move of the T x T tile at (i, j) of the item.
func copyTile(b *strings.Builder, T int, p transposePlan) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("\t\t\t\t\tconst uint32_t *ts = s + i + j * %d;\n", p.db)
	w("\t\t\t\t\tuint32_t *td = d + i * %d + j;\n", p.sa)
	rows := make([]string, T)
	for k := range T {
		rows[k] = fmt.Sprintf("v%d", k)
		w("\t\t\t\t\tconst rlx_cv v%d = *(const rlx_cv *)(ts + %d);\n", k, int64(k)*p.db)
	}
	for k, v := range transposeNetwork(b, T, rows) {
		w("\t\t\t\t\t*(rlx_cv *)(td + %d) = %s;\n", int64(k)*p.sa, v)
	}
}

// transposeNetwork writes the shuffles that transpose the T x T tile held
// in rows (T of 4, 8 or 16 lanes) and returns the names of its columns.
// Within each 16-byte lane, two rounds of interleaves transpose 4x4
// blocks (unpcklps/unpckhps, then their 64-bit forms; zip1/zip2 on
// NEON); across lanes, rounds of whole-lane selects from two vectors
// (vperm2f128, vshuff32x4) transpose the matrix of blocks.
func transposeNetwork(b *strings.Builder, T int, rows []string) []string {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	lanes := T / 4
	shuf := func(dst, x, y string, idx []int) {
		s := make([]string, len(idx))
		for i, v := range idx {
			s[i] = fmt.Sprint(v)
		}
		w("\t\t\t\t\tconst rlx_cv %s = __builtin_shufflevector(%s, %s, %s);\n", dst, x, y, strings.Join(s, ", "))
	}
	// inLane is the shuffle that takes, in every lane l, elements
	// pattern (0-3 from x's lane l, 4-7 from y's).
	inLane := func(pattern [4]int) []int {
		var idx []int
		for l := range lanes {
			for _, e := range pattern {
				if e < 4 {
					idx = append(idx, 4*l+e)
				} else {
					idx = append(idx, T+4*l+e-4)
				}
			}
		}
		return idx
	}
	// Round 1: interleave the 32-bit elements of row pairs.
	t := make([]string, T)
	for i := 0; i < T; i += 2 {
		t[i], t[i+1] = fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i+1)
		shuf(t[i], rows[i], rows[i+1], inLane([4]int{0, 4, 1, 5}))
		shuf(t[i+1], rows[i], rows[i+1], inLane([4]int{2, 6, 3, 7}))
	}
	// Round 2: interleave 64-bit pairs; u[4g+k] then holds, in lane l,
	// column 4l+k of rows 4g to 4g+3.
	u := make([]string, T)
	for g := 0; g < T; g += 4 {
		for h := range 2 {
			x, y := t[g+h], t[g+h+2]
			u[g+2*h], u[g+2*h+1] = fmt.Sprintf("q%d", g+2*h), fmt.Sprintf("q%d", g+2*h+1)
			shuf(u[g+2*h], x, y, inLane([4]int{0, 1, 4, 5}))
			shuf(u[g+2*h+1], x, y, inLane([4]int{2, 3, 6, 7}))
		}
	}
	// blocks is the shuffle of whole lanes: lane i of x for i < lanes,
	// lane i-lanes of y for the others.
	blocks := func(sel ...int) []int {
		var idx []int
		for _, s := range sel {
			for e := range 4 {
				idx = append(idx, 4*s+e)
			}
		}
		return idx
	}
	out := make([]string, T)
	switch lanes {
	case 1:
		copy(out, u)
	case 2:
		// Column 4l+k is lane l of u[k] then lane l of u[4+k].
		for k := range 4 {
			out[k], out[4+k] = fmt.Sprintf("c%d", k), fmt.Sprintf("c%d", 4+k)
			shuf(out[k], u[k], u[4+k], blocks(0, 2))
			shuf(out[4+k], u[k], u[4+k], blocks(1, 3))
		}
	case 4:
		// For each k, X_g = u[4g+k] is row g of a 4x4 matrix of lanes;
		// two rounds of even/odd lane selects transpose it, column l of
		// the result being the tile's column 4l+k.
		for k := range 4 {
			x := func(g int) string { return u[4*g+k] }
			y := make([]string, 4)
			for i := range y {
				y[i] = fmt.Sprintf("m%d_%d", k, i)
			}
			shuf(y[0], x(0), x(1), blocks(0, 2, 4, 6))
			shuf(y[1], x(0), x(1), blocks(1, 3, 5, 7))
			shuf(y[2], x(2), x(3), blocks(0, 2, 4, 6))
			shuf(y[3], x(2), x(3), blocks(1, 3, 5, 7))
			for l := range 4 {
				out[4*l+k] = fmt.Sprintf("c%d", 4*l+k)
			}
			shuf(out[k], y[0], y[2], blocks(0, 2, 4, 6))
			shuf(out[4+k], y[1], y[3], blocks(0, 2, 4, 6))
			shuf(out[8+k], y[0], y[2], blocks(1, 3, 5, 7))
			shuf(out[12+k], y[1], y[3], blocks(1, 3, 5, 7))
		}
	default:
		panic(fmt.Sprintf("cgen: transpose tile of %d", T))
	}
	return out
}

// interleaveStrip is the elements of a along one item of an interleave.
const interleaveStrip = 1024

// interleaveFunc generates an interleaving copy: two source rows (b, of
// length 2, the destination's contiguous dim) woven element by element
// into one destination row (a, the source's contiguous dim, stepping 2 in
// the destination). ConvTranspose's phases are put back in place so, a
// depth-to-space of stride 2 along the width; the transposing tiles need
// both dims of 4 or more. A plain loop that clang vectorizes into loads
// of both rows and interleaving shuffles at every level. False where op
// is not such a copy or the rule (tuning.NativeInterleave) leaves it.
func interleaveFunc(op *lir.Copy) (function, bool) {
	p, ok := planCopy(op)
	if !ok || p.lb != 2 || p.sa != 2 || !tuning.NativeInterleave(p.la) {
		return function{}, false
	}
	db := p.db
	return p.stripCopy(op, p.la, "j0", "2 * j0", 2, func(w func(string, ...any)) {
		w("\t\tconst uint32_t *s1 = s + %d;\n", db)
		w("\t\tfor (int64_t i = 0; i < n; i++) {\n")
		w("\t\t\td[2 * i] = s[i];\n")
		w("\t\t\td[2 * i + 1] = s1[i];\n")
		w("\t\t}\n")
	})
}

// deinterleaveFunc generates a copy that takes every step-th element of
// a source row into a destination row (b, the destination's contiguous
// dim; no dim contiguous in the source): a 1x1 strided convolution's
// subsample, a slice with a step. A plain loop that clang vectorizes into
// loads of whole source vectors and shuffles of their even lanes. False
// where op is not such a copy or the rule (tuning.NativeDeinterleave)
// leaves it.
func deinterleaveFunc(op *lir.Copy) (function, bool) {
	sh, ds, ss, ok := coalesceCopy(op)
	if !ok {
		return function{}, false
	}
	b := -1
	for d := range sh {
		if ss[d] == 1 {
			return function{}, false // a transpose or a row copy: not this
		}
		if ds[d] == 1 {
			b = d
		}
	}
	if b < 0 || !tuning.NativeDeinterleave(ss[b], sh[b]) {
		return function{}, false
	}
	p := transposePlan{la: 1, lb: sh[b], db: ss[b]} // no a: rows along b alone
	for d := range sh {
		if d != b {
			p.sh, p.ds, p.ss = append(p.sh, sh[d]), append(p.ds, ds[d]), append(p.ss, ss[d])
		}
	}
	step := p.db
	return p.stripCopy(op, p.lb, fmt.Sprintf("%d * j0", step), "j0", 1, func(w func(string, ...any)) {
		w("\t\tfor (int64_t i = 0; i < n; i++)\n")
		w("\t\t\td[i] = s[%d * i];\n", step)
	})
}

// stripCopy generates a copy that walks p's outer dims and, in each, a
// run of the given length in strips of interleaveStrip elements: item t
// is (outer row, strip), the strip's first run element j0. srcAt and
// dstAt are C expressions (in j0) of the strip's first source and
// destination element; body writes the strip's loop over its n elements.
// moved is the elements the copy moves per run element, the grain's
// unit. False where the range does not fit.
func (p *transposePlan) stripCopy(op *lir.Copy, run int64, srcAt, dstAt string, moved int64, body func(w func(string, ...any))) (function, bool) {
	outer, ok := product(p.sh)
	if !ok {
		return function{}, false
	}
	strips := (run + interleaveStrip - 1) / interleaveStrip
	if n, ok := product([]int64{outer, strips, interleaveStrip}); !ok || n > 1<<50 {
		return function{}, false
	}
	srcReach, dstReach := p.reach(op)
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	copyPrologue(w, op)
	w("\t\tint64_t r = t / %d;\n", strips)
	w("\t\tconst int64_t j0 = (t - r * %d) * %d;\n", strips, interleaveStrip)
	w("\t\tconst uint32_t *s = x + %s;\n", srcAt)
	w("\t\tuint32_t *d = y + %s;\n", dstAt)
	p.walkOuter(w)
	w("\t\tconst int64_t n = %d - j0 < %d ? %d - j0 : %d;\n", run, interleaveStrip, run, interleaveStrip)
	body(w)
	w("\t}\n}\n")
	return function{
		body: b.String(),
		fn: lir.NativeFunc{N: outer * strips, Grain: max(1, tuning.NativeCopyGrain/(moved*min(run, interleaveStrip))),
			In: []int64{(srcReach + 1) * 4}, Out: []int64{(dstReach + 1) * 4}},
		in:  []lir.Buf{op.Src},
		out: []lir.Buf{op.Dst},
	}, true
}
