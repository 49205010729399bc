package kir

// Constructors. They set each node's type from its operands; Check
// verifies the whole kernel, so a lowering mistake is an error at build
// time rather than a shader compiler's complaint.

// Int is an i32 constant.
func Int(v int64) *Expr { return &Expr{Op: OpConst, T: I32, I: v} }

// Const is a constant of type t (f32 reads f, the others v).
func Const(t Type, v int64, f float64) *Expr {
	if t == F32 {
		return &Expr{Op: OpConst, T: F32, F: f}
	}
	return &Expr{Op: OpConst, T: t, I: v}
}

// Float is an f32 constant.
func Float(f float64) *Expr { return &Expr{Op: OpConst, T: F32, F: f} }

// Uint is a u32 constant.
func Uint(v uint32) *Expr { return &Expr{Op: OpConst, T: U32, I: int64(v)} }

// True and False are the bool constants.
func True() *Expr  { return &Expr{Op: OpConst, T: Bool, I: 1} }
func False() *Expr { return &Expr{Op: OpConst, T: Bool, I: 0} }

// Var names a local variable of type t.
func Var(name string, t Type) *Expr { return &Expr{Op: OpVar, T: t, Name: name} }

// GlobalID, LocalID and GroupID are the invocation's index along axis.
func GlobalID(axis int) *Expr { return &Expr{Op: OpIndex, T: I32, Name: "global", I: int64(axis)} }
func LocalID(axis int) *Expr  { return &Expr{Op: OpIndex, T: I32, Name: "local", I: int64(axis)} }
func GroupID(axis int) *Expr  { return &Expr{Op: OpIndex, T: I32, Name: "group", I: int64(axis)} }

// Load reads element idx of parameter p, whose elements have type elem.
func Load(p int, elem Type, idx *Expr) *Expr {
	return &Expr{Op: OpLoad, T: elem.Compute(), I: int64(p), Args: []*Expr{idx}}
}

// LoadShared reads element idx of workgroup array a of type t.
func LoadShared(a int, t Type, idx *Expr) *Expr {
	return &Expr{Op: OpLoadShared, T: t, I: int64(a), Args: []*Expr{idx}}
}

func bin(op Op, a, b *Expr) *Expr { return &Expr{Op: op, T: a.T, Args: []*Expr{a, b}} }
func cmp(op Op, a, b *Expr) *Expr { return &Expr{Op: op, T: Bool, Args: []*Expr{a, b}} }

// Arithmetic, comparison and logic on operands of one type.
func Add(a, b *Expr) *Expr    { return bin(OpAdd, a, b) }
func Sub(a, b *Expr) *Expr    { return bin(OpSub, a, b) }
func Mul(a, b *Expr) *Expr    { return bin(OpMul, a, b) }
func Div(a, b *Expr) *Expr    { return bin(OpDiv, a, b) }
func Rem(a, b *Expr) *Expr    { return bin(OpRem, a, b) }
func Min(a, b *Expr) *Expr    { return bin(OpMin, a, b) }
func Max(a, b *Expr) *Expr    { return bin(OpMax, a, b) }
func BitAnd(a, b *Expr) *Expr { return bin(OpBitAnd, a, b) }
func BitOr(a, b *Expr) *Expr  { return bin(OpBitOr, a, b) }
func BitXor(a, b *Expr) *Expr { return bin(OpBitXor, a, b) }
func Shl(a, b *Expr) *Expr    { return bin(OpShl, a, b) }
func Shr(a, b *Expr) *Expr    { return bin(OpShr, a, b) }
func Lt(a, b *Expr) *Expr     { return cmp(OpLt, a, b) }
func Le(a, b *Expr) *Expr     { return cmp(OpLe, a, b) }
func Gt(a, b *Expr) *Expr     { return cmp(OpGt, a, b) }
func Ge(a, b *Expr) *Expr     { return cmp(OpGe, a, b) }
func Eq(a, b *Expr) *Expr     { return cmp(OpEq, a, b) }
func Ne(a, b *Expr) *Expr     { return cmp(OpNe, a, b) }
func And(a, b *Expr) *Expr    { return cmp(OpAnd, a, b) }
func Or(a, b *Expr) *Expr     { return cmp(OpOr, a, b) }

// Neg, Not and BitNot are the unary operators.
func Neg(a *Expr) *Expr    { return &Expr{Op: OpNeg, T: a.T, Args: []*Expr{a}} }
func Not(a *Expr) *Expr    { return &Expr{Op: OpNot, T: Bool, Args: []*Expr{a}} }
func BitNot(a *Expr) *Expr { return &Expr{Op: OpBitNot, T: a.T, Args: []*Expr{a}} }

// Select is c ? a : b.
func Select(c, a, b *Expr) *Expr { return &Expr{Op: OpSelect, T: a.T, Args: []*Expr{c, a, b}} }

// Convert converts a to type t (a no-op when it already has it).
func Convert(t Type, a *Expr) *Expr {
	if a.T == t {
		return a
	}
	return &Expr{Op: OpConvert, T: t, Args: []*Expr{a}}
}

// Bitcast reinterprets a's bits as type t.
func Bitcast(t Type, a *Expr) *Expr {
	if a.T == t {
		return a
	}
	return &Expr{Op: OpBitcast, T: t, Args: []*Expr{a}}
}

// Call applies one of Funcs; isnan and isinf return bool, the rest f32.
func Call(name string, args ...*Expr) *Expr {
	t := F32
	if name == "isnan" || name == "isinf" {
		t = Bool
	}
	return &Expr{Op: OpCall, T: t, Name: name, Args: args}
}

// Statements.

// Decl declares and initializes a local variable.
func Decl(name string, e *Expr) *Stmt { return &Stmt{Op: SDecl, T: e.T, Name: name, Args: []*Expr{e}} }

// Assign sets a declared variable.
func Assign(name string, e *Expr) *Stmt { return &Stmt{Op: SAssign, Name: name, Args: []*Expr{e}} }

// Store writes v to element idx of parameter p.
func Store(p int, idx, v *Expr) *Stmt { return &Stmt{Op: SStore, I: p, Args: []*Expr{idx, v}} }

// StoreShared writes v to element idx of workgroup array a.
func StoreShared(a int, idx, v *Expr) *Stmt {
	return &Stmt{Op: SStoreShared, I: a, Args: []*Expr{idx, v}}
}

// For loops an i32 variable from from while < to, adding step.
func For(name string, from, to, step *Expr, body ...*Stmt) *Stmt {
	return &Stmt{Op: SFor, T: I32, Name: name, Args: []*Expr{from, to, step}, Body: body}
}

// If runs then when c holds, else els.
func If(c *Expr, then []*Stmt, els ...*Stmt) *Stmt {
	return &Stmt{Op: SIf, Args: []*Expr{c}, Body: then, Else: els}
}

// Barrier waits for the workgroup and makes its workgroup-memory writes visible.
func Barrier() *Stmt { return &Stmt{Op: SBarrier} }

// Break leaves the innermost loop.
func Break() *Stmt { return &Stmt{Op: SBreak} }

// MMA is a warp's tensor-core product of kind m (see SMMA): the f32
// variables acc += A·B, from the lane's elements a of A and b of B
// (m.A() and m.B() of them).
func MMA(m MMAKind, acc [4]string, a, b []*Expr) *Stmt {
	args := make([]*Expr, 0, 4+len(a)+len(b))
	for _, n := range acc {
		args = append(args, Var(n, F32))
	}
	args = append(append(args, a...), b...)
	return &Stmt{Op: SMMA, I: int(m), Args: args}
}
