// Package kir is the GPU kernel IR: one compute kernel as a small
// loop-level program over an index space (loads, stores, arithmetic,
// loops, barriers and workgroup memory) that the printers turn into GLSL
// (vulkan), CUDA C (cuda) and MSL (metal).
//
// One IR with several printers means a lowering bug is fixed once, and
// running the vulkan kernels on any Vulkan device checks the same IR the
// cuda and metal printers print. The IR is deliberately small: everything
// a printer must know is a handful of primitive operations whose meaning
// is the same in all three languages. Composite math (erf, tanh, half
// float conversion, floored modulo) is built from those primitives by
// the builders in math.go, so every language computes it the same way.
//
// Types are 32-bit compute types (bool, i32, u32, f32) plus i64; storage
// of parameters may be narrower (u8, i8, i16, f16, bf16 as raw bits) and is
// widened on load and narrowed on store.
package kir

import "fmt"

// Type is a value type of an expression, or the element type of a buffer.
type Type uint8

// Compute types, then storage-only element types.
const (
	Bool Type = iota // stored as one byte (0 or 1)
	I32
	U32
	I64
	F32
	U8   // storage: widened to i32
	I8   // storage: widened to i32
	I16  // storage: widened to i32
	F16  // storage: raw bits, widened to u32; math.go converts
	BF16 // storage: raw bits, widened to u32; math.go converts
)

var typeNames = [...]string{"bool", "i32", "u32", "i64", "f32", "u8", "i8", "i16", "f16", "bf16"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", t)
}

// Compute is the type a load of an element of type t yields.
func (t Type) Compute() Type {
	switch t {
	case U8, I8, I16:
		return I32
	case F16, BF16:
		return U32
	}
	return t
}

// Size is the element size in bytes.
func (t Type) Size() int {
	switch t {
	case Bool, U8, I8:
		return 1
	case I16, F16, BF16:
		return 2
	case I64:
		return 8
	}
	return 4
}

// IsInt reports the integer compute types.
func (t Type) IsInt() bool { return t == I32 || t == U32 || t == I64 }

// Op is an expression's operation.
type Op uint8

// Expression operations. Binary arithmetic follows C on the operand type:
// integer Div and Rem truncate toward zero (the lowering guards a zero
// divisor), shifts are logical on u32. Min and Max of floats are only used
// where no operand is NaN (math.go builds the NaN-propagating forms).
const (
	OpConst      Op = iota // I (integer and bool types) or F (f32)
	OpVar                  // Name
	OpIndex                // the invocation's index: Name is "global", "local" or "group", I the axis (0..2); i32
	OpLoad                 // element Args[0] of parameter I
	OpLoadShared           // element Args[0] of workgroup array I
	OpNeg
	OpNot    // logical not of a bool
	OpBitNot // bitwise complement of u32
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpRem
	OpMin
	OpMax
	OpLt
	OpLe
	OpGt
	OpGe
	OpEq
	OpNe
	OpAnd // logical, on bools
	OpOr  // logical, on bools
	OpBitAnd
	OpBitOr
	OpBitXor
	OpShl
	OpShr
	OpSelect  // Args[0] ? Args[1] : Args[2]
	OpConvert // numeric conversion of Args[0] to T (float to int truncates; the lowering keeps it in range)
	OpBitcast // reinterpret Args[0] (f32, i32 or u32) as T of the same width
	OpCall    // Name(Args...): one of the functions in Funcs
)

// Funcs are the math functions printers provide, all on f32: their
// results may differ by a few ulp between languages, never in meaning.
var Funcs = map[string]int{
	"exp": 1, "log": 1, "sqrt": 1, "sin": 1, "cos": 1,
	"floor": 1, "ceil": 1, "trunc": 1, "rint": 1, // rint rounds half to even
	"abs": 1, "isnan": 1, "isinf": 1,
	"exp2": 1, "log2": 1, "fma": 3,
}

// Expr is an expression tree node. Trees are built with the constructors
// below, which set T; a node may be shared between trees (printers print
// it once per use, so the lowering binds anything expensive to a Var).
type Expr struct {
	Op   Op
	T    Type
	Args []*Expr
	Name string
	I    int64
	F    float64
}

// StmtOp is a statement's kind.
type StmtOp uint8

// Statement kinds.
const (
	SDecl        StmtOp = iota // T Name = Args[0]
	SAssign                    // Name = Args[0]
	SStore                     // parameter I [Args[0]] = Args[1]
	SStoreShared               // workgroup array I [Args[0]] = Args[1]
	SFor                       // for (i32 Name = Args[0]; Name < Args[1]; Name += Args[2]) Body
	SIf                        // if (Args[0]) Body else Else
	SBarrier                   // workgroup execution and workgroup-memory barrier
	SBreak                     // leaves the innermost loop
	// SMMA is one warp's tensor-core product of a 16×8 tile over K terms
	// (PTX mma.sync, f32 sums), CUDA only, of the kind I names (MMAKind:
	// its operand type and K). The 32 invocations of a warp each hold
	// four accumulators (Args[0..3], f32 variables, updated in place),
	// then their elements of the 16×K A tile and the K×8 B tile, in
	// PTX's fragment layout; with g = lane/4 and t = lane%4 the
	// accumulators are at (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1), and
	// the operands as MMATF32 and MMABF16 say. Operands are f32 values,
	// rounded to the kind's type first. Every invocation of the warp must
	// reach it: never in a branch.
	SMMA
)

// MMAKind is a tensor-core product's shape and operand type (SMMA's I).
type MMAKind int

const (
	// MMATF32 is m16n8k8 over tf32 operands (10 fraction bits; cvt.rna:
	// nearest, ties away from zero). A's four elements are at (g, t),
	// (g+8, t), (g, t+4), (g+8, t+4); B's two at (t, g), (t+4, g).
	MMATF32 MMAKind = iota
	// MMABF16 is m16n8k16 over bf16 operands (7 fraction bits; cvt.rn:
	// nearest, ties to even). A's eight elements are at (g, 2t), (g,
	// 2t+1), (g+8, 2t), (g+8, 2t+1), then the same 8 columns on; B's
	// four at (2t, g), (2t+1, g), (2t+8, g), (2t+9, g).
	MMABF16
)

// K is the terms one product sums; A and B are the operand elements a
// lane holds.
func (m MMAKind) K() int { return [...]int{8, 16}[m] }
func (m MMAKind) A() int { return m.K() / 2 }
func (m MMAKind) B() int { return m.K() / 4 }

// TMul is how far apart, in columns of A and rows of B, the elements of
// lanes t and t+1 lie: 1 for tf32, 2 for bf16 (pairs share a register).
func (m MMAKind) TMul() int { return [...]int{1, 2}[m] }

// AElem is where a lane's element e of A lies: row g + r, column
// TMul()·t + c.
func (m MMAKind) AElem(e int) (r, c int) {
	if m == MMATF32 {
		return 8 * (e % 2), 4 * (e / 2)
	}
	return 8 * ((e / 2) % 2), e%2 + 8*(e/4)
}

// BElem is where a lane's element e of B lies: row TMul()·t + k, column g.
func (m MMAKind) BElem(e int) (k int) {
	if m == MMATF32 {
		return 4 * e
	}
	return e%2 + 8*(e/2)
}

func (m MMAKind) String() string {
	if m == MMATF32 || m == MMABF16 {
		return [...]string{"tf32", "bf16"}[m]
	}
	return fmt.Sprintf("mma(%d)", int(m))
}

// Stmt is one statement.
type Stmt struct {
	Op   StmtOp
	T    Type
	Name string
	I    int
	Args []*Expr
	Body []*Stmt
	Else []*Stmt
}

// Param is a buffer parameter: a run of elements of one type.
type Param struct {
	Name  string
	Elem  Type
	Write bool // the kernel stores to it
}

// Shared is a workgroup (threadgroup, __shared__) array.
type Shared struct {
	Name string
	Elem Type // a compute type
	Len  int
}

// Kernel is one compute kernel. Local is the workgroup size; the number
// of workgroups is the launch's business, not the kernel's.
//
// With Offsets set, every parameter's element indices (of its loads and
// stores) are relative to an element offset the launch passes, one i32
// per parameter: the printers add it to each index, and declare it as a
// push-constant block (GLSL), trailing int arguments (CUDA) or a constant
// int array after the buffers (MSL). Without it indices are absolute.
type Kernel struct {
	Name    string
	Params  []Param
	Shared  []Shared
	Local   [3]int
	Body    []*Stmt
	Offsets bool
}

// MaxOffsets is the most parameters a kernel with launch offsets may
// have: their i32s fill the 128 bytes of push constants every Vulkan
// device provides (maxPushConstantsSize).
const MaxOffsets = 32

// Threads is the number of invocations per workgroup.
func (k *Kernel) Threads() int { return k.Local[0] * k.Local[1] * k.Local[2] }

// UsesType reports whether any parameter, shared array, or expression of
// the kernel has type t; printers use it to ask for language extensions.
func (k *Kernel) UsesType(t Type) bool {
	for _, p := range k.Params {
		if p.Elem == t {
			return true
		}
	}
	for _, s := range k.Shared {
		if s.Elem == t {
			return true
		}
	}
	found := false
	var walkE func(e *Expr)
	walkE = func(e *Expr) {
		if e == nil || found {
			return
		}
		if e.T == t {
			found = true
			return
		}
		for _, a := range e.Args {
			walkE(a)
		}
	}
	var walk func(ss []*Stmt)
	walk = func(ss []*Stmt) {
		for _, s := range ss {
			if s.Op == SDecl && s.T == t {
				found = true
			}
			for _, a := range s.Args {
				walkE(a)
			}
			walk(s.Body)
			walk(s.Else)
		}
	}
	walk(k.Body)
	return found
}
