package reduce

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// ReduceKind selects what Reduce computes: lir's numbering. Over an empty
// set Sum gives 0, Mean NaN (0/0), Max -Inf, Min +Inf and Prod 1. Max and
// Min propagate NaN (NumPy's max/min).
type ReduceKind = lir.ReduceFn

// The reductions.
const (
	ReduceSum  = lir.ReduceSum
	ReduceMean = lir.ReduceMean
	ReduceMax  = lir.ReduceMax
	ReduceMin  = lir.ReduceMin
	ReduceProd = lir.ReduceProd
)

func identity(k ReduceKind) float64 {
	switch k {
	case ReduceMax:
		return math.Inf(-1)
	case ReduceMin:
		return math.Inf(1)
	case ReduceProd:
		return 1
	}
	return 0
}

// reduceSpan folds xs into acc.
func reduceSpan(k ReduceKind, acc float64, xs []float32) float64 {
	switch k {
	case ReduceSum, ReduceMean:
		return acc + sum64(xs)
	case ReduceProd:
		for _, v := range xs {
			acc *= float64(v)
		}
	case ReduceMax:
		for _, v := range xs {
			if v := float64(v); v > acc || v != v {
				acc = v
			}
		}
	case ReduceMin:
		for _, v := range xs {
			if v := float64(v); v < acc || v != v {
				acc = v
			}
		}
	default:
		panic(fmt.Sprintf("kernels: unknown reduction %d", k))
	}
	return acc
}

// combineVec folds xs into acc elementwise.
func combineVec(k ReduceKind, acc []float64, xs []float32) {
	xs = xs[:len(acc)]
	switch k {
	case ReduceSum, ReduceMean:
		vec.AddWiden(acc, xs, 1, 0)
	case ReduceProd:
		for j, v := range xs {
			acc[j] *= float64(v)
		}
	case ReduceMax:
		for j, v := range xs {
			if v := float64(v); v > acc[j] || v != v {
				acc[j] = v
			}
		}
	case ReduceMin:
		for j, v := range xs {
			if v := float64(v); v < acc[j] || v != v {
				acc[j] = v
			}
		}
	default:
		panic(fmt.Sprintf("kernels: unknown reduction %d", k))
	}
}

// combine folds b (a partial result) into a.
func combine(k ReduceKind, a, b float64) float64 {
	switch k {
	case ReduceSum, ReduceMean:
		return a + b
	case ReduceProd:
		return a * b
	case ReduceMax:
		if b > a || b != b {
			return b
		}
	case ReduceMin:
		if b < a || b != b {
			return b
		}
	}
	return a
}

// Reduce reduces x (contiguous, of the given shape) over axes (sorted,
// distinct) into out, which holds the kept dims in order (keepdims is a
// reshape). Sums, means and products accumulate in float64.
//
// Dims of size 1 are dropped and neighbours of the same kind merged, so the
// work is a list of "output rows": when the innermost dim is kept, each row
// is a contiguous run of outputs built from whole input rows; otherwise each
// output folds contiguous input spans. Rows (or column blocks) split across
// the pool; a full reduction splits into fixed 16K blocks whose partials are
// combined in order, so results do not depend on the thread count.
func Reduce(p *parallel.Pool, out, x []float32, shape []int, axes []int, kind ReduceKind) {
	red := make([]bool, len(shape))
	for i, a := range axes {
		if a < 0 || a >= len(shape) || (i > 0 && a <= axes[i-1]) {
			panic(fmt.Sprintf("kernels: Reduce: axes %v of shape %v must be sorted, distinct and in range", axes, shape))
		}
		red[a] = true
	}
	total, nOut, nRed := 1, 1, 1
	for i, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("kernels: Reduce: bad shape %v", shape))
		}
		total *= d
		if red[i] {
			nRed *= d
		} else {
			nOut *= d
		}
	}
	if len(x) < total || len(out) < nOut {
		panic(fmt.Sprintf("kernels: Reduce: slices of %d, %d elements for shape %v over %v", len(out), len(x), shape, axes))
	}
	if nOut == 0 {
		return
	}
	finish := func(v float64) float32 {
		if kind == ReduceMean {
			v /= float64(nRed)
		}
		return float32(v)
	}
	if nRed == 0 {
		v := finish(identity(kind))
		for i := range out[:nOut] {
			out[i] = v
		}
		return
	}
	// Coalesce: drop 1s, merge neighbours of the same kind.
	var dims []int
	var isRed []bool
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if n := len(dims); n > 0 && isRed[n-1] == red[i] {
			dims[n-1] *= d
			continue
		}
		dims = append(dims, d)
		isRed = append(isRed, red[i])
	}
	r := len(dims)
	strides := make([]int, r)
	for i, s := r-1, 1; i >= 0; i-- {
		strides[i] = s
		s *= dims[i]
	}
	switch {
	case nRed == 1: // only dims of size 1 reduced: every kind is the identity map
		copy(out[:nOut], x[:nOut])
		return
	case r == 1: // everything reduced: fixed blocks, partials in order
		const blk = tuning.ReduceBlock
		nb := ceilDiv(total, blk)
		part := make([]float64, nb)
		p.For(nb, 1, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				part[b] = reduceSpan(kind, identity(kind), x[b*blk:min(total, (b+1)*blk)])
			}
		})
		acc := identity(kind)
		for _, v := range part {
			acc = combine(kind, acc, v)
		}
		out[0] = finish(acc)
		return
	}
	innerKept := !isRed[r-1]
	L, span := 1, 1 // output row length; input span folded per output
	if innerKept {
		L = dims[r-1]
	} else {
		span = dims[r-1]
	}
	last := r - 1
	// Outer dims (all but the last), split by kind.
	var kd, ks, rd, rs []int
	for i := 0; i < last; i++ {
		if isRed[i] {
			rd, rs = append(rd, dims[i]), append(rs, strides[i])
		} else {
			kd, ks = append(kd, dims[i]), append(ks, strides[i])
		}
	}
	nRows := prod(kd)
	nRedOuter := prod(rd)
	base := func(o int) int {
		b := 0
		for d := len(kd) - 1; d >= 0; d-- {
			b += (o % kd[d]) * ks[d]
			o /= kd[d]
		}
		return b
	}
	// odometer walks the outer reduced dims, calling fn with each offset.
	odometer := func(fn func(off int)) {
		idx := make([]int, len(rd))
		off := 0
		for n := 0; n < nRedOuter; n++ {
			fn(off)
			for d := len(rd) - 1; d >= 0; d-- {
				idx[d]++
				off += rs[d]
				if idx[d] < rd[d] {
					break
				}
				off -= idx[d] * rs[d]
				idx[d] = 0
			}
		}
	}
	if innerKept {
		// Column blocks of at most 1024, of equal width (in 8s): a
		// 1280-wide pool split 1024 + 256 left one of two threads 4x the
		// other's work.
		nc := ceilDiv(L, 1024)
		cb := ceilDiv(ceilDiv(L, nc), 8) * 8
		nc = ceilDiv(L, cb)
		p.For(nRows*nc, max(1, tuning.GrainWork/max(1, nRed*min(L, cb))), func(lo, hi int) {
			// On the stack (cb <= 1024): a heap block per call cost a
			// global pool a third of its time in the allocator and GC.
			var buf [1024]float64
			acc := buf[:min(L, cb)]
			for t := lo; t < hi; t++ {
				o, c0 := t/nc, (t%nc)*cb
				a := acc[:min(cb, L-c0)]
				id := identity(kind)
				for j := range a {
					a[j] = id
				}
				b := base(o) + c0
				if (kind == ReduceSum || kind == ReduceMean) && len(rd) == 1 {
					// One run of equally spaced rows (a global pool of a
					// channels-last plane): summed column block by column
					// block in registers, in the same order.
					vec.AddWiden(a, x[b:], rd[0], rs[0])
				} else {
					odometer(func(off int) { combineVec(kind, a, x[b+off:b+off+len(a)]) })
				}
				dst := out[o*L+c0 : o*L+c0+len(a)]
				if kind == ReduceMean {
					d := float64(nRed)
					for j, v := range a {
						dst[j] = float32(v / d)
					}
				} else {
					for j, v := range a {
						dst[j] = float32(v)
					}
				}
			}
		})
		return
	}
	p.For(nRows, max(1, tuning.GrainWork/nRed), func(lo, hi int) {
		for o := lo; o < hi; o++ {
			b := base(o)
			acc := identity(kind)
			odometer(func(off int) { acc = reduceSpan(kind, acc, x[b+off:b+off+span]) })
			out[o] = finish(acc)
		}
	})
}

// ArgReduce writes, for x [outer, axis, inner], the index along axis of the
// maximum (max) or minimum of each of the outer·inner lines into out
// [outer, inner]: the first such index, and a NaN counts as the extreme
// (NumPy's argmax/argmin). An empty axis gives -1.
func ArgReduce(p *parallel.Pool, out []int64, x []float32, outer, axis, inner int, wantMax bool) {
	if outer < 0 || axis < 0 || inner < 0 || len(x) < outer*axis*inner || len(out) < outer*inner {
		panic(fmt.Sprintf("kernels: ArgReduce: slices of %d, %d elements for [%d, %d, %d]", len(out), len(x), outer, axis, inner))
	}
	if outer*inner == 0 {
		return
	}
	if axis == 0 {
		for i := range out[:outer*inner] {
			out[i] = -1
		}
		return
	}
	// A value replaces the current extreme b where it is strictly better
	// or a NaN: !(v <= b) for the maximum, !(v >= b) for the minimum,
	// one comparison per element. Once the extreme is a NaN it stays (the
	// first NaN wins): a row stops there, a column checks b itself only
	// when a replacement is due.
	if inner == 1 {
		p.For(outer, max(1, tuning.GrainWork/axis), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				if wantMax {
					out[o] = int64(argMaxRow(x[o*axis : (o+1)*axis]))
				} else {
					out[o] = int64(argMinRow(x[o*axis : (o+1)*axis]))
				}
			}
		})
		return
	}
	const cb = 1024
	nc := ceilDiv(inner, cb)
	p.For(outer*nc, max(1, tuning.GrainWork/(axis*min(inner, cb))), func(lo, hi int) {
		best := make([]float32, min(inner, cb))
		for t := lo; t < hi; t++ {
			o, c0 := t/nc, (t%nc)*cb
			w := min(cb, inner-c0)
			b := best[:w]
			idx := out[o*inner+c0 : o*inner+c0+w]
			copy(b, x[o*axis*inner+c0:o*axis*inner+c0+w])
			clear(idx)
			for a := 1; a < axis; a++ {
				row := x[(o*axis+a)*inner+c0 : (o*axis+a)*inner+c0+w]
				row = row[:len(b)]
				if wantMax {
					for j, v := range row {
						if !(v <= b[j]) && b[j] == b[j] {
							b[j], idx[j] = v, int64(a)
						}
					}
				} else {
					for j, v := range row {
						if !(v >= b[j]) && b[j] == b[j] {
							b[j], idx[j] = v, int64(a)
						}
					}
				}
			}
		}
	})
}

// argMaxRow is the index of the first maximum of a non-empty row, or of
// its first NaN.
func argMaxRow(row []float32) int {
	bi, b := 0, row[0]
	if b != b {
		return 0
	}
	for i, v := range row {
		if !(v <= b) {
			if v != v {
				return i
			}
			bi, b = i, v
		}
	}
	return bi
}

// argMinRow is argMaxRow for the minimum.
func argMinRow(row []float32) int {
	bi, b := 0, row[0]
	if b != b {
		return 0
	}
	for i, v := range row {
		if !(v >= b) {
			if v != v {
				return i
			}
			bi, b = i, v
		}
	}
	return bi
}

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
