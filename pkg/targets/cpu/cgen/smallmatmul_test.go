package cgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// matmulSteps is one MatMul step per pair of shapes, no epilogue.
func matmulSteps(shapes [][2][]int64) *lir.Program {
	p := &lir.Program{}
	for i, s := range shapes {
		a, b := s[0], s[1]
		out := append(append([]int64(nil), a[:len(a)-1]...), b[len(b)-1])
		op := &lir.MatMul{AShape: a, BShape: b, Epilogue: lir.NoEpilogue()}
		op.A = addInput(p, fmt.Sprintf("a%d", i), tensor.F32, a...)
		op.B = addInput(p, fmt.Sprintf("b%d", i), tensor.F32, b...)
		op.Out = addOutput(p, fmt.Sprintf("y%d", i), tensor.F32, out...)
		p.Steps = append(p.Steps, lir.Step{Op: op, Src: fmt.Sprintf("t.hir:1:1 matmul %d", i)})
	}
	return p
}

// uniformInputs is a value in [-1, 1) for each element of p's inputs.
func uniformInputs(r *rand.Rand, p *lir.Program) []*tensor.Tensor {
	var ins []*tensor.Tensor
	for _, s := range p.Inputs {
		x := tensor.New(tensor.F32, s.Shape...)
		for i := range x.F32() {
			x.F32()[i] = float32(2*r.Float64() - 1)
		}
		ins = append(ins, x)
	}
	return ins
}

// TestNativeSmallMatMul compiles batched products of small matrices (a
// DLRM's interaction, one row or one column, odd sizes around the vector
// widths, two batch dims) for every level this CPU runs and checks them
// against the runtime's GEMM within 2e-6 relative to the terms' size
// (both sum a row in order with fused multiply-adds, in other blocks);
// products the rule leaves to the runtime (one batch, a broadcast
// batch, an epilogue, rows past 64, more than 2^17 terms a matrix) stay
// MatMul steps.
func TestNativeSmallMatMul(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	pool := parallel.NewPool(3)
	defer pool.Close()
	taken := [][2][]int64{
		{{256, 9, 64}, {256, 64, 9}},
		{{5, 1, 33}, {5, 33, 17}},
		{{3, 7, 1}, {3, 1, 5}},
		{{4, 16, 100}, {4, 100, 1}},
		{{2, 3, 15, 31}, {2, 3, 31, 64}},
		{{6, 32, 32}, {6, 32, 32}},
	}
	interp := matmulSteps(taken)
	prog, err := Generate(interp, Options{EwGrain: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range prog.Steps {
		if _, ok := s.Op.(*lir.NativeCall); !ok {
			t.Fatalf("case %d (%v) stays a %s step", i, taken[i], s.Kind())
		}
	}
	ins := uniformInputs(rand.New(rand.NewPCG(21, 22)), interp)
	checkLevels(t, pool, interp, prog, levels, [][]*tensor.Tensor{ins}, func(level string, _, i int, got, want *tensor.Tensor) {
		k := taken[i][0][len(taken[i][0])-1]
		tol := 2e-6 * float64(k) // |terms| <= 1
		for j, w := range want.F32() {
			if d := math.Abs(float64(got.F32()[j] - w)); d > tol {
				t.Fatalf("%s: case %d %v, element %d: native %v, runtime %v", level, i, taken[i], j, got.F32()[j], w)
			}
		}
	})

	left := matmulSteps([][2][]int64{
		{{1, 9, 64}, {1, 64, 9}},
		{{4, 9, 64}, {1, 64, 9}},
		{{4, 9, 64}, {64, 9}},
		{{4, 9, 64}, {4, 64, 65}},
		{{4, 32, 256}, {4, 256, 32}},
	})
	withBias := matmulSteps([][2][]int64{{{4, 9, 64}, {4, 64, 9}}})
	withBias.Steps[0].Op.(*lir.MatMul).Epilogue.Bias = addInput(withBias, "bias", tensor.F32, 9)
	for _, p := range []*lir.Program{left, withBias} {
		out, err := Generate(p, Options{EwGrain: 16})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range out.Steps {
			if _, ok := s.Op.(*lir.MatMul); !ok {
				t.Errorf("%v: generated (%s), want the runtime's product", p.Steps[i].Op.(*lir.MatMul).AShape, s.Kind())
			}
		}
	}
}

// BenchmarkSmallMatMul times batched small products with the runtime's
// GEMM (code=runtime) and the generated loop (code=LEVEL), one thread:
// the shapes around tuning.NativeSmallMatMul's bounds.
func BenchmarkSmallMatMul(b *testing.B) {
	pool := parallel.NewPool(benchThreads())
	defer pool.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range [][4]int64{{256, 9, 64, 9}, {64, 16, 64, 16}, {64, 32, 64, 32}, {32, 32, 256, 32}, {16, 8, 1024, 8}, {64, 1, 64, 64}, {8, 16, 4096, 16}, {48, 16, 64, 64}} {
		bt, m, k, n := s[0], s[1], s[2], s[3]
		interp := matmulSteps([][2][]int64{{{bt, m, k}, {bt, k, n}}})
		ins := uniformInputs(r, interp)
		name := fmt.Sprintf("%dx%dx%d@%dx%d", bt, m, k, k, n)
		flops := float64(2 * bt * m * k * n)
		b.Run(name+"/code=runtime", func(b *testing.B) {
			benchRuns(b, pool, interp, ins)
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		prog, err := Generate(interp, Options{EwGrain: 16})
		if err != nil || prog.Native == nil {
			continue // not taken by the rule
		}
		for _, l := range native.Levels() {
			if l.Runs() != nil {
				continue
			}
			p := withObject(b, prog, l)
			b.Run(name+"/code="+l.Name, func(b *testing.B) {
				benchRuns(b, pool, p, ins)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
