package e2e

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// What the importer computes itself: constant folding and shape values
// through Where, Equal, Expand, ConstantOfShape and Tile. Each test checks
// both that nothing of it is left for run time (the HIR) and the numbers.

const int64Max = math.MaxInt64

// lacks fails the test for each op that occurs as a call in the HIR.
func lacks(t *testing.T, hirText string, ops ...string) {
	t.Helper()
	for _, op := range ops {
		if strings.Contains(hirText, " = "+op+"(") {
			t.Errorf("HIR computes %s at run time:\n%s", op, hirText)
		}
	}
}

func has(t *testing.T, hirText string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(hirText, w) {
			t.Errorf("HIR lacks %q:\n%s", w, hirText)
		}
	}
}

// TestONNXEmptyShapeValue: Shape(x)[3:] of a rank-3 x is an empty shape
// value, known at import like any other (encoder_legacy's
// nn.MultiheadAttention concatenates one into a Reshape's shape).
func TestONNXEmptyShapeValue(t *testing.T) {
	g := &graph{outs: []string{"r"}}
	g.input("x", "seq", "batch", 12)
	g.initI64("zero", []int64{1}, []int64{0})
	g.initI64("two", []int64{1}, []int64{2})
	g.initI64("three", []int64{1}, []int64{3})
	g.initI64("end", []int64{1}, []int64{int64Max})
	g.initI64("heads", []int64{2}, []int64{3, 4})
	g.node("Shape", []string{"x"}, []string{"s"})
	g.node("Slice", []string{"s", "zero", "two"}, []string{"lead"})
	g.node("Slice", []string{"s", "three", "end"}, []string{"rest"})
	g.node("Concat", []string{"lead", "heads", "rest"}, []string{"shape"}, ai("axis", 0))
	g.node("Reshape", []string{"x", "shape"}, []string{"r"})
	x := seq(5*2*12, 1)
	out, hirText := runONNX(t, g, specialize.Binding{"seq": 5, "batch": 2}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{5, 2, 12}, x)})
	has(t, hirText, "shape=[seq, batch, 3, 4]")
	if s := out[0].Shape; len(s) != 4 || s[0] != 5 || s[1] != 2 || s[2] != 3 || s[3] != 4 {
		t.Errorf("shape %v, want [5 2 3 4]", s)
	}
	want := make([]float64, len(x))
	for i, v := range x {
		want[i] = float64(v)
	}
	near(t, "Reshape", out[0].F32(), want)
}

// TestONNXFoldScale: PyTorch's attention scale 1/sqrt(head_dim) computed
// from the shape (Shape, Slice, Cast to float, Sqrt, Div) is one constant.
func TestONNXFoldScale(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", "batch", 2, 64)
	g.initI64("minus1", []int64{1}, []int64{-1})
	g.initI64("end", []int64{1}, []int64{int64Max})
	g.init("one", []int64{1}, []float32{1})
	g.node("Shape", []string{"x"}, []string{"s"})
	g.node("Slice", []string{"s", "minus1", "end"}, []string{"d"})
	g.node("Cast", []string{"d"}, []string{"df"}, ai("to", 1))
	g.node("Sqrt", []string{"df"}, []string{"sd"})
	g.node("Div", []string{"one", "sd"}, []string{"scale"})
	g.node("Mul", []string{"x", "scale"}, []string{"y"})
	x := seq(3*2*64, 1)
	out, hirText := runONNX(t, g, specialize.Binding{"batch": 3}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{3, 2, 64}, x)})
	lacks(t, hirText, "cast", "sqrt", "div")
	has(t, hirText, "const([0.125], f32[1])")
	want := make([]float64, len(x))
	for i, v := range x {
		want[i] = float64(v) * 0.125
	}
	near(t, "x*scale", out[0].F32(), want)
}

// TestONNXFoldMask: a causal mask and an index table built from constants
// only (Range, Unsqueeze, Greater, Less, Equal, Not, Or, And, Cast, Where,
// Expand, Tile; Transpose, Reshape, Slice, Gather, Concat, Squeeze, Sub,
// Mul, Add) become constants: the HIR adds them to the inputs and does
// nothing else.
func TestONNXFoldMask(t *testing.T) {
	const n = 6
	g := &graph{outs: []string{"y", "z"}}
	g.input("s", 2, n, n)
	g.input("u", 4)
	g.initI64("zero", nil, []int64{0})
	g.initI64("n", nil, []int64{n})
	g.initI64("step", nil, []int64{1})
	g.initI64("ax0", []int64{1}, []int64{0})
	g.initI64("ax1", []int64{1}, []int64{1})
	g.initI64("bshape", []int64{3}, []int64{2, 1, 1})
	g.init("fzero", nil, []float32{0})
	g.init("neginf", nil, []float32{float32(math.Inf(-1))})
	g.node("Range", []string{"zero", "n", "step"}, []string{"r"})
	g.node("Unsqueeze", []string{"r", "ax1"}, []string{"col"})
	g.node("Unsqueeze", []string{"r", "ax0"}, []string{"row"})
	g.node("Greater", []string{"row", "col"}, []string{"future"})
	g.node("Not", []string{"future"}, []string{"past"})
	g.node("Less", []string{"row", "col"}, []string{"before"})
	g.node("Equal", []string{"row", "col"}, []string{"diag"})
	g.node("Or", []string{"before", "diag"}, []string{"past2"})
	g.node("And", []string{"past", "past2"}, []string{"allowed"})
	g.node("Cast", []string{"allowed"}, []string{"allowedb"}, ai("to", 9))
	g.node("Where", []string{"allowedb", "fzero", "neginf"}, []string{"mask"})
	g.node("Expand", []string{"mask", "bshape"}, []string{"mask3"})
	g.node("Add", []string{"s", "mask3"}, []string{"y"})

	// z = u + a table computed from w: Tile, Transpose, Reshape, Slice,
	// Gather, Concat, Unsqueeze, Squeeze and arithmetic.
	g.init("w", []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	g.initI64("reps", []int64{2}, []int64{1, 2})
	g.initI64("flat", []int64{1}, []int64{12})
	g.initI64("one", []int64{1}, []int64{1})
	g.initI64("five", []int64{1}, []int64{5})
	g.initI64("idx", []int64{2}, []int64{0, 3})
	g.init("half", nil, []float32{0.5})
	g.node("Tile", []string{"w", "reps"}, []string{"wt"})                   // [2, 6]: 1 2 3 1 2 3 / 4 5 6 4 5 6
	g.node("Transpose", []string{"wt"}, []string{"wtt"}, ais("perm", 1, 0)) // [6, 2]
	g.node("Reshape", []string{"wtt", "flat"}, []string{"f"})               // 1 4 2 5 3 6 1 4 2 5 3 6
	g.node("Slice", []string{"f", "one", "five"}, []string{"sl"})           // 4 2 5 3
	g.node("Gather", []string{"sl", "idx"}, []string{"ga"}, ai("axis", 0))  // 4 3
	g.node("Concat", []string{"ga", "ga"}, []string{"c"}, ai("axis", 0))    // 4 3 4 3
	g.node("Unsqueeze", []string{"c", "ax0"}, []string{"c1"})
	g.node("Squeeze", []string{"c1", "ax0"}, []string{"c2"})
	g.node("Mul", []string{"c2", "half"}, []string{"m"}) // 2 1.5 2 1.5
	g.node("Sub", []string{"m", "half"}, []string{"d"})  // 1.5 1 1.5 1
	g.node("Add", []string{"u", "d"}, []string{"z"})

	sv := seq(2*n*n, 1)
	uv := []float32{10, 20, 30, 40}
	out, hirText := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{
		"s": tensor.FromF32([]int64{2, n, n}, sv), "u": tensor.FromF32([]int64{4}, uv)})
	lacks(t, hirText, "iota", "unsqueeze", "gt", "lt", "eq", "not", "or", "and", "cast", "where", "expand",
		"transpose", "reshape", "slice", "gather", "concat", "squeeze", "mul", "sub")
	var want []float64
	for b := 0; b < 2; b++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := float64(sv[(b*n+i)*n+j])
				if j > i {
					v = math.Inf(-1)
				}
				want = append(want, v)
			}
		}
	}
	near(t, "s+mask", out[0].F32(), want)
	near(t, "u+table", out[1].F32(), []float64{11.5, 21, 31.5, 41})
}

// TestONNXFoldBounds: a constant input over onnx.FoldMax elements is left
// for build-time folding (the weights file holds it once, not twice), and
// an Identity of a constant is that constant, not a copy.
func TestONNXFoldBounds(t *testing.T) {
	g := &graph{outs: []string{"y", "z"}}
	g.input("x", onnx.FoldMax+1)
	g.input("v", 4)
	g.init("big", []int64{onnx.FoldMax + 1}, make([]float32, onnx.FoldMax+1))
	g.init("small", []int64{4}, []float32{1, 2, 3, 4})
	g.node("Neg", []string{"big"}, []string{"nbig"})
	g.node("Add", []string{"x", "nbig"}, []string{"y"})
	g.node("Identity", []string{"small"}, []string{"same"})
	g.node("Neg", []string{"same"}, []string{"nsmall"})
	g.node("Add", []string{"v", "small"}, []string{"v1"})
	g.node("Add", []string{"v1", "same"}, []string{"v2"})
	g.node("Add", []string{"v2", "nsmall"}, []string{"z"})
	res, err := onnx.Import(g.model(17), onnx.Options{Module: "t", Source: "t.onnx"})
	if err != nil {
		t.Fatal(err)
	}
	hirText := string(res.HIR)
	if strings.Count(hirText, " = neg(") != 1 || !strings.Contains(hirText, "neg(big)") {
		t.Errorf("want neg(big) at run time and neg(small) folded:\n%s", hirText)
	}
	has(t, hirText, "add(v, small)", "add(v1, small)", "const([-1.0, -2.0, -3.0, -4.0], f32[4])")
}

// TestONNXSymbolicWhere: PyTorch's expand(batch, 3, -1) (ConstantOfShape,
// Mul, Equal and Where over a shape holding batch), Tile and Expand of a
// shape value, and ConstantOfShape over the result: all resolved at import.
func TestONNXSymbolicWhere(t *testing.T) {
	g := &graph{outs: []string{"e", "o", "r"}}
	g.input("x", "batch", 1, 4)
	g.input("z", "batch", "batch")
	g.initI64("zero", nil, []int64{0})
	g.initI64("ax0", []int64{1}, []int64{0})
	g.initI64("three", []int64{1}, []int64{3})
	g.initI64("minus1", []int64{1}, []int64{-1})
	g.initI64("neg", nil, []int64{-1})
	g.initI64("two", []int64{1}, []int64{2})
	g.node("Shape", []string{"x"}, []string{"sx"})
	g.node("Gather", []string{"sx", "zero"}, []string{"b"}, ai("axis", 0))
	g.node("Unsqueeze", []string{"b", "ax0"}, []string{"b1"})
	g.node("Concat", []string{"b1", "three", "minus1"}, []string{"want"}, ai("axis", 0)) // [batch, 3, -1]
	g.node("Shape", []string{"want"}, []string{"rank"})
	g.node("ConstantOfShape", []string{"rank"}, []string{"ones"}, &onnxpb.Attr{Name: "value", Type: 4,
		T: &onnxpb.Tensor{DataType: 7, Dims: []int64{1}, Int64Data: []int64{1}}})
	g.node("Mul", []string{"ones", "neg"}, []string{"negs"})
	g.node("Equal", []string{"want", "negs"}, []string{"isneg"})
	g.node("Where", []string{"isneg", "ones", "want"}, []string{"shape"}) // [batch, 3, 1]
	g.node("Expand", []string{"x", "shape"}, []string{"e"})
	g.node("Tile", []string{"b1", "two"}, []string{"bb"}) // [batch, batch]
	g.node("ConstantOfShape", []string{"bb"}, []string{"fill"}, &onnxpb.Attr{Name: "value", Type: 4,
		T: &onnxpb.Tensor{DataType: 1, Dims: []int64{1}, FloatData: []float32{0.5}}})
	g.node("Add", []string{"z", "fill"}, []string{"o"})
	g.node("Expand", []string{"b1", "two"}, []string{"bb2"}) // [batch, batch]
	g.node("Reshape", []string{"z", "bb2"}, []string{"r"})
	const b = 3
	x := seq(b*4, 1)
	z := seq(b*b, 2)
	out, hirText := runONNX(t, g, specialize.Binding{"batch": b}, map[string]*tensor.Tensor{
		"x": tensor.FromF32([]int64{b, 1, 4}, x), "z": tensor.FromF32([]int64{b, b}, z)})
	lacks(t, hirText, "eq", "where", "mul")
	has(t, hirText, "expand(x, shape=[batch, 3, 1])", "shape=[batch, batch]")
	var we, wo, wr []float64
	for i := 0; i < b; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 4; k++ {
				we = append(we, float64(x[i*4+k]))
			}
		}
	}
	for _, v := range z {
		wo = append(wo, float64(v)+0.5)
		wr = append(wr, float64(v))
	}
	near(t, "Expand", out[0].F32(), we)
	near(t, "ConstantOfShape(Tile)", out[1].F32(), wo)
	near(t, "Reshape(Expand)", out[2].F32(), wr)
}

// TestONNXTile: Tile on a run-time value (unsqueeze, expand, reshape) with
// a symbolic dim.
func TestONNXTile(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", "batch", 3)
	g.initI64("reps", []int64{2}, []int64{2, 3})
	g.node("Tile", []string{"x", "reps"}, []string{"y"})
	x := seq(2*3, 1)
	out, _ := runONNX(t, g, specialize.Binding{"batch": 2}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 3}, x)})
	if s := out[0].Shape; len(s) != 2 || s[0] != 4 || s[1] != 9 {
		t.Fatalf("shape %v, want [4 9]", s)
	}
	var want []float64
	for i := 0; i < 4; i++ {
		for j := 0; j < 9; j++ {
			want = append(want, float64(x[(i%2)*3+j%3]))
		}
	}
	near(t, "Tile", out[0].F32(), want)
}

// TestONNXShapeValueErrors: a shape value that cannot be repeated or
// broadcast is an import error naming the node, and so is a Tile whose
// repeats do not match the rank.
func TestONNXShapeValueErrors(t *testing.T) {
	for _, c := range []struct {
		op   string
		arg  []int64
		want string
	}{
		{"Tile", []int64{-1}, `node 1 "/Tile_y" (Tile, opset 17): Tile to a negative size -1`},
		{"Expand", []int64{3}, `node 1 "/Expand_y" (Expand, opset 17): cannot expand 2 values to 3`},
	} {
		g := &graph{outs: []string{"r"}}
		g.input("x", "batch", 4)
		g.initI64("arg", []int64{1}, c.arg)
		g.node("Shape", []string{"x"}, []string{"s"})
		g.node(c.op, []string{"s", "arg"}, []string{"y"})
		g.node("Reshape", []string{"x", "y"}, []string{"r"})
		if _, err := onnx.Import(g.model(17), onnx.Options{Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.op, err, c.want)
		}
	}
	g := &graph{outs: []string{"y"}}
	g.input("x", "batch", 4)
	g.initI64("reps", []int64{1}, []int64{2})
	g.node("Tile", []string{"x", "reps"}, []string{"y"})
	if _, err := onnx.Import(g.model(17), onnx.Options{Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), `node 0 "/Tile_y" (Tile, opset 17): Tile with 1 repeats for a rank-2 input`) {
		t.Errorf("Tile repeats: %v", err)
	}
}
