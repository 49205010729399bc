package cgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// reduceProgram is one f32 reduction step per case.
func reduceProgram(cases []lir.Reduce) *lir.Program {
	p := &lir.Program{}
	for i, c := range cases {
		op := c
		op.DType = tensor.F32
		var outShape []int64
		red := map[int64]bool{}
		for _, a := range c.Axes {
			red[a] = true
		}
		for d, n := range c.Shape {
			if !red[int64(d)] {
				outShape = append(outShape, n)
			}
		}
		op.X = addInput(p, fmt.Sprintf("x%d", i), tensor.F32, c.Shape...)
		op.Out = addOutput(p, fmt.Sprintf("y%d", i), tensor.F32, outShape...)
		p.Steps = append(p.Steps, lir.Step{Op: &op, Src: fmt.Sprintf("t.hir:1:1 reduce %d", i)})
	}
	return p
}

// TestNativeReduce compiles sum, mean, prod, max and min over rows, a
// middle axis, a leading axis and everything, at lengths around the lane
// and block widths, for every level this CPU runs, and checks them
// against the runtime's Go kernel: max and min exactly (+0 and -0 equal,
// NaN where it gives NaN), sums, means and products within 1e-6 of the
// magnitude of the sum of absolute values (both accumulate in double, in
// different orders). Reductions of several separate runs of axes stay
// on the Go kernel.
func TestNativeReduce(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	pool := parallel.NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(7, 8))
	var cases []lir.Reduce
	for _, fn := range []lir.ReduceFn{lir.ReduceSum, lir.ReduceMean, lir.ReduceProd, lir.ReduceMax, lir.ReduceMin} {
		for _, s := range []struct{ shape, axes []int64 }{
			{[]int64{3, 5}, []int64{1}}, {[]int64{2, 16}, []int64{1}}, {[]int64{4, 37}, []int64{1}}, {[]int64{3, 1000}, []int64{1}},
			{[]int64{2, 7, 63}, []int64{1}}, {[]int64{3, 5, 64}, []int64{1}}, {[]int64{2, 9, 65}, []int64{1}}, {[]int64{32, 12, 200}, []int64{1}},
			{[]int64{6, 1, 40}, []int64{0}}, {[]int64{4, 8, 6}, []int64{1, 2}}, {[]int64{5, 3, 1, 4}, []int64{0, 1, 2, 3}}, {[]int64{2, 3, 1, 5}, []int64{1, 2}},
		} {
			cases = append(cases, lir.Reduce{Fn: fn, Shape: s.shape, Axes: s.axes})
		}
	}
	interp := reduceProgram(cases)
	prog, err := Generate(interp, Options{EwGrain: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range prog.Steps {
		if _, ok := s.Op.(*lir.NativeCall); !ok {
			t.Fatalf("case %d (%+v) stays a %s step", i, cases[i], s.Kind())
		}
	}
	if p, _ := Generate(reduceProgram([]lir.Reduce{{Fn: lir.ReduceSum, Shape: []int64{3, 4, 5}, Axes: []int64{0, 2}}}), Options{EwGrain: 16}); p.Native != nil {
		t.Errorf("a reduction over two runs of axes became native code")
	}
	var inputs [][]*tensor.Tensor
	for _, special := range []bool{false, true} {
		ins := make([]*tensor.Tensor, len(cases))
		for i, c := range cases {
			ins[i] = reduceInput(r, tensor.NumElements(c.Shape), c.Fn == lir.ReduceProd, special)
		}
		inputs = append(inputs, ins)
	}
	checkLevels(t, pool, interp, prog, levels, inputs, func(level string, k, i int, got, want *tensor.Tensor) {
		c := cases[i]
		compareReduce(t, fmt.Sprintf("%s %v of %v over %v (input %d)", level, c.Fn, c.Shape, c.Axes, k), c, got.F32(), want.F32(), inputs[k][i].F32())
	})
}

// reduceInput is n values near 1 for products (so they stay finite),
// else normal; special adds ±Inf, NaN and both zeros.
func reduceInput(r *rand.Rand, n int64, prod, special bool) *tensor.Tensor {
	t := tensor.New(tensor.F32, n)
	for i := range t.F32() {
		v := float32(r.NormFloat64())
		if prod {
			v = float32(1 + 0.05*r.NormFloat64())
		}
		if special {
			switch k := r.IntN(1000); {
			case k < 5:
				v = float32(math.NaN())
			case k < 15:
				v = float32(math.Inf(-1 + 2*r.IntN(2)))
			case k < 30:
				v = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
			}
		}
		t.F32()[i] = v
	}
	return t
}

func compareReduce(t *testing.T, what string, c lir.Reduce, got, want, x []float32) {
	t.Helper()
	scale := 0.0
	for _, v := range x {
		if !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v)) {
			scale += math.Abs(float64(v))
		}
	}
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if !math.IsNaN(w) || !math.IsNaN(g) {
				t.Fatalf("%s: output %d: got %g, want %g", what, i, g, w)
			}
		case c.Fn == lir.ReduceMax || c.Fn == lir.ReduceMin || math.IsInf(w, 0):
			if g != w {
				t.Fatalf("%s: output %d: got %g, want %g", what, i, g, w)
			}
		case math.Abs(g-w) > 1e-6*math.Max(1, scale) && math.Abs(g-w) > 4e-7*math.Abs(w):
			t.Fatalf("%s: output %d: got %g, want %g", what, i, g, w)
		}
	}
}

// BenchmarkReduce times the Go kernel and the native code of each level
// this CPU runs on the operator sweep's reduction shapes.
func BenchmarkReduce(b *testing.B) {
	pool := parallel.NewPool(1)
	defer pool.Close()
	for _, c := range []lir.Reduce{
		{Fn: lir.ReduceMax, Shape: []int64{32, 128, 256}, Axes: []int64{2}},
		{Fn: lir.ReduceMax, Shape: []int64{32, 128, 256}, Axes: []int64{1}},
		{Fn: lir.ReduceSum, Shape: []int64{32, 128, 256}, Axes: []int64{2}},
		{Fn: lir.ReduceMean, Shape: []int64{32, 128, 256}, Axes: []int64{1, 2}},
	} {
		b.Run(fmt.Sprintf("%v%v%v", c.Fn, c.Shape, c.Axes), func(b *testing.B) {
			interp := reduceProgram([]lir.Reduce{c})
			ins := []*tensor.Tensor{reduceInput(rand.New(rand.NewPCG(1, 1)), tensor.NumElements(c.Shape), false, false)}
			b.Run("go", func(b *testing.B) { benchRuns(b, pool, interp, ins) })
			if toolchain.NativeTools() != nil {
				return
			}
			p, err := Generate(interp, Options{EwGrain: 16384})
			if err != nil {
				b.Fatal(err)
			}
			for _, l := range native.Levels() {
				if l.Runs() == nil {
					b.Run("native-"+l.Name, func(b *testing.B) { benchRuns(b, pool, withObject(b, p, l), ins) })
				}
			}
		})
	}
}

// nativeObject compiles prog's native code for level l and validates it.
func nativeObject(t *testing.T, prog *lir.Program, l native.Level) lir.NativeObject {
	t.Helper()
	elf, err := toolchain.CToELF("kernels", Source(prog.Native), l.Clang)
	if err == nil {
		err = native.Validate(elf, l.GOARCH)
	}
	if err != nil {
		t.Fatalf("%s: %v", l.Name, err)
	}
	return lir.NativeObject{Level: l.Name, ELF: elf}
}
