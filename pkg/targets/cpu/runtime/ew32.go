package runtime

import (
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// f32Ops are the instructions the float32 interpreter runs. A program whose
// operands and results are all f32 and whose instructions are all here runs
// in float32 registers (as PyTorch computes), without conversions; any other
// program takes the general float64 path.
var f32Ops = [lir.NumEwOps]bool{
	lir.EwLoad: true, lir.EwStore: true, lir.EwImm: true, lir.EwLeakyRelu: true,
	lir.EwNeg: true, lir.EwAbs: true, lir.EwExp: true, lir.EwLog: true, lir.EwSqrt: true, lir.EwRsqrt: true, lir.EwRecip: true,
	lir.EwTanh: true, lir.EwSigmoid: true, lir.EwRelu: true, lir.EwGelu: true, lir.EwGeluTanh: true, lir.EwSilu: true,
	lir.EwErf: true, lir.EwSin: true, lir.EwCos: true, lir.EwFloor: true, lir.EwCeil: true, lir.EwRound: true,
	lir.EwAdd: true, lir.EwSub: true, lir.EwMul: true, lir.EwDiv: true, lir.EwPow: true, lir.EwMax: true, lir.EwMin: true, lir.EwMod: true,
	// Comparisons and selection are exact at any precision: with them, a
	// region such as Elu's where(x > 0, x, exp(x) - 1) computes in float
	// like any other, where it took the double path (and native code
	// left it to this interpreter: no double exp there).
	lir.EwEq: true, lir.EwNe: true, lir.EwLt: true, lir.EwLe: true, lir.EwGt: true, lir.EwGe: true, lir.EwWhere: true,
}

// allF32 reports whether an elementwise step can run on the float32 path.
func allF32(op *lir.Elementwise) bool {
	for _, in := range op.In {
		if in.DType != tensor.F32 {
			return false
		}
	}
	for _, out := range op.Out {
		if out.DType != tensor.F32 {
			return false
		}
	}
	for _, in := range op.Code {
		if int(in.Op) >= len(f32Ops) || !f32Ops[in.Op] {
			return false
		}
	}
	return true
}

// evalChunk32 runs the bytecode over n float32 elements. A register that
// a load pointed at its operand (read in place) is pointed back at its
// own scratch before anything is written to it, so no program, however
// its registers are numbered, writes into an operand.
func evalChunk32(code []lir.Instr, regs, scratch [][]float32, n int64, loadOp func(int, []float32) []float32, storeOp func(int, []float32)) {
	for _, in := range code {
		d := scratch[in.Dst][:n]
		switch in.Op {
		case lir.EwLoad:
			// A contiguous operand is read in place: the register aliases it.
			regs[in.Dst] = loadOp(in.A, d)
			continue
		case lir.EwStore:
			storeOp(in.A, regs[in.Dst][:n])
			continue
		case lir.EwImm:
			v := float32(in.Imm)
			for i := range d {
				d[i] = v
			}
			regs[in.Dst] = scratch[in.Dst]
			continue
		}
		x := regs[in.A][:n]
		switch in.Op {
		case lir.EwAdd, lir.EwSub, lir.EwMul, lir.EwDiv, lir.EwMax, lir.EwMin, lir.EwPow, lir.EwMod,
			lir.EwEq, lir.EwNe, lir.EwLt, lir.EwLe, lir.EwGt, lir.EwGe:
			y := regs[in.B][:n]
			binary32(in.Op, d, x, y)
		case lir.EwWhere:
			y, z := regs[in.B][:n], regs[in.C][:n]
			for i := range d {
				if x[i] != 0 {
					d[i] = y[i]
				} else {
					d[i] = z[i]
				}
			}
		default:
			unary32(in.Op, d, x, float32(in.Imm))
		}
		regs[in.Dst] = scratch[in.Dst]
	}
}

func binary32(op lir.EwOp, d, x, y []float32) {
	switch op {
	case lir.EwAdd:
		for i := range d {
			d[i] = x[i] + y[i]
		}
	case lir.EwSub:
		for i := range d {
			d[i] = x[i] - y[i]
		}
	case lir.EwMul:
		for i := range d {
			d[i] = x[i] * y[i]
		}
	case lir.EwDiv:
		for i := range d {
			d[i] = x[i] / y[i]
		}
	case lir.EwMax:
		for i := range d {
			a, b := x[i], y[i]
			switch {
			case a != a || b != b:
				d[i] = float32(math.NaN())
			case a > b:
				d[i] = a
			default:
				d[i] = b
			}
		}
	case lir.EwMin:
		for i := range d {
			a, b := x[i], y[i]
			switch {
			case a != a || b != b:
				d[i] = float32(math.NaN())
			case a < b:
				d[i] = a
			default:
				d[i] = b
			}
		}
	case lir.EwPow:
		for i := range d {
			d[i] = float32(math.Pow(float64(x[i]), float64(y[i])))
		}
	case lir.EwMod:
		mod := lir.EwOps[lir.EwMod].Binary
		for i := range d {
			d[i] = float32(mod(float64(x[i]), float64(y[i])))
		}
	case lir.EwEq, lir.EwNe, lir.EwLt, lir.EwLe, lir.EwGt, lir.EwGe:
		// As the double path computes them (lir.EwOps): 1 or 0.
		cmp := lir.EwOps[op].Binary
		for i := range d {
			d[i] = float32(cmp(float64(x[i]), float64(y[i])))
		}
	}
}

func unary32(op lir.EwOp, d, x []float32, imm float32) {
	switch op {
	case lir.EwNeg:
		for i := range d {
			d[i] = -x[i]
		}
	case lir.EwAbs:
		for i := range d {
			d[i] = float32(math.Abs(float64(x[i])))
		}
	case lir.EwRelu:
		for i := range d {
			if x[i] > 0 {
				d[i] = x[i]
			} else {
				d[i] = 0
			}
		}
	case lir.EwLeakyRelu:
		for i := range d {
			if x[i] < 0 {
				d[i] = x[i] * imm
			} else {
				d[i] = x[i]
			}
		}
	case lir.EwExp:
		for i := range d {
			d[i] = vec.Exp32(x[i])
		}
	case lir.EwSigmoid:
		for i := range d {
			d[i] = vec.Sigmoid32(x[i])
		}
	case lir.EwSilu:
		for i := range d {
			d[i] = vec.Silu32(x[i])
		}
	case lir.EwTanh:
		for i := range d {
			d[i] = vec.Tanh32(x[i])
		}
	case lir.EwErf:
		for i := range d {
			d[i] = vec.Erf32(x[i])
		}
	case lir.EwGelu:
		copy(d, x)
		vec.GeluInPlace(d)
	case lir.EwGeluTanh:
		for i := range d {
			d[i] = vec.GeluTanh32(x[i])
		}
	case lir.EwSqrt:
		for i := range d {
			d[i] = float32(math.Sqrt(float64(x[i])))
		}
	case lir.EwRsqrt:
		for i := range d {
			d[i] = float32(1 / math.Sqrt(float64(x[i])))
		}
	case lir.EwRecip:
		for i := range d {
			d[i] = 1 / x[i]
		}
	default:
		// log, sin, cos, floor, ceil, round: via the float64 definitions.
		f := lir.EwOps[op].Unary
		for i := range d {
			d[i] = float32(f(float64(x[i])))
		}
	}
}
