package e2e

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// A dim used as data (issue 18): a cast of shape arithmetic to a float
// stays symbolic, so Range over it is an iota of the dim, and a dim used as
// a number at run time is computed there from the dims.

// seqOf adds Shape(x) -> Gather(axis) as the scalar value name.
func (g *graph) seqOf(x string, axis int64, name string) {
	idx := name + "_idx"
	g.initI64(idx, nil, []int64{axis})
	g.node("Shape", []string{x}, []string{name + "_shape"})
	g.node("Gather", []string{name + "_shape", idx}, []string{name}, ai("axis", 0))
}

// TestONNXFloatRange: Range(start, float(seq), delta) as rotary
// embeddings export it is an iota of seq (or of ceil((seq-start)/delta)).
func TestONNXFloatRange(t *testing.T) {
	for _, c := range []struct {
		start, delta float32
		want         string
	}{
		{0, 1, "iota(n=seq, dtype=f32)"},
		{1, 2, "iota(n=seq/2, dtype=f32)"},
		{7, -3, "dtype=f32)"},
	} {
		g := &graph{outs: []string{"r"}}
		g.input("x", "batch", "seq")
		g.seqOf("x", 1, "s")
		g.node("Cast", []string{"s"}, []string{"sf"}, ai("to", 1))
		g.init("start", nil, []float32{c.start})
		g.init("delta", nil, []float32{c.delta})
		g.node("Range", []string{"start", "sf", "delta"}, []string{"r"})
		for _, n := range []int64{1, 5, 8} {
			out, hirText := runONNX(t, g, specialize.Binding{"batch": 2, "seq": n}, map[string]*tensor.Tensor{"x": tensor.New(tensor.F32, 2, n)})
			has(t, hirText, c.want)
			lacks(t, hirText, "cast", "reduce_sum")
			var want []float64
			count := math.Max(0, math.Ceil((float64(n)-float64(c.start))/float64(c.delta)))
			for i := 0; i < int(count); i++ {
				want = append(want, float64(c.start)+float64(i)*float64(c.delta))
			}
			if len(want) == 0 {
				if out[0].Len() != 0 {
					t.Errorf("Range(%v, %d, %v): %d values, want none", c.start, n, c.delta, out[0].Len())
				}
				continue
			}
			near(t, "Range", out[0].F32(), want)
		}
	}
}

// TestONNXDimAsData: a dim used as a number at run time (x * float(seq),
// float(Shape(x)), a mask offset 3-seq) is computed there, exactly.
func TestONNXDimAsData(t *testing.T) {
	g := &graph{outs: []string{"y", "sh", "off"}}
	g.input("x", 2, "seq")
	g.seqOf("x", 1, "s")
	g.node("Cast", []string{"s"}, []string{"sf"}, ai("to", 1))
	g.node("Mul", []string{"x", "sf"}, []string{"y"})
	g.node("Shape", []string{"x"}, []string{"shape"})
	g.node("Cast", []string{"shape"}, []string{"sh"}, ai("to", 1))
	g.initI64("three", nil, []int64{3})
	g.node("Sub", []string{"three", "s"}, []string{"d"})
	g.node("Cast", []string{"d"}, []string{"off"}, ai("to", 11))
	for _, n := range []int64{3, 7} {
		x := seq(2*int(n), 1)
		out, hirText := runONNX(t, g, specialize.Binding{"seq": n}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, n}, x)})
		has(t, hirText, "expand(", "shape=[seq]", "reduce_sum(")
		want := make([]float64, len(x))
		for i, v := range x {
			want[i] = float64(v) * float64(n)
		}
		near(t, "x*float(seq)", out[0].F32(), want)
		near(t, "float(Shape(x))", out[1].F32(), []float64{2, float64(n)})
		if out[2].DType != tensor.F64 || out[2].Len() != 1 || out[2].F64()[0] != float64(3-n) {
			t.Errorf("double(3-seq) at seq=%d: %v %v, want %d", n, out[2].DType, out[2].Float64s(), 3-n)
		}
	}
}

// TestONNXFloatDimDiv: float(seq)/2 and float(seq)/float(batch) are float
// divisions, not the floor division of shape arithmetic.
func TestONNXFloatDimDiv(t *testing.T) {
	g := &graph{outs: []string{"h", "q", "i"}}
	g.input("x", "batch", "seq")
	g.seqOf("x", 0, "b")
	g.seqOf("x", 1, "s")
	g.node("Cast", []string{"s"}, []string{"sf"}, ai("to", 1))
	g.node("Cast", []string{"b"}, []string{"bf"}, ai("to", 1))
	g.init("two", nil, []float32{2})
	g.node("Div", []string{"sf", "two"}, []string{"h"})
	g.node("Div", []string{"sf", "bf"}, []string{"q"})
	// Back to an integer it is shape arithmetic again: an iota of seq.
	g.node("Cast", []string{"sf"}, []string{"si"}, ai("to", 7))
	g.initI64("zero", nil, []int64{0})
	g.initI64("one", nil, []int64{1})
	g.node("Range", []string{"zero", "si", "one"}, []string{"i"})
	for _, b := range []specialize.Binding{{"batch": 2, "seq": 5}, {"batch": 4, "seq": 7}} {
		out, hirText := runONNX(t, g, b, map[string]*tensor.Tensor{"x": tensor.New(tensor.F32, b["batch"], b["seq"])})
		has(t, hirText, "iota(n=seq, dtype=i64)")
		s, bt := float64(b["seq"]), float64(b["batch"])
		near(t, "float(seq)/2", out[0].F32(), []float64{s / 2})
		near(t, "float(seq)/float(batch)", out[1].F32(), []float64{s / bt})
		if out[2].Len() != int(b["seq"]) {
			t.Errorf("Range(0, int(float(seq))): %d values, want %d", out[2].Len(), b["seq"])
		}
	}
}

// TestONNXFloatRangeErrors: a float Range over a dim needs integral start
// and delta (its count is computed over dims).
func TestONNXFloatRangeErrors(t *testing.T) {
	g := &graph{outs: []string{"r"}}
	g.input("x", "seq")
	g.seqOf("x", 0, "s")
	g.node("Cast", []string{"s"}, []string{"sf"}, ai("to", 1))
	g.init("start", nil, []float32{0})
	g.init("delta", nil, []float32{0.5})
	g.node("Range", []string{"start", "sf", "delta"}, []string{"r"})
	want := "a float Range over a symbolic dim needs integral start and delta"
	if _, err := onnx.Import(g.model(17), onnx.Options{Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Range delta 0.5: %v, want %q", err, want)
	}
}
