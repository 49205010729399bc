package data

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Copy copies an N-d strided view: element idx of shape goes from
// src[srcOff + Σ idx[d]·srcStrides[d]] to dst[dstOff + Σ idx[d]·dstStrides[d]].
// Strides may be negative (reversed views) or 0 (broadcast; a 0 destination
// stride leaves the last write). This one kernel serves transpose, slice,
// expand, concat (copy into a window of dst) and pad (copy into the
// interior). An empty shape copies one element. Every reachable index is
// bounds-checked up front. dst and src must not overlap unless they are the
// same view. The work is split over p's workers (p may be nil).
func Copy[T any](p *parallel.Pool, dst []T, dstOff int, dstStrides []int, src []T, srcOff int, srcStrides []int, shape []int) {
	r := len(shape)
	if len(dstStrides) != r || len(srcStrides) != r {
		panic(fmt.Sprintf("kernels: Copy: shape %v with strides %v and %v", clone(shape), clone(dstStrides), clone(srcStrides)))
	}
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("kernels: Copy: bad shape %v", clone(shape)))
		}
		if d == 0 {
			return
		}
	}
	checkView("Copy dst", len(dst), dstOff, dstStrides, shape)
	checkView("Copy src", len(src), srcOff, srcStrides, shape)
	// Coalesce: drop 1s, merge a dim into the next when both views step
	// through it contiguously. Up to copyRank dims live on the stack: an
	// unrolled recurrence runs thousands of tiny copies, where allocating
	// (seven times a call) cost more than moving the bytes.
	var shA, dsA, ssA [copyRank]int
	sh, ds, ss := shA[:0], dsA[:0], ssA[:0]
	for i := 0; i < r; i++ {
		if shape[i] == 1 {
			continue
		}
		if n := len(sh); n > 0 && ds[n-1] == dstStrides[i]*shape[i] && ss[n-1] == srcStrides[i]*shape[i] {
			sh[n-1] *= shape[i]
			ds[n-1], ss[n-1] = dstStrides[i], srcStrides[i]
			continue
		}
		sh, ds, ss = append(sh, shape[i]), append(ds, dstStrides[i]), append(ss, srcStrides[i])
	}
	if len(sh) == 0 {
		dst[dstOff] = src[srcOff]
		return
	}
	n := len(sh) - 1
	if k := transposedDim(sh, ds, ss); k >= 0 {
		copyTiled(p, dst, dstOff, src, srcOff, clone(sh), clone(ds), clone(ss), k)
		return
	}
	outer := prod(sh[:n])
	grain := max(1, tuning.GrainWork/sh[n])
	if p == nil || p.Threads() == 1 || outer <= grain {
		if n == 2 && ds[2] == 1 && ss[2] == 1 && sh[2] <= shortRow {
			copyShortRows(dst, dstOff, src, srcOff, sh, ds, ss)
			return
		}
		copyRows(dst, dstOff, src, srcOff, sh, ds, ss, 0, outer)
		return
	}
	// The workers' closure gets copies, so the arrays above stay on the
	// stack.
	shP, dsP, ssP := clone(sh), clone(ds), clone(ss)
	p.For(outer, grain, func(lo, hi int) { copyRows(dst, dstOff, src, srcOff, shP, dsP, ssP, lo, hi) })
}

// shortRow is the longest contiguous row copyRows moves element by
// element rather than by copy: a window of a small plane (2 to 10 columns
// of a 14x14 one, specialize's sparse-tap rectangles) is thousands of
// such rows, where memmove's call cost more than the bytes.
const shortRow = 8

// copyRank is the most dims (after coalescing) Copy keeps on the stack.
const copyRank = 8

// clone is a copy of v: what escapes (to the workers, into a panic) so
// that v need not.
func clone(v []int) []int { return append([]int(nil), v...) }

// copyShortRows copies a coalesced view of three dims whose rows (the
// last) are short and contiguous on both sides, as two plain loops: a
// small plane's window (specialize's sparse-tap rectangles) is thousands
// of rows of 2-10 elements, where copyRows' index walk per row cost as
// much as the row.
func copyShortRows[T any](dst []T, dstOff int, src []T, srcOff int, sh, ds, ss []int) {
	inner := sh[2]
	for a := range sh[0] {
		do, so := dstOff+a*ds[0], srcOff+a*ss[0]
		for range sh[1] {
			d, s := dst[do:do+inner], src[so:so+inner]
			for j := range d {
				d[j] = s[j]
			}
			do += ds[1]
			so += ss[1]
		}
	}
}

// copyRows copies rows [lo, hi) of a coalesced view: a row is the
// innermost dim, the rows the others in order.
func copyRows[T any](dst []T, dstOff int, src []T, srcOff int, sh, ds, ss []int, lo, hi int) {
	n := len(sh) - 1
	inner, di, si := sh[n], ds[n], ss[n]
	var idxA [copyRank]int
	var idx []int
	if n > copyRank {
		idx = make([]int, n)
	} else {
		idx = idxA[:n]
	}
	do, so := dstOff, srcOff
	for d, rem := n-1, lo; d >= 0; d-- {
		idx[d] = rem % sh[d]
		rem /= sh[d]
		do += idx[d] * ds[d]
		so += idx[d] * ss[d]
	}
	for o := lo; o < hi; o++ {
		switch {
		case di == 1 && si == 1 && inner <= shortRow:
			d, s := dst[do:do+inner], src[so:so+inner]
			for j := range d {
				d[j] = s[j]
			}
		case di == 1 && si == 1:
			copy(dst[do:do+inner], src[so:so+inner])
		case di == 1 && si > 0:
			// A destination row in order from a forward source (a
			// subsample, a slice with a step): one bounds check an
			// element, not two.
			d, s := dst[do:do+inner], src[so:so+(inner-1)*si+1]
			for j := range d {
				d[j] = s[j*si]
			}
		case si == 0:
			v := src[so]
			for j, d := 0, do; j < inner; j, d = j+1, d+di {
				dst[d] = v
			}
		default:
			for j, d, s := 0, do, so; j < inner; j, d, s = j+1, d+di, s+si {
				dst[d] = src[s]
			}
		}
		for d := n - 1; d >= 0; d-- {
			idx[d]++
			do += ds[d]
			so += ss[d]
			if idx[d] < sh[d] {
				break
			}
			do -= idx[d] * ds[d]
			so -= idx[d] * ss[d]
			idx[d] = 0
		}
	}
}

// copyTile is the side of the square tiles of a transposing copy. A
// tile touches copyTile lines of the source and as many of the
// destination; where a side's rows are a power of two apart (a 1024x1024
// transpose) all of its lines fall in one set of the L1 cache, which
// holds 8 (Zen 4; Intel since Sandy Bridge), so 16x16 tiles thrashed and
// ran no faster than no tiles, while 8x8 ran 3x faster there and 2x on
// an NCHW to NHWC copy (BenchmarkCopy*, docs/perf/kernels.md).
const copyTile = 8

// transposedDim is the dim k a transposing copy walks the source along
// (source stride 1), while the destination's innermost dim walks it
// with a stride: a copy row by row would read one element per cache
// line, where tiles over (k, innermost) read and write whole lines.
// -1 where the copy is not such a transpose, or its two dims are too
// short for tiles to pay.
func transposedDim(sh, ds, ss []int) int {
	n := len(sh) - 1
	if ds[n] != 1 || ss[n] == 1 || ss[n] == 0 || sh[n] < copyTile/2 {
		return -1
	}
	for k := n - 1; k >= 0; k-- {
		if ss[k] == 1 && sh[k] >= copyTile/2 {
			return k
		}
	}
	return -1
}

// copyTiled copies a view whose source is contiguous along dim k and
// whose destination is contiguous along the innermost dim n, in tiles
// of copyTile x copyTile over (k, n). The other dims and the tiles of k
// are the parallel work items.
func copyTiled[T any](p *parallel.Pool, dst []T, dstOff int, src []T, srcOff int, sh, ds, ss []int, k int) {
	n := len(sh) - 1
	var osh, ods, oss []int // the other dims
	for d := range n {
		if d != k {
			osh, ods, oss = append(osh, sh[d]), append(ods, ds[d]), append(oss, ss[d])
		}
	}
	rows := prod(osh)
	lenK, lenN := sh[k], sh[n]
	dk, sn := ds[k], ss[n]
	tilesK := (lenK + copyTile - 1) / copyTile
	p.For(rows*tilesK, max(1, tuning.GrainWork/(copyTile*lenN)), func(lo, hi int) {
		for u := lo; u < hi; u++ {
			row, a0 := u/tilesK, (u%tilesK)*copyTile
			do, so := dstOff, srcOff
			for d, rem := len(osh)-1, row; d >= 0; d-- {
				i := rem % osh[d]
				rem /= osh[d]
				do += i * ods[d]
				so += i * oss[d]
			}
			a1 := min(a0+copyTile, lenK)
			for b0 := 0; b0 < lenN; b0 += copyTile {
				b1 := min(b0+copyTile, lenN)
				for a := a0; a < a1; a++ {
					dr := dst[do+a*dk+b0 : do+a*dk+b1]
					s := so + a + b0*sn
					for b := range dr {
						dr[b] = src[s]
						s += sn
					}
				}
			}
		}
	})
}

// checkView panics unless every index of the view lies in [0, n).
func checkView(what string, n, off int, strides, shape []int) {
	lo, hi := off, off
	for d, st := range strides {
		if st < 0 {
			lo += (shape[d] - 1) * st
		} else {
			hi += (shape[d] - 1) * st
		}
	}
	if lo < 0 || hi >= n {
		// Copies in the message, so the views do not escape (Copy's callers
		// keep theirs on the stack).
		panic(fmt.Sprintf("kernels: %s: view offset %d strides %v shape %v reaches [%d, %d] of %d elements",
			what, off, clone(strides), clone(shape), lo, hi, n))
	}
}

// Gather writes out [outer, len(idx), inner] with out[o, i, :] = x[o,
// idx[i], :] for x [outer, axisLen, inner]. Negative indices count from the
// end. Every index is checked before anything is written: one outside
// [-axisLen, axisLen) returns an error naming it and the bound.
func Gather[T any](p *parallel.Pool, out, x []T, outer, axisLen, inner int, idx []int64) error {
	if outer < 0 || axisLen < 0 || inner < 0 || len(x) < outer*axisLen*inner || len(out) < outer*len(idx)*inner {
		return fmt.Errorf("kernels: Gather: slices of %d, %d elements for [%d, %d, %d] and %d indices",
			len(out), len(x), outer, axisLen, inner, len(idx))
	}
	for i, v := range idx {
		if v < -int64(axisLen) || v >= int64(axisLen) {
			return fmt.Errorf("kernels: Gather: index %d (position %d) out of range [-%d, %d)", v, i, axisLen, axisLen)
		}
	}
	ni := len(idx)
	if outer*ni*inner == 0 {
		return nil
	}
	// A chunk is a run of output rows t = o·ni + i; the row's source is
	// found by stepping (o, i) along, not by dividing per row. Rows of a
	// few elements (a resize's gather along the last axis has rows of
	// one) are moved by assignment: a call to copy per element costs
	// several times the element.
	if inner == 1 {
		// Rows of one element: per output row o, a run of indices.
		p.For(outer*ni, tuning.GrainWork, func(lo, hi int) {
			for t := lo; t < hi; {
				o, i := t/ni, t%ni
				n := min(ni-i, hi-t)
				src := x[o*axisLen : (o+1)*axisLen]
				dst := out[t : t+n]
				for k, v := range idx[i : i+n] {
					j := int(v)
					if j < 0 {
						j += axisLen
					}
					dst[k] = src[j]
				}
				t += n
			}
		})
		return nil
	}
	p.For(outer*ni, max(1, tuning.GrainWork/inner), func(lo, hi int) {
		o, i := lo/ni, lo%ni
		for t := lo; t < hi; t++ {
			j := int(idx[i])
			if j < 0 {
				j += axisLen
			}
			s := (o*axisLen + j) * inner
			if inner <= gatherAssignMax {
				for k := range inner {
					out[t*inner+k] = x[s+k]
				}
			} else {
				copy(out[t*inner:(t+1)*inner], x[s:s+inner])
			}
			if i++; i == ni {
				o, i = o+1, 0
			}
		}
	})
	return nil
}

// gatherAssignMax is the longest gathered row moved element by element
// rather than by copy (whose call costs about as much as 8 assignments).
const gatherAssignMax = 8

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// Scatter writes upd[k] into out at idx[k] for k in order, so of two
// updates of one index the later wins; negative indices count from the
// end. Every index is checked before anything is written: one outside
// [-len(out), len(out)) returns an error naming it. It runs on one
// thread: the order is the meaning, and an update is one store.
func Scatter[T any](out, upd []T, idx []int64) error {
	if len(upd) < len(idx) {
		return fmt.Errorf("kernels: Scatter: %d updates for %d indices", len(upd), len(idx))
	}
	n := int64(len(out))
	for k, v := range idx {
		if v < -n || v >= n {
			return fmt.Errorf("kernels: Scatter: index %d (position %d) out of range [-%d, %d)", v, k, n, n)
		}
	}
	for k, v := range idx {
		if v < 0 {
			v += n
		}
		out[v] = upd[k]
	}
	return nil
}
