package kir

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// Check verifies a kernel: every variable is declared before use with one
// type, operands agree in type, parameters and arrays exist, stores go to
// writable parameters, and barriers are not inside a branch (a barrier
// every invocation of a workgroup might not reach hangs or is undefined).
// Names must print as identifiers in every language (see ident), and a
// malformed tree is an error, not a panic.
func Check(k *Kernel) error {
	if k.Name == "" {
		return fmt.Errorf("kernel without a name")
	}
	if err := ident(k.Name); err != nil {
		return fmt.Errorf("kernel name %s", err)
	}
	for _, n := range k.Local {
		if n < 1 || n > 1024 {
			return fmt.Errorf("kernel %s: workgroup %v: each size must be 1..1024", k.Name, k.Local)
		}
	}
	if k.Threads() > 1024 {
		return fmt.Errorf("kernel %s: workgroup %v has %d invocations (1..1024)", k.Name, k.Local, k.Threads())
	}
	if k.Offsets && len(k.Params) > MaxOffsets {
		return fmt.Errorf("kernel %s: %d parameters with launch offsets; at most %d fit the push constants every device has", k.Name, len(k.Params), MaxOffsets)
	}
	for _, p := range k.Params {
		if p.Elem > BF16 {
			return fmt.Errorf("kernel %s: parameter %s of %s", k.Name, p.Name, p.Elem)
		}
		if strings.ContainsAny(p.Name, "\r\n") {
			return fmt.Errorf("kernel %s: parameter name %q spans lines (it is printed in a comment)", k.Name, p.Name)
		}
	}
	for _, s := range k.Shared {
		if s.Elem > F32 || s.Len < 1 {
			return fmt.Errorf("kernel %s: workgroup array %s of %d %s (want at least one element of a compute type)", k.Name, s.Name, s.Len, s.Elem)
		}
		if strings.ContainsAny(s.Name, "\r\n") {
			return fmt.Errorf("kernel %s: workgroup array name %q spans lines (it is printed in a comment)", k.Name, s.Name)
		}
	}
	c := &checker{k: k, scopes: []map[string]Type{{}}}
	if err := c.stmts(k.Body, false); err != nil {
		return fmt.Errorf("kernel %s: %v", k.Name, err)
	}
	return nil
}

type checker struct {
	k      *Kernel
	scopes []map[string]Type
	loops  int // enclosing loops, for break
}

var opNames = [...]string{"const", "var", "index", "load", "load-shared", "neg", "not", "bitnot",
	"add", "sub", "mul", "div", "rem", "min", "max", "lt", "le", "gt", "ge", "eq", "ne", "and", "or",
	"bitand", "bitor", "bitxor", "shl", "shr", "select", "convert", "bitcast", "call"}

// opNames must name every operation (a compile-time check).
var _ = [1]struct{}{}[len(opNames)-1-int(OpCall)]

// opName names an operation in errors.
func opName(op Op) string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return fmt.Sprintf("operation %d", op)
}

var stmtNames = map[StmtOp]string{SDecl: "decl", SAssign: "assign", SStore: "store", SStoreShared: "store-shared",
	SFor: "for", SIf: "if", SBarrier: "barrier", SBreak: "break", SMMA: "mma"}

// stmtArgs is how many expressions each statement has (SMMA: by its kind).
var stmtArgs = map[StmtOp]int{SDecl: 1, SAssign: 1, SStore: 2, SStoreShared: 2, SFor: 3, SIf: 1, SBarrier: 0, SBreak: 0, SMMA: -1}

// ident checks that name prints as the same identifier in GLSL, CUDA C
// and MSL: C identifier syntax, no keyword or reserved word of the three
// languages, no function or type name a printer writes (a local variable
// would hide it), and none of the printers' own names (p0 and s0 for
// parameters and arrays, rlx_ for the CUDA prelude and MSL built-ins, gl_
// and __, which GLSL and C++ reserve).
func ident(name string) error {
	if name == "" {
		return fmt.Errorf("is empty")
	}
	for i, r := range name {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return fmt.Errorf("%q is not an identifier", name)
		}
	}
	if reserved[name] || strings.HasPrefix(name, "gl_") || strings.HasPrefix(name, "rlx_") || strings.Contains(name, "__") {
		return fmt.Errorf("%q is reserved in a kernel language or by the printers", name)
	}
	if len(name) > 1 && strings.ContainsRune("psP", rune(name[0])) && strings.Trim(name[1:], "0123456789") == "" {
		return fmt.Errorf("%q is a printer's name for a parameter or workgroup array", name)
	}
	if glslType.MatchString(name) {
		return fmt.Errorf("%q is a GLSL type", name)
	}
	return nil
}

// glslType matches GLSL's vector and matrix type names, which are keywords.
var glslType = regexp.MustCompile(`^([ibud]|f16|f32|f64|i8|i16|i32|i64|u8|u16|u32|u64)?(vec[234]|mat[234](x[234])?)$`)

var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		main using namespace metal precise kernel device constant threadgroup thread
		threadgroup_imageblock vertex fragment uchar ushort ulong half uint3 mem_flags
		as_type threadgroup_barrier fabs rint
		exp log sqrt sin cos floor ceil trunc abs isnan isinf exp2 log2 fma roundEven
		floatBitsToUint floatBitsToInt uintBitsToFloat intBitsToFloat memoryBarrierShared barrier
		int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t float16_t float32_t float64_t
		attribute const uniform varying buffer shared coherent volatile restrict readonly writeonly
		atomic_uint layout centroid flat smooth noperspective patch sample invariant precise
		break continue do for while switch case default if else subroutine in out inout
		int void bool true false float double discard return uint lowp mediump highp precision
		struct common partition active asm class union enum typedef template this resource goto
		inline noinline public static extern external interface long short fixed unsigned
		superp input output filter sizeof cast
		alignas alignof and and_eq auto bitand bitor catch char char8_t char16_t char32_t compl
		concept consteval constexpr constinit const_cast co_await co_return co_yield decltype
		delete dynamic_cast explicit export friend mutable new noexcept not not_eq nullptr
		operator or or_eq private protected register reinterpret_cast requires signed
		static_assert static_cast thread_local throw try typeid typename virtual wchar_t xor xor_eq`) {
		m[w] = true
	}
	return m
}()

func (c *checker) lookup(name string) (Type, bool) {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if t, ok := c.scopes[i][name]; ok {
			return t, true
		}
	}
	return 0, false
}

func (c *checker) block(ss []*Stmt, branch bool, decl func()) error {
	c.scopes = append(c.scopes, map[string]Type{})
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	if decl != nil {
		decl()
	}
	return c.stmts(ss, branch)
}

// mentions reports whether e reads the variable name.
func mentions(e *Expr, name string) bool {
	if e == nil {
		return false
	}
	if e.Op == OpVar && e.Name == name {
		return true
	}
	for _, a := range e.Args {
		if mentions(a, name) {
			return true
		}
	}
	return false
}

func (c *checker) stmts(ss []*Stmt, branch bool) error {
	for _, s := range ss {
		if s == nil {
			return fmt.Errorf("missing statement")
		}
		n, ok := stmtArgs[s.Op]
		if s.Op == SMMA && (s.I == int(MMATF32) || s.I == int(MMABF16)) {
			n = 4 + MMAKind(s.I).A() + MMAKind(s.I).B()
		}
		if !ok {
			return fmt.Errorf("unknown statement %d", s.Op)
		} else if n < 0 {
			return fmt.Errorf("mma statement of unknown kind %d", s.I)
		} else if len(s.Args) != n {
			return fmt.Errorf("%s statement with %d expressions, want %d", stmtNames[s.Op], len(s.Args), n)
		}
		for _, a := range s.Args {
			if err := c.expr(a); err != nil {
				return err
			}
		}
		switch s.Op {
		case SDecl:
			if err := ident(s.Name); err != nil {
				return fmt.Errorf("variable name %v", err)
			}
			if _, ok := c.scopes[len(c.scopes)-1][s.Name]; ok {
				return fmt.Errorf("%s declared twice", s.Name)
			}
			if s.T != s.Args[0].T {
				return fmt.Errorf("%s: declared %s, initialized with %s", s.Name, s.T, s.Args[0].T)
			}
			// C and C++ put the new variable in scope in its own
			// initializer, GLSL after it: an outer variable of the same
			// name read there means different things.
			if mentions(s.Args[0], s.Name) {
				return fmt.Errorf("%s initialized with an outer %s", s.Name, s.Name)
			}
			c.scopes[len(c.scopes)-1][s.Name] = s.T
		case SAssign:
			t, ok := c.lookup(s.Name)
			if !ok {
				return fmt.Errorf("assignment to undeclared %s", s.Name)
			}
			if t != s.Args[0].T {
				return fmt.Errorf("%s: %s assigned %s", s.Name, t, s.Args[0].T)
			}
		case SStore:
			if s.I < 0 || s.I >= len(c.k.Params) {
				return fmt.Errorf("store to parameter %d of %d", s.I, len(c.k.Params))
			}
			p := c.k.Params[s.I]
			if !p.Write {
				return fmt.Errorf("store to read-only parameter %s", p.Name)
			}
			if s.Args[0].T != I32 {
				return fmt.Errorf("store index of %s has type %s", p.Name, s.Args[0].T)
			}
			if s.Args[1].T != p.Elem.Compute() {
				return fmt.Errorf("store of %s to %s elements of %s", s.Args[1].T, p.Elem, p.Name)
			}
		case SStoreShared:
			if s.I < 0 || s.I >= len(c.k.Shared) {
				return fmt.Errorf("store to workgroup array %d of %d", s.I, len(c.k.Shared))
			}
			if s.Args[0].T != I32 || s.Args[1].T != c.k.Shared[s.I].Elem {
				return fmt.Errorf("store of %s at %s index to %s", s.Args[1].T, s.Args[0].T, c.k.Shared[s.I].Name)
			}
		case SFor:
			if err := ident(s.Name); err != nil {
				return fmt.Errorf("loop variable name %v", err)
			}
			for _, a := range s.Args {
				if a.T != I32 {
					return fmt.Errorf("loop %s bound of type %s", s.Name, a.T)
				}
				// The printed bounds see the loop variable, not an
				// outer one of the same name.
				if mentions(a, s.Name) {
					return fmt.Errorf("loop %s bounds read an outer %s", s.Name, s.Name)
				}
			}
			c.loops++
			err := c.block(s.Body, branch, func() { c.scopes[len(c.scopes)-1][s.Name] = I32 })
			c.loops--
			if err != nil {
				return err
			}
		case SIf:
			if s.Args[0].T != Bool {
				return fmt.Errorf("if condition of type %s", s.Args[0].T)
			}
			if err := c.block(s.Body, true, nil); err != nil {
				return err
			}
			if err := c.block(s.Else, true, nil); err != nil {
				return err
			}
		case SBarrier:
			if branch {
				return fmt.Errorf("barrier inside a branch")
			}
		case SBreak:
			if c.loops == 0 {
				return fmt.Errorf("break outside a loop")
			}
		case SMMA:
			// The whole warp takes part (mma.sync.aligned): like a
			// barrier, never under a condition.
			if branch {
				return fmt.Errorf("mma inside a branch")
			}
			for i, a := range s.Args {
				if a.T != F32 {
					return fmt.Errorf("mma operand %d of type %s", i, a.T)
				}
				if i < 4 && a.Op != OpVar {
					return fmt.Errorf("mma accumulator %d is not a variable", i)
				}
			}
		}
	}
	return nil
}

func (c *checker) expr(e *Expr) error {
	if e == nil {
		return fmt.Errorf("missing expression")
	}
	for _, a := range e.Args {
		if err := c.expr(a); err != nil {
			return err
		}
	}
	want := func(n int) error {
		if len(e.Args) != n {
			return fmt.Errorf("%s with %d operands, want %d", opName(e.Op), len(e.Args), n)
		}
		return nil
	}
	same := func() error {
		if err := want(2); err != nil {
			return err
		}
		if e.Args[0].T != e.Args[1].T {
			return fmt.Errorf("%s of %s and %s", opName(e.Op), e.Args[0].T, e.Args[1].T)
		}
		return nil
	}
	switch e.Op {
	case OpConst:
		if e.T > F32 {
			return fmt.Errorf("constant of storage type %s", e.T)
		}
		if e.T == I32 && (e.I < math.MinInt32 || e.I > math.MaxInt32) {
			return fmt.Errorf("i32 constant %d out of range", e.I)
		}
	case OpVar:
		t, ok := c.lookup(e.Name)
		if !ok {
			return fmt.Errorf("use of undeclared %s", e.Name)
		}
		if t != e.T {
			return fmt.Errorf("%s used as %s, declared %s", e.Name, e.T, t)
		}
	case OpIndex:
		if e.I < 0 || e.I > 2 || (e.Name != "global" && e.Name != "local" && e.Name != "group") {
			return fmt.Errorf("bad index %s.%d", e.Name, e.I)
		}
	case OpLoad:
		if err := want(1); err != nil {
			return err
		}
		if e.I < 0 || int(e.I) >= len(c.k.Params) {
			return fmt.Errorf("load of parameter %d of %d", e.I, len(c.k.Params))
		}
		if e.Args[0].T != I32 || e.T != c.k.Params[e.I].Elem.Compute() {
			return fmt.Errorf("load of %s from %s", e.T, c.k.Params[e.I].Name)
		}
	case OpLoadShared:
		if err := want(1); err != nil {
			return err
		}
		if e.I < 0 || int(e.I) >= len(c.k.Shared) || e.Args[0].T != I32 || e.T != c.k.Shared[e.I].Elem {
			return fmt.Errorf("bad workgroup load %d", e.I)
		}
	case OpNeg, OpBitNot:
		if err := want(1); err != nil {
			return err
		}
		if e.Op == OpBitNot && !e.T.IsInt() {
			return fmt.Errorf("bitwise not of %s", e.T)
		}
		if e.Op == OpNeg && e.Args[0].T == Bool {
			return fmt.Errorf("negation of bool")
		}
	case OpNot:
		if err := want(1); err != nil {
			return err
		}
		if e.Args[0].T != Bool {
			return fmt.Errorf("not of %s", e.Args[0].T)
		}
	case OpAdd, OpSub, OpMul, OpDiv, OpMin, OpMax:
		if err := same(); err != nil {
			return err
		}
		if e.T == Bool {
			return fmt.Errorf("arithmetic on bool")
		}
	case OpRem, OpBitAnd, OpBitOr, OpBitXor, OpShl, OpShr:
		if err := same(); err != nil {
			return err
		}
		if !e.T.IsInt() {
			return fmt.Errorf("integer operation %s on %s", opName(e.Op), e.T)
		}
	case OpLt, OpLe, OpGt, OpGe, OpEq, OpNe:
		if err := same(); err != nil {
			return err
		}
		if e.Args[0].T == Bool && e.Op != OpEq && e.Op != OpNe {
			return fmt.Errorf("%s of bools (GLSL orders no bools)", opName(e.Op))
		}
	case OpAnd, OpOr:
		if err := same(); err != nil {
			return err
		}
		if e.Args[0].T != Bool {
			return fmt.Errorf("logic on %s", e.Args[0].T)
		}
	case OpSelect:
		if err := want(3); err != nil {
			return err
		}
		if e.Args[0].T != Bool || e.Args[1].T != e.Args[2].T {
			return fmt.Errorf("select of %s ? %s : %s", e.Args[0].T, e.Args[1].T, e.Args[2].T)
		}
	case OpConvert:
		if err := want(1); err != nil {
			return err
		}
		if e.T > F32 || e.T == Bool || e.Args[0].T == Bool {
			return fmt.Errorf("conversion from %s to %s (bools convert with Select and Ne)", e.Args[0].T, e.T)
		}
	case OpBitcast:
		if err := want(1); err != nil {
			return err
		}
		if e.T.Size() != 4 || e.Args[0].T.Size() != 4 || e.T == Bool || e.Args[0].T == Bool {
			return fmt.Errorf("bitcast from %s to %s", e.Args[0].T, e.T)
		}
	case OpCall:
		n, ok := Funcs[e.Name]
		if !ok {
			return fmt.Errorf("unknown function %s", e.Name)
		}
		if err := want(n); err != nil {
			return err
		}
		for _, a := range e.Args {
			if a.T != F32 {
				return fmt.Errorf("%s of %s", e.Name, a.T)
			}
		}
	default:
		return fmt.Errorf("unknown operation %d", e.Op)
	}
	return nil
}
