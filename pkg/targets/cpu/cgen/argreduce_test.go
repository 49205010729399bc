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

// argProgram is one f32 arg-reduction step per case.
func argProgram(cases []lir.ArgReduce) *lir.Program {
	p := &lir.Program{}
	for i, c := range cases {
		op := c
		op.DType = tensor.F32
		op.X = addInput(p, fmt.Sprintf("x%d", i), tensor.F32, c.Outer, c.Axis, c.Inner)
		op.Out = addOutput(p, fmt.Sprintf("y%d", i), tensor.I64, c.Outer, c.Inner)
		p.Steps = append(p.Steps, lir.Step{Op: &op, Src: fmt.Sprintf("t.hir:1:1 argmax %d", i)})
	}
	return p
}

// argInput is n values from a few levels (many ties), with specials
// (NaN, ±Inf, both zeros) where special is set, and whole lines of -Inf
// (or +Inf) and of NaN where lines is set: the first index of equals and
// the first NaN are what the lanes' fold must get right.
func argInput(r *rand.Rand, n int64, special bool) *tensor.Tensor {
	t := tensor.New(tensor.F32, n)
	for i := range t.F32() {
		v := float32(r.IntN(7) - 3)
		if special {
			switch k := r.IntN(100); {
			case k < 3:
				v = float32(math.NaN())
			case k < 8:
				v = float32(math.Inf(-1 + 2*r.IntN(2)))
			case k < 20:
				v = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
			}
		}
		t.F32()[i] = v
	}
	return t
}

// TestNativeArgReduce compiles ArgMax and ArgMin over rows and over
// middle and leading axes, at lengths around the lane and block widths,
// for every level this CPU runs, and checks them against the runtime's
// Go kernel exactly, on tied values, on values with NaN, ±Inf and both
// zeros, and on lines all -Inf, all +Inf or all NaN.
func TestNativeArgReduce(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	pool := parallel.NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(9, 10))
	var cases []lir.ArgReduce
	for _, mx := range []bool{true, false} {
		for _, s := range [][3]int64{{3, 1, 1}, {3, 5, 1}, {2, 16, 1}, {4, 17, 1}, {3, 31, 1}, {2, 32, 1}, {4, 37, 1}, {3, 1000, 1},
			{2, 1, 7}, {2, 7, 63}, {3, 5, 64}, {2, 9, 65}, {1, 30, 200}, {5, 2, 1}} {
			cases = append(cases, lir.ArgReduce{Max: mx, Outer: s[0], Axis: s[1], Inner: s[2]})
		}
	}
	interp := argProgram(cases)
	prog, err := Generate(interp, Options{EwGrain: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range prog.Steps {
		if _, ok := s.Op.(*lir.NativeCall); !ok {
			t.Fatalf("case %d (%+v) stays a %s step", i, cases[i], s.Kind())
		}
	}
	var inputs [][]*tensor.Tensor
	for k := range 3 {
		ins := make([]*tensor.Tensor, len(cases))
		for i, c := range cases {
			ins[i] = argInput(r, c.Outer*c.Axis*c.Inner, k > 0)
			if k == 2 {
				// Whole lines of one special value: the first line all
				// -Inf, the second all +Inf, the third all NaN.
				x := ins[i].F32()
				for li, v := range []float64{math.Inf(-1), math.Inf(1), math.NaN()} {
					o, j := int64(li)/c.Inner, int64(li)%c.Inner
					if o >= c.Outer {
						break
					}
					for a := range c.Axis {
						x[(o*c.Axis+a)*c.Inner+j] = float32(v)
					}
				}
			}
		}
		inputs = append(inputs, ins)
	}
	checkLevels(t, pool, interp, prog, levels, inputs, func(level string, k, i int, got, want *tensor.Tensor) {
		g, w := got.I64(), want.I64()
		for j := range w {
			if g[j] != w[j] {
				t.Fatalf("%s %+v (input %d): output %d: got index %d, want %d", level, cases[i], k, j, g[j], w[j])
			}
		}
	})
}

// BenchmarkArgReduce times the Go kernel and the native code of each
// level this CPU runs on the operator sweep's ArgMax shapes.
func BenchmarkArgReduce(b *testing.B) {
	pool := parallel.NewPool(1)
	defer pool.Close()
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []lir.ArgReduce{{Max: true, Outer: 4096, Axis: 256, Inner: 1}, {Max: true, Outer: 32, Axis: 128, Inner: 256}, {Max: false, Outer: 1, Axis: 32, Inner: 128 * 256}} {
		name := fmt.Sprintf("%dx%dx%d", c.Outer, c.Axis, c.Inner)
		interp := argProgram([]lir.ArgReduce{c})
		x := tensor.New(tensor.F32, c.Outer*c.Axis*c.Inner)
		for i := range x.F32() {
			x.F32()[i] = float32(r.NormFloat64())
		}
		ins := []*tensor.Tensor{x}
		b.Run(name+"/go", func(b *testing.B) { benchRuns(b, pool, interp, ins) })
		if toolchain.NativeTools() != nil {
			continue
		}
		p, err := Generate(interp, Options{EwGrain: 16384})
		if err != nil || p.Native == nil {
			b.Fatal(err)
		}
		for _, l := range native.Levels() {
			if l.Runs() != nil {
				continue
			}
			q := withObject(b, p, l)
			b.Run(name+"/native-"+l.Name, func(b *testing.B) { benchRuns(b, pool, q, ins) })
		}
	}
}
