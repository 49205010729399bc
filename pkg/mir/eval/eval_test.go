package eval

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

func TestFused(t *testing.T) {
	// region(a, b) = (relu((a + b) * 2), a + b), with the 2 a constant the
	// region refers to without taking it as an input.
	region := &mir.Graph{Name: "region"}
	ra := region.NewValue("a", ty(tensor.F32, 2, 2))
	rb := region.NewValue("b", ty(tensor.F32, 2))
	region.Inputs = []*mir.Value{ra, rb}
	two := region.NewConst("two", mk(tensor.F32, sh(), 2))
	s := region.Add("add", []*mir.Value{ra, rb}, nil, "", ty(tensor.F32, 2, 2)).Results[0]
	m := region.Add("mul", []*mir.Value{s, two}, nil, "", ty(tensor.F32, 2, 2)).Results[0]
	r := region.Add("relu", []*mir.Value{m}, nil, "", ty(tensor.F32, 2, 2)).Results[0]
	region.Outputs = []*mir.Value{r, s}

	g := &mir.Graph{Name: "main"}
	a := g.NewValue("a", ty(tensor.F32, 2, 2))
	g.Inputs = []*mir.Value{a}
	bias := g.NewConst("bias", mk(tensor.F32, sh(2), -1, 1))
	n := g.Add(mir.OpFused, []*mir.Value{a, bias}, nil, "", ty(tensor.F32, 2, 2), ty(tensor.F32, 2, 2))
	n.Region = region
	// use the fused results downstream
	out := g.Add("sub", []*mir.Value{n.Results[0], n.Results[1]}, nil, "", ty(tensor.F32, 2, 2)).Results[0]
	g.Outputs = []*mir.Value{n.Results[0], n.Results[1], out}

	x := mk(tensor.F32, sh(2, 2), 0, 0, 3, -3)
	res, err := Run(g, nil, []*tensor.Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "fused relu", res[0], sh(2, 2), []float64{0, 2, 4, 0}, 0)
	check(t, "fused sum", res[1], sh(2, 2), []float64{-1, 1, 2, -2}, 0)
	check(t, "after", res[2], sh(2, 2), []float64{1, 1, 2, 2}, 0)
}

func TestSymbolicShapes(t *testing.T) {
	// y = x + x over f32[batch, n], run at two bindings.
	b, n := dim.Sym("batch"), dim.Sym("n")
	xt := mir.Type{DType: tensor.F32, Shape: []dim.Expr{b, n}}
	g := &mir.Graph{Name: "sym"}
	x := g.NewValue("x", xt)
	g.Inputs = []*mir.Value{x}
	g.Outputs = g.Add("add", []*mir.Value{x, x}, nil, "", xt).Results
	for _, bind := range []map[string]int64{{"batch": 1, "n": 3}, {"batch": 3, "n": 1}} {
		in := mk(tensor.F32, sh(bind["batch"], bind["n"]), 1, 2, 3)
		res, err := Run(g, bind, []*tensor.Tensor{in})
		if err != nil {
			t.Fatal(err)
		}
		check(t, "symbolic add", res[0], in.Shape, []float64{2, 4, 6}, 0)
	}
	// wrong shape and wrong dtype name the input
	_, err := Run(g, map[string]int64{"batch": 1, "n": 2}, []*tensor.Tensor{mk(tensor.F32, sh(1, 3), 1, 2, 3)})
	wantErr(t, errString(err), "input 0 (x)", "[1, 3]", "[1, 2]")
	_, err = Run(g, map[string]int64{"batch": 1, "n": 3}, []*tensor.Tensor{mk(tensor.F64, sh(1, 3), 1, 2, 3)})
	wantErr(t, errString(err), "input 0 (x)", "f64", "f32")
	// an unbound dim, a missing input, short data
	_, err = Run(g, map[string]int64{"batch": 1}, []*tensor.Tensor{mk(tensor.F32, sh(1, 3), 1, 2, 3)})
	wantErr(t, errString(err), "n")
	_, err = Run(g, map[string]int64{"batch": 1, "n": 3}, nil)
	wantErr(t, errString(err), "1 inputs")
	short := &tensor.Tensor{DType: tensor.F32, Shape: []int64{1, 3}, Data: make([]byte, 5)}
	_, err = Run(g, map[string]int64{"batch": 1, "n": 3}, []*tensor.Tensor{short})
	wantErr(t, errString(err), "bytes")
}

func TestErrors(t *testing.T) {
	x := mk(tensor.F32, sh(2), 1, 2)
	wantErr(t, evalErr(t, "frobnicate", nil, ty(tensor.F32, 2), x), "unknown op", "frobnicate")
	wantErr(t, evalErr(t, "add", nil, ty(tensor.F32, 2), x), "operands")
	wantErr(t, evalErr(t, mir.OpFused, nil, ty(tensor.F32, 2), x), "region")
	// a value used before its definition
	g := &mir.Graph{Name: "bad"}
	v := g.NewValue("ghost", ty(tensor.F32, 2))
	g.Outputs = g.Add("neg", []*mir.Value{v}, nil, "", ty(tensor.F32, 2)).Results
	_, err := Run(g, nil, nil)
	wantErr(t, errString(err), "ghost", "before it is defined")
	// the node's source position leads the message
	g = opGraph("div", nil, []mir.Type{ty(tensor.I32, 1)}, mk(tensor.I32, sh(1), 1), mk(tensor.I32, sh(1), 0))
	g.Nodes[0].Src = "m.hir:3:7 div"
	_, err = Run(g, nil, []*tensor.Tensor{mk(tensor.I32, sh(1), 1), mk(tensor.I32, sh(1), 0)})
	wantErr(t, errString(err), "m.hir:3:7", "division by zero")
}

func errString(err error) string {
	if err == nil {
		return "<no error>"
	}
	return err.Error()
}
