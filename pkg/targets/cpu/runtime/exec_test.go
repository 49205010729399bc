package runtime

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// A program whose digests are fine but whose content is not (a crafted or
// buggy artifact) must give errors, never crash the process that embeds
// the runtime.
func TestMalformedPrograms(t *testing.T) {
	in := lir.Slot{Name: "x", DType: "f32", Shape: []int64{4}, Buffer: 0}
	out := lir.Slot{Name: "y", DType: "f32", Shape: []int64{4}, Buffer: 1}
	base := func() *lir.Program {
		return &lir.Program{
			Inputs:  []lir.Slot{in},
			Outputs: []lir.Slot{out},
			Buffers: []lir.Buffer{{Kind: lir.BufInput, Index: 0, Bytes: 16}, {Kind: lir.BufOutput, Index: 0, Bytes: 16}},
			Steps:   []lir.Step{{Op: &lir.Memcpy{Src: 0, Dst: 1}}},
		}
	}
	ew := func(code ...lir.Instr) *lir.Elementwise {
		return &lir.Elementwise{Shape: []int64{4}, In: []lir.EwIn{{Buf: 0, DType: tensor.F32, Strides: []int64{1}}},
			Out: []lir.EwOut{{Buf: 1, DType: tensor.F32}}, Code: code}
	}
	load := lir.Instr{Op: lir.EwLoad, Dst: 0, A: 0}
	store := lir.Instr{Op: lir.EwStore, Dst: 1, A: 0}
	for _, c := range []struct {
		name   string
		mutate func(p *lir.Program)
		atNew  string // error from New, or
		atRun  string // error from Run
	}{
		{"buffer past the arena", func(p *lir.Program) {
			p.Buffers[0] = lir.Buffer{Kind: lir.BufArena, Offset: 8, Bytes: 16}
		}, "past the arena", ""},
		{"missing weight", func(p *lir.Program) {
			p.Buffers[0] = lir.Buffer{Kind: lir.BufWeight, Index: 3, Bytes: 16}
		}, "missing or short weight", ""},
		{"unknown kind", func(p *lir.Program) { p.Buffers[0].Kind = "gpu" }, "unknown kind", ""},
		{"step names a missing buffer", func(p *lir.Program) { p.Steps[0].Op = &lir.Memcpy{Src: 0, Dst: 9} }, "missing buffer 9", ""},
		{"absent required operand", func(p *lir.Program) { p.Steps[0].Op = &lir.Memcpy{Src: lir.NoBuf, Dst: 1} }, "missing buffer -1", ""},
		{"step writes its input", func(p *lir.Program) { p.Steps[0].Op = &lir.Memcpy{Src: 1, Dst: 0} }, "read-only input", ""},
		{"step without an operation", func(p *lir.Program) { p.Steps[0].Op = nil }, "no operation", ""},
		{"slot with a bad dtype", func(p *lir.Program) { p.Outputs[0].DType = "f128" }, "unknown dtype", ""},
		{"packed operand not a weight", func(p *lir.Program) {
			p.Steps[0].Op = &lir.PackedMatMul{A: 0, B: 0, Out: 1, M: 1, N: 1, K: 1, Epilogue: lir.NoEpilogue()}
		}, "not a weight", ""},
		{"GPU operation", func(p *lir.Program) { p.Steps[0].Op = &lir.Dispatch{Args: []lir.Buf{0, 1}} }, "", "does not run on the CPU"},
		{"geometry past the buffers", func(p *lir.Program) {
			p.Steps[0].Op = &lir.Softmax{X: 0, Out: 1, Outer: 1, Axis: 1000, Inner: 1}
		}, "", "malformed program"},
		{"bad bytecode", func(p *lir.Program) {
			p.Steps[0].Op = ew(load, lir.Instr{Op: lir.EwOp(200), Dst: 1, A: 0}, store)
		}, "", "unknown elementwise instruction"},
		{"invalid instruction", func(p *lir.Program) {
			p.Steps[0].Op = ew(load, lir.Instr{Op: lir.EwInvalid, Dst: 1, A: 0}, store)
		}, "", "unknown elementwise instruction"},
		{"elementwise strides of another rank", func(p *lir.Program) {
			op := ew(load, store)
			op.In[0].Strides = []int64{1, 1}
			p.Steps[0].Op = op
		}, "", "malformed elementwise step"},
	} {
		p := base()
		c.mutate(p)
		e, err := New(p, nil)
		if c.atNew != "" {
			if err == nil || !strings.Contains(err.Error(), c.atNew) {
				t.Errorf("%s: New: %v, want %q", c.name, err, c.atNew)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: New: %v", c.name, err)
			continue
		}
		pool := parallel.NewPool(1)
		_, err = e.Run(pool, []*tensor.Tensor{tensor.New(tensor.F32, 4)}, nil)
		pool.Close()
		if err == nil || !strings.Contains(err.Error(), c.atRun) {
			t.Errorf("%s: Run: %v, want %q", c.name, err, c.atRun)
		}
	}
}

// ewRef is the test's own definition of each elementwise instruction, from
// math and Go's integer operators, not from lir.EwOps: an instruction
// without one fails TestElementwiseOps.
var ewRef = map[lir.EwOp]func(v []float64, imm float64) float64{
	lir.EwCast:      func(v []float64, imm float64) float64 { return castRef(v[0], tensor.DType(imm)) },
	lir.EwLeakyRelu: func(v []float64, imm float64) float64 { return math.Max(v[0], 0) + imm*math.Min(v[0], 0) },
	lir.EwWhere: func(v []float64, _ float64) float64 {
		if v[0] != 0 {
			return v[1]
		}
		return v[2]
	},
	lir.EwNeg:   func(v []float64, _ float64) float64 { return 0 - v[0] },
	lir.EwAbs:   func(v []float64, _ float64) float64 { return math.Copysign(v[0], 1) },
	lir.EwExp:   func(v []float64, _ float64) float64 { return math.Pow(math.E, v[0]) },
	lir.EwLog:   func(v []float64, _ float64) float64 { return math.Log2(v[0]) / math.Log2E },
	lir.EwSqrt:  func(v []float64, _ float64) float64 { return math.Pow(v[0], 0.5) },
	lir.EwRsqrt: func(v []float64, _ float64) float64 { return math.Pow(v[0], -0.5) },
	lir.EwRecip: func(v []float64, _ float64) float64 { return math.Pow(v[0], -1) },
	lir.EwTanh: func(v []float64, _ float64) float64 {
		return (math.Exp(2*v[0]) - 1) / (math.Exp(2*v[0]) + 1)
	},
	lir.EwSigmoid: func(v []float64, _ float64) float64 { return math.Exp(v[0]) / (1 + math.Exp(v[0])) },
	lir.EwRelu:    func(v []float64, _ float64) float64 { return math.Max(v[0], 0) },
	lir.EwGelu:    func(v []float64, _ float64) float64 { return v[0] * 0.5 * math.Erfc(-v[0]/math.Sqrt2) },
	lir.EwGeluTanh: func(v []float64, _ float64) float64 {
		x := v[0]
		return x / (1 + math.Exp(-2*math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	},
	lir.EwSilu:  func(v []float64, _ float64) float64 { return v[0] * math.Exp(v[0]) / (1 + math.Exp(v[0])) },
	lir.EwErf:   func(v []float64, _ float64) float64 { return 1 - math.Erfc(v[0]) },
	lir.EwSin:   func(v []float64, _ float64) float64 { return math.Cos(v[0] - math.Pi/2) },
	lir.EwCos:   func(v []float64, _ float64) float64 { return math.Sin(v[0] + math.Pi/2) },
	lir.EwFloor: func(v []float64, _ float64) float64 { return -math.Ceil(-v[0]) },
	lir.EwCeil:  func(v []float64, _ float64) float64 { return -math.Floor(-v[0]) },
	lir.EwRound: func(v []float64, _ float64) float64 {
		// Half to even.
		f := math.Floor(v[0])
		switch d := v[0] - f; {
		case d > 0.5, d == 0.5 && math.Mod(f, 2) != 0:
			return f + 1
		}
		return f
	},
	lir.EwSign: func(v []float64, _ float64) float64 {
		if v[0] == 0 || v[0] != v[0] {
			return v[0]
		}
		return math.Copysign(1, v[0])
	},
	lir.EwNot: func(v []float64, _ float64) float64 { return bf(v[0] == 0) },
	lir.EwAdd: func(v []float64, _ float64) float64 { return v[0] + v[1] },
	lir.EwSub: func(v []float64, _ float64) float64 { return v[0] - v[1] },
	lir.EwMul: func(v []float64, _ float64) float64 { return v[0] * v[1] },
	lir.EwDiv: func(v []float64, _ float64) float64 { return v[0] / v[1] },
	lir.EwIDiv: func(v []float64, _ float64) float64 {
		if v[1] == 0 {
			return 0
		}
		return float64(int64(v[0]) / int64(v[1]))
	},
	lir.EwPow: func(v []float64, _ float64) float64 { return math.Pow(v[0], v[1]) },
	lir.EwMax: func(v []float64, _ float64) float64 {
		switch {
		case v[0] != v[0] || v[1] != v[1]:
			return math.NaN()
		case v[0] > v[1]:
			return v[0]
		}
		return v[1]
	},
	lir.EwMin: func(v []float64, _ float64) float64 {
		switch {
		case v[0] != v[0] || v[1] != v[1]:
			return math.NaN()
		case v[0] < v[1]:
			return v[0]
		}
		return v[1]
	},
	lir.EwMod: func(v []float64, _ float64) float64 { return v[0] - v[1]*math.Floor(v[0]/v[1]) },
	lir.EwIMod: func(v []float64, _ float64) float64 {
		a, b := int64(v[0]), int64(v[1])
		if b == 0 {
			return 0
		}
		return float64(((a % b) + b) % b)
	},
	lir.EwEq:  func(v []float64, _ float64) float64 { return bf(v[0] == v[1]) },
	lir.EwNe:  func(v []float64, _ float64) float64 { return bf(v[0] != v[1]) },
	lir.EwLt:  func(v []float64, _ float64) float64 { return bf(v[0] < v[1]) },
	lir.EwLe:  func(v []float64, _ float64) float64 { return bf(v[0] <= v[1]) },
	lir.EwGt:  func(v []float64, _ float64) float64 { return bf(v[0] > v[1]) },
	lir.EwGe:  func(v []float64, _ float64) float64 { return bf(v[0] >= v[1]) },
	lir.EwAnd: func(v []float64, _ float64) float64 { return bf(v[0] != 0 && v[1] != 0) },
	lir.EwOr:  func(v []float64, _ float64) float64 { return bf(v[0] != 0 || v[1] != 0) },
	lir.EwXor: func(v []float64, _ float64) float64 { return bf((v[0] != 0) != (v[1] != 0)) },
}

// oracleRef is the reference interpreter's definition of op, for an op
// this test has none of its own for (ewRef): the MIR op of op's name on
// one element, in f64 (the operands are f32 values, so that loses
// nothing). It is for the float runs: an op without a row here is not
// run on i64 (ewIntOps). So a new op is tested against the oracle with
// no row here, and an op the oracle lacks fails with the oracle's error.
func oracleRef(t *testing.T, op lir.EwOp) func(v []float64, imm float64) float64 {
	return func(v []float64, _ float64) float64 {
		t.Helper()
		r, err := oracle(op, v)
		if err != nil {
			t.Errorf("%s%v: the reference interpreter: %v", op, v, err)
		}
		return r
	}
}

// oracle runs op on one element of each operand (f64 values) through the
// reference interpreter.
func oracle(op lir.EwOp, v []float64) (float64, error) {
	one := []dim.Expr{dim.Const(1)}
	g := &mir.Graph{Name: "t"}
	var args []*mir.Value
	ins := make([]*tensor.Tensor, len(v))
	for i, x := range v {
		a := g.NewValue("x", mir.Type{DType: tensor.F64, Shape: one})
		g.Inputs, args = append(g.Inputs, a), append(args, a)
		ins[i] = tensor.New(tensor.F64, 1)
		tensor.AsU64(ins[i].Data)[0] = math.Float64bits(x)
	}
	rt := tensor.F64
	if op.Info().BoolResult {
		rt = tensor.Bool
	}
	n := g.Add(mir.Op(op.String()), args, nil, "test", mir.Type{DType: rt, Shape: one})
	g.Outputs = n.Results
	outs, err := eval.Run(g, nil, ins)
	switch {
	case err != nil:
		return math.NaN(), err
	case rt == tensor.Bool:
		return float64(outs[0].Data[0]), nil
	}
	return math.Float64frombits(tensor.AsU64(outs[0].Data)[0]), nil
}

// ewIntOnly are the integer forms of div and mod: their references
// compute in int64, so the test runs them on i64 operands only.
var ewIntOnly = map[lir.EwOp]bool{lir.EwIDiv: true, lir.EwIMod: true}

// ewIntOps are the instructions the test also runs on i64 operands.
var ewIntOps = map[lir.EwOp]bool{
	lir.EwCast: true, lir.EwWhere: true, lir.EwNeg: true, lir.EwAbs: true, lir.EwRelu: true, lir.EwSign: true, lir.EwNot: true,
	lir.EwAdd: true, lir.EwSub: true, lir.EwMul: true, lir.EwIDiv: true, lir.EwMax: true, lir.EwMin: true, lir.EwIMod: true,
	lir.EwEq: true, lir.EwNe: true, lir.EwLt: true, lir.EwLe: true, lir.EwGt: true, lir.EwGe: true,
	lir.EwAnd: true, lir.EwOr: true, lir.EwXor: true,
}

func bf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func castRef(x float64, to tensor.DType) float64 {
	switch to {
	case tensor.I32, tensor.I64:
		return math.Trunc(x)
	case tensor.Bool:
		return bf(x != 0)
	}
	return float64(float32(x))
}

// ewProgram is one instruction over n elements: load each operand, apply
// op, store the result.
func ewProgram(op lir.EwOp, arity, n int, in, out tensor.DType, imm float64) *lir.Program {
	p := &lir.Program{}
	e := &lir.Elementwise{Shape: []int64{int64(n)}}
	for i := 0; i < arity; i++ {
		p.Inputs = append(p.Inputs, lir.Slot{Name: "x", DType: in.String(), Shape: []int64{int64(n)}, Buffer: i})
		p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufInput, Index: i, Bytes: int64(n * in.Size())})
		e.In = append(e.In, lir.EwIn{Buf: lir.Buf(i), DType: in, Strides: []int64{1}})
		e.Code = append(e.Code, lir.Instr{Op: lir.EwLoad, Dst: i, A: i})
	}
	p.Outputs = []lir.Slot{{Name: "y", DType: out.String(), Shape: []int64{int64(n)}, Buffer: arity}}
	p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufOutput, Index: 0, Bytes: int64(n * out.Size())})
	e.Out = []lir.EwOut{{Buf: lir.Buf(arity), DType: out}}
	e.Code = append(e.Code, lir.Instr{Op: op, Dst: arity, A: 0, B: 1, C: 2, Imm: imm}, lir.Instr{Op: lir.EwStore, Dst: arity, A: 0})
	p.Steps = []lir.Step{{Op: e, Src: op.String()}}
	return p
}

// runEw runs one instruction on the operands' values and returns the
// result as float64s.
func runEw(t *testing.T, op lir.EwOp, args [][]float64, in, out tensor.DType, imm float64) []float64 {
	t.Helper()
	n := len(args[0])
	e, err := New(ewProgram(op, len(args), n, in, out, imm), nil)
	if err != nil {
		t.Fatalf("%s: New: %v", op, err)
	}
	ins := make([]*tensor.Tensor, len(args))
	for i, a := range args {
		ins[i] = tensor.New(in, int64(n))
		for j, v := range a {
			switch in {
			case tensor.F32:
				tensor.AsF32(ins[i].Data)[j] = float32(v)
			case tensor.F64:
				tensor.AsU64(ins[i].Data)[j] = math.Float64bits(v)
			case tensor.I64:
				tensor.AsI64(ins[i].Data)[j] = int64(v)
			}
		}
	}
	pool := parallel.NewPool(2)
	defer pool.Close()
	outs, err := e.Run(pool, ins, nil)
	if err != nil {
		t.Errorf("%s (%s → %s): Run: %v", op, in, out, err)
		return nil
	}
	got := make([]float64, n)
	for j := range got {
		switch out {
		case tensor.F32:
			got[j] = float64(tensor.AsF32(outs[0].Data)[j])
		case tensor.F64:
			got[j] = math.Float64frombits(tensor.AsU64(outs[0].Data)[j])
		case tensor.I64:
			got[j] = float64(tensor.AsI64(outs[0].Data)[j])
		}
	}
	return got
}

// ulpDiff is how many float32 steps lie between a and b (0 for two NaNs).
func ulpDiff(a, b float32) int64 {
	if a != a || b != b {
		if a != a && b != b {
			return 0
		}
		return math.MaxInt64
	}
	if a == b {
		return 0
	}
	key := func(f float32) int64 {
		u := int64(math.Float32bits(f))
		if u&(1<<31) != 0 {
			return -(u &^ (1 << 31))
		}
		return u
	}
	d := key(a) - key(b)
	if d < 0 {
		d = -d
	}
	return d
}

// TestElementwiseOps runs every elementwise instruction but the bytecode's
// own plumbing (load, store, imm) through the runtime, on f32 operands and
// where integers mean something on i64 ones, and checks it against the
// test's own definition. An f32 → f64 program takes the float64 path;
// f32 → f32 the float32 one where the instruction has it.
func TestElementwiseOps(t *testing.T) {
	// f32 values, as the program reads them.
	f32 := func(v ...float64) []float64 {
		for i := range v {
			v[i] = float64(float32(v[i]))
		}
		return v
	}
	fa := f32(-2.5, -1, -0.25, 0, 0.5, 1.75, 3, 0.3, -0.7, 2)
	fb := f32(2, -3, 0.5, 1.5, 0, 2.5, -1.25, 0.3, 0.75, -4)
	fc := f32(1, 0, 0, 1, 1, 0, 1, 0, 1, 0)
	ia := []float64{-7, -3, 0, 2, 5, 9, -6, 1, 8, -1}
	ib := []float64{2, -3, 0, 4, -5, 3, 4, 0, -3, -1}
	seen := 0
	for op := lir.EwOp(1); op < lir.NumEwOps; op++ {
		switch op {
		case lir.EwLoad, lir.EwStore, lir.EwImm:
			continue
		}
		info := lir.EwOps[op]
		ref, ok := ewRef[op]
		if !ok && !info.Bytecode {
			if _, err := oracle(op, make([]float64, info.Arity)); err != nil {
				t.Errorf("%s: no reference in this test, and the reference interpreter's fails: %v", op, err)
				continue
			}
			ref, ok = oracleRef(t, op), true
		}
		if !ok {
			t.Errorf("%s: no reference in this test: add one", op)
			continue
		}
		seen++
		var imms []float64
		switch op {
		case lir.EwCast:
			imms = []float64{float64(tensor.I32), float64(tensor.Bool), float64(tensor.F32)}
		case lir.EwLeakyRelu:
			imms = []float64{0.1, -2}
		default:
			imms = []float64{0}
		}
		floats := [][]float64{fa, fb, fc}[:info.Arity]
		if op == lir.EwWhere {
			floats = [][]float64{fc, fa, fb}
		}
		ints := [][]float64{ia, ib, ia}[:info.Arity]
		if op == lir.EwWhere {
			ints = [][]float64{ib, ia, ib}
		}
		if ewIntOnly[op] {
			imms = nil
		}
		for _, imm := range imms {
			want := make([]float64, len(fa))
			for j := range want {
				want[j] = ref(column(floats, j), imm)
			}
			// The float64 path: f64 operands, results kept in float64 (an
			// f32 operand's result is rounded to f32 first, as the
			// reference does: TestElementwiseRoundsF32Steps).
			if got := runEw(t, op, floats, tensor.F64, tensor.F64, imm); got != nil {
				for j := range want {
					w, g := want[j], got[j]
					if !(w == g || w != w && g != g || math.Abs(w-g) <= 1e-12*math.Abs(w)+1e-15) {
						t.Errorf("%s imm %g f64 path: %v → %v, want %v", op, imm, column(floats, j), g, w)
					}
				}
			}
			// f32 results: the float32 path where the op has one, within a few
			// ulps of the reference (its exp, sigmoid and gelu are float32
			// approximations).
			if got := runEw(t, op, floats, tensor.F32, tensor.F32, imm); got != nil {
				for j := range want {
					w, g := float32(want[j]), float32(got[j])
					if ulpDiff(w, g) > 4 && math.Abs(float64(w-g)) > 1e-6 {
						t.Errorf("%s imm %g f32 path: %v → %v, want %v", op, imm, column(floats, j), g, w)
					}
				}
			}
		}
		if !ewIntOps[op] {
			continue
		}
		imm := 0.0
		if op == lir.EwCast {
			imm = float64(tensor.I32)
		}
		got := runEw(t, op, ints, tensor.I64, tensor.I64, imm)
		if got == nil {
			continue
		}
		for j := range got {
			v := column(ints, j)
			if w := ref(v, imm); got[j] != w {
				t.Errorf("%s i64: %v → %v, want %v", op, v, got[j], w)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no instruction ran")
	}
}

func column(args [][]float64, j int) []float64 {
	v := make([]float64, len(args))
	for i := range args {
		v[i] = args[i][j]
	}
	return v
}

// TestElementwiseNeverWritesOperands: the float32 path reads contiguous
// operands in place, so a program that reuses a loaded register as a
// destination (the schedule never does; a crafted or future one may)
// must not write into the operand: an input would change under its
// caller, a mapped weight would fault.
func TestElementwiseNeverWritesOperands(t *testing.T) {
	p := &lir.Program{
		Inputs:  []lir.Slot{{Name: "x", DType: "f32", Shape: []int64{4}, Buffer: 0}},
		Outputs: []lir.Slot{{Name: "y", DType: "f32", Shape: []int64{4}, Buffer: 1}},
		Buffers: []lir.Buffer{{Kind: lir.BufInput, Bytes: 16}, {Kind: lir.BufOutput, Bytes: 16}},
		Steps: []lir.Step{{Op: &lir.Elementwise{Shape: []int64{4}, In: []lir.EwIn{{Buf: 0, DType: tensor.F32, Strides: []int64{1}}},
			Out: []lir.EwOut{{Buf: 1, DType: tensor.F32}},
			Code: []lir.Instr{{Op: lir.EwLoad, Dst: 0, A: 0}, {Op: lir.EwAdd, Dst: 0, A: 0, B: 0}, {Op: lir.EwNeg, Dst: 0, A: 0},
				{Op: lir.EwStore, Dst: 0, A: 0}}}}},
	}
	e, err := New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := parallel.NewPool(1)
	defer pool.Close()
	x := tensor.FromF32([]int64{4}, []float32{1, 2, 3, 4})
	outs, err := e.Run(pool, []*tensor.Tensor{x}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range x.F32() {
		if v != float32(i+1) {
			t.Fatalf("the input changed: %v", x.F32())
		}
		if got := outs[0].F32()[i]; got != -2*v {
			t.Errorf("y[%d] = %v, want %v", i, got, -2*v)
		}
	}
}

// TestElementwiseRoundsF32Steps: a region that computes in float64 (its
// result is u8) rounds each f32 step to f32, as f32 arithmetic and the
// reference do: round(x / s) at a tie of the f32 quotient. 2.1875 /
// 0.025f is 87.4999999 in float64 but 87.5 in float32, which rounds half
// to even to 88.
func TestElementwiseRoundsF32Steps(t *testing.T) {
	const n = 3
	p := &lir.Program{
		Inputs:  []lir.Slot{{Name: "x", DType: "f32", Shape: []int64{n}, Buffer: 0}},
		Outputs: []lir.Slot{{Name: "y", DType: "u8", Shape: []int64{n}, Buffer: 1}},
		Buffers: []lir.Buffer{{Kind: lir.BufInput, Bytes: 4 * n}, {Kind: lir.BufOutput, Bytes: n}},
	}
	s := float32(0.025)
	e := &lir.Elementwise{Shape: []int64{n},
		In:  []lir.EwIn{{Buf: 0, DType: tensor.F32, Strides: []int64{1}}},
		Out: []lir.EwOut{{Buf: 1, DType: tensor.U8}},
		Code: []lir.Instr{{Op: lir.EwLoad, Dst: 0, A: 0}, {Op: lir.EwImm, Dst: 1, Imm: float64(s)},
			{Op: lir.EwDiv, Dst: 2, A: 0, B: 1}, {Op: lir.EwRound, Dst: 3, A: 2}, {Op: lir.EwStore, Dst: 3, A: 0}}}
	p.Steps = []lir.Step{{Op: e, Src: "t"}}
	ex, err := New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.FromF32([]int64{n}, []float32{2.1875, 1.9375, 0.0125})
	outs, err := ex.Run(nil, []*tensor.Tensor{x}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range x.F32() {
		want := byte(math.RoundToEven(float64(v / s)))
		if got := outs[0].Data[i]; got != want {
			t.Errorf("round(%g / %g) = %d, want %d (the f32 quotient %g)", v, s, got, want, v/s)
		}
	}
	if got := e.Narrowing(); got[2] != tensor.F32 || got[3] != tensor.F32 || got[0] != tensor.InvalidDType || got[1] != tensor.InvalidDType {
		t.Errorf("Narrowing = %v, want f32 for the div and the round only", got)
	}
}
