package cgen

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	cpurt "github.com/rlx-project/rlx/pkg/targets/cpu/runtime"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// needToolchain skips a test without clang and lld, except under CI=true,
// where CI has installed them (make deps).
func needToolchain(t testing.TB) {
	t.Helper()
	if err := toolchain.NativeTools(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("native code needs clang and lld: %v", err)
	}
}

// ewCase is one region over operands of the given dtypes.
type ewCase struct {
	name  string
	shape []int64
	in    []lir.EwIn
	out   []tensor.DType
	code  []lir.Instr
	// values, when set, are input 0's elements (repeated), in place of
	// random ones.
	values []float64
	// signedZeros: a zero result must have the interpreter's sign too.
	signedZeros bool
}

// ewProgram is a program of one region: operand i is input i (its
// buffer sized by its strides), result j output j.
func ewProgram(c ewCase) *lir.Program {
	p := &lir.Program{}
	ew := &lir.Elementwise{Shape: c.shape, Code: c.code}
	n := int64(1)
	for _, d := range c.shape {
		n *= d
	}
	for i, in := range c.in {
		reach := int64(0)
		for d := range c.shape {
			reach += (c.shape[d] - 1) * in.Strides[d]
		}
		in.Buf = addInput(p, fmt.Sprintf("x%d", i), in.DType, reach+1)
		ew.In = append(ew.In, in)
	}
	for j, dt := range c.out {
		ew.Out = append(ew.Out, lir.EwOut{Buf: addOutput(p, fmt.Sprintf("y%d", j), dt, n), DType: dt})
	}
	p.Steps = []lir.Step{{Op: ew, Src: "t.hir:1:1 " + c.name}}
	return p
}

// checkLevels runs interp (the runtime's kernels) and prog (its native
// form) on each set of inputs, prog once per level with that level's
// object, and hands every output pair to check: level, input set k,
// output i.
func checkLevels(t *testing.T, pool *parallel.Pool, interp, prog *lir.Program, levels []native.Level, inputs [][]*tensor.Tensor,
	check func(level string, k, i int, got, want *tensor.Tensor)) {
	t.Helper()
	wants := make([][]*tensor.Tensor, len(inputs))
	for k, ins := range inputs {
		wants[k] = run(t, pool, interp, ins)
	}
	for _, l := range levels {
		prog.Native.Objects = []lir.NativeObject{nativeObject(t, prog, l)}
		for k, ins := range inputs {
			for i, got := range run(t, pool, prog, ins) {
				check(l.Name, k, i, got, wants[k][i])
			}
		}
	}
}

// addInput adds input slot name (dt, shape) to p, on a buffer of its
// own, and returns the buffer; addOutput the same for an output.
func addInput(p *lir.Program, name string, dt tensor.DType, shape ...int64) lir.Buf {
	b := lir.Buf(len(p.Buffers))
	p.Inputs = append(p.Inputs, lir.Slot{Name: name, DType: dt.String(), Shape: shape, Buffer: len(p.Buffers)})
	p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufInput, Index: len(p.Inputs) - 1, Bytes: tensor.NumElements(shape) * int64(dt.Size())})
	return b
}

func addOutput(p *lir.Program, name string, dt tensor.DType, shape ...int64) lir.Buf {
	b := lir.Buf(len(p.Buffers))
	p.Outputs = append(p.Outputs, lir.Slot{Name: name, DType: dt.String(), Shape: shape, Buffer: len(p.Buffers)})
	p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufOutput, Index: len(p.Outputs) - 1, Bytes: tensor.NumElements(shape) * int64(dt.Size())})
	return b
}

// randomInput fills a tensor with values suited to op: positive where the
// op needs it, small integers for the integer dtypes, a few special
// values among floats.
func randomInput(r *rand.Rand, dt tensor.DType, n int64, positive bool) *tensor.Tensor {
	t := tensor.New(dt, n)
	for i := range n {
		v := r.NormFloat64() * 3
		if positive {
			v = math.Abs(v) + 1e-3
		}
		switch {
		case dt == tensor.Bool:
			v = float64(r.IntN(2))
		case dt.IsInt():
			v = float64(r.IntN(41) - 20)
		case i == 3 && !positive:
			v = math.NaN()
		case i == 5 && !positive:
			v = math.Inf(1)
		case i == 7:
			v = 0
		}
		setFloat(t, int(i), v)
	}
	return t
}

// setFloat stores v as element i of t.
func setFloat(t *tensor.Tensor, i int, v float64) {
	switch t.DType {
	case tensor.F32:
		t.F32()[i] = float32(v)
	case tensor.F64:
		t.F64()[i] = v
	case tensor.I64:
		t.I64()[i] = int64(v)
	case tensor.I32:
		t.I32()[i] = int32(v)
	case tensor.U8, tensor.Bool:
		t.Data[i] = byte(v)
	case tensor.I8:
		t.Data[i] = byte(int8(v))
	default:
		panic("setFloat: dtype " + t.DType.String())
	}
}

// compileFor builds the program's native code for level l.
func compileFor(t *testing.T, p *lir.Program, l native.Level) {
	t.Helper()
	elf, err := toolchain.CToELF("kernels", Source(p.Native), l.Clang)
	if err != nil {
		t.Fatalf("%s: %v\n%s", l.Name, err, Source(p.Native)[len(prelude)+len(mathHeader):])
	}
	if err := native.Validate(elf, l.GOARCH); err != nil {
		t.Fatalf("%s: clang's object does not validate: %v", l.Name, err)
	}
	p.Native.Objects = []lir.NativeObject{{Level: l.Name, ELF: elf}}
}

// fallbackLevel is x86-64-v3's level compiled for x86-64-v2 with FMA
// (the math header needs it): the code the fallback (NEON's 4-lane
// vectors, masks applied with an and) runs, on an x86-64 machine.
func fallbackLevel(v3 native.Level) native.Level {
	v3.Clang = []string{"--target=x86_64-linux-gnu", "-march=x86-64-v2", "-mfma"}
	return v3
}

// withFallback is levels and, where x86-64-v3 is among them, its
// fallbackLevel.
func withFallback(levels []native.Level) []native.Level {
	for _, l := range levels {
		if l.Name == "x86-64-v3" {
			levels = append(levels, fallbackLevel(l))
		}
	}
	return levels
}

// runnableLevels are the levels this machine runs, each tested.
func runnableLevels(t *testing.T) []native.Level {
	var ls []native.Level
	for _, l := range native.Levels() {
		if l.Runs() == nil {
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		t.Skip("needs hardware: this CPU runs no native level")
	}
	return ls
}

func run(t *testing.T, pool *parallel.Pool, p *lir.Program, ins []*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	return runWeights(t, pool, p, nil, ins)
}

// runWeights runs p with the weights' bytes.
func runWeights(t testing.TB, pool *parallel.Pool, p *lir.Program, weights []*tensor.Tensor, ins []*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	ws := make([][]byte, len(weights))
	for i, w := range weights {
		ws[i] = w.Data
	}
	e, err := cpurt.New(p, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	outs, err := e.Run(pool, ins, nil)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// TestNativeElementwise compiles a region per instruction (and a few
// fused ones) for every level this CPU runs, and checks the native
// results against the runtime's interpreter on the same program: equal
// in double regions (exact arithmetic in both), within a few float32
// ulps in float regions (the math functions are approximations in
// both, different ones).
func TestNativeElementwise(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	pool := parallel.NewPool(3)
	defer pool.Close()
	f32, i64 := tensor.F32, tensor.I64
	cont := func(dt tensor.DType) lir.EwIn { return lir.EwIn{DType: dt, Strides: []int64{37, 1}} }
	bcastRow := func(dt tensor.DType) lir.EwIn { return lir.EwIn{DType: dt, Strides: []int64{0, 1}} }
	bcastCol := func(dt tensor.DType) lir.EwIn { return lir.EwIn{DType: dt, Strides: []int64{1, 0}} }
	transposed := func(dt tensor.DType) lir.EwIn { return lir.EwIn{DType: dt, Strides: []int64{1, 5}} }
	load := func(dst, a int) lir.Instr { return lir.Instr{Op: lir.EwLoad, Dst: dst, A: a} }
	store := func(src, a int) lir.Instr { return lir.Instr{Op: lir.EwStore, Dst: src, A: a} }
	var cases []ewCase
	for op := lir.EwOp(1); op < lir.NumEwOps; op++ {
		info := op.Info()
		if info.Bytecode && op != lir.EwIDiv && op != lir.EwIMod || op == lir.EwCast {
			continue
		}
		dt := f32
		switch info.Operands {
		case lir.EwInt:
			dt = i64
		case lir.EwBool:
			dt = tensor.Bool
		}
		outDT := dt
		if info.BoolResult {
			outDT = tensor.Bool
		}
		c := ewCase{name: info.Name, shape: []int64{5, 37}, out: []tensor.DType{outDT}}
		switch info.Arity {
		case 1:
			c.in = []lir.EwIn{cont(dt)}
			c.code = []lir.Instr{load(0, 0), {Op: op, Dst: 1, A: 0, Imm: 0.125}, store(1, 0)}
		case 2:
			c.in = []lir.EwIn{cont(dt), bcastRow(dt)}
			c.code = []lir.Instr{load(0, 0), load(1, 1), {Op: op, Dst: 2, A: 0, B: 1}, store(2, 0)}
		case 3:
			c.in = []lir.EwIn{cont(tensor.Bool), bcastCol(dt), transposed(dt)}
			c.code = []lir.Instr{load(0, 0), load(1, 1), load(2, 2), {Op: op, Dst: 3, A: 0, B: 1, C: 2}, store(3, 0)}
		}
		cases = append(cases, c)
	}
	// Constant exponents, casts, mixed dtypes, several results and a
	// GELU-like chain with a broadcast and a transposed operand.
	for _, y := range []float64{2, 3, 0.5, -1, 1.5} {
		cases = append(cases, ewCase{name: fmt.Sprintf("pow %g", y), shape: []int64{5, 37}, in: []lir.EwIn{cont(f32)}, out: []tensor.DType{f32},
			code: []lir.Instr{load(0, 0), {Op: lir.EwImm, Dst: 1, Imm: y}, {Op: lir.EwPow, Dst: 2, A: 0, B: 1}, store(2, 0)}})
	}
	for _, to := range []tensor.DType{tensor.I32, tensor.I8, tensor.U8, tensor.Bool, tensor.F64, tensor.I64} {
		cases = append(cases, ewCase{name: "cast to " + to.String(), shape: []int64{5, 37}, in: []lir.EwIn{cont(f32)}, out: []tensor.DType{to, f32},
			code: []lir.Instr{load(0, 0), {Op: lir.EwImm, Dst: 3, Imm: 40}, {Op: lir.EwMul, Dst: 0, A: 0, B: 3}, {Op: lir.EwCast, Dst: 1, A: 0, Imm: float64(to)}, store(1, 0),
				{Op: lir.EwCast, Dst: 2, A: 1, Imm: float64(f32)}, store(2, 1)}})
	}
	// QuantizeLinear's region: f32 steps, then a cast to uint8 (computed
	// in float, floatWithCasts), and a clamp into int8 after the cast.
	cases = append(cases, ewCase{name: "quantize", shape: []int64{5, 37}, in: []lir.EwIn{cont(f32)}, out: []tensor.DType{tensor.U8, tensor.I8},
		code: []lir.Instr{load(0, 0), {Op: lir.EwImm, Dst: 1, Imm: float64(float32(0.025))}, {Op: lir.EwDiv, Dst: 2, A: 0, B: 1}, {Op: lir.EwRound, Dst: 2, A: 2},
			{Op: lir.EwImm, Dst: 3, Imm: 128}, {Op: lir.EwAdd, Dst: 2, A: 2, B: 3}, {Op: lir.EwImm, Dst: 4, Imm: 0}, {Op: lir.EwMax, Dst: 2, A: 2, B: 4},
			{Op: lir.EwImm, Dst: 5, Imm: 255}, {Op: lir.EwMin, Dst: 2, A: 2, B: 5}, {Op: lir.EwCast, Dst: 6, A: 2, Imm: float64(tensor.U8)}, store(6, 0),
			{Op: lir.EwCast, Dst: 7, A: 0, Imm: float64(tensor.I8)}, store(7, 1)}})
	// DequantizeLinear's region: uint8 loaded, cast to f32, centered and
	// scaled (computed in float, floatWithCasts), and an int8 one stored
	// as i16 by a cast.
	cases = append(cases, ewCase{name: "dequantize", shape: []int64{5, 37}, in: []lir.EwIn{cont(tensor.U8), bcastRow(tensor.I8)}, out: []tensor.DType{f32, tensor.I16},
		code: []lir.Instr{load(0, 0), {Op: lir.EwCast, Dst: 1, A: 0, Imm: float64(f32)}, {Op: lir.EwImm, Dst: 2, Imm: 128}, {Op: lir.EwSub, Dst: 1, A: 1, B: 2},
			{Op: lir.EwImm, Dst: 3, Imm: float64(float32(0.025))}, {Op: lir.EwMul, Dst: 1, A: 1, B: 3}, store(1, 0),
			load(4, 1), {Op: lir.EwCast, Dst: 5, A: 4, Imm: float64(tensor.I16)}, store(5, 1)}})
	// Casts of floats to bytes at the edges of the conversion (NaN to 0,
	// past int32, past int64's saturation), in the float path.
	for _, to := range []tensor.DType{tensor.U8, tensor.I8} {
		cases = append(cases, ewCase{name: "cast edges to " + to.String(), shape: []int64{5, 37}, in: []lir.EwIn{cont(f32)}, out: []tensor.DType{to, f32},
			code: []lir.Instr{load(0, 0), {Op: lir.EwCast, Dst: 1, A: 0, Imm: float64(to)}, store(1, 0), {Op: lir.EwCast, Dst: 2, A: 1, Imm: float64(f32)}, store(2, 1)},
			values: []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1 << 31, -(1 << 31), -(1 << 31) - 256, 1<<31 + 256, 3e9 + 128, -3e9, 1e19, -1e19,
				9.3e18, 9.2e18, 255.5, -0.7, 300, -129.5, 127.9, 1e10 + 1024, 65535.9, -200}})
	}
	// Requantization's clamp into a byte's range, then the cast (which
	// then needs no range checks: regFact) and the cast back, at the
	// edges: NaN, infinities, ties, -0 (a rounded -0.3 reaches the int8
	// cast unchanged, where the byte is +0).
	requant := func(dt tensor.DType, zp float64) []lir.Instr {
		lo, hi, _ := byteRange(dt)
		add, sub := lir.EwAdd, lir.EwSub
		if math.IsNaN(zp) {
			// no zero point: a rounded -0 goes on to the cast
			add, sub, zp = lir.EwMax, lir.EwMax, -1000
		}
		return []lir.Instr{load(0, 0), {Op: lir.EwImm, Dst: 1, Imm: float64(float32(0.5))}, {Op: lir.EwDiv, Dst: 2, A: 0, B: 1}, {Op: lir.EwRound, Dst: 2, A: 2},
			{Op: lir.EwImm, Dst: 3, Imm: zp}, {Op: add, Dst: 2, A: 2, B: 3}, {Op: lir.EwImm, Dst: 4, Imm: lo}, {Op: lir.EwMax, Dst: 2, A: 2, B: 4},
			{Op: lir.EwImm, Dst: 5, Imm: hi}, {Op: lir.EwMin, Dst: 2, A: 5, B: 2}, {Op: lir.EwCast, Dst: 6, A: 2, Imm: float64(dt)}, store(6, 0),
			{Op: lir.EwCast, Dst: 7, A: 6, Imm: float64(f32)}, {Op: sub, Dst: 7, A: 7, B: 3}, store(7, 1), store(2, 2)}
	}
	edges := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), -0.1, 0.25, 0.75, -0.75, 1.25, 63.75, 64.25, -64.25, -63.75, 127.5, -128.5, 1e10, -1e10, 3e38, -3e38, 100.3}
	for _, c := range []struct {
		dt tensor.DType
		zp float64
	}{{tensor.U8, 128}, {tensor.U8, 0}, {tensor.I8, 0}, {tensor.I8, -5}, {tensor.I8, math.NaN()}} {
		cases = append(cases, ewCase{name: fmt.Sprintf("requantize edges to %s zp %g", c.dt, c.zp), shape: []int64{5, 37}, in: []lir.EwIn{cont(f32)},
			out: []tensor.DType{c.dt, f32, c.dt}, code: requant(c.dt, c.zp), values: edges, signedZeros: true})
	}
	// A requantization, then a dequantization, a ReLU6 and a second
	// quantization (a QDQ model's region between two convolutions): the
	// clamps after the first cast see bounded numbers (regFact.bounded)
	// and are compiled without NaN checks, the first ones with the
	// constant compared first; their results must still be the
	// interpreter's, NaN, infinities and signed zeros included. The
	// dequantization's scale is negative in the second case, so that
	// ReLU6's max meets -0.
	for _, scale := range []float64{0.0558, -0.0558} {
		im := func(dst int, v float64) lir.Instr {
			return lir.Instr{Op: lir.EwImm, Dst: dst, Imm: float64(float32(v))}
		}
		op := func(o lir.EwOp, dst, a, b int) lir.Instr { return lir.Instr{Op: o, Dst: dst, A: a, B: b} }
		cases = append(cases, ewCase{name: fmt.Sprintf("requantize, ReLU6, requantize (scale %g)", scale), shape: []int64{5, 37},
			in: []lir.EwIn{cont(f32), bcastRow(f32)}, out: []tensor.DType{f32, f32, f32},
			code: []lir.Instr{load(0, 0), load(1, 1), {Op: lir.EwRound, Dst: 2, A: 0}, op(lir.EwMul, 2, 2, 1), {Op: lir.EwRound, Dst: 2, A: 2},
				im(3, 128), op(lir.EwAdd, 2, 2, 3), im(4, 0), op(lir.EwMax, 2, 2, 4), im(5, 255), op(lir.EwMin, 2, 2, 5),
				{Op: lir.EwCast, Dst: 6, A: 2, Imm: float64(tensor.U8)}, {Op: lir.EwCast, Dst: 7, A: 6, Imm: float64(f32)},
				op(lir.EwSub, 7, 7, 3), im(8, scale), op(lir.EwMul, 7, 7, 8), store(7, 0),
				op(lir.EwMax, 9, 7, 4), im(10, 6), op(lir.EwMin, 9, 9, 10), store(9, 1),
				im(11, 0.0235294122), op(lir.EwDiv, 12, 9, 11), {Op: lir.EwRound, Dst: 12, A: 12}, op(lir.EwMax, 12, 4, 12), op(lir.EwMin, 12, 12, 5),
				{Op: lir.EwCast, Dst: 13, A: 12, Imm: float64(tensor.U8)}, {Op: lir.EwCast, Dst: 13, A: 13, Imm: float64(f32)}, store(13, 2)},
			values: append(edges, -3, 300, 1000, -1000, 0.4, 17), signedZeros: true})
	}
	// Max and min against zero of values that may be -0 (-0 itself, a
	// rounded -0.1) or NaN: neither may compare the constant first.
	{
		op := func(o lir.EwOp, dst, a, b int) lir.Instr { return lir.Instr{Op: o, Dst: dst, A: a, B: b} }
		cases = append(cases, ewCase{name: "max and min against zero", shape: []int64{5, 37}, in: []lir.EwIn{cont(f32)}, out: []tensor.DType{f32, f32, f32, f32, f32},
			code: []lir.Instr{load(0, 0), {Op: lir.EwImm, Dst: 1}, op(lir.EwMax, 2, 0, 1), store(2, 0), op(lir.EwMin, 3, 0, 1), store(3, 1),
				{Op: lir.EwRound, Dst: 4, A: 0}, op(lir.EwMax, 5, 4, 1), store(5, 2), op(lir.EwMin, 6, 4, 1), store(6, 3),
				// never -0 before the rounding, which makes -0 of -1.25+1
				{Op: lir.EwImm, Dst: 7, Imm: 1}, op(lir.EwAdd, 8, 0, 7), {Op: lir.EwRound, Dst: 8, A: 8}, op(lir.EwMax, 9, 8, 1), store(9, 4)},
			values: append(edges, -1.25), signedZeros: true})
	}
	cases = append(cases, ewCase{name: "gelu chain", shape: []int64{5, 37}, in: []lir.EwIn{cont(f32), bcastRow(f32), transposed(f32)}, out: []tensor.DType{f32, f32},
		code: []lir.Instr{load(0, 0), load(1, 1), {Op: lir.EwAdd, Dst: 0, A: 0, B: 1}, {Op: lir.EwImm, Dst: 2, Imm: 0.7978845608}, {Op: lir.EwMul, Dst: 3, A: 0, B: 2},
			{Op: lir.EwTanh, Dst: 3, A: 3}, {Op: lir.EwImm, Dst: 4, Imm: 1}, {Op: lir.EwAdd, Dst: 3, A: 3, B: 4}, {Op: lir.EwMul, Dst: 3, A: 3, B: 0}, store(3, 0),
			load(5, 2), {Op: lir.EwSigmoid, Dst: 5, A: 5}, {Op: lir.EwMul, Dst: 5, A: 5, B: 3}, store(5, 1)}})
	// Elu and a mask's select: comparisons and where in a float region
	// (exact at any precision), with an exponential, which only the float
	// path compiles; NaN fails the comparison and takes the other arm.
	cases = append(cases, ewCase{name: "elu and a masked select", shape: []int64{5, 37}, in: []lir.EwIn{cont(f32), bcastRow(f32)}, out: []tensor.DType{f32, f32},
		code: []lir.Instr{load(0, 0), {Op: lir.EwImm, Dst: 1}, {Op: lir.EwGt, Dst: 2, A: 0, B: 1}, {Op: lir.EwExp, Dst: 3, A: 0},
			{Op: lir.EwImm, Dst: 4, Imm: 1}, {Op: lir.EwSub, Dst: 3, A: 3, B: 4}, {Op: lir.EwWhere, Dst: 5, A: 2, B: 0, C: 3}, store(5, 0),
			load(6, 1), {Op: lir.EwLe, Dst: 7, A: 6, B: 0}, {Op: lir.EwWhere, Dst: 8, A: 7, B: 6, C: 5}, store(8, 1)},
		values: append(edges, -0.5, 0.5, 3)})
	cases = append(cases, ewCase{name: "mixed dtypes", shape: []int64{5, 37}, in: []lir.EwIn{cont(i64), bcastRow(tensor.I32), bcastCol(tensor.U8)}, out: []tensor.DType{f32, tensor.Bool},
		code: []lir.Instr{load(0, 0), load(1, 1), load(2, 2), {Op: lir.EwAdd, Dst: 3, A: 0, B: 1}, {Op: lir.EwMul, Dst: 3, A: 3, B: 2}, store(3, 0),
			{Op: lir.EwGt, Dst: 4, A: 3, B: 0}, store(4, 1)}})
	// A scalar region, and one whose dims all coalesce into one.
	cases = append(cases, ewCase{name: "scalar", shape: []int64{1}, in: []lir.EwIn{{DType: f32, Strides: []int64{0}}}, out: []tensor.DType{f32},
		code: []lir.Instr{load(0, 0), {Op: lir.EwExp, Dst: 1, A: 0}, store(1, 0)}})
	cases = append(cases, ewCase{name: "coalesced", shape: []int64{2, 3, 4, 5}, in: []lir.EwIn{{DType: f32, Strides: []int64{60, 20, 5, 1}}, {DType: f32, Strides: []int64{0, 0, 0, 0}}},
		out: []tensor.DType{f32}, code: []lir.Instr{load(0, 0), load(1, 1), {Op: lir.EwSub, Dst: 2, A: 0, B: 1}, store(2, 0)}})

	// Every case's function in one unit, compiled once per level (a
	// function is named by its code, so equal ones are one).
	interps := make([]*lir.Program, len(cases))
	progs := make([]*lir.Program, len(cases))
	errs := make([]string, len(cases))
	unit := &lir.Native{}
	index := map[string]int{}
	for i, c := range cases {
		interps[i] = ewProgram(c)
		prog, err := Generate(interps[i], Options{EwGrain: 16})
		switch {
		case err != nil:
			errs[i] = err.Error()
			continue
		case prog.Native == nil:
			errs[i] = "region not compiled"
			continue
		}
		call, ok := prog.Steps[0].Op.(*lir.NativeCall)
		if !ok {
			errs[i] = "step is " + string(prog.Steps[0].Kind())
			continue
		}
		f := prog.Native.Funcs[call.Func]
		fi, seen := index[f.Name]
		if !seen {
			fi = len(unit.Funcs)
			index[f.Name] = fi
			unit.Funcs = append(unit.Funcs, f)
		}
		moved := *call
		moved.Func = fi
		prog.Steps = []lir.Step{{Op: &moved, Src: prog.Steps[0].Src}}
		progs[i] = prog
	}
	objects := compileUnit(t, unit, levels)

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if errs[i] != "" {
				t.Fatal(errs[i])
			}
			interp := interps[i]
			// Inputs of the case's own: an op appended to lir.EwOps leaves
			// every other case's inputs as they were.
			r := rand.New(rand.NewPCG(1, uint64(crc32.ChecksumIEEE([]byte(c.name)))))
			ins := make([]*tensor.Tensor, len(c.in))
			for i, in := range c.in {
				positive := strings.HasPrefix(c.name, "log") || strings.HasPrefix(c.name, "sqrt") || strings.HasPrefix(c.name, "rsqrt") || strings.HasPrefix(c.name, "pow")
				ins[i] = randomInput(r, in.DType, interp.Inputs[i].Shape[0], positive)
			}
			for e := range interp.Inputs[0].Shape[0] {
				if len(c.values) > 0 {
					setFloat(ins[0], int(e), c.values[int(e)%len(c.values)])
				}
			}
			want := run(t, pool, interp, ins)
			for li, l := range levels {
				prog := *progs[i]
				prog.Native = &lir.Native{Funcs: unit.Funcs, Objects: []lir.NativeObject{objects[li]}}
				if err := prog.Verify(); err != nil {
					t.Fatal(err)
				}
				got := run(t, pool, &prog, ins)
				for j := range want {
					compareOutputs(t, l.Name, c.out[j], got[j], want[j], regionFloat(interp))
					if c.signedZeros {
						for e, w := range want[j].Float64s() {
							if g := got[j].Float64s()[e]; g == 0 && w == 0 && math.Signbit(g) != math.Signbit(w) {
								t.Errorf("%s: output %d element %d: native %v, interpreter %v", l.Name, j, e, g, w)
							}
						}
					}
				}
			}
		})
	}
}

// regionFloat reports whether the region computes in float (else double).
func regionFloat(p *lir.Program) bool {
	ct, _ := regionCompute(p.Steps[0].Op.(*lir.Elementwise))
	return ct == computeFloat
}

// compareOutputs checks got against want: exactly, or for float regions
// within 4 ulps (relative 5e-7) or 1e-6 absolute where the interpreter's
// and the header's approximations differ.
func compareOutputs(t *testing.T, level string, dt tensor.DType, got, want *tensor.Tensor, float bool) {
	t.Helper()
	gs, ws := got.Float64s(), want.Float64s()
	n := len(ws)
	bad := 0
	for i := range n {
		g, w := gs[i], ws[i]
		ok := g == w || math.IsNaN(g) && math.IsNaN(w)
		if !ok && float && dt == tensor.F32 {
			ok = math.Abs(g-w) <= 1e-6+5e-7*math.Abs(w)
		}
		if !ok {
			if bad < 5 {
				t.Errorf("%s: element %d: native %v, interpreter %v", level, i, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", level, bad, n)
	}
}

// TestGenerateShares: equal regions share one function; regions native
// code does not handle stay as they are.
func TestGenerateShares(t *testing.T) {
	c := ewCase{name: "relu", shape: []int64{4}, in: []lir.EwIn{{DType: tensor.F32, Strides: []int64{1}}}, out: []tensor.DType{tensor.F32},
		code: []lir.Instr{{Op: lir.EwLoad}, {Op: lir.EwRelu, Dst: 1}, {Op: lir.EwStore, Dst: 1}}}
	p := ewProgram(c)
	p.Steps = append(p.Steps, p.Steps[0])
	// An exponential of an integer operand computes in double, where
	// native code has no exp: the region stays on the interpreter.
	dexp := ewCase{name: "exp of i64", shape: []int64{4}, in: []lir.EwIn{{DType: tensor.I64, Strides: []int64{1}}}, out: []tensor.DType{tensor.F32},
		code: []lir.Instr{{Op: lir.EwLoad}, {Op: lir.EwExp, Dst: 1}, {Op: lir.EwStore, Dst: 1}}}
	h := ewProgram(dexp)
	p.Steps = append(p.Steps, h.Steps[0]) // buffers differ; only its kind matters here
	out, err := Generate(p, Options{EwGrain: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Native == nil || len(out.Native.Funcs) != 1 {
		t.Fatalf("want one function, got %+v", out.Native)
	}
	for i, want := range []lir.Kind{"native", "native", "ew"} {
		if got := out.Steps[i].Op.Kind(); got != want {
			t.Errorf("step %d is %s, want %s", i, got, want)
		}
	}
	if p.Native != nil || p.Steps[0].Op.Kind() != "ew" {
		t.Error("Generate changed its input")
	}
	if f := out.Native.Funcs[0]; f.N != 4 || f.In[0] != 16 || f.Out[0] != 16 || !strings.Contains(f.Source, f.Name) {
		t.Errorf("function %+v", f)
	}
}

// TestSourceIsFreestanding: the unit includes nothing but the compiler's
// own stdint.h and calls nothing it does not define (lld's -z defs
// checks the rest).
func TestSourceIsFreestanding(t *testing.T) {
	if _, err := exec.LookPath("clang"); err != nil {
		t.Skip("no clang")
	}
	p := ewProgram(ewCase{name: "exp", shape: []int64{4}, in: []lir.EwIn{{DType: tensor.F32, Strides: []int64{1}}}, out: []tensor.DType{tensor.F32},
		code: []lir.Instr{{Op: lir.EwLoad}, {Op: lir.EwExp, Dst: 1}, {Op: lir.EwStore, Dst: 1}}})
	out, err := Generate(p, Options{EwGrain: 1})
	if err != nil {
		t.Fatal(err)
	}
	src := Source(out.Native)
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#include") && strings.TrimSpace(line) != "#include <stdint.h>" {
			t.Errorf("unit includes %s", line)
		}
	}
}

// TestNativeGuard: a program whose tables agree with each other but not
// with its code (an output shrunk in the buffer table, the slot and the
// function table alike, so the verifier passes it) is refused by the
// function itself, which knows the sizes it was compiled for; nothing is
// written out of bounds.
func TestNativeGuard(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	pool := parallel.NewPool(1)
	defer pool.Close()
	c := ewCase{name: "neg", shape: []int64{4}, in: []lir.EwIn{{DType: tensor.F32, Strides: []int64{1}}}, out: []tensor.DType{tensor.F32},
		code: []lir.Instr{{Op: lir.EwLoad}, {Op: lir.EwNeg, Dst: 1}, {Op: lir.EwStore, Dst: 1}}}
	p, err := Generate(ewProgram(c), Options{EwGrain: 1})
	if err != nil {
		t.Fatal(err)
	}
	compileFor(t, p, levels[0])
	out := p.Outputs[0].Buffer
	p.Buffers[out].Bytes, p.Outputs[0].Shape, p.Native.Funcs[0].Out[0] = 8, []int64{2}, 8
	e, err := cpurt.New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Run(pool, []*tensor.Tensor{tensor.FromF32([]int64{4}, []float32{1, 2, 3, 4})}, nil)
	if err == nil || !strings.Contains(err.Error(), "refused its buffers") {
		t.Fatalf("got %v, want the function to refuse its buffers", err)
	}
}

// TestNativeF16 checks regions with f16 and bf16 operands against the
// interpreter bit for bit: every one of the 65536 values widened (and
// narrowed back), and floats rounded to them where the rounding decides:
// the midpoints between consecutive values (ties to even), a float
// either side of each, the overflow to infinity, subnormals, values
// below the smallest, NaN, infinities and signed zeros; through a store
// and through a cast inside the region; with the hardware's conversions
// and without (the fallback level).
func TestNativeF16(t *testing.T) {
	needToolchain(t)
	f32 := tensor.F32
	load := func(dst, a int) lir.Instr { return lir.Instr{Op: lir.EwLoad, Dst: dst, A: a} }
	store := func(r, out int) lir.Instr { return lir.Instr{Op: lir.EwStore, Dst: r, A: out} }
	pool := parallel.NewPool(2)
	defer pool.Close()
	for _, h := range []struct {
		dt    tensor.DType
		widen func(uint16) float32
		inf   uint16
		extra []float32
	}{
		{tensor.F16, tensor.F16ToF32, 0x7c00, []float32{65504, 65519.99, 65520, 65536, 2.9802322e-08, 2.98e-08, 1e-9}},
		{tensor.BF16, tensor.BF16ToF32, 0x7f80, []float32{3.3895314e38, 3.3961775e38, 1e-38, 1e-45}},
	} {
		widen := ewCase{name: h.dt.String() + " widened", shape: []int64{1 << 16}, in: []lir.EwIn{{DType: h.dt, Strides: []int64{1}}}, out: []tensor.DType{f32, h.dt},
			code: []lir.Instr{load(0, 0), store(0, 0), store(0, 1)}}
		all := tensor.New(h.dt, 1<<16)
		for v := range 1 << 16 {
			all.Data[2*v], all.Data[2*v+1] = byte(v), byte(v>>8)
		}
		var vs []float32
		for v := uint16(0); v < h.inf; v++ {
			a, b := float64(h.widen(v)), float64(h.widen(v+1))
			mid := float32((a + b) / 2)
			vs = append(vs, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, float32(math.Inf(1))), float32(a))
		}
		vs = append(vs, h.extra...)
		vs = append(vs, 1e10, 3e38, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
			// NaNs whose low bits a rounding would carry out of
			math.Float32frombits(0x7fffffff), math.Float32frombits(0x7f80ffff), math.Float32frombits(0x7fc0ffff))
		n := len(vs)
		for _, v := range vs[:n] {
			vs = append(vs, -v)
		}
		narrow := ewCase{name: "f32 narrowed to " + h.dt.String(), shape: []int64{int64(len(vs))}, in: []lir.EwIn{{DType: f32, Strides: []int64{1}}}, out: []tensor.DType{h.dt, f32},
			code: []lir.Instr{load(0, 0), store(0, 0), {Op: lir.EwCast, Dst: 1, A: 0, Imm: float64(h.dt)}, store(1, 1)}}
		floats := tensor.FromF32([]int64{int64(len(vs))}, vs)
		for _, c := range []struct {
			ew ewCase
			in *tensor.Tensor
		}{{widen, all}, {narrow, floats}} {
			interp := ewProgram(c.ew)
			prog, err := Generate(interp, Options{EwGrain: 4096})
			if err != nil || prog.Native == nil {
				t.Fatalf("%s: not compiled (%v)", c.ew.name, err)
			}
			// The fallback level (no F16C) converts in selects and shifts,
			// the others through the hardware's conversions.
			checkLevels(t, pool, interp, prog, withFallback(runnableLevels(t)), [][]*tensor.Tensor{{c.in}}, func(level string, _, i int, got, want *tensor.Tensor) {
				sz := want.DType.Size()
				for e := 0; e < len(want.Data); e += sz {
					if !bytes.Equal(got.Data[e:e+sz], want.Data[e:e+sz]) {
						t.Fatalf("%s %s: output %d element %d: native % x, interpreter % x", level, c.ew.name, i, e/sz, got.Data[e:e+sz], want.Data[e:e+sz])
					}
				}
			})
		}
	}
}
