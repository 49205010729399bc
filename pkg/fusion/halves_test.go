package fusion

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestWidenHalves: an f16 matmul becomes casts of its operands to f32,
// the matmul in f32 and a cast of its result back to f16, which keeps
// the original result value (so its uses and the graph's output are
// untouched); an elementwise op on halves and an f32 graph are left as
// they are.
func TestWidenHalves(t *testing.T) {
	shape := func(d ...int64) []dim.Expr {
		var s []dim.Expr
		for _, x := range d {
			s = append(s, dim.Const(x))
		}
		return s
	}
	g := &mir.Graph{}
	a := g.NewValue("a", mir.Type{DType: tensor.F16, Shape: shape(2, 3)})
	w := g.NewConst("w", tensor.New(tensor.F16, 3, 4))
	g.Inputs = []*mir.Value{a}
	mm := g.Add(mir.OpMatMul, []*mir.Value{a, w}, nil, "t:1:1 matmul", mir.Type{DType: tensor.F16, Shape: shape(2, 4)})
	y := mm.Results[0]
	relu := g.Add("relu", []*mir.Value{y}, nil, "t:2:1 relu", y.Type)
	g.Outputs = []*mir.Value{relu.Results[0], y}

	did, err := WidenHalves(g)
	if err != nil || did == "" {
		t.Fatalf("did %q, err %v", did, err)
	}
	var ops []mir.Op
	for _, n := range g.Nodes {
		ops = append(ops, n.Op)
	}
	if want := []mir.Op{"cast", "cast", mir.OpMatMul, "cast", "relu"}; len(ops) != len(want) || ops[2] != want[2] || ops[3] != want[3] || ops[4] != want[4] {
		t.Fatalf("nodes %v, want %v", ops, want)
	}
	for _, v := range mm.Args {
		if v.Type.DType != tensor.F32 {
			t.Errorf("matmul operand %v is %s, want f32", v, v.Type.DType)
		}
	}
	if r := mm.Results[0]; r.Type.DType != tensor.F32 || r.Def != mm {
		t.Errorf("matmul result %v %s", r, r.Type.DType)
	}
	back := g.Nodes[3]
	if back.Results[0] != y || y.Def != back || y.Type.DType != tensor.F16 || back.Attrs.DType("to") != tensor.F16 {
		t.Errorf("the cast back does not define the original f16 result")
	}
	if relu.Args[0] != y || g.Outputs[1] != y {
		t.Errorf("the result's uses changed")
	}

	f := &mir.Graph{}
	x := f.NewValue("x", mir.Type{DType: tensor.F32, Shape: shape(2, 3)})
	f.Add(mir.OpMatMul, []*mir.Value{x, f.NewConst("w", tensor.New(tensor.F32, 3, 4))}, nil, "", mir.Type{DType: tensor.F32, Shape: shape(2, 4)})
	if did, err := WidenHalves(f); did != "" || err != nil || len(f.Nodes) != 1 {
		t.Errorf("an f32 graph: did %q, err %v, %d nodes", did, err, len(f.Nodes))
	}
}
