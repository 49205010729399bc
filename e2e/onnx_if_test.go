package e2e

import (
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// ifNode adds If(cond) whose then branch is relu(x) + 1 (an initializer of
// the branch) and whose else branch is -x, both reading the outer x.
func (g *graph) ifNode(cond, x, out string) {
	then := &onnxpb.Graph{Name: "then",
		Initializers: []*onnxpb.Tensor{{Name: "one", DataType: 1, FloatData: []float32{1}}},
		Nodes: []*onnxpb.Node{
			{Name: "r", OpType: "Relu", Inputs: []string{x}, Outputs: []string{"then_r"}},
			{Name: "a", OpType: "Add", Inputs: []string{"then_r", "one"}, Outputs: []string{"then_y"}},
		},
		Outputs: []*onnxpb.ValueInfo{{Name: "then_y"}}}
	els := &onnxpb.Graph{Name: "else",
		Nodes:   []*onnxpb.Node{{Name: "n", OpType: "Neg", Inputs: []string{x}, Outputs: []string{"else_y"}}},
		Outputs: []*onnxpb.ValueInfo{{Name: "else_y"}}}
	g.node("If", []string{cond}, []string{out},
		&onnxpb.Attr{Name: "then_branch", Type: onnxpb.AttrGraph, HasGraph: true, G: then},
		&onnxpb.Attr{Name: "else_branch", Type: onnxpb.AttrGraph, HasGraph: true, G: els})
}

// TestONNXIfKnownAtImport: an If whose condition is a constant, or is
// computed from static shapes (a TorchScript shape check), imports its
// taken branch in place; both branches are checked.
func TestONNXIfKnownAtImport(t *testing.T) {
	x := []float32{-2, -0.5, 0, 1.5, 3, -1}
	for _, c := range []struct {
		name string
		make func(g *graph)
		then bool
	}{
		{"constant true", func(g *graph) {
			g.inits = append(g.inits, &onnxpb.Tensor{Name: "c", DataType: 9, RawData: []byte{1}})
		}, true},
		{"constant false", func(g *graph) {
			g.inits = append(g.inits, &onnxpb.Tensor{Name: "c", DataType: 9, RawData: []byte{0}})
		}, false},
		{"from the shape", func(g *graph) { // x.shape[0] == 2
			g.seqOf("x", 0, "rows")
			g.initI64("two", nil, []int64{2})
			g.node("Equal", []string{"rows", "two"}, []string{"c"})
		}, true},
		{"from the shape, false", func(g *graph) { // x.shape[1] == 2
			g.seqOf("x", 1, "cols")
			g.initI64("two", nil, []int64{2})
			g.node("Equal", []string{"cols", "two"}, []string{"c"})
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &graph{outs: []string{"y"}}
			g.input("x", 2, 3)
			c.make(g)
			g.ifNode("c", "x", "y")
			out, _ := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 3}, x)})
			want := make([]float64, len(x))
			for i, v := range x {
				if c.then {
					want[i] = float64(max(v, 0) + 1)
				} else {
					want[i] = float64(-v)
				}
			}
			nearTol(t, c.name, out[0].F32(), want, 0)
		})
	}
}

// TestONNXIfAtRunTime: a condition that only the binding or the data
// decides is refused at import, naming it.
func TestONNXIfAtRunTime(t *testing.T) {
	g := &graph{outs: []string{"y"}}
	g.input("x", "s", 3)
	g.seqOf("x", 0, "rows")
	g.initI64("two", nil, []int64{2})
	g.node("Equal", []string{"rows", "two"}, []string{"c"})
	g.ifNode("c", "x", "y")
	if e := importErr(g, 17); !strings.Contains(e, "is computed at run time") {
		t.Errorf("If on a symbolic dim: got %q", e)
	}
}
