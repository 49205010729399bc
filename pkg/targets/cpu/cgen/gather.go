package cgen

import (
	"fmt"
	"math"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// gatherTypes are the C types a gather moves elements as, by element
// size: bits, not values, so NaN payloads come through unchanged.
var gatherTypes = map[int64]string{1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}

// constData is the bytes of buffer b where it is a weight whose data
// the build has (Options.Weights), false otherwise: an input, the arena,
// or a weight the loader derives.
func constData(prog *lir.Program, b lir.Buf, opts Options) ([]byte, bool) {
	if b < 0 || int(b) >= len(prog.Buffers) {
		return nil, false
	}
	buf := prog.Buffers[b]
	if buf.Kind != lir.BufWeight || buf.Index < 0 || buf.Index >= len(opts.Weights) || opts.Weights[buf.Index] == nil {
		return nil, false
	}
	data := opts.Weights[buf.Index].Data
	if buf.Offset < 0 || buf.Bytes < 0 || buf.Offset > int64(len(data)) || buf.Bytes > int64(len(data))-buf.Offset {
		return nil, false
	}
	return data[buf.Offset : buf.Offset+buf.Bytes], true
}

// gatherIndices are op's indices read from their constant buffer, each
// made non-negative, false where they are not a constant the build has,
// there are more than the tuning rule embeds, or one is out of range
// (the runtime's kernel reports that when the step runs).
func gatherIndices(prog *lir.Program, op *lir.Gather, opts Options) ([]int64, bool) {
	data, ok := constData(prog, op.Idx, opts)
	if !ok {
		return nil, false
	}
	var idx []int64
	switch op.IdxDType {
	case tensor.I64:
		idx = tensor.AsI64(data)
	case tensor.I32:
		for _, v := range tensor.AsI32(data) {
			idx = append(idx, int64(v))
		}
	default:
		return nil, false
	}
	if len(idx) > tuning.NativeGatherMaxIndices {
		return nil, false
	}
	norm := make([]int64, len(idx))
	for i, v := range idx {
		if v < -op.AxisLen || v >= op.AxisLen {
			return nil, false
		}
		if v < 0 {
			v += op.AxisLen
		}
		norm[i] = v
	}
	return norm, true
}

// gatherFunc generates the function of a Gather whose indices are a
// constant: out[o, j, k] = x[o, idx[j], k] for x viewed as [Outer,
// AxisLen, Inner]. The indices are checked and made non-negative here
// and written into the function as a static table (not read from their
// buffer at run time), so the code's bounds hold whatever the buffer
// holds when it runs and it needs no checks. False where the step stays
// on the runtime's kernel: indices that are not such a constant, an
// element size other than 1, 2, 4 or 8, a result that shares bytes with
// the operand.
func gatherFunc(prog *lir.Program, op *lir.Gather, opts Options) (function, bool) {
	ctype, ok := gatherTypes[op.ElemSize]
	if !ok || op.Outer <= 0 || op.AxisLen <= 0 || op.Inner <= 0 || op.AxisLen > math.MaxInt32 || sameBytes(prog, op.X, op.Out) {
		return function{}, false
	}
	idx, ok := gatherIndices(prog, op, opts)
	if !ok || len(idx) == 0 {
		return function{}, false
	}
	ni := int64(len(idx))
	inBytes, ok1 := product([]int64{op.Outer, op.AxisLen, op.Inner, op.ElemSize})
	total, ok2 := product([]int64{op.Outer, ni, op.Inner})
	if !ok1 || !ok2 || total > 1<<50 {
		return function{}, false
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f := function{
		fn:  lir.NativeFunc{In: []int64{inBytes}, Out: []int64{total * op.ElemSize}},
		in:  []lir.Buf{op.X},
		out: []lir.Buf{op.Out},
	}
	w("{\n")
	if op.Inner == 1 {
		// Rows of one element (a gather along the last axis): the range
		// is output elements. A period is rows whole rows, the table
		// each element's source offset from the period's first row, so
		// the inner loop is long enough to run in vectors however short
		// a row is; periods are whole windows (below) where Outer allows.
		rows := min(op.Outer, max(1, (tuning.NativeGatherPeriod+ni-1)/ni))
		if step := windowLanes / gcd(ni, windowLanes); rows%step != 0 && rows+step-rows%step <= op.Outer {
			rows += step - rows%step
		}
		if rows*op.AxisLen > math.MaxInt32 {
			rows = 1 // offsets past int32's range: one row a period
		}
		period := rows * ni
		offs := make([]int64, 0, period)
		for r := range rows {
			for _, v := range idx {
				offs = append(offs, r*op.AxisLen+v)
			}
		}
		writeTable(w, "off", offs, 16)
		w("\tconst %s *restrict x = (const %s *)args[0];\n", ctype, ctype)
		w("\t%s *restrict y = (%s *)args[1];\n", ctype, ctype)
		// Each level's windows, where every one fits.
		var levels []gatherLevel
		if op.ElemSize == 4 {
			for _, l := range gatherWindowISAs {
				if base, perm, ok := windows(offs, ni, op.AxisLen, l.lanes); ok {
					levels = append(levels, l)
					b.WriteString(levelCond(len(levels)-1, l.cond))
					writeTable(w, "wbase", base, 16)
					writeTable(w, "wperm", perm, int(l.lanes))
					w("\ttypedef int rlx_wv __attribute__((vector_size(%d)));\n", 4*l.lanes)
					w("\ttypedef int rlx_wvu __attribute__((vector_size(%d), aligned(4), may_alias));\n", 4*l.lanes)
				}
			}
			if len(levels) > 0 {
				w("#endif\n")
			}
		}
		w("\tfor (int64_t t = lo; t < hi;) {\n")
		w("\t\tconst int64_t p = t / %d, i = t - p * %d;\n", period, period)
		w("\t\tconst int64_t e = %d - i < hi - t ? %d : i + (hi - t);\n", period, period)
		w("\t\tconst %s *restrict s = x + p * %d;\n", ctype, rows*op.AxisLen)
		w("\t\t%s *restrict d = y + p * %d;\n", ctype, period)
		w("\t\tint64_t k = i;\n")
		for li, l := range levels {
			// Whole windows of the period: one load of the source where
			// the window's elements lie, one permute, one store.
			b.WriteString(levelCond(li, l.cond))
			w("\t\tfor (; k < e && (k & %d) != 0; k++)\n", l.lanes-1)
			w("\t\t\td[k] = s[off[k]];\n")
			w("\t\tfor (; k + %d <= e; k += %d) {\n", l.lanes, l.lanes)
			w("\t\t\tconst int64_t c = k / %d;\n", l.lanes)
			w("\t\t\tconst rlx_wv v = *(const rlx_wvu *)(s + wbase[c]);\n")
			w("\t\t\t*(rlx_wvu *)(d + k) = %s(v, *(const rlx_wvu *)(wperm + c * %d));\n", l.permute, l.lanes)
			w("\t\t}\n")
		}
		if len(levels) > 0 {
			w("#endif\n")
		}
		// The source and the result share no bytes (checked above):
		// clang cannot bound an indexed read to prove it, and without
		// this vectorizes nothing.
		w("\t\t#pragma clang loop vectorize(assume_safety)\n")
		w("\t\tfor (; k < e; k++)\n")
		w("\t\t\td[k] = s[off[k]];\n")
		w("\t\tt += e - i;\n")
		w("\t}\n")
		f.fn.N, f.fn.Grain = total, tuning.NativeGatherGrain
	} else {
		// Rows of Inner elements: the range is output rows (o, j), each a
		// copy of the source row idx[j] of block o.
		writeTable(w, "idx", idx, 16)
		w("\tconst uint8_t *x = (const uint8_t *)args[0];\n")
		w("\tuint8_t *y = (uint8_t *)args[1];\n")
		w("\tint64_t o = lo / %d, j = lo - o * %d;\n", ni, ni)
		w("\tfor (int64_t t = lo; t < hi; t++) {\n")
		w("\t\tconst uint8_t *s = x + (o * %d + idx[j]) * %d;\n", op.AxisLen, op.Inner*op.ElemSize)
		w("\t\tuint8_t *d = y + t * %d;\n", op.Inner*op.ElemSize)
		copyRow(w, op.Inner*op.ElemSize)
		w("\t\tif (++j == %d) {\n\t\t\tj = 0;\n\t\t\to++;\n\t\t}\n", ni)
		w("\t}\n")
		f.fn.N, f.fn.Grain = op.Outer*ni, max(1, tuning.NativeGatherGrain/op.Inner)
	}
	w("}\n")
	f.body = b.String()
	return f, true
}

// copyRow writes the copy of n bytes from s to d as moves of vectors
// of bytes: of 64, 32 or 16 (the largest a row holds), the last one
// overlapping the one before where n is no multiple of it, or for rows
// under 16 bytes, pieces of 8, 4, 2 and 1. A loop of element moves is
// what clang unrolled a short row's copy into, element by element.
func copyRow(w func(string, ...any), n int64) {
	if n >= 16 {
		c := int64(16)
		for c*2 <= min(n, 64) {
			c *= 2
		}
		w("\t\t{\n\t\t\ttypedef uint8_t rlx_row __attribute__((vector_size(%d), aligned(1), may_alias));\n", c)
		w("\t\t\tfor (int64_t q = 0; q < %d; q += %d)\n", n-n%c, c)
		w("\t\t\t\t*(rlx_row *)(d + q) = *(const rlx_row *)(s + q);\n")
		if n%c != 0 {
			w("\t\t\t*(rlx_row *)(d + %d) = *(const rlx_row *)(s + %d);\n", n-c, n-c)
		}
		w("\t\t}\n")
		return
	}
	for q, c := int64(0), int64(8); c >= 1; c /= 2 {
		if n-q >= c {
			w("\t\t{\n\t\t\ttypedef uint8_t rlx_row __attribute__((vector_size(%d), aligned(1), may_alias));\n", c)
			w("\t\t\t*(rlx_row *)(d + %d) = *(const rlx_row *)(s + %d);\n\t\t}\n", q, q)
			q += c
		}
	}
}

// writeTable writes vs as a static const table of int32_t named name,
// line values to a line.
func writeTable(w func(string, ...any), name string, vs []int64, line int) {
	w("\tstatic const int32_t %s[%d] = {", name, len(vs))
	for i, v := range vs {
		if i%line == 0 {
			w("\n\t\t")
		} else {
			w(" ")
		}
		w("%d,", v)
	}
	w("\n\t};\n")
}

// gatherLevel is one CPU level's window permute for last-axis gathers of
// 4-byte elements.
type gatherLevel struct {
	cond    string // the preprocessor test of the level
	lanes   int64  // elements a vector holds
	permute string // the builtin permuting a vector's lanes by a vector of indices (data, indices)
}

// gatherWindowISAs are the levels with a permute across a whole vector
// by indices in another (vpermd); NEON's table lookup permutes bytes,
// and the others run the plain loop.
var gatherWindowISAs = []gatherLevel{
	{cond: "defined(__AVX512F__)", lanes: 16, permute: "__builtin_ia32_permvarsi512"},
	{cond: "defined(__AVX2__)", lanes: 8, permute: "__builtin_ia32_permvarsi256"},
}

// windowLanes is the most lanes of any level: periods are made a
// multiple of it where they can be, so that every level's windows tile
// them.
const windowLanes = 16

// windows splits a period's source offsets into windows of lanes
// elements (the last, partial one excepted): each a base offset and the
// lanes' offsets from it, false where one window's elements lie further
// apart than a vector holds (a gather that skips elements, a downsample).
// A window's load must stay in the rows its elements come from (the
// last period may have fewer rows than the table), so a base is moved
// back from the end of its last row where it would pass it.
func windows(offs []int64, ni, axisLen, lanes int64) (base, perm []int64, ok bool) {
	for c := int64(0); (c+1)*lanes <= int64(len(offs)); c++ {
		w := offs[c*lanes : (c+1)*lanes]
		lo, hi := w[0], w[0]
		for _, v := range w {
			lo, hi = min(lo, v), max(hi, v)
		}
		// The rows this window's elements are output rows of.
		lastRow := ((c+1)*lanes - 1) / ni
		b := min(lo, (lastRow+1)*axisLen-lanes)
		if b < 0 || hi-b >= lanes {
			return nil, nil, false
		}
		base = append(base, b)
		for _, v := range w {
			perm = append(perm, v-b)
		}
	}
	return base, perm, len(base) > 0
}

// gcd is the greatest common divisor of positive a and b.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
