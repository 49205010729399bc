package specialize_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// rnnModule is one lstm or gru over x [seq, 2, 3] with hidden 4.
func rnnModule(t *testing.T, op, direction string, initial bool, extra string) *mir.Graph {
	t.Helper()
	dirs, g := 1, 4
	if direction == "bidirectional" {
		dirs = 2
	}
	if op == "gru" {
		g = 3
	}
	sig := "x: f32[seq, 2, 3]"
	args := "x, w, r, b"
	res, ret := "y, yh, yc", fmt.Sprintf("y: f32[seq, %d, 2, 4], yh: f32[%d, 2, 4], yc: f32[%d, 2, 4]", dirs, dirs, dirs)
	if op == "gru" {
		res, ret = "y, yh", fmt.Sprintf("y: f32[seq, %d, 2, 4], yh: f32[%d, 2, 4]", dirs, dirs)
	}
	if initial {
		sig += fmt.Sprintf(", h0: f32[%d, 2, 4]", dirs)
		args += ", h0"
		if op == "lstm" {
			sig += fmt.Sprintf(", c0: f32[%d, 2, 4]", dirs)
			args += ", c0"
		}
	}
	src := fmt.Sprintf(`hir 1
module m
dim seq
param w : f32[%[1]d, %[2]d, 3]
param r : f32[%[1]d, %[2]d, 4]
param b : f32[%[1]d, %[3]d]
func main(%[4]s) -> (%[5]s) {
  %[6]s = %[7]s(%[8]s, hidden=4, direction=%[9]q%[10]s)
  return %[6]s
}
`, dirs, g*4, 2*g*4, sig, ret, res, op, args, direction, extra)
	m, err := hir.ParseFile("m.hir", []byte(src))
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	ws := &lower.Weights{Random: true, Seed: 3}
	defer ws.Close()
	gr, err := lower.ToMIR(m, "main", ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fusion.Run(gr); err != nil {
		t.Fatal(err)
	}
	return gr
}

// TestRecurrentExpansion: the graph specialization unrolls computes what
// the reference interpreter computes from the recurrent node, for every
// cell, direction and initial state, at sequence lengths 1 and 5, and
// leaves the template as it was.
func TestRecurrentExpansion(t *testing.T) {
	for _, op := range []string{"lstm", "gru"} {
		for _, dir := range []string{"forward", "reverse", "bidirectional"} {
			for _, initial := range []bool{false, true} {
				extras := []string{""}
				if op == "gru" {
					extras = []string{", linear_before_reset=true", ", linear_before_reset=false"}
				}
				for _, extra := range extras {
					g := rnnModule(t, op, dir, initial, extra)
					before := g.String()
					for _, seq := range []int64{1, 5} {
						name := fmt.Sprintf("%s/%s/initial=%v%s/seq=%d", op, dir, initial, extra, seq)
						b := specialize.Binding{"seq": seq}
						var ins []*tensor.Tensor
						for k, v := range g.Inputs {
							s, _ := specialize.Concrete(v.Type.Shape, b)
							x := tensor.New(tensor.F32, s...)
							for i := range x.F32() {
								x.F32()[i] = float32(math.Sin(float64(3*i+k) * 0.7))
							}
							ins = append(ins, x)
						}
						want, err := eval.Run(g, b, ins)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						p, err := specialize.Specialize(g, b)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						for _, n := range p.Graph.Nodes {
							if n.Op == mir.OpRecurrent {
								t.Fatalf("%s: the plan keeps a recurrent node", name)
							}
						}
						got, err := eval.Run(p.Graph, b, ins)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						for i := range want {
							w, o := want[i].F32(), got[i].F32()
							for k := range w {
								if math.Abs(float64(w[k]-o[k])) > 1e-6 {
									t.Fatalf("%s: output %d element %d: %g, want %g", name, i, k, o[k], w[k])
								}
							}
						}
					}
					if g.String() != before {
						t.Fatalf("%s %s: specialization changed the template", op, dir)
					}
				}
			}
		}
	}
}

func TestRecurrentTooLong(t *testing.T) {
	g := rnnModule(t, "gru", "bidirectional", false, "")
	_, err := specialize.Specialize(g, specialize.Binding{"seq": 2049})
	if err == nil || !strings.Contains(err.Error(), "2049 steps in 2 direction(s) unroll to 4098 steps, more than 4096") {
		t.Fatalf("err = %v", err)
	}
}
