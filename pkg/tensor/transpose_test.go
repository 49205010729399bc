package tensor

import "testing"

// TestTranspose: every element lands where the permutation says, for
// element sizes 1 to 8 and ranks 1 to 4; bad perms are errors.
func TestTranspose(t *testing.T) {
	for _, c := range []struct {
		dt    DType
		shape []int64
		perm  []int64
	}{
		{F32, []int64{5}, []int64{0}},
		{F32, []int64{3, 7}, []int64{1, 0}},
		{I64, []int64{2, 3, 4}, []int64{2, 0, 1}},
		{F16, []int64{2, 3, 4, 5}, []int64{3, 1, 0, 2}},
		{Bool, []int64{4, 1, 3}, []int64{1, 2, 0}},
	} {
		x := New(c.dt, c.shape...)
		for i := range x.Data {
			x.Data[i] = byte(i*7 + 3)
		}
		y, err := Transpose(x, c.perm)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(c.dt.Size())
		in, out := Strides(c.shape), Strides(y.Shape)
		idx := make([]int64, len(c.shape))
		for k := int64(0); k < NumElements(c.shape); k++ {
			rem, src, dst := k, int64(0), int64(0)
			for i := len(c.shape) - 1; i >= 0; i-- {
				idx[i] = rem % c.shape[i]
				rem /= c.shape[i]
				src += idx[i] * in[i]
			}
			for i, p := range c.perm {
				dst += idx[p] * out[i]
			}
			if string(y.Data[dst*size:(dst+1)*size]) != string(x.Data[src*size:(src+1)*size]) {
				t.Fatalf("%s%v perm %v: element %v moved wrong", c.dt, c.shape, c.perm, idx)
			}
		}
	}
	x := New(F32, 2, 3)
	for _, perm := range [][]int64{{0}, {0, 0}, {1, 2}, {-1, 0}} {
		if _, err := Transpose(x, perm); err == nil {
			t.Errorf("perm %v of a rank-2 tensor: no error", perm)
		}
	}
}
