package e2e

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// runONNXAt is runONNX for a model of the given opset.
func runONNXAt(t *testing.T, g *graph, opset int64, b specialize.Binding, inputs map[string]*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	res, err := onnx.Import(g.model(opset), onnx.Options{Module: "t", Source: "t.onnx"})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return runImported(t, res, "cpu", b, inputs)
}

// TestONNXGroupNormalization: GroupNormalization against its definition
// in float64, scale and bias per group (opset 18) and per channel (opset
// 21), over a symbolic plane at two sizes.
func TestONNXGroupNormalization(t *testing.T) {
	const c, groups = 6, 3
	for _, opset := range []int64{18, 21} {
		per := int64(groups)
		if opset >= 21 {
			per = c
		}
		scale, bias := seq(int(per), 1), seq(int(per), 0.5)
		for i := range scale {
			scale[i] += 1.5
		}
		g := &graph{outs: []string{"y"}}
		g.input("x", 2, c, "h", 3)
		g.init("s", []int64{per}, scale)
		g.init("b", []int64{per}, bias)
		g.node("GroupNormalization", []string{"x", "s", "b"}, []string{"y"}, ai("num_groups", groups), af("epsilon", 1e-3))
		for _, h := range []int64{2, 5} {
			plane := int(h * 3)
			x := seq(2*c*plane, 3)
			out := runONNXAt(t, g, opset, specialize.Binding{"h": h}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, c, h, 3}, x)})
			want := make([]float64, len(x))
			cpg := c / groups
			for n := range 2 {
				for gr := range groups {
					lo, hi := (n*c+gr*cpg)*plane, (n*c+(gr+1)*cpg)*plane
					var mean, v float64
					for _, e := range x[lo:hi] {
						mean += float64(e)
					}
					mean /= float64(hi - lo)
					for _, e := range x[lo:hi] {
						v += (float64(e) - mean) * (float64(e) - mean)
					}
					v /= float64(hi - lo)
					for i := lo; i < hi; i++ {
						ch := (i / plane) % c
						k := gr
						if opset >= 21 {
							k = ch
						}
						want[i] = (float64(x[i])-mean)/math.Sqrt(v+float64(float32(1e-3)))*float64(scale[k]) + float64(bias[k])
					}
				}
			}
			nearTol(t, fmt.Sprintf("GroupNormalization opset %d h=%d", opset, h), out[0].F32(), want, 2e-5)
		}
	}
	// A per-channel scale at opset 18 is an error that says what it wants.
	g := &graph{outs: []string{"y"}}
	g.input("x", 1, c, 2, 2)
	g.init("s", []int64{c}, seq(c, 1))
	g.init("b", []int64{c}, seq(c, 1))
	g.node("GroupNormalization", []string{"x", "s", "b"}, []string{"y"}, ai("num_groups", groups))
	if _, err := onnx.Import(g.model(18), onnx.Options{Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), "want [3] (opset 18: one per group)") {
		t.Errorf("opset 18 with a per-channel scale: %v", err)
	}
}

// TestONNXLRN: LRN against its definition (the channel window clipped at
// the edges), odd and even sizes, and a window wider than the channels.
func TestONNXLRN(t *testing.T) {
	const n, c, hw = 2, 7, 6
	x := seq(n*c*hw, 2)
	for _, size := range []int64{3, 4, 1, 40} {
		g := &graph{outs: []string{"y"}}
		g.input("x", n, c, 2, 3)
		g.node("LRN", []string{"x"}, []string{"y"}, ai("size", size), af("alpha", 0.02), af("beta", 0.75), af("bias", 1.5))
		out, _ := runONNX(t, g, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{n, c, 2, 3}, x)})
		want := make([]float64, len(x))
		alpha, beta, bias := float64(float32(0.02)), float64(float32(0.75)), float64(float32(1.5))
		for b := range n {
			for ch := range c {
				for p := range hw {
					var s float64
					for k := ch - int(size-1)/2; k <= ch+int(size)/2; k++ {
						if k >= 0 && k < c {
							v := float64(x[(b*c+k)*hw+p])
							s += v * v
						}
					}
					i := (b*c+ch)*hw + p
					want[i] = float64(x[i]) / math.Pow(bias+alpha/float64(size)*s, beta)
				}
			}
		}
		nearTol(t, fmt.Sprintf("LRN size=%d", size), out[0].F32(), want, 2e-6)
	}
}

// TestONNXHardmax: one at the first maximum along the axis (opset 13),
// and over the flattened axes from axis on (opset 11), ties included.
func TestONNXHardmax(t *testing.T) {
	x := []float32{1, 5, 5, 2, 0, -1, 3, 3, 7, 7, 1, 0}
	for _, c := range []struct {
		opset, axis int64
		want        []float64
	}{
		// [2, 2, 3]: the first maximum of each row of 3.
		{13, -1, []float64{0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0}},
		// along axis 1 (pairs of rows).
		{13, 1, []float64{0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0}},
		// opset 11, axis 1: the maximum over each image's 6 values.
		{11, 1, []float64{0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}},
	} {
		g := &graph{outs: []string{"y"}}
		g.input("x", 2, 2, 3)
		g.node("Hardmax", []string{"x"}, []string{"y"}, ai("axis", c.axis))
		out := runONNXAt(t, g, c.opset, specialize.Binding{}, map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{2, 2, 3}, x)})
		shapeIs(t, "Hardmax", out[0], 2, 2, 3)
		near(t, fmt.Sprintf("Hardmax opset %d axis %d", c.opset, c.axis), out[0].F32(), c.want)
	}
}
