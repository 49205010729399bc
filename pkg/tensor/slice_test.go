package tensor

import "testing"

// TestSliceRange checks NumPy's rules against Python's own answers for
// list(range(10))[start:end:step].
func TestSliceRange(t *testing.T) {
	for _, c := range []struct{ start, end, step, first, count int64 }{
		{0, 10, 1, 0, 10},
		{2, 100, 1, 2, 8},
		{-3, 1 << 62, 1, 7, 3},
		{7, 3, 1, 7, 0},
		{1, 8, 2, 1, 4},
		{-1, -1 << 62, -1, 9, 10},
		{8, 1, -3, 8, 3}, // [8, 5, 2]
		{20, -20, -1, 9, 10},
		{-20, 20, 1, 0, 10},
		{3, 3, -1, 3, 0},
	} {
		f, n := SliceRange(c.start, c.end, c.step, 10)
		if f != c.first && c.count != 0 || n != c.count {
			t.Errorf("[%d:%d:%d] = first %d count %d, want %d %d", c.start, c.end, c.step, f, n, c.first, c.count)
		}
	}
}
