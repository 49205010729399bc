package data

import (
	"fmt"
	"strings"
	"testing"
)

// refCopy visits every index of shape with nested odometer arithmetic.
func refCopy[T any](dst []T, dstOff int, dstStrides []int, src []T, srcOff int, srcStrides []int, shape []int) {
	n := prod(shape)
	idx := make([]int, len(shape))
	for e := 0; e < n; e++ {
		rem := e
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		do, so := dstOff, srcOff
		for d := range shape {
			do += idx[d] * dstStrides[d]
			so += idx[d] * srcStrides[d]
		}
		dst[do] = src[so]
	}
}

func TestCopy(t *testing.T) {
	ps := pools(t)
	src := make([]int32, 200000)
	for i := range src {
		src[i] = int32(i)
	}
	cases := []struct {
		name           string
		shape          []int
		srcOff         int
		srcStrides     []int
		dstLen, dstOff int
		dstStrides     []int
	}{
		{"contiguous", []int{3, 4, 5}, 0, []int{20, 5, 1}, 60, 0, []int{20, 5, 1}},
		{"transpose 2-d", []int{4, 6}, 0, []int{1, 4}, 24, 0, []int{6, 1}},
		{"transpose 0,2,1", []int{2, 5, 3}, 0, []int{15, 1, 5}, 30, 0, []int{15, 3, 1}},
		{"slice with step", []int{3, 4}, 7, []int{40, 3}, 12, 0, []int{4, 1}},
		{"reversed", []int{10}, 99, []int{-1}, 10, 0, []int{1}},
		{"reversed rows", []int{4, 5}, 15, []int{-5, 1}, 20, 0, []int{5, 1}},
		{"reversed both", []int{4, 5}, 19, []int{-5, -1}, 20, 0, []int{5, 1}},
		{"broadcast rows", []int{3, 7}, 0, []int{0, 1}, 21, 0, []int{7, 1}},
		{"broadcast cols", []int{3, 7}, 0, []int{1, 0}, 21, 0, []int{7, 1}},
		{"broadcast scalar", []int{2, 3, 4}, 5, []int{0, 0, 0}, 24, 0, []int{12, 4, 1}},
		{"concat window", []int{3, 4}, 0, []int{4, 1}, 30, 6, []int{10, 1}},     // into columns 6..9 of [3, 10]
		{"pad interior", []int{3, 4}, 0, []int{4, 1}, 42, 1*7 + 2, []int{7, 1}}, // into [6, 7] at (1, 2)
		{"ones dims", []int{1, 5, 1, 3, 1}, 0, []int{99, 3, 99, 1, 99}, 15, 0, []int{15, 3, 3, 1, 1}},
		{"rank 0", []int{}, 17, []int{}, 1, 0, []int{}},
		{"empty", []int{3, 0, 2}, 0, []int{0, 2, 1}, 0, 0, []int{0, 2, 1}},
		{"dst reversed", []int{2, 3}, 0, []int{3, 1}, 6, 5, []int{-3, -1}},
		{"merge then not", []int{2, 3, 4, 5}, 0, []int{60, 20, 5, 1}, 120, 0, []int{60, 20, 1, 4}},
		// Large enough for tiles (transposes) and for several chunks.
		{"transpose 2-d tiled", []int{37, 45}, 3, []int{1, 37}, 37 * 45, 0, []int{45, 1}},
		{"nchw to nhwc", []int{2, 17, 19, 21}, 0, []int{21 * 17 * 19, 19, 1, 17 * 19}, 2 * 17 * 19 * 21, 0, []int{17 * 19 * 21, 19 * 21, 21, 1}},
		{"swap last two, chunks", []int{64, 50, 40}, 0, []int{2000, 1, 50}, 128000, 0, []int{2000, 40, 1}},
		{"tiles into a window", []int{20, 30}, 0, []int{1, 20}, 40 * 35, 2*35 + 3, []int{35, 1}},
		{"rows, chunks", []int{12000, 3}, 1, []int{4, 1}, 36000, 0, []int{3, 1}},
		// Windows of a plane: three dims, short contiguous rows.
		{"window of planes", []int{5, 2, 3}, 7, []int{196, 14, 1}, 30, 0, []int{6, 3, 1}},
		{"window into a window", []int{4, 3, 2}, 30, []int{196, 14, 1}, 4 * 50, 12, []int{50, 10, 1}},
	}
	for _, c := range cases {
		want := make([]int32, c.dstLen)
		for i := range want {
			want[i] = -1
		}
		if prod(c.shape) > 0 {
			refCopy(want, c.dstOff, c.dstStrides, src, c.srcOff, c.srcStrides, c.shape)
		}
		for _, p := range ps {
			got := make([]int32, c.dstLen)
			for i := range got {
				got[i] = -1
			}
			Copy(p, got, c.dstOff, c.dstStrides, src, c.srcOff, c.srcStrides, c.shape)
			checkEqual(t, fmt.Sprintf("Copy %s threads=%d", c.name, p.Threads()), got, want)
		}
	}
	// Any element type: a transpose of strings.
	s := []string{"a", "b", "c", "d", "e", "f"}
	d := make([]string, 6)
	Copy(nil, d, 0, []int{2, 1}, s, 0, []int{1, 3}, []int{3, 2})
	checkEqual(t, "Copy strings", d, []string{"a", "d", "b", "e", "c", "f"})
}

func TestCopyBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"src past end", func() { Copy(nil, make([]int, 10), 0, []int{1}, make([]int, 5), 0, []int{1}, []int{6}) }},
		{"src negative", func() { Copy(nil, make([]int, 10), 0, []int{1}, make([]int, 5), 2, []int{-1}, []int{4}) }},
		{"dst past end", func() { Copy(nil, make([]int, 4), 1, []int{1}, make([]int, 5), 0, []int{1}, []int{4}) }},
		{"rank mismatch", func() { Copy(nil, make([]int, 4), 0, []int{1}, make([]int, 4), 0, []int{1, 1}, []int{4}) }},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "kernels: Copy") {
					t.Errorf("%s: recovered %v, want a Copy panic", c.name, r)
				}
			}()
			c.f()
		}()
	}
}

func TestGather(t *testing.T) {
	ps := pools(t)
	for _, s := range [][3]int{{1, 5, 1}, {3, 7, 4}, {2, 1, 3}, {4, 10, 1000}, {0, 3, 2}, {2, 3, 0},
		// Several chunks, split inside a row of indices: rows of 1, of 8 (both
		// moved by assignment) and of 9 (copied).
		{6001, 5, 1}, {701, 9, 8}, {700, 3, 9}} {
		outer, axisLen, inner := s[0], s[1], s[2]
		x := make([]int64, outer*axisLen*inner)
		for i := range x {
			x[i] = int64(i * 3)
		}
		idx := []int64{0, int64(axisLen - 1), -1, int64(-axisLen), int64(axisLen / 2), 0}
		want := make([]int64, outer*len(idx)*inner)
		for o := 0; o < outer; o++ {
			for i, j := range idx {
				if j < 0 {
					j += int64(axisLen)
				}
				for c := 0; c < inner; c++ {
					want[(o*len(idx)+i)*inner+c] = x[(o*axisLen+int(j))*inner+c]
				}
			}
		}
		for _, p := range ps {
			out := make([]int64, len(want))
			if err := Gather(p, out, x, outer, axisLen, inner, idx); err != nil {
				t.Fatalf("Gather %v: %v", s, err)
			}
			checkEqual(t, fmt.Sprintf("Gather %v threads=%d", s, p.Threads()), out, want)
		}
	}
	// Float data, no indices.
	if err := Gather(nil, []float32{}, []float32{1, 2}, 1, 2, 1, nil); err != nil {
		t.Errorf("no indices: %v", err)
	}
}

func TestGatherOutOfRange(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6} // [2, 3, 1]
	for _, bad := range []int64{3, -4, 1 << 40, -(1 << 40)} {
		out := []float32{7, 7, 7, 7}
		err := Gather(nil, out, x, 2, 3, 1, []int64{0, bad})
		if err == nil {
			t.Errorf("index %d: no error", bad)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprint(bad)) || !strings.Contains(msg, "[-3, 3)") {
			t.Errorf("index %d: error %q should name the index and the bound", bad, msg)
		}
		checkEqual(t, "output untouched on error", out, []float32{7, 7, 7, 7})
	}
	// An empty axis has no valid index.
	if err := Gather(nil, []float32{0}, []float32{}, 1, 0, 1, []int64{0}); err == nil {
		t.Errorf("index into an empty axis: no error")
	}
	// A too-short output is an error, not a write past the end.
	if err := Gather(nil, []float32{0}, x, 2, 3, 1, []int64{0}); err == nil {
		t.Errorf("short output: no error")
	}
}

// TestScatter: updates land in order (of two at one index the later
// wins), negative indices count from the end, and an index out of range
// is reported before anything is written.
func TestScatter(t *testing.T) {
	out := []int64{10, 11, 12, 13, 14}
	if err := Scatter(out, []int64{100, 101, 102, 103}, []int64{1, -1, 1, 0}); err != nil {
		t.Fatal(err)
	}
	checkEqual(t, "Scatter", out, []int64{103, 102, 12, 13, 101})
	before := append([]int64(nil), out...)
	for _, bad := range [][]int64{{0, 5}, {-6}} {
		err := Scatter(out, []int64{7, 7}, bad)
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("indices %v: got %v, want an out-of-range error", bad, err)
		}
		checkEqual(t, "Scatter after an error", out, before)
	}
	if err := Scatter(out, []int64{1}, []int64{0, 1}); err == nil {
		t.Errorf("fewer updates than indices: no error")
	}
}
