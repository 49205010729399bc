package specialize

import (
	"fmt"
	"testing"
)

// TestReshapeStrides checks reshapes of strided views against the
// elements they must reach: every index of the new shape, mapped through
// the returned strides, lands where the old view has that flat element.
func TestReshapeStrides(t *testing.T) {
	for _, c := range []struct {
		shape, strides, to []int64
		ok                 bool
	}{
		{[]int64{7, 256}, []int64{768, 1}, []int64{7, 4, 64}, true},         // a QKV slice split into heads
		{[]int64{7, 1, 256}, []int64{768, 768, 1}, []int64{7, 4, 64}, true}, // with a batch of 1
		{[]int64{4, 7, 64}, []int64{64, 768, 1}, []int64{28, 64}, false},    // heads not adjacent
		{[]int64{2, 3, 4}, []int64{12, 4, 1}, []int64{6, 4}, true},
		{[]int64{2, 3, 4}, []int64{12, 4, 1}, []int64{24, 1}, true},
		{[]int64{6, 4}, []int64{8, 1}, []int64{24}, false}, // rows with a gap
		{[]int64{6, 4}, []int64{8, 1}, []int64{2, 3, 4, 1}, true},
	} {
		got, ok := reshapeStrides(c.shape, c.strides, c.to)
		if ok != c.ok {
			t.Errorf("%v %v -> %v: ok %v, want %v", c.shape, c.strides, c.to, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		flat := func(shape, strides []int64, i int64) int64 {
			off := int64(0)
			for d := len(shape) - 1; d >= 0; d-- {
				off += (i % shape[d]) * strides[d]
				i /= shape[d]
			}
			return off
		}
		n := int64(1)
		for _, d := range c.shape {
			n *= d
		}
		for i := int64(0); i < n; i++ {
			if a, b := flat(c.to, got, i), flat(c.shape, c.strides, i); a != b {
				t.Errorf("%s: element %d at %d, want %d", fmt.Sprint(c.shape, c.strides, "->", c.to, got), i, a, b)
				break
			}
		}
	}
}
