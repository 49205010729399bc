package eval

import (
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

func dims(v ...int64) []dim.Expr {
	out := make([]dim.Expr, len(v))
	for k, x := range v {
		out[k] = dim.Const(x)
	}
	return out
}

func TestReshapeTransposeExpand(t *testing.T) {
	x := mk(tensor.F32, sh(2, 3), 1, 2, 3, 4, 5, 6)
	check(t, "reshape", eval1(t, mir.OpReshape, nil, ty(tensor.F32, 3, 1, 2), x), sh(3, 1, 2), []float64{1, 2, 3, 4, 5, 6}, 0)
	check(t, "copy", eval1(t, mir.OpCopy, nil, ty(tensor.F32, 2, 3), x), sh(2, 3), []float64{1, 2, 3, 4, 5, 6}, 0)
	check(t, "transpose", eval1(t, mir.OpTranspose, mir.Attrs{"perm": []int64{1, 0}}, ty(tensor.F32, 3, 2), x), sh(3, 2), []float64{1, 4, 2, 5, 3, 6}, 0)
	// [2, 3, 2] with perm [2, 0, 1]: out[c][a][b] = in[a][b][c]
	y := mk(tensor.I32, sh(2, 3, 2), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	check(t, "transpose 3-d", eval1(t, mir.OpTranspose, mir.Attrs{"perm": []int64{2, 0, 1}}, ty(tensor.I32, 2, 2, 3), y), sh(2, 2, 3),
		[]float64{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}, 0)
	c := mk(tensor.F32, sh(3, 1), 1, 2, 3)
	check(t, "expand", eval1(t, mir.OpExpand, nil, ty(tensor.F32, 2, 3, 2), c), sh(2, 3, 2), []float64{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}, 0)
	wantErr(t, evalErr(t, mir.OpReshape, nil, ty(tensor.F32, 4), x), "reshape")
}

func TestSlice(t *testing.T) {
	// t = 0..9
	v := make([]float64, 10)
	for k := range v {
		v[k] = float64(k)
	}
	x := mk(tensor.F32, sh(10), v...)
	sl := func(start, end, step int64, n int64) *tensor.Tensor {
		return eval1(t, mir.OpSlice, mir.Attrs{"starts": dims(start), "ends": dims(end), "axes": []int64{0}, "steps": []int64{step}}, ty(tensor.F32, n), x)
	}
	check(t, "[2:5]", sl(2, 5, 1, 3), sh(3), []float64{2, 3, 4}, 0)
	check(t, "[-3:1000]", sl(-3, 1000, 1, 3), sh(3), []float64{7, 8, 9}, 0)
	check(t, "[::3]", sl(0, math.MaxInt64, 3, 4), sh(4), []float64{0, 3, 6, 9}, 0)
	check(t, "[::-1]", sl(-1, math.MinInt64, -1, 10), sh(10), []float64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 0)
	check(t, "[-1:-1000:-1]", sl(-1, -1000, -1, 10), sh(10), []float64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 0)
	check(t, "[8:2:-2]", sl(8, 2, -2, 3), sh(3), []float64{8, 6, 4}, 0)
	check(t, "[100:5:-3]", sl(100, 5, -3, 2), sh(2), []float64{9, 6}, 0)
	check(t, "[5:2]", sl(5, 2, 1, 0), sh(0), nil, 0)
	check(t, "[-100:2]", sl(-100, 2, 1, 2), sh(2), []float64{0, 1}, 0)
	// two axes of a [3, 4]; the second has a negative step
	m := mk(tensor.I64, sh(3, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	got := eval1(t, mir.OpSlice, mir.Attrs{"starts": dims(1, -1), "ends": dims(3, 0), "axes": []int64{0, 1}, "steps": []int64{1, -2}}, ty(tensor.I64, 2, 2), m)
	check(t, "2-d", got, sh(2, 2), []float64{7, 5, 11, 9}, 0)
	// axes and steps absent: 0.. and 1
	got = eval1(t, mir.OpSlice, mir.Attrs{"starts": dims(-1), "ends": dims(3)}, ty(tensor.I64, 1, 4), m)
	check(t, "defaults", got, sh(1, 4), []float64{8, 9, 10, 11}, 0)
	// symbolic ends, with a binding
	seq := dim.Sym("seq")
	g := &mir.Graph{Name: "sym"}
	in := g.NewValue("x", mir.Type{DType: tensor.F32, Shape: []dim.Expr{seq}})
	g.Inputs = []*mir.Value{in}
	end, _ := dim.Sub(seq, dim.Const(1))
	n := g.Add(mir.OpSlice, []*mir.Value{in}, mir.Attrs{"starts": dims(1), "ends": []dim.Expr{end}, "axes": []int64{0}, "steps": []int64{1}}, "",
		mir.Type{DType: tensor.F32, Shape: []dim.Expr{mustSub(t, seq, 2)}})
	g.Outputs = n.Results
	res, err := Run(g, map[string]int64{"seq": 10}, []*tensor.Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "symbolic", res[0], sh(8), []float64{1, 2, 3, 4, 5, 6, 7, 8}, 0)
	wantErr(t, evalErr(t, mir.OpSlice, mir.Attrs{"starts": dims(0), "ends": dims(5), "axes": []int64{0}, "steps": []int64{0}}, ty(tensor.F32, 5), x), "step")
}

func mustSub(t *testing.T, a dim.Expr, b int64) dim.Expr {
	e, err := dim.Sub(a, dim.Const(b))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestConcatPad(t *testing.T) {
	a := mk(tensor.F32, sh(2, 1), 1, 2)
	b := mk(tensor.F32, sh(2, 2), 3, 4, 5, 6)
	check(t, "concat axis 1", eval1(t, mir.OpConcat, mir.Attrs{"axis": int64(1)}, ty(tensor.F32, 2, 4), a, b, a), sh(2, 4),
		[]float64{1, 3, 4, 1, 2, 5, 6, 2}, 0)
	check(t, "concat axis 0", eval1(t, mir.OpConcat, mir.Attrs{"axis": int64(0)}, ty(tensor.F32, 4, 2), b, b), sh(4, 2),
		[]float64{3, 4, 5, 6, 3, 4, 5, 6}, 0)
	e := mk(tensor.F32, sh(0, 2))
	check(t, "concat empty", eval1(t, mir.OpConcat, mir.Attrs{"axis": int64(-2)}, ty(tensor.F32, 2, 2), e, b), sh(2, 2), []float64{3, 4, 5, 6}, 0)
	wantErr(t, evalErr(t, mir.OpConcat, mir.Attrs{"axis": int64(0)}, ty(tensor.F32, 4, 2), a, b), "does not match")

	// pads: all begins, then all ends; [2, 2] -> 1 row before, 1 col after
	check(t, "pad", eval1(t, mir.OpPad, mir.Attrs{"pads": dims(1, 0, 0, 1), "value": -1.5}, ty(tensor.F32, 3, 3), b), sh(3, 3),
		[]float64{-1.5, -1.5, -1.5, 3, 4, -1.5, 5, 6, -1.5}, 0)
	i := mk(tensor.I32, sh(2), 7, 8)
	check(t, "pad i32", eval1(t, mir.OpPad, mir.Attrs{"pads": dims(2, 1), "value": 9.0}, ty(tensor.I32, 5), i), sh(5), []float64{9, 9, 7, 8, 9}, 0)
}

func TestScatter(t *testing.T) {
	x := mk(tensor.F32, sh(5), 10, 11, 12, 13, 14)
	idx := mk(tensor.I64, sh(4), 1, -1, 1, 0)
	upd := mk(tensor.F32, sh(4), 100, 101, 102, 103)
	check(t, "scatter", eval1(t, mir.OpScatter, nil, ty(tensor.F32, 5), x, idx, upd), sh(5), []float64{103, 102, 12, 13, 101}, 0)
	bad := mk(tensor.I32, sh(4), 0, 1, 5, 2)
	wantErr(t, evalErr(t, mir.OpScatter, nil, ty(tensor.F32, 5), x, bad, upd), "index 5", "position 2")
}

func TestGatherIota(t *testing.T) {
	x := mk(tensor.F32, sh(3, 2), 1, 2, 3, 4, 5, 6)
	idx := mk(tensor.I64, sh(2, 2), 2, 0, -1, 1)
	check(t, "gather axis 0", eval1(t, mir.OpGather, mir.Attrs{"axis": int64(0)}, ty(tensor.F32, 2, 2, 2), x, idx), sh(2, 2, 2),
		[]float64{5, 6, 1, 2, 5, 6, 3, 4}, 0)
	i32 := mk(tensor.I32, sh(3), 1, 1, 0)
	check(t, "gather axis 1", eval1(t, mir.OpGather, mir.Attrs{"axis": int64(1)}, ty(tensor.F32, 3, 3), x, i32), sh(3, 3),
		[]float64{2, 2, 1, 4, 4, 3, 6, 6, 5}, 0)
	scalar := mk(tensor.I64, sh(), -2)
	check(t, "gather scalar", eval1(t, mir.OpGather, mir.Attrs{"axis": int64(-1)}, ty(tensor.F32, 3), x, scalar), sh(3), []float64{1, 3, 5}, 0)
	bad := mk(tensor.I64, sh(2, 2), 0, 1, 2, 3)
	wantErr(t, evalErr(t, mir.OpGather, mir.Attrs{"axis": int64(0)}, ty(tensor.F32, 2, 2, 2), x, bad), "index 3", "[1, 1]", "size 3")
	wantErr(t, evalErr(t, mir.OpGather, mir.Attrs{"axis": int64(0)}, ty(tensor.F32, 2), x, mk(tensor.I64, sh(), -4)), "index -4", "size 3")
	wantErr(t, evalErr(t, mir.OpGather, mir.Attrs{"axis": int64(0)}, ty(tensor.F32, 2), x, mk(tensor.F32, sh(), 0)), "i32 or i64")

	g := &mir.Graph{Name: "iota"}
	n := dim.Sym("n")
	a := g.Add(mir.OpIota, nil, mir.Attrs{"n": n}, "", mir.Type{DType: tensor.I32, Shape: []dim.Expr{n}})
	b := g.Add(mir.OpIota, nil, mir.Attrs{"n": dim.Const(3)}, "", ty(tensor.F16, 3))
	g.Outputs = []*mir.Value{a.Results[0], b.Results[0]}
	res, err := Run(g, map[string]int64{"n": 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "iota i32", res[0], sh(4), []float64{0, 1, 2, 3}, 0)
	check(t, "iota f16", res[1], sh(3), []float64{0, 1, 2}, 0)
	if _, err := Run(g, nil, nil); err == nil {
		t.Errorf("iota with an unbound dim: no error")
	}
}
