package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Helpers shared by the tests: build one-node graphs over static types and
// read results back as float64.

func ty(dt tensor.DType, shape ...int64) mir.Type {
	d := make([]dim.Expr, len(shape))
	for k, v := range shape {
		d[k] = dim.Const(v)
	}
	return mir.Type{DType: dt, Shape: d}
}

// mk makes a tensor of any dtype from float64 values (which must be exact
// in the dtype; integers are truncated).
func mk(dt tensor.DType, shape []int64, vals ...float64) *tensor.Tensor {
	a := newArray(dt, shape)
	if len(vals) != a.size() {
		panic("mk: wrong number of values")
	}
	for k, v := range vals {
		if dt.IsFloat() {
			a.f[k] = roundFloat(v, dt)
		} else {
			a.i[k] = dt.Wrap(int64(v))
		}
	}
	return toTensor(a)
}

func sh(s ...int64) []int64 { return s }

// values reads a tensor back as float64.
func values(t *testing.T, x *tensor.Tensor) []float64 {
	t.Helper()
	a, err := fromTensor(x)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, a.size())
	for k := range out {
		out[k] = a.float(k)
	}
	return out
}

// ints reads an integer tensor back exactly.
func ints(t *testing.T, x *tensor.Tensor) []int64 {
	t.Helper()
	a, err := fromTensor(x)
	if err != nil || a.isFloat() {
		t.Fatalf("not an integer tensor: %v", err)
	}
	return a.i
}

// opGraph builds a graph with one input per tensor and one node.
func opGraph(op mir.Op, attrs mir.Attrs, out []mir.Type, ins ...*tensor.Tensor) *mir.Graph {
	g := &mir.Graph{Name: "t"}
	var args []*mir.Value
	for _, x := range ins {
		v := g.NewValue("in", ty(x.DType, x.Shape...))
		g.Inputs = append(g.Inputs, v)
		args = append(args, v)
	}
	n := g.Add(op, args, attrs, "test", out...)
	g.Outputs = n.Results
	return g
}

// eval1 runs one op and returns its only result.
func eval1(t *testing.T, op mir.Op, attrs mir.Attrs, out mir.Type, ins ...*tensor.Tensor) *tensor.Tensor {
	t.Helper()
	res, err := Run(opGraph(op, attrs, []mir.Type{out}, ins...), nil, ins)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return res[0]
}

// evalErr runs one op that must fail, and returns the error text.
func evalErr(t *testing.T, op mir.Op, attrs mir.Attrs, out mir.Type, ins ...*tensor.Tensor) string {
	t.Helper()
	_, err := Run(opGraph(op, attrs, []mir.Type{out}, ins...), nil, ins)
	if err == nil {
		t.Fatalf("%s: no error", op)
	}
	return err.Error()
}

// same reports whether got equals want within a relative tolerance, with
// NaN equal to NaN and infinities compared exactly.
func same(got, want, tol float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0) || tol == 0:
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func check(t *testing.T, what string, got *tensor.Tensor, wantShape []int64, want []float64, tol float64) {
	t.Helper()
	if !sameShape(got.Shape, wantShape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape, wantShape)
	}
	g := values(t, got)
	if len(g) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(want))
	}
	for k := range want {
		if !same(g[k], want[k], tol) {
			t.Errorf("%s: element %d is %v, want %v (all: %v)", what, k, g[k], want[k], g)
			return
		}
	}
}

func wantErr(t *testing.T, err string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(err, p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

var (
	inf = math.Inf(1)
	nan = math.NaN()
)
