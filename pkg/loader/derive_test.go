package loader

import (
	"slices"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/winograd"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestDerive: a Winograd derivation makes winograd.Weights of its source,
// and every inconsistency between the table and the derivation is
// refused with the weight named.
func TestDerive(t *testing.T) {
	const o, c = 5, 3
	w := make([]float32, o*c*9)
	for i := range w {
		w[i] = float32(i%7) - 3
	}
	want, err := winograd.Weights(w, o, c, 4)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(want))
	table := func() []artifact.WeightRef {
		return []artifact.WeightRef{
			{Name: "w", DType: "f32", Shape: []int64{o, c, 3, 3}, Bytes: o * c * 9 * 4},
			{Name: "w#winograd4", DType: "f32", Shape: []int64{n}, Bytes: n * 4,
				Derive: &artifact.Derivation{From: 0, Kind: artifact.DeriveWinograd, Args: []int64{o, c, 4}}},
		}
	}
	weights := [][]byte{tensor.FromF32([]int64{o * c * 9}, w).Data, nil}
	got, err := derive(table(), 1, weights)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tensor.AsF32(got), want) {
		t.Error("the derived weight differs from winograd.Weights")
	}
	for _, tc := range []struct {
		name  string
		forge func(r []artifact.WeightRef)
		want  string
	}{
		{"source out of range", func(r []artifact.WeightRef) { r[1].Derive.From = 7 }, "not a stored weight"},
		{"source itself", func(r []artifact.WeightRef) { r[1].Derive.From = 1 }, "not a stored weight"},
		{"source derived", func(r []artifact.WeightRef) { r[0].Derive = &artifact.Derivation{From: 1} }, "not a stored weight"},
		{"unknown kind", func(r []artifact.WeightRef) { r[1].Derive.Kind = "fft" }, `unknown derivation "fft"`},
		{"arguments", func(r []artifact.WeightRef) { r[1].Derive.Args = []int64{o, c} }, "2 arguments"},
		{"source size", func(r []artifact.WeightRef) { r[1].Derive.Args = []int64{o, c + 1, 4} }, "does not fit"},
		{"source dtype", func(r []artifact.WeightRef) { r[0].DType = "f16" }, "does not fit"},
		{"huge channels", func(r []artifact.WeightRef) { r[1].Derive.Args = []int64{1 << 40, 1 << 40, 4} }, "does not fit"},
		{"tile", func(r []artifact.WeightRef) { r[1].Derive.Args = []int64{o, c, 3} }, "no F(3x3, 3x3) transform"},
		{"bytes", func(r []artifact.WeightRef) { r[1].Bytes -= 4 }, "the table says"},
		{"shape", func(r []artifact.WeightRef) { r[1].Shape = []int64{n / 2, 2} }, "the table says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := table()
			tc.forge(r)
			_, err := derive(r, 1, weights)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "w#winograd4") {
				t.Errorf("got %v, want an error naming w#winograd4 with %q", err, tc.want)
			}
		})
	}
}
