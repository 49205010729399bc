package cgen

import (
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	cpurt "github.com/rlx-project/rlx/pkg/targets/cpu/runtime"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// fusedRegion is a 10-instruction region over n f32 elements and a
// broadcast row of 1024, with the transcendental functions models fuse
// (tanh, erf, sigmoid) and a constant power:
//
//	y = sigmoid(tanh(x*0.5 + b) + erf(x)) * x^2 - x
//	z = y * 0.25 + 1
func fusedRegion(n int64) ewCase {
	const row = 1024
	load := func(dst, a int) lir.Instr { return lir.Instr{Op: lir.EwLoad, Dst: dst, A: a} }
	return ewCase{name: "fused10", shape: []int64{n / row, row},
		in:  []lir.EwIn{{DType: tensor.F32, Strides: []int64{row, 1}}, {DType: tensor.F32, Strides: []int64{0, 1}}},
		out: []tensor.DType{tensor.F32, tensor.F32},
		code: []lir.Instr{load(0, 0), load(1, 1), {Op: lir.EwImm, Dst: 2, Imm: 0.5}, {Op: lir.EwImm, Dst: 3, Imm: 2},
			{Op: lir.EwMul, Dst: 4, A: 0, B: 2}, {Op: lir.EwAdd, Dst: 5, A: 4, B: 1}, {Op: lir.EwTanh, Dst: 6, A: 5},
			{Op: lir.EwErf, Dst: 7, A: 0}, {Op: lir.EwAdd, Dst: 8, A: 6, B: 7}, {Op: lir.EwSigmoid, Dst: 9, A: 8},
			{Op: lir.EwPow, Dst: 10, A: 0, B: 3}, {Op: lir.EwMul, Dst: 11, A: 9, B: 10}, {Op: lir.EwSub, Dst: 12, A: 11, B: 0},
			{Op: lir.EwStore, Dst: 12, A: 0}, {Op: lir.EwImm, Dst: 13, Imm: 0.25}, {Op: lir.EwImm, Dst: 14, Imm: 1},
			{Op: lir.EwMul, Dst: 15, A: 12, B: 13}, {Op: lir.EwAdd, Dst: 16, A: 15, B: 14}, {Op: lir.EwStore, Dst: 16, A: 1}}}
}

// BenchmarkFusedRegion reports ns per element of a fused 10-op region
// over 1M f32 elements on one thread: the interpreter, the native code
// of each level this CPU runs, and a plain copy of the same bytes (the
// region reads 4 and writes 8 bytes per element; the copy reads and
// writes 4), all in the same run.
func BenchmarkFusedRegion(b *testing.B) {
	const n = 1 << 20
	pool := parallel.NewPool(1)
	defer pool.Close()
	c := fusedRegion(n)
	interp := ewProgram(c)
	r := rand.New(rand.NewPCG(1, 1))
	ins := []*tensor.Tensor{randomInput(r, tensor.F32, n, false), randomInput(r, tensor.F32, 1024, false)}
	perElement := func(b *testing.B) { b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem") }
	b.Run("copy", func(b *testing.B) {
		src, dst := ins[0].F32(), make([]float32, n)
		b.SetBytes(8 * n)
		for b.Loop() {
			copy(dst, src)
		}
		perElement(b)
	})
	runProg := func(b *testing.B, p *lir.Program) {
		benchRuns(b, pool, p, ins)
		perElement(b)
	}
	b.Run("interpreter", func(b *testing.B) { runProg(b, interp) })
	if toolchain.NativeTools() != nil {
		return
	}
	p, err := Generate(interp, Options{EwGrain: 16384})
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range native.Levels() {
		if l.Runs() == nil {
			b.Run("native-"+l.Name, func(b *testing.B) { runProg(b, withObject(b, p, l)) })
		}
	}
}

// benchRuns runs p once on ins, then times RunInto of it on the same
// outputs for b.Loop.
func benchRuns(b *testing.B, pool *parallel.Pool, p *lir.Program, ins []*tensor.Tensor) {
	b.Helper()
	benchRunsWeights(b, pool, p, nil, ins)
}

// benchRunsWeights is benchRuns for a program that reads weights.
func benchRunsWeights(b *testing.B, pool *parallel.Pool, p *lir.Program, weights []*tensor.Tensor, ins []*tensor.Tensor) {
	b.Helper()
	ws := make([][]byte, len(weights))
	for i, w := range weights {
		ws[i] = w.Data
	}
	e, err := cpurt.New(p, ws)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	outs, err := e.Run(pool, ins, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.RunInto(pool, outs, ins, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// withObject is a copy of the generated program p with its native code
// compiled for level l.
func withObject(tb testing.TB, p *lir.Program, l native.Level) *lir.Program {
	tb.Helper()
	elf, err := toolchain.CToELF("kernels", Source(p.Native), l.Clang)
	if err != nil {
		tb.Fatal(err)
	}
	q, nat := *p, *p.Native
	nat.Objects = []lir.NativeObject{{Level: l.Name, ELF: elf}}
	q.Native = &nat
	return &q
}
