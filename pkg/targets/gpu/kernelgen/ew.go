package kernelgen

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// computeOf is the type a kernel computes values of dtype dt in: the CPU
// target computes in float64 and rounds on store; GPUs compute floats in
// f32 and integers in their own width (i64, or i32 for narrower ones).
func computeOf(dt tensor.DType) kir.Type {
	switch dt {
	case tensor.F32, tensor.F16, tensor.BF16:
		return kir.F32
	case tensor.I64:
		return kir.I64
	case tensor.Bool:
		return kir.Bool
	}
	return kir.I32
}

// toBool is x != 0.
func toBool(x *kir.Expr) *kir.Expr {
	if x.T == kir.Bool {
		return x
	}
	return kir.Ne(x, kir.Const(x.T, 0, 0))
}

// castTo converts a computed value to what dtype to holds, as the CPU
// target's cast does: floats round to the type's precision, integers
// truncate toward zero (saturating at the i64 range, NaN as 0) and wrap to
// the width, bool is x != 0. The result has computeOf(to).
func castTo(x *kir.Expr, to tensor.DType) *kir.Expr {
	ct := computeOf(to)
	if x.T == kir.Bool && ct != kir.Bool {
		x = kir.Select(x, kir.Const(ct, 1, 1), kir.Const(ct, 0, 0))
	}
	switch to {
	case tensor.Bool:
		return toBool(x)
	case tensor.F32:
		return kir.Convert(kir.F32, x)
	case tensor.F16:
		return kir.F16ToF32(kir.F32ToF16(kir.Convert(kir.F32, x)))
	case tensor.BF16:
		return kir.BF16ToF32(kir.F32ToBF16(kir.Convert(kir.F32, x)))
	case tensor.I64:
		if x.T == kir.F32 {
			return kir.FloatToI64(x)
		}
		return kir.Convert(kir.I64, x)
	}
	// i32 and narrower: through i64 from floats, then wrap to the width.
	if x.T == kir.F32 {
		x = kir.FloatToI64(x)
	}
	x = kir.Convert(kir.I32, x)
	switch to {
	case tensor.I8:
		return kir.Wrap(x, kir.I8)
	case tensor.I16:
		return kir.Wrap(x, kir.I16)
	case tensor.U8:
		return kir.Wrap(x, kir.U8)
	}
	return x
}

// reg is a register of the elementwise bytecode: a typed variable, or an
// immediate that takes the type of what it meets.
type reg struct {
	v   *kir.Expr
	imm bool
	val float64
}

// as returns the register's value with type t (immediates become
// constants of t; variables already have their type).
func (r *reg) as(t kir.Type) *kir.Expr {
	if !r.imm {
		return r.v
	}
	if t == kir.Bool {
		return kir.Const(kir.Bool, b2i(r.val != 0), 0)
	}
	return kir.Const(t, int64(r.val), r.val)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// pair returns two registers' values in one type: the variable's, or f32
// for two immediates.
func pair(a, b *reg) (*kir.Expr, *kir.Expr) {
	t := kir.F32
	switch {
	case !a.imm:
		t = a.v.T
	case !b.imm:
		t = b.v.T
	}
	return a.as(t), b.as(t)
}

// elementwise lowers an "ew" step: the bytecode of a fused elementwise
// region, run by one invocation per output element.
func (g *gen) elementwise() error {
	s := g.step
	if len(s.Ints) < 2 {
		return fmt.Errorf("malformed elementwise step")
	}
	nIn, nOut := int(s.Ints[0]), int(s.Ints[1])
	if len(s.Ints) != 2+nIn+nOut || len(s.Args) != nIn+nOut || len(s.Shapes) != 1+nIn {
		return fmt.Errorf("malformed elementwise step")
	}
	g.begin("ew", [3]int{256, 1, 1})
	shape := s.Shapes[0]
	n := tensor.NumElements(shape)
	ins := make([]operand, nIn)
	inT := make([]tensor.DType, nIn)
	for i := range ins {
		inT[i] = tensor.DType(s.Ints[2+i])
		et, err := g.elemType(inT[i])
		if err != nil {
			return err
		}
		if ins[i], err = g.param(i, et, false, fmt.Sprintf("in%d", i)); err != nil {
			return err
		}
	}
	outs := make([]operand, nOut)
	outT := make([]tensor.DType, nOut)
	for i := range outs {
		outT[i] = tensor.DType(s.Ints[2+nIn+i])
		et, err := g.elemType(outT[i])
		if err != nil {
			return err
		}
		if outs[i], err = g.param(nIn+i, et, true, fmt.Sprintf("out%d", i)); err != nil {
			return err
		}
	}
	var err error
	groups, body := g.gridStride(n, func(i *kir.Expr) []*kir.Stmt {
		pre, offs := g.decompose(i, shape, s.Shapes[1:]...)
		var ss []*kir.Stmt
		ss, err = g.bytecode(ins, inT, outs, outT, offs, i)
		return append(pre, ss...)
	})
	if err != nil {
		return err
	}
	g.end(groups, body...)
	return nil
}

// bytecode translates the step's instructions for one element.
func (g *gen) bytecode(ins []operand, inT []tensor.DType, outs []operand, outT []tensor.DType, offs []*kir.Expr, i *kir.Expr) ([]*kir.Stmt, error) {
	regs := map[int]*reg{}
	var ss []*kir.Stmt
	get := func(r int) (*reg, error) {
		v, ok := regs[r]
		if !ok {
			return nil, fmt.Errorf("elementwise register r%d read before it is written", r)
		}
		return v, nil
	}
	def := func(dst int, e *kir.Expr) {
		name := fmt.Sprintf("r%d_%d", dst, len(ss))
		ss = append(ss, kir.Decl(name, e))
		regs[dst] = &reg{v: kir.Var(name, e.T)}
	}
	for _, in := range g.step.Code {
		switch in.Op {
		case "load":
			if in.A < 0 || in.A >= len(ins) {
				return nil, fmt.Errorf("load of operand %d of %d", in.A, len(ins))
			}
			def(in.Dst, ins[in.A].load(offs[in.A]))
			continue
		case "imm":
			regs[in.Dst] = &reg{imm: true, val: in.Imm}
			continue
		case "store":
			if in.A < 0 || in.A >= len(outs) {
				return nil, fmt.Errorf("store to result %d of %d", in.A, len(outs))
			}
			r, err := get(in.Dst)
			if err != nil {
				return nil, err
			}
			ct := computeOf(outT[in.A])
			v := castTo(r.as(ct), outT[in.A])
			if outT[in.A] == tensor.F16 || outT[in.A] == tensor.BF16 {
				v = castTo(r.as(ct), tensor.F32) // the store rounds to the half type
			}
			ss = append(ss, outs[in.A].store(i, v))
			continue
		}
		a, err := get(in.A)
		if err != nil {
			return nil, err
		}
		var e *kir.Expr
		switch in.Op {
		case "cast":
			e = castTo(a.as(kir.F32), tensor.DType(in.Imm))
		case "leaky_relu":
			x := a.as(kir.F32)
			e = kir.Select(kir.Lt(x, kir.Float(0)), kir.Mul(x, kir.Float(in.Imm)), x)
		case "where":
			b, err := get(in.B)
			if err != nil {
				return nil, err
			}
			c, err := get(in.C)
			if err != nil {
				return nil, err
			}
			x, y := pair(b, c)
			e = kir.Select(toBool(a.as(kir.Bool)), x, y)
		default:
			if binary[in.Op] {
				b, err := get(in.B)
				if err != nil {
					return nil, err
				}
				x, y := pair(a, b)
				if e, err = binaryOp(in.Op, x, y); err != nil {
					return nil, err
				}
			} else if e, err = unaryOp(in.Op, a.as(kir.F32)); err != nil {
				return nil, err
			}
		}
		def(in.Dst, e)
	}
	return ss, nil
}

var binary = map[string]bool{
	"add": true, "sub": true, "mul": true, "div": true, "idiv": true, "pow": true, "max": true, "min": true,
	"mod": true, "imod": true, "eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"and": true, "or": true, "xor": true,
}

func binaryOp(op string, x, y *kir.Expr) (*kir.Expr, error) {
	num := x.T != kir.Bool
	switch op {
	case "add", "sub", "mul":
		if !num {
			x, y = castTo(x, tensor.I32), castTo(y, tensor.I32)
		}
		return map[string]func(a, b *kir.Expr) *kir.Expr{"add": kir.Add, "sub": kir.Sub, "mul": kir.Mul}[op](x, y), nil
	case "div":
		if x.T != kir.F32 {
			return kir.IntDiv(x, y), nil
		}
		return kir.Div(x, y), nil
	case "idiv":
		if x.T == kir.F32 {
			return kir.Call("trunc", kir.Div(x, y)), nil
		}
		return kir.IntDiv(x, y), nil
	case "pow":
		if x.T != kir.F32 {
			// Integer powers are integers (or truncate to 0 for negative
			// exponents): rounding the f32 power recovers them exactly
			// below 2^24.
			p := kir.Call("rint", kir.Pow(kir.Convert(kir.F32, x), kir.Convert(kir.F32, y)))
			return kir.Convert(x.T, kir.FloatToI64(p)), nil
		}
		return kir.Pow(x, y), nil
	case "max":
		return kir.MaxNaN(x, y), nil
	case "min":
		return kir.MinNaN(x, y), nil
	case "mod", "imod":
		if x.T == kir.F32 {
			return kir.FloorMod(x, y), nil
		}
		return kir.IntFloorMod(x, y), nil
	case "eq":
		return kir.Eq(x, y), nil
	case "ne":
		return kir.Ne(x, y), nil
	case "lt":
		return kir.Lt(x, y), nil
	case "le":
		return kir.Le(x, y), nil
	case "gt":
		return kir.Gt(x, y), nil
	case "ge":
		return kir.Ge(x, y), nil
	case "and":
		return kir.And(toBool(x), toBool(y)), nil
	case "or":
		return kir.Or(toBool(x), toBool(y)), nil
	case "xor":
		return kir.Ne(toBool(x), toBool(y)), nil
	}
	return nil, fmt.Errorf("unknown elementwise instruction %q", op)
}

func unaryOp(op string, x *kir.Expr) (*kir.Expr, error) {
	isF := x.T == kir.F32
	switch op {
	case "not":
		return kir.Not(toBool(x)), nil
	case "neg":
		if x.T == kir.Bool {
			return x, nil
		}
		return kir.Neg(x), nil
	case "abs":
		return kir.Abs(x), nil
	case "relu":
		return kir.Relu(x), nil
	case "sign":
		return kir.Sign(x), nil
	case "floor", "ceil", "round":
		if !isF {
			return x, nil
		}
		return kir.Call(map[string]string{"floor": "floor", "ceil": "ceil", "round": "rint"}[op], x), nil
	}
	if !isF {
		return nil, fmt.Errorf("%s of %s", op, x.T)
	}
	switch op {
	case "exp":
		return kir.Exp(x), nil
	case "log":
		return kir.Log(x), nil
	case "sqrt":
		return kir.Sqrt(x), nil
	case "rsqrt":
		return kir.Rsqrt(x), nil
	case "recip":
		return kir.Recip(x), nil
	case "tanh":
		return kir.Tanh(x), nil
	case "sigmoid":
		return kir.Sigmoid(x), nil
	case "gelu":
		return kir.Gelu(x), nil
	case "gelu_tanh":
		return kir.GeluTanh(x), nil
	case "silu":
		return kir.Silu(x), nil
	case "erf":
		return kir.Erf(x), nil
	case "sin", "cos":
		return kir.Call(op, x), nil
	}
	return nil, fmt.Errorf("unknown elementwise instruction %q", op)
}
