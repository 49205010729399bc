package runtime

import (
	"math"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// f32Ops are the instructions the float32 interpreter runs. A program whose
// operands and results are all f32 and whose instructions are all here runs
// in float32 registers (as PyTorch computes), without conversions; any other
// program takes the general float64 path.
var f32Ops = map[string]bool{
	"load": true, "store": true, "imm": true, "leaky_relu": true,
	"neg": true, "abs": true, "exp": true, "log": true, "sqrt": true, "rsqrt": true, "recip": true,
	"tanh": true, "sigmoid": true, "relu": true, "gelu": true, "gelu_tanh": true, "silu": true,
	"erf": true, "sin": true, "cos": true, "floor": true, "ceil": true, "round": true,
	"add": true, "sub": true, "mul": true, "div": true, "pow": true, "max": true, "min": true, "mod": true,
}

// allF32 reports whether an "ew" step can run on the float32 path.
func allF32(s *artifact.Step, nIn, nOut int) bool {
	for _, dt := range s.Ints[2 : 2+nIn+nOut] {
		if tensor.DType(dt) != tensor.F32 {
			return false
		}
	}
	for _, in := range s.Code {
		if !f32Ops[in.Op] {
			return false
		}
	}
	return true
}

// evalChunk32 runs the bytecode over n float32 elements.
func evalChunk32(s *artifact.Step, regs [][]float32, n int64, loadOp func(int, []float32) []float32, storeOp func(int, []float32)) {
	for _, in := range s.Code {
		d := regs[in.Dst][:n]
		switch in.Op {
		case "load":
			// A contiguous operand is read in place: the register aliases it.
			regs[in.Dst] = loadOp(in.A, d)
			continue
		case "store":
			storeOp(in.A, regs[in.Dst][:n])
			continue
		case "imm":
			v := float32(in.Imm)
			for i := range d {
				d[i] = v
			}
			continue
		}
		x := regs[in.A][:n]
		switch in.Op {
		case "add", "sub", "mul", "div", "max", "min", "pow", "mod":
			y := regs[in.B][:n]
			binary32(in.Op, d, x, y)
		default:
			unary32(in.Op, d, x, float32(in.Imm))
		}
	}
}

func binary32(op string, d, x, y []float32) {
	switch op {
	case "add":
		for i := range d {
			d[i] = x[i] + y[i]
		}
	case "sub":
		for i := range d {
			d[i] = x[i] - y[i]
		}
	case "mul":
		for i := range d {
			d[i] = x[i] * y[i]
		}
	case "div":
		for i := range d {
			d[i] = x[i] / y[i]
		}
	case "max":
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
	case "min":
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
	case "pow":
		for i := range d {
			d[i] = float32(math.Pow(float64(x[i]), float64(y[i])))
		}
	case "mod":
		for i := range d {
			d[i] = float32(binaryOps["mod"](float64(x[i]), float64(y[i])))
		}
	}
}

func unary32(op string, d, x []float32, imm float32) {
	switch op {
	case "neg":
		for i := range d {
			d[i] = -x[i]
		}
	case "abs":
		for i := range d {
			d[i] = float32(math.Abs(float64(x[i])))
		}
	case "relu":
		for i := range d {
			if x[i] > 0 {
				d[i] = x[i]
			} else {
				d[i] = 0
			}
		}
	case "leaky_relu":
		for i := range d {
			if x[i] < 0 {
				d[i] = x[i] * imm
			} else {
				d[i] = x[i]
			}
		}
	case "exp":
		for i := range d {
			d[i] = kernels.Exp32(x[i])
		}
	case "sigmoid":
		for i := range d {
			d[i] = kernels.Sigmoid32(x[i])
		}
	case "silu":
		for i := range d {
			d[i] = kernels.Silu32(x[i])
		}
	case "tanh":
		for i := range d {
			d[i] = kernels.Tanh32(x[i])
		}
	case "erf":
		for i := range d {
			d[i] = kernels.Erf32(x[i])
		}
	case "gelu":
		copy(d, x)
		kernels.GeluInPlace(d)
	case "gelu_tanh":
		for i := range d {
			d[i] = kernels.GeluTanh32(x[i])
		}
	case "sqrt":
		for i := range d {
			d[i] = float32(math.Sqrt(float64(x[i])))
		}
	case "rsqrt":
		for i := range d {
			d[i] = float32(1 / math.Sqrt(float64(x[i])))
		}
	case "recip":
		for i := range d {
			d[i] = 1 / x[i]
		}
	default:
		// log, sin, cos, floor, ceil, round: via the float64 definitions.
		f := unaryOps[op]
		for i := range d {
			d[i] = float32(f(float64(x[i])))
		}
	}
}
