package cgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// matmulProgram is a program of one matmul [2, m, k] x [k, n] with a
// bias, the activation and, with res, a residual, all inputs.
func matmulProgram(m, k, n int64, act lir.Activation, res bool) *lir.Program {
	p := &lir.Program{}
	op := &lir.MatMul{AShape: []int64{2, m, k}, BShape: []int64{k, n}, Epilogue: lir.NoEpilogue()}
	op.A = addInput(p, "a", tensor.F32, 2, m, k)
	op.B = addInput(p, "b", tensor.F32, k, n)
	op.Epilogue.Bias = addInput(p, "bias", tensor.F32, n)
	if res {
		op.Epilogue.Residual = addInput(p, "res", tensor.F32, 2, m, n)
	}
	op.Epilogue.Act = act
	op.Out = addOutput(p, "y", tensor.F32, 2, m, n)
	p.Steps = []lir.Step{{Op: op, Src: "t.hir:1:1 matmul"}}
	return p
}

// TestNativeEpilogueActivations: a product or convolution (direct or
// Winograd's) with a smooth activation becomes the kernel with its bias alone and a native region
// out = act(out) + residual (or act(out + residual)), which matches the
// runtime's fused epilogue within the two math libraries' error (a few
// float32 ulps) at every level this CPU runs; a residual that is the
// output itself, a piecewise-linear activation, or no native level keeps
// the epilogue.
func TestNativeEpilogueActivations(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	pool := parallel.NewPool(2)
	defer pool.Close()
	r := rand.New(rand.NewPCG(11, 12))
	type tc struct {
		name string
		prog *lir.Program
		tol  float64 // relative to max(1, |y|)
	}
	var cases []tc
	for _, act := range []lir.Activation{lir.ActGelu, lir.ActGeluTanh, lir.ActSilu, lir.ActSigmoid, lir.ActTanh} {
		cases = append(cases, tc{fmt.Sprintf("matmul %s", act), matmulProgram(5, 7, 33, act, false), 2e-6})
		p := convProgram(sq(1, 16, 9, 20, 3, 1, 1), epiBiasRes)
		p.Steps[0].Op.(*lir.Conv2D).Epilogue.Act = act
		cases = append(cases, tc{fmt.Sprintf("conv %s + residual", act), p, 2e-6})
		p = convProgram(sq(1, 16, 9, 20, 3, 1, 1), epiBiasRes)
		p.Steps[0].Op.(*lir.Conv2D).Epilogue.Act = act
		p.Steps[0].Op.(*lir.Conv2D).Epilogue.ActLast = true
		cases = append(cases, tc{fmt.Sprintf("conv %s(residual)", act), p, 2e-6})
		for _, last := range []bool{false, true} {
			e := epiBiasRes
			e.act, e.last = act, last
			// TestNativeWinograd's tolerance: the transforms summed in
			// another order.
			cases = append(cases, tc{fmt.Sprintf("winograd %s last=%v", act, last), winogradProgram(sq(1, 16, 9, 20, 3, 1, 1), 4, e, 0), 1e-5})
		}
		// In four parts of 16 tiles (7x7 tiles of 4 over 28x28, 64 with
		// the padding): the activation's region once, after the last part.
		e := epiBiasRes
		e.act = act
		cases = append(cases, tc{fmt.Sprintf("winograd %s in parts", act), winogradProgram(sq(1, 16, 28, 20, 3, 1, 1), 4, e, 16), 1e-5})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prog, err := Generate(c.prog, Options{EwGrain: 64, Levels: levels})
			if err != nil {
				t.Fatal(err)
			}
			if len(prog.Steps) != len(c.prog.Steps)+1 {
				t.Fatalf("%d steps, want the kernel's %d and the activation's region", len(prog.Steps), len(c.prog.Steps))
			}
			last, ok := prog.Steps[len(prog.Steps)-1].Op.(*lir.NativeCall)
			if !ok || prog.Native.Funcs[last.Func].Source == "" {
				t.Fatalf("second step %s, want a native call", prog.Steps[1].Op.Kind())
			}
			ins := convInputs(r, c.prog)
			if w, ok := c.prog.Steps[0].Op.(*lir.WinogradInput); ok {
				ins[1] = winogradWeights(t, r, w.Geom, w.Tile)
			}
			checkLevels(t, pool, c.prog, prog, levels, [][]*tensor.Tensor{ins}, func(level string, _, _ int, got, want *tensor.Tensor) {
				gs, ws := got.F32(), want.F32()
				for i := range ws {
					if d := math.Abs(float64(gs[i]) - float64(ws[i])); d > c.tol*max(1, math.Abs(float64(ws[i]))) {
						t.Fatalf("%s: element %d: native %v, runtime %v", level, i, gs[i], ws[i])
					}
				}
			})
		})
	}
	// Kept whole: the residual in place, a piecewise-linear activation,
	// no native level.
	inPlace := matmulProgram(3, 4, 5, lir.ActSilu, true)
	mm := inPlace.Steps[0].Op.(*lir.MatMul)
	mm.Epilogue.Residual = mm.Out
	for name, c := range map[string]struct {
		p    *lir.Program
		opts Options
	}{
		"residual in place": {inPlace, Options{Levels: levels}},
		"relu":              {matmulProgram(3, 4, 5, lir.ActRelu, true), Options{Levels: levels}},
		"no level":          {matmulProgram(3, 4, 5, lir.ActGelu, false), Options{}},
	} {
		prog, err := Generate(c.p, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(prog.Steps) != 1 || prog.Steps[0].Op.Kind() != "matmul" {
			t.Errorf("%s: steps %v, want the matmul alone", name, prog.Steps)
		}
	}
}
