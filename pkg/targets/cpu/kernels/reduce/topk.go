package reduce

import (
	"fmt"
	"math"
	"slices"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Ordered is the element types TopK selects over.
type Ordered interface {
	~float32 | ~float64 | ~int32 | ~int64
}

// TopK writes, for x [outer, axis, inner], the k first elements of each of
// the outer·inner lines along axis, in order, into vals and their indices
// into idx (both [outer, k, inner]). The order is the largest first
// (largest) or the smallest first, and total: equal values by lower index
// first, and a NaN ranks above every number (PyTorch's topk), so NaNs lead
// the largest and trail the smallest. Results do not depend on the thread
// count.
//
// The k best so far sit in a heap whose root is the worst of them; most
// elements cost one comparison with the root's value, at most
// O(axis·log k) in all, and then the k are sorted. Candidates compare by
// unsigned keys whose order is the wanted one (the sign-flip of IEEE
// floats and two's complement integers, NaN at the top, complemented for
// the smallest first). Lines along a middle axis are first copied out
// contiguous, a block of columns at a time, reading whole rows: selecting
// in place read one element per cache line.
func TopK[T Ordered](p *parallel.Pool, vals []T, idx []int64, x []T, outer, axis, inner, k int, largest bool) {
	if outer < 0 || axis < 0 || inner < 0 || k < 1 || k > axis || len(x) < outer*axis*inner ||
		len(vals) < outer*k*inner || len(idx) < outer*k*inner {
		panic(fmt.Sprintf("kernels: TopK: slices of %d, %d, %d elements for [%d, %d, %d] and k %d", len(vals), len(idx), len(x), outer, axis, inner, k))
	}
	if inner == 1 {
		p.For(outer, max(1, tuning.GrainWork/axis), func(lo, hi int) {
			s := newSelector[T](k, largest)
			for o := lo; o < hi; o++ {
				for r, j := range s.top(x[o*axis : (o+1)*axis]) {
					vals[o*k+r], idx[o*k+r] = x[o*axis+int(j)], int64(j)
				}
			}
		})
		return
	}
	const cb = 64 // columns copied out at a time
	nc := (inner + cb - 1) / cb
	p.For(outer*nc, max(1, tuning.GrainWork/(axis*min(inner, cb))), func(lo, hi int) {
		s, lines := newSelector[T](k, largest), make([]T, cb*axis)
		for t := lo; t < hi; t++ {
			o, c0 := t/nc, (t%nc)*cb
			w := min(cb, inner-c0)
			for a := range axis {
				row := x[(o*axis+a)*inner+c0:][:w]
				for c, v := range row {
					lines[c*axis+a] = v
				}
			}
			for c := range w {
				line := lines[c*axis : (c+1)*axis]
				out := o*k*inner + c0 + c
				for r, j := range s.top(line) {
					vals[out+r*inner], idx[out+r*inner] = line[j], int64(j)
				}
			}
		}
	})
}

// selector picks the k first of lines, one at a time, in buffers of its
// own (one per thread).
type selector[T Ordered] struct {
	k       int
	largest bool
	key     func(T) uint64
	h       []topkEntry
	packed  []uint64
	order   []int32
}

func newSelector[T Ordered](k int, largest bool) *selector[T] {
	return &selector[T]{k: k, largest: largest, key: keyFunc[T](largest),
		h: make([]topkEntry, 0, k), packed: make([]uint64, 0, k), order: make([]int32, 0, k)}
}

// top returns the indices of line's k first elements, first first (in
// the selector's buffer, valid until the next call). Float32 lines take
// selectTopF32, whose candidates are single integers.
func (s *selector[T]) top(line []T) []int32 {
	s.order = s.order[:0]
	if lf, ok := any(line).([]float32); ok {
		s.packed = selectTopF32(s.packed[:0], lf, s.k, s.largest)
		for _, e := range s.packed {
			s.order = append(s.order, int32(^uint32(e)))
		}
		return s.order
	}
	s.h = selectTop(s.h[:0], line, s.k, s.largest, s.key)
	for _, e := range s.h {
		s.order = append(s.order, e.idx)
	}
	return s.order
}

// selectTopF32 is selectTop for float32 lines with each candidate packed
// in one integer: the key (keyFunc's, 32 bits) above the complement of
// the index, so that one unsigned comparison orders by key and then the
// lower index first, the heap's and the sort's alike. The heap of
// (key, index) pairs and the sort by a comparison function cost most of
// TopK's time (docs/perf/ops.md, run 14).
func selectTopF32(h []uint64, line []float32, k int, largest bool) []uint64 {
	flip := uint32(0)
	if !largest {
		flip = math.MaxUint32
	}
	for j := range k {
		h = append(h, f32Key(line[j], flip)|uint64(^uint32(j)))
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDownMin(h, i)
	}
	// The root's value filters first, as in selectTop.
	root := h[0]
	rootV := line[^uint32(root)]
	for j := k; j < len(line); j++ {
		v := line[j]
		if largest && v <= rootV || !largest && v >= rootV {
			continue
		}
		if e := f32Key(v, flip) | uint64(^uint32(j)); e > root {
			h[0] = e
			siftDownMin(h, 0)
			root = h[0]
			rootV = line[^uint32(root)]
		}
	}
	// Highest first. Insertion sort for short heaps: slices.Sort's
	// pattern-defeating quicksort cost a 16-candidate line a third of
	// its time.
	if len(h) > 32 {
		slices.Sort(h)
		slices.Reverse(h)
		return h
	}
	for i := 1; i < len(h); i++ {
		e, j := h[i], i
		for ; j > 0 && h[j-1] < e; j-- {
			h[j] = h[j-1]
		}
		h[j] = e
	}
	return h
}

// f32Key is the order key of a float32 (keyFunc's, which calls it),
// flipped by flip and shifted into the upper half.
func f32Key(v float32, flip uint32) uint64 {
	if v == 0 {
		v = 0 // -0 ties with +0, as the comparisons have it
	}
	b := math.Float32bits(v)
	b ^= uint32(int32(b)>>31) | 1<<31 // negatives complemented, positives above them
	if v != v {
		b = math.MaxUint32 // every NaN above +Inf
	}
	return uint64(b^flip) << 32
}

// siftDownMin restores the min-heap below i (the root the smallest).
func siftDownMin(h []uint64, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[i] <= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// topkEntry is one candidate: its key and its index along the line.
type topkEntry struct {
	key uint64
	idx int32
}

// ranksBefore reports whether a comes before b: the higher key, then the
// lower index.
func (a topkEntry) ranksBefore(b topkEntry) bool {
	return a.key > b.key || a.key == b.key && a.idx < b.idx
}

// keyFunc returns the key of a value: unsigned integers in the order the
// output wants, higher first.
func keyFunc[T Ordered](largest bool) func(T) uint64 {
	var zero T
	switch any(zero).(type) {
	case float32:
		flip := uint32(0)
		if !largest {
			flip = math.MaxUint32
		}
		return func(v T) uint64 { return f32Key(float32(v), flip) >> 32 }
	case float64:
		flip := uint64(0)
		if !largest {
			flip = math.MaxUint64
		}
		return func(v T) uint64 {
			if v == 0 {
				v = 0
			}
			b := math.Float64bits(float64(v))
			b ^= uint64(int64(b)>>63) | 1<<63
			if v != v {
				b = math.MaxUint64
			}
			return b ^ flip
		}
	}
	flip := uint64(1 << 63)
	if !largest {
		flip = math.MaxUint64 >> 1
	}
	return func(v T) uint64 { return uint64(int64(v)) ^ flip }
}

// selectTop appends to h the k first of line (by key, then lower index),
// first first.
func selectTop[T Ordered](h []topkEntry, line []T, k int, largest bool, key func(T) uint64) []topkEntry {
	for j := range k {
		h = append(h, topkEntry{key(line[j]), int32(j)})
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	// The root's value filters first: a value that is not above it (below
	// it for the smallest) cannot rank before it, unless one of the two is
	// a NaN, where the comparison is false and the keys decide. An equal
	// key has the higher index, scanning in order, and stays out.
	rootV, rootK := line[h[0].idx], h[0].key
	for j := k; j < len(line); j++ {
		v := line[j]
		if largest && v <= rootV || !largest && v >= rootV {
			continue
		}
		if kj := key(v); kj > rootK {
			h[0] = topkEntry{kj, int32(j)}
			siftDown(h, 0)
			rootV, rootK = line[h[0].idx], h[0].key
		}
	}
	slices.SortFunc(h, func(a, b topkEntry) int {
		if a.ranksBefore(b) {
			return -1
		}
		return 1 // indices differ, so the order is strict
	})
	return h
}

// siftDown restores the heap below i: no child ranks after its parent (the
// root ranks last of all).
func siftDown(h []topkEntry, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c].ranksBefore(h[c+1]) {
			c++
		}
		if !h[i].ranksBefore(h[c]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
