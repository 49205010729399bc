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

// softmaxProgram is one softmax step per case, each over its own input
// and output, or in place for the cases where inPlace(i).
func softmaxProgram(cases []lir.Softmax, inPlace func(i int) bool) *lir.Program {
	p := &lir.Program{}
	for i, c := range cases {
		op := c
		shape := []int64{c.Outer, c.Axis, c.Inner}
		op.X = addInput(p, fmt.Sprintf("x%d", i), tensor.F32, shape...)
		op.Out = addOutput(p, fmt.Sprintf("y%d", i), tensor.F32, shape...)
		if inPlace(i) {
			// Copy the input to the output, then softmax the output in place.
			cp := &lir.Memcpy{Src: op.X, Dst: op.Out}
			p.Steps = append(p.Steps, lir.Step{Op: cp, Src: "t.hir:1:1 copy"})
			op.X = op.Out
		}
		p.Steps = append(p.Steps, lir.Step{Op: &op, Src: fmt.Sprintf("t.hir:1:1 softmax %d", i)})
	}
	return p
}

// TestNativeSoftmax compiles softmax and log_softmax over rows (Inner 1)
// and over a middle axis, of lengths around the lane and block widths,
// out of place and in place, for every level this CPU runs, and checks
// them against the runtime's Go kernel: within 4 float32 ulps of the
// larger of the two plus 1e-6 relative to the row's largest output (the
// kernels sum in different orders and precisions), and NaN exactly where
// the kernel gives NaN (a NaN or an infinite maximum in the slice).
func TestNativeSoftmax(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	pool := parallel.NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(5, 6))
	// Every case out of place, then again in place, in one program: one
	// compile per level.
	var cases []lir.Softmax
	for _, log := range []bool{false, true} {
		for _, s := range [][3]int64{{3, 1, 1}, {2, 5, 1}, {4, 16, 1}, {3, 37, 1}, {2, 1000, 1}, {5, 128, 1},
			{2, 2500, 1}, {2, 3, 2}, {2, 7, 63}, {3, 5, 64}, {2, 9, 65}, {1, 1000, 64}, {4, 12, 200}} {
			cases = append(cases, lir.Softmax{Outer: s[0], Axis: s[1], Inner: s[2], Log: log})
		}
	}
	half := len(cases)
	cases = append(cases, cases...)
	inPlace := func(i int) bool { return i >= half }
	interp := softmaxProgram(cases, inPlace)
	prog, err := Generate(interp, Options{EwGrain: 16})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, s := range prog.Steps {
		if _, ok := s.Op.(*lir.NativeCall); ok {
			calls++
		}
	}
	if calls != len(cases) {
		t.Fatalf("%d of %d softmax steps became native calls", calls, len(cases))
	}
	inputs := make([][]*tensor.Tensor, 2)
	for k, special := range []bool{false, true} {
		for _, c := range cases {
			inputs[k] = append(inputs[k], softmaxInput(r, c.Outer*c.Axis*c.Inner, special))
		}
	}
	checkLevels(t, pool, interp, prog, levels, inputs, func(level string, k, i int, got, want *tensor.Tensor) {
		compareSoftmax(t, fmt.Sprintf("%s %+v in place %v input %d", level, cases[i], inPlace(i), k), got.F32(), want.F32())
	})
}

// softmaxInput is n normal values with a spread like attention scores;
// special adds -Inf (masked) cells, and rarely a NaN or +Inf.
func softmaxInput(r *rand.Rand, n int64, special bool) *tensor.Tensor {
	t := tensor.New(tensor.F32, n)
	for i := range t.F32() {
		v := float32(r.NormFloat64() * 4)
		if special {
			switch k := r.IntN(1000); {
			case k < 150:
				v = float32(math.Inf(-1))
			case k < 152:
				v = float32(math.NaN())
			case k < 153:
				v = float32(math.Inf(1))
			}
		}
		t.F32()[i] = v
	}
	return t
}

func compareSoftmax(t *testing.T, what string, got, want []float32) {
	t.Helper()
	big := 0.0
	for _, w := range want {
		if !math.IsNaN(float64(w)) && !math.IsInf(float64(w), 0) {
			big = math.Max(big, math.Abs(float64(w)))
		}
	}
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(w) || math.IsNaN(g) || math.IsInf(w, 0) || math.IsInf(g, 0) {
			if !(math.IsNaN(w) && math.IsNaN(g)) && g != w {
				t.Fatalf("%s: element %d: got %g, want %g", what, i, g, w)
			}
			continue
		}
		ulp := float64(math.Nextafter32(float32(math.Max(math.Abs(g), math.Abs(w))), float32(math.Inf(1)))) - math.Max(math.Abs(g), math.Abs(w))
		if d := math.Abs(g - w); d > 4*ulp+1e-6*big {
			t.Fatalf("%s: element %d: got %g, want %g (diff %g)", what, i, g, w, d)
		}
	}
}

// BenchmarkSoftmax times the Go kernel (interpreter) and the native code
// of each level this CPU runs on the operator sweep's softmax shapes: rows
// of 1000 (a classifier), rows of 128 (attention scores) and a middle axis.
func BenchmarkSoftmax(b *testing.B) {
	pool := parallel.NewPool(1)
	defer pool.Close()
	for _, c := range []lir.Softmax{{Outer: 64, Axis: 1000, Inner: 1}, {Outer: 96 * 128, Axis: 128, Inner: 1},
		{Outer: 8, Axis: 1000, Inner: 64}, {Outer: 64, Axis: 1000, Inner: 1, Log: true}} {
		name := fmt.Sprintf("%dx%dx%d", c.Outer, c.Axis, c.Inner)
		if c.Log {
			name += "-log"
		}
		b.Run(name, func(b *testing.B) {
			interp := softmaxProgram([]lir.Softmax{c}, func(int) bool { return false })
			ins := []*tensor.Tensor{softmaxInput(rand.New(rand.NewPCG(1, 1)), c.Outer*c.Axis*c.Inner, false)}
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
