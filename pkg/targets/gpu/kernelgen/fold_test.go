package kernelgen

import (
	"slices"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
)

func TestFoldBatch(t *testing.T) {
	for _, c := range []struct {
		a, b         []int64
		wantA, wantB []int64
		folded       bool
	}{
		{a: []int64{128, 1, 256}, b: []int64{256, 768}, wantA: []int64{128, 256}, wantB: []int64{256, 768}, folded: true},
		{a: []int64{2, 3, 5, 7}, b: []int64{1, 1, 7, 4}, wantA: []int64{30, 7}, wantB: []int64{7, 4}, folded: true},
		{a: []int64{4, 5, 7}, b: []int64{1, 1, 7, 4}, wantA: []int64{20, 7}, wantB: []int64{7, 4}, folded: true},
		{a: []int64{5, 7}, b: []int64{7, 4}},          // no batch
		{a: []int64{2, 5, 7}, b: []int64{2, 7, 4}},    // a B per batch
		{a: []int64{1, 5, 7}, b: []int64{3, 7, 4}},    // A broadcast against B's batch
		{a: []int64{2, 1, 5, 7}, b: []int64{3, 7, 4}}, // B's batch is not 1
	} {
		op := &lir.MatMul{AShape: c.a, BShape: c.b}
		f := foldBatch(op)
		if (f != op) != c.folded {
			t.Errorf("%v · %v: folded %v, want %v", c.a, c.b, f != op, c.folded)
			continue
		}
		if c.folded && (!slices.Equal(f.AShape, c.wantA) || !slices.Equal(f.BShape, c.wantB)) {
			t.Errorf("%v · %v folded to %v · %v, want %v · %v", c.a, c.b, f.AShape, f.BShape, c.wantA, c.wantB)
		}
		if !slices.Equal(op.AShape, c.a) || !slices.Equal(op.BShape, c.b) {
			t.Errorf("%v · %v: the step was changed in place", c.a, c.b)
		}
	}
}
