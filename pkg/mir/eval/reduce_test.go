package eval

import (
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

func TestReduce(t *testing.T) {
	// x = [[[1, 2, 3], [4, 5, 6]]], shape [1, 2, 3]
	x := mk(tensor.F32, sh(1, 2, 3), 1, 2, 3, 4, 5, 6)
	r := func(kind string, axes []int64, keep bool, out mir.Type) *tensor.Tensor {
		return eval1(t, mir.OpReduce, mir.Attrs{"kind": kind, "axes": axes, "keepdims": keep}, out, x)
	}
	check(t, "sum all", r("sum", []int64{0, 1, 2}, false, ty(tensor.F32)), sh(), []float64{21}, 0)
	check(t, "sum last", r("sum", []int64{2}, false, ty(tensor.F32, 1, 2)), sh(1, 2), []float64{6, 15}, 0)
	check(t, "mean axis 1 keep", r("mean", []int64{1}, true, ty(tensor.F32, 1, 1, 3)), sh(1, 1, 3), []float64{2.5, 3.5, 4.5}, 0)
	check(t, "max 0,2", r("max", []int64{0, 2}, false, ty(tensor.F32, 2)), sh(2), []float64{3, 6}, 0)
	check(t, "min last keep", r("min", []int64{2}, true, ty(tensor.F32, 1, 2, 1)), sh(1, 2, 1), []float64{1, 4}, 0)
	check(t, "prod axis 1", r("prod", []int64{1}, false, ty(tensor.F32, 1, 3)), sh(1, 3), []float64{4, 10, 18}, 0)
	// axes absent: all
	check(t, "sum default", eval1(t, mir.OpReduce, mir.Attrs{"kind": "sum"}, ty(tensor.F32), x), sh(), []float64{21}, 0)
	// NaN propagates through max.
	n := mk(tensor.F64, sh(3), 1, nan, 3)
	check(t, "max nan", eval1(t, mir.OpReduce, mir.Attrs{"kind": "max", "axes": []int64{0}}, ty(tensor.F64), n), sh(), []float64{nan}, 0)
	// integers: exact, and wrapping in the dtype
	i := mk(tensor.I64, sh(2, 2), 1<<53, 1, -3, 7)
	if got := ints(t, eval1(t, mir.OpReduce, mir.Attrs{"kind": "sum", "axes": []int64{1}}, ty(tensor.I64, 2), i)); got[0] != 1<<53+1 || got[1] != 4 {
		t.Errorf("i64 sum is not exact: %v", got)
	}
	b := mk(tensor.I8, sh(2), 100, 100)
	check(t, "sum i8 wraps", eval1(t, mir.OpReduce, mir.Attrs{"kind": "sum", "axes": []int64{0}}, ty(tensor.I8), b), sh(), []float64{-56}, 0)
	// empty reductions give the identity
	e := mk(tensor.F32, sh(2, 0))
	check(t, "empty sum", eval1(t, mir.OpReduce, mir.Attrs{"kind": "sum", "axes": []int64{1}}, ty(tensor.F32, 2), e), sh(2), []float64{0, 0}, 0)
	check(t, "empty prod", eval1(t, mir.OpReduce, mir.Attrs{"kind": "prod", "axes": []int64{1}}, ty(tensor.F32, 2), e), sh(2), []float64{1, 1}, 0)
	check(t, "empty max", eval1(t, mir.OpReduce, mir.Attrs{"kind": "max", "axes": []int64{1}}, ty(tensor.F32, 2), e), sh(2), []float64{-inf, -inf}, 0)
	// a declared shape that disagrees is an error
	wantErr(t, evalErr(t, mir.OpReduce, mir.Attrs{"kind": "sum", "axes": []int64{2}}, ty(tensor.F32, 1, 3), x), "declares")
}

func TestArgReduce(t *testing.T) {
	// ties give the first index
	x := mk(tensor.F32, sh(2, 4), 1, 5, 5, 0, 2, 2, -1, -1)
	a := func(isMax bool, axis int64, keep bool, out mir.Type, in *tensor.Tensor) *tensor.Tensor {
		return eval1(t, mir.OpArgReduce, mir.Attrs{"max": isMax, "axis": axis, "keepdims": keep}, out, in)
	}
	check(t, "argmax", a(true, 1, false, ty(tensor.I64, 2), x), sh(2), []float64{1, 0}, 0)
	check(t, "argmin", a(false, 1, true, ty(tensor.I64, 2, 1), x), sh(2, 1), []float64{3, 2}, 0)
	check(t, "argmax axis 0", a(true, 0, false, ty(tensor.I64, 4), x), sh(4), []float64{1, 0, 0, 0}, 0)
	check(t, "argmax negative axis", a(true, -1, false, ty(tensor.I64, 2), x), sh(2), []float64{1, 0}, 0)
	n := mk(tensor.F32, sh(4), 1, nan, 9, nan)
	check(t, "argmax nan", a(true, 0, false, ty(tensor.I64), n), sh(), []float64{1}, 0)
	check(t, "argmin nan", a(false, 0, false, ty(tensor.I64), n), sh(), []float64{1}, 0)
	i := mk(tensor.I32, sh(3), -5, 7, 7)
	check(t, "argmax i32", a(true, 0, false, ty(tensor.I64), i), sh(), []float64{1}, 0)
}

func TestTopK(t *testing.T) {
	x := mk(tensor.F32, sh(2, 5), 3, 7, nan, 7, -1, 0, 2, 2, -4, 2)
	k := func(largest bool, axis int64, out mir.Type, in *tensor.Tensor) (vals, idx *tensor.Tensor) {
		t.Helper()
		types := []mir.Type{out, {DType: tensor.I64, Shape: out.Shape}}
		res, err := Run(opGraph(mir.OpTopK, mir.Attrs{"k": out.Shape[axis], "axis": axis, "largest": largest}, types, in), nil, []*tensor.Tensor{in})
		if err != nil {
			t.Fatal(err)
		}
		return res[0], res[1]
	}
	// the largest: NaN first, then equal values by lower index
	v, i := k(true, 1, ty(tensor.F32, 2, 3), x)
	check(t, "topk values", v, sh(2, 3), []float64{nan, 7, 7, 2, 2, 2}, 0)
	check(t, "topk indices", i, sh(2, 3), []float64{2, 1, 3, 1, 2, 4}, 0)
	// the smallest: NaN last
	v, i = k(false, 1, ty(tensor.F32, 2, 5), x)
	check(t, "topk smallest values", v, sh(2, 5), []float64{-1, 3, 7, 7, nan, -4, 0, 2, 2, 2}, 0)
	check(t, "topk smallest indices", i, sh(2, 5), []float64{4, 0, 1, 3, 2, 3, 0, 1, 2, 4}, 0)
	// along axis 0, integers
	n := mk(tensor.I32, sh(2, 2), 5, -3, 5, 8)
	v, i = k(true, 0, ty(tensor.I32, 1, 2), n)
	check(t, "topk axis 0", v, sh(1, 2), []float64{5, 8}, 0)
	check(t, "topk axis 0 indices", i, sh(1, 2), []float64{0, 1}, 0)
}

func TestSoftmax(t *testing.T) {
	ln2 := math.Ln2
	x := mk(tensor.F64, sh(1, 2), 0, ln2)
	check(t, "softmax", eval1(t, mir.OpSoftmax, mir.Attrs{"axis": int64(1)}, ty(tensor.F64, 1, 2), x), sh(1, 2), []float64{1.0 / 3, 2.0 / 3}, 1e-15)
	check(t, "log_softmax", eval1(t, mir.OpSoftmax, mir.Attrs{"axis": int64(1), "log": true}, ty(tensor.F64, 1, 2), x), sh(1, 2),
		[]float64{-math.Log(3), ln2 - math.Log(3)}, 1e-15)
	// along axis 0 of [2, 2]: columns
	y := mk(tensor.F64, sh(2, 2), 0, 5, ln2, 5)
	check(t, "softmax axis 0", eval1(t, mir.OpSoftmax, mir.Attrs{"axis": int64(0)}, ty(tensor.F64, 2, 2), y), sh(2, 2),
		[]float64{1.0 / 3, 0.5, 2.0 / 3, 0.5}, 1e-15)
	// large values do not overflow; a row of -inf is NaN
	z := mk(tensor.F32, sh(2, 2), 1000, 1000, -inf, -inf)
	check(t, "softmax stable", eval1(t, mir.OpSoftmax, mir.Attrs{"axis": int64(1)}, ty(tensor.F32, 2, 2), z), sh(2, 2),
		[]float64{0.5, 0.5, nan, nan}, 0)
}

func TestLayerNorm(t *testing.T) {
	// mean 2.5, biased variance 1.25
	x := mk(tensor.F64, sh(1, 4), 1, 2, 3, 4)
	s := 1 / math.Sqrt(1.25)
	plain := []float64{-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s}
	check(t, "layernorm", eval1(t, mir.OpLayerNorm, mir.Attrs{"axis": int64(1), "eps": 0.0}, ty(tensor.F64, 1, 4), x), sh(1, 4), plain, 1e-15)
	sc := mk(tensor.F64, sh(4), 1, 2, 3, 4)
	bi := mk(tensor.F64, sh(4), 10, 20, 30, 40)
	check(t, "layernorm scale bias", eval1(t, mir.OpLayerNorm, mir.Attrs{"axis": int64(1), "eps": 0.0, "scale": true, "bias": true}, ty(tensor.F64, 1, 4), x, sc, bi), sh(1, 4),
		[]float64{10 - 1.5*s, 20 - 1.0*s, 30 + 1.5*s, 40 + 6*s}, 1e-15)
	// eps is added to the variance
	e := 1 / math.Sqrt(1.25+0.75)
	check(t, "layernorm eps", eval1(t, mir.OpLayerNorm, mir.Attrs{"axis": int64(1), "eps": 0.75}, ty(tensor.F64, 1, 4), x), sh(1, 4),
		[]float64{-1.5 * e, -0.5 * e, 0.5 * e, 1.5 * e}, 1e-15)
	// rms: [3, 4] has mean square 12.5
	r := mk(tensor.F64, sh(2), 3, 4)
	rs := 1 / math.Sqrt(12.5)
	check(t, "rmsnorm", eval1(t, mir.OpLayerNorm, mir.Attrs{"axis": int64(0), "eps": 0.0, "rms": true, "scale": true}, ty(tensor.F64, 2), r, mk(tensor.F64, sh(2), 2, 1)), sh(2),
		[]float64{6 * rs, 4 * rs}, 1e-15)
	// over the last two axes: each [2, 2] block on its own
	y := mk(tensor.F64, sh(2, 2, 2), 1, 2, 3, 4, 10, 10, 10, 10)
	check(t, "layernorm 2 axes", eval1(t, mir.OpLayerNorm, mir.Attrs{"axis": int64(1), "eps": 0.0}, ty(tensor.F64, 2, 2, 2), y), sh(2, 2, 2),
		append(append([]float64{}, plain...), nan, nan, nan, nan), 1e-15) // 0/0 for a constant block with eps 0
	wantErr(t, evalErr(t, mir.OpLayerNorm, mir.Attrs{"axis": int64(1), "scale": true}, ty(tensor.F64, 1, 4), x), "operands")
}

func TestAddLayerNorm(t *testing.T) {
	a := mk(tensor.F32, sh(1, 4), 0, 1, 2, 3)
	b := mk(tensor.F32, sh(1, 4), 1, 1, 1, 1)
	g := opGraph(mir.OpAddLayerNorm, mir.Attrs{"axis": int64(1), "eps": 0.0}, []mir.Type{ty(tensor.F32, 1, 4), ty(tensor.F32, 1, 4)}, a, b)
	res, err := Run(g, nil, []*tensor.Tensor{a, b})
	if err != nil {
		t.Fatal(err)
	}
	s := 1 / math.Sqrt(1.25)
	check(t, "add_layernorm y", res[0], sh(1, 4), []float64{-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s}, 1e-7)
	check(t, "add_layernorm sum", res[1], sh(1, 4), []float64{1, 2, 3, 4}, 0)
}

func TestAddLayerNormAffine(t *testing.T) {
	// one result; scale and bias; b broadcasts over the rows
	a := mk(tensor.F64, sh(2, 2), 1, 3, 5, 5)
	b := mk(tensor.F64, sh(2), 0, 0)
	sc := mk(tensor.F64, sh(2), 2, 3)
	bi := mk(tensor.F64, sh(2), 1, -1)
	got := eval1(t, mir.OpAddLayerNorm, mir.Attrs{"axis": int64(-1), "eps": 0.0, "scale": true, "bias": true}, ty(tensor.F64, 2, 2), a, b, sc, bi)
	// row [1, 3] normalizes to [-1, 1]; row [5, 5] is 0/0
	check(t, "add_layernorm affine", got, sh(2, 2), []float64{-1, 2, nan, nan}, 1e-15)
	rms := eval1(t, mir.OpAddLayerNorm, mir.Attrs{"axis": int64(1), "eps": 0.0, "rms": true}, ty(tensor.F64, 2, 2), a, mk(tensor.F64, sh(2, 2), 2, 1, -2, -1))
	// rows [3, 4] (rms 5/sqrt(2)) and [3, 4]
	r := math.Sqrt2 / 5
	check(t, "add_rmsnorm", rms, sh(2, 2), []float64{3 * r, 4 * r, 3 * r, 4 * r}, 1e-15)
}
