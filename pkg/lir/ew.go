package lir

import (
	"math"
	"strconv"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// Elementwise is a fused elementwise region: register bytecode run once
// per element of Shape. Operand i is read at the element offset
// Σ index[d]·In[i].Strides[d] (0 along broadcast dims); every result has
// Shape and is stored contiguously.
type Elementwise struct {
	Shape []int64 // the iteration shape; [1] for a scalar
	In    []EwIn
	Out   []EwOut
	Code  []Instr
}

// EwIn is one operand of an elementwise region.
type EwIn struct {
	Buf     Buf
	DType   tensor.DType
	Strides []int64 // one per dim of Shape
}

// EwOut is one result of an elementwise region.
type EwOut struct {
	Buf   Buf
	DType tensor.DType
}

// Instr is one instruction: Dst = Op(A, B, C) over registers. Load reads
// operand A into Dst, Store writes register Dst to result A, Imm sets Dst
// to Imm; Cast converts A to the dtype numbered Imm, LeakyRelu uses Imm as
// its slope.
type Instr struct {
	Op  EwOp    `msgpack:"op"`
	Dst int     `msgpack:"d"`
	A   int     `msgpack:"a"`
	B   int     `msgpack:"b,omitempty"`
	C   int     `msgpack:"c,omitempty"`
	Imm float64 `msgpack:"imm,omitempty"`
}

// String prints the instruction as an assignment: "r2 = add r0 r1".
func (in Instr) String() string {
	r := func(i int) string { return "r" + strconv.Itoa(i) }
	switch in.Op {
	case EwLoad:
		return r(in.Dst) + " = load in" + strconv.Itoa(in.A)
	case EwStore:
		return "out" + strconv.Itoa(in.A) + " = " + r(in.Dst)
	case EwImm:
		return r(in.Dst) + " = " + strconv.FormatFloat(in.Imm, 'g', -1, 64)
	case EwCast:
		return r(in.Dst) + " = cast " + r(in.A) + " to " + tensor.DType(in.Imm).String()
	case EwLeakyRelu:
		return r(in.Dst) + " = leaky_relu " + r(in.A) + " " + strconv.FormatFloat(in.Imm, 'g', -1, 64)
	}
	s := r(in.Dst) + " = " + in.Op.String()
	for i, a := range []int{in.A, in.B, in.C} {
		if i < max(1, in.Op.Info().Arity) {
			s += " " + r(a)
		}
	}
	return s
}

// EwOp is an elementwise instruction. Every op but the bytecode's own
// (Load, Store, Imm) and the integer forms of div and mod is also the MIR
// elementwise operation of the same name.
type EwOp uint8

// The elementwise instructions. The numbering is part of the artifact
// format: append, never reorder.
const (
	EwInvalid EwOp = iota
	EwLoad
	EwStore
	EwImm
	EwCast
	EwLeakyRelu
	EwWhere
	EwNeg
	EwAbs
	EwExp
	EwLog
	EwSqrt
	EwRsqrt
	EwRecip
	EwTanh
	EwSigmoid
	EwRelu
	EwGelu
	EwGeluTanh
	EwSilu
	EwErf
	EwSin
	EwCos
	EwFloor
	EwCeil
	EwRound
	EwSign
	EwNot
	EwAdd
	EwSub
	EwMul
	EwDiv
	EwIDiv
	EwPow
	EwMax
	EwMin
	EwMod
	EwIMod
	EwEq
	EwNe
	EwLt
	EwLe
	EwGt
	EwGe
	EwAnd
	EwOr
	EwXor
	EwSoftsign
	EwHardSwish
	EwMish
	numEwOps
)

// EwOperands is the class of dtypes an elementwise op's operands may
// have. The HIR checker types the plain unary and binary ops from it (its
// messages name the class: "a float type", "a numeric type", "bool").
type EwOperands uint8

// The operand classes.
const (
	EwNoOperands EwOperands = iota // the bytecode's load, store and imm
	EwFloat                        // f16, bf16, f32, f64
	EwNumeric                      // the float and integer types
	EwInt                          // the integer types (idiv, imod)
	EwBool                         // bool
	EwAnyType                      // every dtype, bool included
)

// Admits reports whether an operand of dtype dt is in the class.
func (c EwOperands) Admits(dt tensor.DType) bool {
	switch c {
	case EwFloat:
		return dt.IsFloat()
	case EwNumeric:
		return dt.IsNumeric()
	case EwInt:
		return dt.IsInt()
	case EwBool:
		return dt == tensor.Bool
	case EwAnyType:
		return dt.IsNumeric() || dt == tensor.Bool
	}
	return false
}

// EwInfo describes one elementwise instruction: its name, how many
// registers it reads, whether it is bytecode-only (no MIR op of that
// name), what its operands may be and whether its result is bool (the
// comparisons), and its meaning in float64 for the ops that are plain
// functions of their operands. The runtimes' float64 paths evaluate
// these; the reference interpreter (pkg/mir/eval) keeps its own
// definitions, so it stays an independent oracle.
type EwInfo struct {
	Name     string
	Arity    int
	Bytecode bool
	// Operands is the class of every operand's dtype; all operands of a
	// binary op have one dtype. where's condition is bool whatever the
	// class (its class is that of the two values).
	Operands   EwOperands
	BoolResult bool // the result is bool whatever the operands (eq, ..., ge)
	Unary      func(x float64) float64
	Binary     func(a, b float64) float64
}

// EwOps is the one table of elementwise instructions, indexed by EwOp.
// The MIR op table and the HIR checker derive their elementwise ops from
// it. Adding an op (DEVELOPERS.md, "Adding an operation"): a row here,
// its reference in pkg/mir/eval, its GPU expression in
// pkg/targets/gpu/kernelgen, and a use in a bundled model; the tests of
// each layer walk this table and fail on a missing one.
var EwOps = [numEwOps]EwInfo{
	EwLoad:      {Name: "load", Bytecode: true},
	EwStore:     {Name: "store", Bytecode: true},
	EwImm:       {Name: "imm", Bytecode: true},
	EwCast:      {Name: "cast", Arity: 1, Operands: EwAnyType},
	EwLeakyRelu: {Name: "leaky_relu", Arity: 1, Operands: EwFloat},
	EwWhere:     {Name: "where", Arity: 3, Operands: EwAnyType},
	EwNeg:       {Name: "neg", Arity: 1, Operands: EwNumeric, Unary: func(x float64) float64 { return -x }},
	EwAbs:       {Name: "abs", Arity: 1, Operands: EwNumeric, Unary: math.Abs},
	EwExp:       {Name: "exp", Arity: 1, Operands: EwFloat, Unary: math.Exp},
	EwLog:       {Name: "log", Arity: 1, Operands: EwFloat, Unary: math.Log},
	EwSqrt:      {Name: "sqrt", Arity: 1, Operands: EwFloat, Unary: math.Sqrt},
	EwRsqrt:     {Name: "rsqrt", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 { return 1 / math.Sqrt(x) }},
	EwRecip:     {Name: "recip", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 { return 1 / x }},
	EwTanh:      {Name: "tanh", Arity: 1, Operands: EwFloat, Unary: math.Tanh},
	EwSigmoid:   {Name: "sigmoid", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
	EwRelu: {Name: "relu", Arity: 1, Operands: EwNumeric, Unary: func(x float64) float64 {
		if x > 0 {
			return x
		}
		return 0
	}},
	EwGelu: {Name: "gelu", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }},
	EwGeluTanh: {Name: "gelu_tanh", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}},
	EwSilu:  {Name: "silu", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 { return x / (1 + math.Exp(-x)) }},
	EwErf:   {Name: "erf", Arity: 1, Operands: EwFloat, Unary: math.Erf},
	EwSin:   {Name: "sin", Arity: 1, Operands: EwFloat, Unary: math.Sin},
	EwCos:   {Name: "cos", Arity: 1, Operands: EwFloat, Unary: math.Cos},
	EwFloor: {Name: "floor", Arity: 1, Operands: EwFloat, Unary: math.Floor},
	EwCeil:  {Name: "ceil", Arity: 1, Operands: EwFloat, Unary: math.Ceil},
	EwRound: {Name: "round", Arity: 1, Operands: EwFloat, Unary: math.RoundToEven},
	EwSign: {Name: "sign", Arity: 1, Operands: EwNumeric, Unary: func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x // 0, -0 and NaN keep themselves
	}},
	EwNot: {Name: "not", Arity: 1, Operands: EwBool, Unary: func(x float64) float64 { return b2f(x == 0) }},
	EwAdd: {Name: "add", Arity: 2, Operands: EwNumeric, Binary: func(a, b float64) float64 { return a + b }},
	EwSub: {Name: "sub", Arity: 2, Operands: EwNumeric, Binary: func(a, b float64) float64 { return a - b }},
	EwMul: {Name: "mul", Arity: 2, Operands: EwNumeric, Binary: func(a, b float64) float64 { return a * b }},
	EwDiv: {Name: "div", Arity: 2, Operands: EwNumeric, Binary: func(a, b float64) float64 { return a / b }},
	EwIDiv: {Name: "idiv", Arity: 2, Bytecode: true, Operands: EwInt, Binary: func(a, b float64) float64 {
		if b == 0 {
			return 0 // integer division by zero has no value; 0, as a defined result
		}
		return math.Trunc(a / b)
	}},
	EwPow: {Name: "pow", Arity: 2, Operands: EwNumeric, Binary: math.Pow},
	EwMax: {Name: "max", Arity: 2, Operands: EwNumeric, Binary: func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Max(a, b)
	}},
	EwMin: {Name: "min", Arity: 2, Operands: EwNumeric, Binary: func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Min(a, b)
	}},
	EwMod: {Name: "mod", Arity: 2, Operands: EwNumeric, Binary: floorMod},
	EwIMod: {Name: "imod", Arity: 2, Bytecode: true, Operands: EwInt, Binary: func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return floorMod(a, b)
	}},
	EwEq:  {Name: "eq", Arity: 2, Operands: EwAnyType, BoolResult: true, Binary: func(a, b float64) float64 { return b2f(a == b) }},
	EwNe:  {Name: "ne", Arity: 2, Operands: EwAnyType, BoolResult: true, Binary: func(a, b float64) float64 { return b2f(a != b) }},
	EwLt:  {Name: "lt", Arity: 2, Operands: EwNumeric, BoolResult: true, Binary: func(a, b float64) float64 { return b2f(a < b) }},
	EwLe:  {Name: "le", Arity: 2, Operands: EwNumeric, BoolResult: true, Binary: func(a, b float64) float64 { return b2f(a <= b) }},
	EwGt:  {Name: "gt", Arity: 2, Operands: EwNumeric, BoolResult: true, Binary: func(a, b float64) float64 { return b2f(a > b) }},
	EwGe:  {Name: "ge", Arity: 2, Operands: EwNumeric, BoolResult: true, Binary: func(a, b float64) float64 { return b2f(a >= b) }},
	EwAnd: {Name: "and", Arity: 2, Operands: EwBool, Binary: func(a, b float64) float64 { return b2f(a != 0 && b != 0) }},
	EwOr:  {Name: "or", Arity: 2, Operands: EwBool, Binary: func(a, b float64) float64 { return b2f(a != 0 || b != 0) }},
	EwXor: {Name: "xor", Arity: 2, Operands: EwBool, Binary: func(a, b float64) float64 { return b2f((a != 0) != (b != 0)) }},
	EwSoftsign: {Name: "softsign", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 {
		return x / (1 + math.Abs(x))
	}},
	EwHardSwish: {Name: "hardswish", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 {
		return x * math.Min(math.Max(x/6+0.5, 0), 1)
	}},
	EwMish: {Name: "mish", Arity: 1, Operands: EwFloat, Unary: func(x float64) float64 {
		return x * math.Tanh(math.Log1p(math.Exp(x)))
	}},
}

// TruncInt is the first half of a cast from a float to an integer dtype:
// toward zero, NaN to 0, saturating at int64's range. tensor.DType.Wrap
// is the second, to the dtype's width. The runtimes' casts and the
// compiler's own evaluation of casts (specialize's byte chains) both use
// them; the reference interpreter (pkg/mir/eval) keeps its own
// truncation.
func TruncInt(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(v)
}

// NumEwOps is one past the largest EwOp.
const NumEwOps = numEwOps

// floorMod is Python's %: the remainder takes the divisor's sign.
func floorMod(a, b float64) float64 {
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Info returns the op's row of EwOps (the zero row for an unknown op).
func (op EwOp) Info() EwInfo {
	if op < numEwOps {
		return EwOps[op]
	}
	return EwInfo{}
}

// Valid reports whether op is a known instruction.
func (op EwOp) Valid() bool { return op > EwInvalid && op < numEwOps }

func (op EwOp) String() string {
	if op.Valid() {
		return EwOps[op].Name
	}
	return "EwOp(" + strconv.Itoa(int(op)) + ")"
}

// ParseEwOp returns the instruction named s.
func ParseEwOp(s string) (EwOp, bool) {
	for op := EwLoad; op < numEwOps; op++ {
		if EwOps[op].Name == s {
			return op, true
		}
	}
	return EwInvalid, false
}

// Narrowing lists, per instruction of the region's code, the dtype its
// result is rounded to when the region computes in float64 (the
// interpreter's general path, native code's double regions): F32, F16 or
// BF16 for an arithmetic result of that type; InvalidDType for none
// (loads, immediates, casts and stores, integer, bool and f64 results).
// An f32 chain is so rounded after every step, as the reference
// interpreter and f32 arithmetic round it: double precision kept across
// steps changed discrete results downstream, round(x / s) at a tie of
// the f32 quotient (QuantizeLinear against ONNX Runtime).
//
// A register's type follows the code: a load has its operand's dtype, a
// cast its target's, a comparison or logical op bool, an immediate none
// of its own (it takes the other operand's), anything else its first
// typed operand's.
func (o *Elementwise) Narrowing() []tensor.DType {
	nregs := 0
	for _, in := range o.Code {
		nregs = max(nregs, in.Dst+1)
	}
	regs := make([]tensor.DType, min(nregs, MaxRegisters))
	reg := func(r int) tensor.DType {
		if r < 0 || r >= len(regs) {
			return tensor.InvalidDType
		}
		return regs[r]
	}
	out := make([]tensor.DType, len(o.Code))
	for k, in := range o.Code {
		var t tensor.DType
		info := in.Op.Info()
		switch {
		case in.Op == EwStore:
			continue
		case in.Op == EwLoad:
			if in.A >= 0 && in.A < len(o.In) {
				t = o.In[in.A].DType
			}
		case in.Op == EwImm:
		case in.Op == EwCast:
			t = tensor.DType(in.Imm)
		case info.BoolResult || info.Operands == EwBool:
			t = tensor.Bool
		case in.Op == EwWhere:
			if t = reg(in.B); t == tensor.InvalidDType {
				t = reg(in.C)
			}
		default:
			if t = reg(in.A); t == tensor.InvalidDType && info.Arity > 1 {
				t = reg(in.B)
			}
			if t == tensor.F32 || t == tensor.F16 || t == tensor.BF16 {
				out[k] = t
			}
		}
		if in.Dst >= 0 && in.Dst < len(regs) {
			regs[in.Dst] = t
		}
	}
	return out
}
