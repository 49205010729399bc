package reduce

import (
	"fmt"
	"math"
	"testing"
)

// refReduce walks every input element, maps it to its output by dropping
// the reduced coordinates, and folds in float64.
func refReduce(x []float32, shape, axes []int, kind ReduceKind) (want, scale []float64) {
	red := make([]bool, len(shape))
	for _, a := range axes {
		red[a] = true
	}
	nOut, nRed := 1, 1
	for i, d := range shape {
		if red[i] {
			nRed *= d
		} else {
			nOut *= d
		}
	}
	want = make([]float64, nOut)
	scale = make([]float64, nOut)
	for i := range want {
		switch kind {
		case ReduceMax:
			want[i] = math.Inf(-1)
		case ReduceMin:
			want[i] = math.Inf(1)
		case ReduceProd:
			want[i] = 1
		}
	}
	idx := make([]int, len(shape))
	for e := range prod(shape) {
		rem := e
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		o := 0
		for d := range shape {
			if !red[d] {
				o = o*shape[d] + idx[d]
			}
		}
		v := float64(x[e])
		switch kind {
		case ReduceSum, ReduceMean:
			want[o] += v
			scale[o] += math.Abs(v)
		case ReduceProd:
			want[o] *= v
		case ReduceMax:
			if v > want[o] || math.IsNaN(v) {
				if !math.IsNaN(want[o]) {
					want[o] = v
				}
			}
		case ReduceMin:
			if v < want[o] || math.IsNaN(v) {
				if !math.IsNaN(want[o]) {
					want[o] = v
				}
			}
		}
	}
	if kind == ReduceMean {
		for i := range want {
			want[i] /= float64(nRed)
			scale[i] /= float64(nRed)
		}
	}
	return want, scale
}

func TestReduce(t *testing.T) {
	ps := pools(t)
	cases := []struct {
		shape, axes []int
	}{
		{[]int{7}, []int{0}},
		{[]int{100000}, []int{0}}, // several fixed blocks
		{[]int{3, 5}, []int{1}},
		{[]int{3, 5}, []int{0}},
		{[]int{3, 5}, []int{0, 1}},
		{[]int{3, 5}, nil},
		{[]int{2, 3, 4}, []int{1}},
		{[]int{2, 3, 4}, []int{0, 2}},
		{[]int{2, 3, 4}, []int{0, 1}},
		{[]int{2, 3, 4}, []int{1, 2}},
		{[]int{4, 1, 5, 1, 3}, []int{1, 3}}, // only 1s reduced
		{[]int{4, 1, 5, 1, 3}, []int{0, 3}}, // a 1 next to a reduced dim
		{[]int{2, 3, 4, 5}, []int{0, 2}},    // R K R K
		{[]int{2, 3, 4, 5}, []int{1, 3}},    // K R K R
		{[]int{3, 4, 5, 6, 2}, []int{0, 2, 4}},
		{[]int{17, 63, 65}, []int{1}},
		{[]int{8, 3000}, []int{0}}, // inner kept wider than a column block
		{[]int{129, 127}, []int{1}},
		{[]int{2, 0, 3}, []int{1}}, // empty reduction: identity
		{[]int{2, 0, 3}, []int{0}}, // empty output
		{[]int{}, nil},             // a scalar
	}
	kinds := []ReduceKind{ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd}
	for ci, c := range cases {
		for _, kind := range kinds {
			r := newRand(uint64(ci*10) + uint64(kind))
			x := randSlice(r, prod(c.shape))
			if kind == ReduceProd {
				for i := range x { // keep products O(1): factors near ±1
					x[i] = float32(math.Copysign(0.9+0.2*math.Abs(float64(x[i])), float64(x[i])))
				}
			} else {
				for i := range x {
					x[i] += 2 // sums with a mean: cancellation-free scale
				}
			}
			want, scale := refReduce(x, c.shape, c.axes, kind)
			if kind == ReduceProd || kind == ReduceMax || kind == ReduceMin {
				scale = nil
			}
			for _, p := range ps {
				out := poison(len(want))
				Reduce(p, out, x, c.shape, c.axes, kind)
				// float64 accumulation: the only error is the final rounding
				// to float32 (products of ~100000 factors are not tested).
				checkClose(t, fmt.Sprintf("Reduce %d %v over %v threads=%d", kind, c.shape, c.axes, p.Threads()),
					out, want, scale, 2e-7, 0)
			}
		}
	}
}

func TestReduceNaN(t *testing.T) {
	nan := float32(math.NaN())
	x := []float32{1, nan, 3, 4, 5, 6}
	for _, kind := range []ReduceKind{ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd} {
		out := make([]float32, 2)
		Reduce(nil, out, x, []int{2, 3}, []int{1}, kind)
		if out[0] == out[0] {
			t.Errorf("kind %d: row with NaN gave %v", kind, out[0])
		}
		out2 := make([]float32, 3)
		Reduce(nil, out2, x, []int{2, 3}, []int{0}, kind)
		if out2[1] == out2[1] || out2[0] != out2[0] {
			t.Errorf("kind %d over axis 0: got %v, want NaN only in column 1", kind, out2)
		}
	}
	// Empty reductions give the identities.
	out := make([]float32, 5)
	for kind, want := range map[ReduceKind]float32{ReduceSum: 0, ReduceMax: float32(math.Inf(-1)), ReduceMin: float32(math.Inf(1)), ReduceProd: 1} {
		Reduce(nil, out, nil, []int{5, 0}, []int{1}, kind)
		checkEqual(t, fmt.Sprint("empty ", kind), out, []float32{want, want, want, want, want})
	}
	Reduce(nil, out, nil, []int{5, 0}, []int{1}, ReduceMean)
	if out[0] == out[0] {
		t.Errorf("empty mean: got %v, want NaN", out[0])
	}
}

func refArg(x []float32, outer, axis, inner int, wantMax bool) []int64 {
	out := make([]int64, outer*inner)
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			best := -1
			for a := 0; a < axis; a++ {
				v := x[(o*axis+a)*inner+j]
				if best < 0 {
					best = a
					continue
				}
				b := x[(o*axis+best)*inner+j]
				switch {
				case b != b:
				case v != v:
					best = a
				case wantMax && v > b, !wantMax && v < b:
					best = a
				}
			}
			out[o*inner+j] = int64(best)
		}
	}
	return out
}

func TestArgReduce(t *testing.T) {
	ps := pools(t)
	nan := float32(math.NaN())
	for _, s := range [][3]int{{1, 1, 1}, {3, 7, 1}, {2, 5, 3}, {4, 17, 1100}, {1, 129, 1}, {5, 0, 2}, {0, 3, 2}} {
		for _, wantMax := range []bool{true, false} {
			r := newRand(uint64(s[0]*100 + s[1]*10 + s[2]))
			x := randSlice(r, s[0]*s[1]*s[2])
			for i := range x {
				x[i] = float32(r.IntN(4)) // many ties: the first index must win
				if r.IntN(50) == 0 {
					x[i] = nan
				}
			}
			want := refArg(x, s[0], s[1], s[2], wantMax)
			for _, p := range ps {
				out := make([]int64, s[0]*s[2])
				ArgReduce(p, out, x, s[0], s[1], s[2], wantMax)
				checkEqual(t, fmt.Sprintf("ArgReduce %v max=%v threads=%d", s, wantMax, p.Threads()), out, want)
			}
		}
	}
}

// BenchmarkReduce times MobileNetV2's global pool: the mean over the plane
// of a channels-last [1, 7, 7, 1280] value (output rows folded from whole
// input rows).
func BenchmarkReduce(b *testing.B) {
	r := newRand(1)
	x, out := randSlice(r, 7*7*1280), make([]float32, 1280)
	for b.Loop() {
		Reduce(nil, out, x, []int{1, 7, 7, 1280}, []int{1, 2}, ReduceMean)
	}
}

// BenchmarkArgMax* are the operator sweep's ArgMax of 32x128x256 over its
// last axis (rows) and its middle one (columns).
func BenchmarkArgMaxRows(b *testing.B) {
	x, out := randSlice(newRand(1), 32*128*256), make([]int64, 32*128)
	for b.Loop() {
		ArgReduce(nil, out, x, 32*128, 256, 1, true)
	}
}

func BenchmarkArgMaxColumns(b *testing.B) {
	x, out := randSlice(newRand(1), 32*128*256), make([]int64, 32*256)
	for b.Loop() {
		ArgReduce(nil, out, x, 32, 128, 256, true)
	}
}
