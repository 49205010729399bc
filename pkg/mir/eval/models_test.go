package eval

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// testWeights fills every param deterministically: sin(i + h)*0.1 with h
// derived from the name, and 0.5 + |that| for params whose name contains
// "var" (batchnorm variances must be positive).
type testWeights struct{}

func (testWeights) Weight(p *hir.ParamDecl) (*tensor.Tensor, error) {
	shape := make([]int64, p.Checked.Rank())
	for k, d := range p.Checked.Shape {
		v, ok := d.Const()
		if !ok {
			return nil, fmt.Errorf("param %s has a symbolic shape", p.Name)
		}
		shape[k] = v
	}
	h := 0.0
	for _, c := range p.Name {
		h += float64(c)
	}
	a := newArray(p.Checked.DType, shape)
	for k := 0; k < a.size(); k++ {
		v := math.Sin(float64(k)+h) * 0.1
		if strings.Contains(p.Name, "var") {
			v = 0.5 + math.Abs(v)
		}
		if a.isFloat() {
			a.f[k] = v
		} else {
			a.i[k] = int64(k % 2)
		}
	}
	return toTensor(a.fit()), nil
}

// bindingFor picks small values for the module's dims (distinct ones, so
// that a mix-up of two dims shows), within bounds and satisfying the
// constraints Check recorded.
func bindingFor(t *testing.T, m *hir.Module) map[string]int64 {
	names := m.DimNames()
	var last error
	for c := int64(2); c <= 16; c++ {
		b := map[string]int64{}
		for k, n := range names {
			iv := m.Bounds[n]
			b[n] = min(max(c+int64(k), iv.Lo), iv.Hi)
		}
		if last = m.CheckBinding(b); last == nil {
			return b
		}
	}
	t.Fatalf("%s: no small binding satisfies the module: %v", m.File, last)
	return nil
}

// inputFor fills an input deterministically: floats sin-valued, integers
// 0 or 1 (in range for every gather), bools alternating.
func inputFor(dt tensor.DType, shape []int64, seed int) *tensor.Tensor {
	a := newArray(dt, shape)
	for k := 0; k < a.size(); k++ {
		if a.isFloat() {
			a.f[k] = math.Sin(0.7*float64(k) + float64(seed))
		} else {
			a.i[k] = int64((k + seed) % 2)
		}
	}
	return toTensor(a.fit())
}

// legitimateInf lists outputs that hold infinities by design.
var legitimateInf = map[string]bool{
	"ops_misc.main.mask": true, // 0 on and below the diagonal, -inf above
}

func TestModels(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/models/*.hir")
	if err != nil || len(files) == 0 {
		t.Fatalf("no models found: %v", err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := hir.ParseFile(filepath.Base(file), src)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := hir.Check(m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		binding := bindingFor(t, m)
		for _, d := range m.Decls {
			f, ok := d.(*hir.FuncDecl)
			if !ok {
				continue
			}
			name := strings.TrimSuffix(filepath.Base(file), ".hir") + "." + f.Name
			t.Run(name, func(t *testing.T) {
				g, err := lower.ToMIR(m, f.Name, testWeights{})
				if err != nil {
					t.Fatal(err)
				}
				runModel(t, name, g, binding)
			})
		}
	}
}

func runModel(t *testing.T, name string, g *mir.Graph, binding map[string]int64) {
	ev := &evaluator{binding: binding}
	inputs := make([]*tensor.Tensor, len(g.Inputs))
	for i, v := range g.Inputs {
		s, err := ev.shape(v)
		if err != nil {
			t.Fatal(err)
		}
		inputs[i] = inputFor(v.Type.DType, s, i)
	}
	start := time.Now()
	outs, err := Run(g, binding, inputs)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %v: %d nodes in %v", name, binding, len(g.Nodes), elapsed)
	if elapsed > 5*time.Second {
		t.Errorf("%s took %v", name, elapsed)
	}
	if len(outs) != len(g.Outputs) {
		t.Fatalf("%d outputs, want %d", len(outs), len(g.Outputs))
	}
	for i, v := range g.Outputs {
		want, err := ev.shape(v)
		if err != nil {
			t.Fatal(err)
		}
		o := outs[i]
		if o.DType != v.Type.DType || !sameShape(o.Shape, want) {
			t.Errorf("output %s is %s%s, want %s%s", v.Name, o.DType, tensor.ShapeString(o.Shape), v.Type.DType, tensor.ShapeString(want))
			continue
		}
		if err := o.Check(); err != nil {
			t.Errorf("output %s: %v", v.Name, err)
		}
		if !o.DType.IsFloat() {
			continue
		}
		vals := values(t, o)
		infs := 0
		for k, x := range vals {
			switch {
			case math.IsNaN(x):
				t.Errorf("output %s: element %d is NaN", v.Name, k)
				return
			case math.IsInf(x, 0):
				if !legitimateInf[name+"."+v.Name] {
					t.Errorf("output %s: element %d is %v", v.Name, k, x)
					return
				}
				infs++
			}
		}
		if legitimateInf[name+"."+v.Name] && infs == 0 {
			t.Errorf("output %s has no infinity", v.Name)
		}
	}
}

// TestModelValues spot-checks model outputs whose values are known
// whatever the weights: softmax rows sum to 1, the hand softmax equals
// the builtin, the causal mask is -inf exactly above the diagonal, casts
// round-trip.
func TestModelValues(t *testing.T) {
	run := func(file, fn string) (map[string]*tensor.Tensor, map[string]int64) {
		src, err := os.ReadFile("../../../testdata/models/" + file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := hir.ParseFile(file, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := hir.Check(m); err != nil {
			t.Fatal(err)
		}
		binding := bindingFor(t, m)
		g, err := lower.ToMIR(m, fn, testWeights{})
		if err != nil {
			t.Fatal(err)
		}
		ev := &evaluator{binding: binding}
		inputs := make([]*tensor.Tensor, len(g.Inputs))
		for i, v := range g.Inputs {
			s, _ := ev.shape(v)
			inputs[i] = inputFor(v.Type.DType, s, i)
		}
		outs, err := Run(g, binding, inputs)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*tensor.Tensor{}
		for i, v := range g.Outputs {
			byName[v.Name] = outs[i]
		}
		return byName, binding
	}

	r, _ := run("ops_reduce.hir", "main")
	for _, v := range values(t, r["diff"]) {
		if math.Abs(v) > 1e-6 {
			t.Fatalf("hand softmax differs from softmax by %v", v)
		}
	}
	sm := values(t, r["sm"])
	for row := 0; row < len(sm)/64; row++ {
		s := 0.0
		for _, v := range sm[row*64 : (row+1)*64] {
			s += v
		}
		if math.Abs(s-1) > 1e-6 {
			t.Fatalf("softmax row %d sums to %v", row, s)
		}
	}

	r, b := run("ops_misc.hir", "main")
	seq := int(b["seq"])
	mask := values(t, r["mask"])
	for i := 0; i < seq; i++ {
		for j := 0; j < seq; j++ {
			want := 0.0
			if j > i {
				want = math.Inf(-1)
			}
			if mask[i*seq+j] != want {
				t.Fatalf("mask[%d][%d] = %v, want %v", i, j, mask[i*seq+j], want)
			}
		}
	}
	check(t, "next_pos", r["next_pos"], sh(int64(seq+1)), func() []float64 {
		var v []float64
		for k := 0; k <= seq; k++ {
			v = append(v, float64(k))
		}
		return v
	}(), 0)
	// consts = zeros[4, 2] + [0.25, -0.25]
	check(t, "consts", r["consts"], sh(4, 2), []float64{0.25, -0.25, 0.25, -0.25, 0.25, -0.25, 0.25, -0.25}, 0)

	r, _ = run("ops_misc.hir", "casts")
	x := values(t, inputFor(tensor.F32, sh(int64(len(values(t, r["back"])))), 0))
	back := values(t, r["back"])
	for k := range back {
		// f32 -> f16 -> bf16 -> f64 -> f32 loses at most bf16 precision.
		if math.Abs(back[k]-x[k]) > math.Abs(x[k])*math.Ldexp(1, -8)+1e-7 {
			t.Fatalf("cast round trip: %v became %v", x[k], back[k])
		}
	}
}
