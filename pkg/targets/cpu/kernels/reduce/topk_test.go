package reduce

import (
	"fmt"
	"math"
	"sort"
	"testing"
)

// refTopK is TopK by definition: each line's indices sorted stably by
// value (descending for largest, NaN above every number), the first k.
func refTopK(x []float32, outer, axis, inner, k int, largest bool) ([]float32, []int64) {
	vals, idx := make([]float32, outer*k*inner), make([]int64, outer*k*inner)
	key := func(v float32) float64 { // NaN ranks above +Inf
		if math.IsNaN(float64(v)) {
			return math.MaxFloat64
		}
		return float64(v)
	}
	for o := range outer {
		for in := range inner {
			at := func(j int) float32 { return x[(o*axis+j)*inner+in] }
			line := make([]int, axis)
			for j := range line {
				line[j] = j
			}
			sort.SliceStable(line, func(p, q int) bool {
				if largest {
					return key(at(line[p])) > key(at(line[q]))
				}
				return key(at(line[p])) < key(at(line[q]))
			})
			for r := range k {
				vals[(o*k+r)*inner+in], idx[(o*k+r)*inner+in] = at(line[r]), int64(line[r])
			}
		}
	}
	return vals, idx
}

func bits(v []float32) []uint32 {
	b := make([]uint32, len(v))
	for i, f := range v {
		b[i] = math.Float32bits(f)
	}
	return b
}

// TestTopK covers k from 1 to the whole line, lines along the last and a
// middle axis (more columns than one block copies out at a time), many
// ties (the lower index first, -0 equal to +0) and NaNs, at every pool
// size.
func TestTopK(t *testing.T) {
	ps := pools(t)
	nan := float32(math.NaN())
	for _, c := range []struct{ outer, axis, inner, k int }{
		{1, 1, 1, 1}, {3, 7, 1, 1}, {3, 7, 1, 7}, {2, 40, 3, 5}, {2, 40, 3, 20}, {4, 1000, 1, 5}, {1, 300, 17, 9}, {2, 9, 130, 3}, {0, 4, 2, 2},
	} {
		for _, largest := range []bool{true, false} {
			for _, ties := range []bool{false, true} {
				r := newRand(uint64(c.outer*1000 + c.axis*10 + c.k))
				x := randSlice(r, c.outer*c.axis*c.inner)
				for i := range x {
					if ties {
						x[i] = float32(r.IntN(5))
						if x[i] == 0 && r.IntN(2) == 0 {
							x[i] = float32(math.Copysign(0, -1)) // -0 ties with +0
						}
					}
					if r.IntN(40) == 0 {
						x[i] = nan
					}
				}
				wantV, wantI := refTopK(x, c.outer, c.axis, c.inner, c.k, largest)
				for _, p := range ps {
					name := fmt.Sprintf("TopK %+v largest=%v ties=%v threads=%d", c, largest, ties, p.Threads())
					vals, idx := make([]float32, len(wantV)), make([]int64, len(wantI))
					TopK(p, vals, idx, x, c.outer, c.axis, c.inner, c.k, largest)
					checkEqual(t, name+" indices", idx, wantI)
					checkEqual(t, name+" values", bits(vals), bits(wantV))
				}
			}
		}
	}
}

// TestTopKIntegers: the same order over an integer type (no NaN).
func TestTopKIntegers(t *testing.T) {
	x := []int64{3, -1, 3, 7, 0, 7, 7, -5}
	for _, c := range []struct {
		k       int
		largest bool
		vals    []int64
		idx     []int64
	}{
		{3, true, []int64{7, 7, 7}, []int64{3, 5, 6}},
		{4, false, []int64{-5, -1, 0, 3}, []int64{7, 1, 4, 0}},
		{1, false, []int64{-5}, []int64{7}},
	} {
		vals, idx := make([]int64, c.k), make([]int64, c.k)
		TopK(nil, vals, idx, x, 1, len(x), 1, c.k, c.largest)
		checkEqual(t, fmt.Sprintf("k=%d largest=%v values", c.k, c.largest), vals, c.vals)
		checkEqual(t, fmt.Sprintf("k=%d largest=%v indices", c.k, c.largest), idx, c.idx)
	}
}

// BenchmarkTopK times a classifier's top 5 over 1000 classes at batch 64,
// k 256 of 1000, and k 16 along a middle axis (the operator sweep's
// points).
func BenchmarkTopK(b *testing.B) {
	for _, c := range []struct{ outer, axis, inner, k int }{{64, 1000, 1, 5}, {64, 1000, 1, 256}, {8, 128, 256, 16}} {
		b.Run(fmt.Sprintf("%dx%dx%d/k%d", c.outer, c.axis, c.inner, c.k), func(b *testing.B) {
			r := newRand(1)
			x := randSlice(r, c.outer*c.axis*c.inner)
			vals, idx := make([]float32, c.outer*c.k*c.inner), make([]int64, c.outer*c.k*c.inner)
			for b.Loop() {
				TopK(nil, vals, idx, x, c.outer, c.axis, c.inner, c.k, true)
			}
		})
	}
}
