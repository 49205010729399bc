package fusion

import (
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/tensor"
)

func shapeOf(d ...int64) []dim.Expr {
	var s []dim.Expr
	for _, x := range d {
		s = append(s, dim.Const(x))
	}
	return s
}

func filled(dt tensor.DType, seed float64, shape ...int64) *tensor.Tensor {
	t := tensor.New(dt, shape...)
	for i := range t.F32() {
		t.F32()[i] = float32(math.Sin(float64(i)*0.7+seed) * 1.5)
	}
	return t
}

// sameResults runs g before and after rewrite with the reference
// interpreter and fails on any difference past one rounding.
func sameResults(t *testing.T, g *mir.Graph, in []*tensor.Tensor, rewrite func()) {
	t.Helper()
	want, err := eval.Run(g, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	rewrite()
	got, err := eval.Run(g, nil, in)
	if err != nil {
		t.Fatalf("after: %v\n%s", err, g)
	}
	for i := range want {
		if got[i].DType != want[i].DType || len(got[i].Shape) != len(want[i].Shape) {
			t.Fatalf("output %d: %s%v, want %s%v", i, got[i].DType, got[i].Shape, want[i].DType, want[i].Shape)
		}
		for k, w := range want[i].F32() {
			if d := math.Abs(float64(got[i].F32()[k] - w)); d > 1e-6*math.Max(1, math.Abs(float64(w))) {
				t.Fatalf("output %d element %d: %g, want %g\n%s", i, k, got[i].F32()[k], w, g)
			}
		}
	}
}

// TestSinkViews: a 1-D convolution (conv2d, then a squeeze of its unit
// axis) followed by a per-channel bias, a relu, a residual add of the
// squeezed shape and a scalar multiply: the squeeze moves below all four
// and the epilogue fusion then takes the bias, the relu and the residual
// into the conv, the results unchanged. A product viewed by a general
// reshape sinks below an add of its full shape, not below an add of a
// broadcast row. A chain of adds of viewed products fuses into them.
func TestSinkViews(t *testing.T) {
	g := &mir.Graph{}
	f32 := tensor.F32
	x := g.NewValue("x", mir.Type{DType: f32, Shape: shapeOf(2, 3, 1, 9)})
	h := g.NewValue("h", mir.Type{DType: f32, Shape: shapeOf(2, 4, 7)})
	g.Inputs = []*mir.Value{x, h}
	conv := g.Add(mir.OpConv2D, []*mir.Value{x, g.NewConst("w", filled(f32, 1, 4, 3, 1, 3))},
		mir.Attrs{"stride": []int64{1, 1}, "pad": []int64{0, 0, 0, 0}, "dilation": []int64{1, 1}, "groups": int64(1), "bias": false},
		"t:1:1 conv2d", mir.Type{DType: f32, Shape: shapeOf(2, 4, 1, 7)})
	t3 := mir.Type{DType: f32, Shape: shapeOf(2, 4, 7)}
	sq := g.Add(mir.OpReshape, conv.Results, nil, "t:2:1 squeeze", t3)
	bias := g.Add("add", []*mir.Value{sq.Results[0], g.NewConst("b", filled(f32, 2, 4, 1))}, nil, "t:3:1 add", t3)
	relu := g.Add("relu", bias.Results, nil, "t:4:1 relu", t3)
	res := g.Add("add", []*mir.Value{h, relu.Results[0]}, nil, "t:5:1 add", t3)
	half := g.NewConst("half", tensor.FromF32([]int64{1}, []float32{0.5}))
	scaled := g.Add("mul", []*mir.Value{res.Results[0], half}, nil, "t:6:1 mul", t3)
	g.Outputs = scaled.Results
	y := g.Outputs[0]

	in := []*tensor.Tensor{filled(f32, 3, 2, 3, 1, 9), filled(f32, 4, 2, 4, 7)}
	sameResults(t, g, in, func() {
		did, err := SinkViews(g)
		if err != nil || did == "" {
			t.Fatalf("SinkViews: did %q, err %v", did, err)
		}
		if last := g.Nodes[len(g.Nodes)-1]; last.Op != mir.OpReshape || last.Results[0] != y || g.Outputs[0] != y {
			t.Fatalf("the squeeze is not last:\n%s", g)
		}
		if _, err := FuseEpilogues(g); err != nil {
			t.Fatal(err)
		}
		if _, err := DeadCode(g); err != nil {
			t.Fatal(err)
		}
	})
	if !conv.Attrs.Bool("bias") || conv.Attrs.String("act") != "relu" || !conv.Attrs.Bool("residual") {
		t.Errorf("the conv's epilogue: %v\n%s", conv.Attrs, g)
	}
	if conv.Results[0].Type.Rank() != 4 {
		t.Errorf("the conv's result: %v", conv.Results[0].Type)
	}

	for _, full := range []bool{true, false} {
		g := &mir.Graph{}
		a := g.NewValue("a", mir.Type{DType: f32, Shape: shapeOf(6, 5)})
		other := mir.Type{DType: f32, Shape: shapeOf(2, 3, 5)}
		if !full {
			other.Shape = shapeOf(3, 5)
		}
		o := g.NewValue("o", other)
		g.Inputs = []*mir.Value{a, o}
		mm := g.Add(mir.OpMatMul, []*mir.Value{a, g.NewConst("w", filled(f32, 5, 5, 5))}, nil, "t:1:1 matmul", mir.Type{DType: f32, Shape: shapeOf(6, 5)})
		t3 := mir.Type{DType: f32, Shape: shapeOf(2, 3, 5)}
		v := g.Add(mir.OpReshape, mm.Results, nil, "t:2:1 reshape", t3)
		add := g.Add("add", []*mir.Value{v.Results[0], o}, nil, "t:3:1 add", t3)
		g.Outputs = add.Results
		od := []int64{2, 3, 5}
		if !full {
			od = od[1:]
		}
		sameResults(t, g, []*tensor.Tensor{filled(f32, 6, 6, 5), filled(f32, 7, od...)}, func() {
			did, err := SinkViews(g)
			if err != nil || (did != "") != full {
				t.Fatalf("full %v: did %q, err %v\n%s", full, did, err, g)
			}
		})
	}

	// A sum of three viewed products, ((c0 + c1) + c2): the later product
	// of each add takes the sum so far as its residual, so c1 and c2 get
	// one each and no add is left.
	g = &mir.Graph{}
	a := g.NewValue("a", mir.Type{DType: f32, Shape: shapeOf(6, 5)})
	g.Inputs = []*mir.Value{a}
	t3 = mir.Type{DType: f32, Shape: shapeOf(1, 6, 5)}
	var sum *mir.Value
	for i := range 3 {
		mm := g.Add(mir.OpMatMul, []*mir.Value{a, g.NewConst("w", filled(f32, float64(i), 5, 5))}, nil, "t:1:1 matmul", a.Type)
		v := g.Add(mir.OpReshape, mm.Results, nil, "t:2:1 unsqueeze", t3).Results[0]
		if sum == nil {
			sum = v
			continue
		}
		sum = g.Add("add", []*mir.Value{sum, v}, nil, "t:3:1 add", t3).Results[0]
	}
	g.Outputs = []*mir.Value{sum}
	sameResults(t, g, []*tensor.Tensor{filled(f32, 8, 6, 5)}, func() {
		if _, err := SinkViews(g); err != nil {
			t.Fatal(err)
		}
		if _, err := FuseEpilogues(g); err != nil {
			t.Fatal(err)
		}
		if _, err := DeadCode(g); err != nil {
			t.Fatal(err)
		}
	})
	residuals := 0
	for _, n := range g.Nodes {
		if n.Op == "add" {
			t.Errorf("an add is left:\n%s", g)
		}
		if n.Attrs.Bool("residual") {
			residuals++
		}
	}
	if residuals != 2 {
		t.Errorf("%d residual epilogues, want 2:\n%s", residuals, g)
	}
}
