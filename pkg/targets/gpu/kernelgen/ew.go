package kernelgen

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/lir"
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

// elementwise lowers an elementwise step: the bytecode of a fused
// elementwise region, run by one invocation per output element.
func (g *gen) elementwise(op *lir.Elementwise) error {
	shape := op.Shape
	for i, in := range op.In {
		if len(in.Strides) != len(shape) {
			return fmt.Errorf("malformed elementwise step: operand %d has %d strides for %d dims", i, len(in.Strides), len(shape))
		}
	}
	g.begin([3]int{256, 1, 1})
	n := tensor.NumElements(shape)
	ins := make([]operand, len(op.In))
	inT := make([]tensor.DType, len(op.In))
	strides := make([][]int64, len(op.In))
	for i, in := range op.In {
		inT[i], strides[i] = in.DType, in.Strides
		et, err := g.elemType(in.DType)
		if err != nil {
			return err
		}
		if ins[i], err = g.param(in.Buf, et, false, fmt.Sprintf("in%d", i)); err != nil {
			return err
		}
	}
	outs := make([]operand, len(op.Out))
	outT := make([]tensor.DType, len(op.Out))
	for i, out := range op.Out {
		outT[i] = out.DType
		et, err := g.elemType(out.DType)
		if err != nil {
			return err
		}
		if outs[i], err = g.param(out.Buf, et, true, fmt.Sprintf("out%d", i)); err != nil {
			return err
		}
	}
	var err error
	groups, body := g.gridStride(n, func(i *kir.Expr) []*kir.Stmt {
		pre, offs := g.decompose(i, shape, strides...)
		var ss []*kir.Stmt
		ss, err = g.bytecode(op.Code, ins, inT, outs, outT, offs, i)
		return append(pre, ss...)
	})
	if err != nil {
		return err
	}
	g.end(groups, body...)
	return nil
}

// bytecode translates the instructions code for one element.
func (g *gen) bytecode(code []lir.Instr, ins []operand, inT []tensor.DType, outs []operand, outT []tensor.DType, offs []*kir.Expr, i *kir.Expr) ([]*kir.Stmt, error) {
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
	for _, in := range code {
		switch in.Op {
		case lir.EwLoad:
			if in.A < 0 || in.A >= len(ins) {
				return nil, fmt.Errorf("load of operand %d of %d", in.A, len(ins))
			}
			def(in.Dst, ins[in.A].load(offs[in.A]))
			continue
		case lir.EwImm:
			regs[in.Dst] = &reg{imm: true, val: in.Imm}
			continue
		case lir.EwStore:
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
		case lir.EwCast:
			e = castTo(a.as(kir.F32), tensor.DType(in.Imm))
		case lir.EwLeakyRelu:
			x := a.as(kir.F32)
			e = kir.Select(kir.Lt(x, kir.Float(0)), kir.Mul(x, kir.Float(in.Imm)), x)
		case lir.EwWhere:
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
			if in.Op.Info().Arity == 2 {
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

func binaryOp(op lir.EwOp, x, y *kir.Expr) (*kir.Expr, error) {
	num := x.T != kir.Bool
	switch op {
	case lir.EwAdd, lir.EwSub, lir.EwMul:
		if !num {
			x, y = castTo(x, tensor.I32), castTo(y, tensor.I32)
		}
		switch op {
		case lir.EwAdd:
			return kir.Add(x, y), nil
		case lir.EwSub:
			return kir.Sub(x, y), nil
		}
		return kir.Mul(x, y), nil
	case lir.EwDiv:
		if x.T != kir.F32 {
			return kir.IntDiv(x, y), nil
		}
		return kir.Div(x, y), nil
	case lir.EwIDiv:
		if x.T == kir.F32 {
			return kir.Call("trunc", kir.Div(x, y)), nil
		}
		return kir.IntDiv(x, y), nil
	case lir.EwPow:
		if x.T != kir.F32 {
			// Integer powers are integers (or truncate to 0 for negative
			// exponents): rounding the f32 power recovers them exactly
			// below 2^24.
			p := kir.Call("rint", kir.Pow(kir.Convert(kir.F32, x), kir.Convert(kir.F32, y)))
			return kir.Convert(x.T, kir.FloatToI64(p)), nil
		}
		return kir.Pow(x, y), nil
	case lir.EwMax:
		return kir.MaxNaN(x, y), nil
	case lir.EwMin:
		return kir.MinNaN(x, y), nil
	case lir.EwMod, lir.EwIMod:
		if x.T == kir.F32 {
			return kir.FloorMod(x, y), nil
		}
		return kir.IntFloorMod(x, y), nil
	case lir.EwEq:
		return kir.Eq(x, y), nil
	case lir.EwNe:
		return kir.Ne(x, y), nil
	case lir.EwLt:
		return kir.Lt(x, y), nil
	case lir.EwLe:
		return kir.Le(x, y), nil
	case lir.EwGt:
		return kir.Gt(x, y), nil
	case lir.EwGe:
		return kir.Ge(x, y), nil
	case lir.EwAnd:
		return kir.And(toBool(x), toBool(y)), nil
	case lir.EwOr:
		return kir.Or(toBool(x), toBool(y)), nil
	case lir.EwXor:
		return kir.Ne(toBool(x), toBool(y)), nil
	}
	return nil, fmt.Errorf("unknown elementwise instruction %q", op)
}

func unaryOp(op lir.EwOp, x *kir.Expr) (*kir.Expr, error) {
	isF := x.T == kir.F32
	switch op {
	case lir.EwNot:
		return kir.Not(toBool(x)), nil
	case lir.EwNeg:
		if x.T == kir.Bool {
			return x, nil
		}
		return kir.Neg(x), nil
	case lir.EwAbs:
		return kir.Abs(x), nil
	case lir.EwRelu:
		return kir.Relu(x), nil
	case lir.EwSign:
		return kir.Sign(x), nil
	case lir.EwFloor, lir.EwCeil, lir.EwRound:
		if !isF {
			return x, nil
		}
		switch op {
		case lir.EwFloor:
			return kir.Call("floor", x), nil
		case lir.EwCeil:
			return kir.Call("ceil", x), nil
		}
		return kir.Call("rint", x), nil
	}
	if !isF {
		return nil, fmt.Errorf("%s of %s", op, x.T)
	}
	switch op {
	case lir.EwExp:
		return kir.Exp(x), nil
	case lir.EwLog:
		return kir.Log(x), nil
	case lir.EwSqrt:
		return kir.Sqrt(x), nil
	case lir.EwRsqrt:
		return kir.Rsqrt(x), nil
	case lir.EwRecip:
		return kir.Recip(x), nil
	case lir.EwTanh:
		return kir.Tanh(x), nil
	case lir.EwSigmoid:
		return kir.Sigmoid(x), nil
	case lir.EwGelu:
		return kir.Gelu(x), nil
	case lir.EwGeluTanh:
		return kir.GeluTanh(x), nil
	case lir.EwSilu:
		return kir.Silu(x), nil
	case lir.EwSoftsign:
		return kir.Div(x, kir.Add(kir.Float(1), kir.Abs(x))), nil
	case lir.EwHardSwish:
		return kir.Mul(x, kir.Min(kir.Max(kir.Add(kir.Div(x, kir.Float(6)), kir.Float(0.5)), kir.Float(0)), kir.Float(1))), nil
	case lir.EwMish:
		return kir.Mish(x), nil
	case lir.EwErf:
		return kir.Erf(x), nil
	case lir.EwSin:
		return kir.Call("sin", x), nil
	case lir.EwCos:
		return kir.Call("cos", x), nil
	}
	return nil, fmt.Errorf("unknown elementwise instruction %q", op)
}
