package kir

import (
	"math"
	"strings"
	"testing"
)

// checkKernel is a small well-formed kernel the Check cases start from:
// x (f32, read), y (f32, written), n (i32, read), a workgroup array of 64
// f32, and body around the statements a case gives.
func checkKernel(body ...*Stmt) *Kernel {
	return &Kernel{
		Name: "k",
		Params: []Param{
			{Name: "x", Elem: F32},
			{Name: "y", Elem: F32, Write: true},
			{Name: "n", Elem: I32},
		},
		Shared: []Shared{{Name: "tile", Elem: F32, Len: 64}},
		Local:  [3]int{64, 1, 1},
		Body:   body,
	}
}

// with returns checkKernel(body...) changed by f.
func with(f func(k *Kernel), body ...*Stmt) *Kernel {
	k := checkKernel(body...)
	f(k)
	return k
}

func TestCheck(t *testing.T) {
	i := Var("i", I32)
	g := Decl("g", GlobalID(0))
	gv := Var("g", I32)
	xv := Decl("v", Load(0, F32, gv))
	v := Var("v", F32)
	store := func(e *Expr) *Stmt { return Store(1, Int(0), e) }
	cases := []struct {
		name string
		k    *Kernel
		want string // an error substring; "" for a kernel that passes
	}{
		// Well-formed kernels.
		{"empty body", checkKernel(), ""},
		{"elementwise", checkKernel(g, xv, store(Mul(v, Float(2)))), ""},
		{"grid-stride loop", checkKernel(For("i", GlobalID(0), Load(2, I32, Int(0)), Int(4096),
			Store(1, i, Add(Load(0, F32, i), Float(1))))), ""},
		{"shared and barriers", checkKernel(
			Decl("t", LocalID(0)),
			StoreShared(0, Var("t", I32), Float(0)),
			Barrier(),
			For("s", Int(0), Int(6), Int(1),
				If(Lt(Var("t", I32), Shr(Int(32), Var("s", I32))), []*Stmt{
					StoreShared(0, Var("t", I32), Add(LoadShared(0, F32, Var("t", I32)), Float(1))),
				}),
				Barrier()),
			If(Eq(Var("t", I32), Int(0)), []*Stmt{Store(1, GroupID(0), LoadShared(0, F32, Int(0)))})), ""},
		{"break in an if in a loop", checkKernel(For("i", Int(0), Int(4), Int(1), If(Gt(i, Int(2)), []*Stmt{Break()}))), ""},
		{"shadowing in an inner scope", checkKernel(g, If(True(), []*Stmt{Decl("g", Float(1))}), store(Convert(F32, gv))), ""},
		{"variables in sibling scopes", checkKernel(If(True(), []*Stmt{Decl("a", Int(1))}, Decl("a", Float(1)))), ""},
		{"assignment", checkKernel(g, Assign("g", Add(gv, Int(1)))), ""},
		{"min int constants", checkKernel(Decl("a", Int(math.MinInt32)), Decl("b", Const(I64, math.MinInt64, 0)), Decl("c", Int(math.MaxInt32))), ""},
		{"bool ops", checkKernel(Decl("b", And(Or(True(), False()), Not(Eq(True(), False()))))), ""},
		{"conversions", checkKernel(g, Decl("a", Convert(I64, Convert(U32, Convert(F32, gv)))), Decl("b", Bitcast(U32, Bitcast(F32, gv)))), ""},
		{"calls", checkKernel(Decl("a", Call("fma", Float(1), Float(2), Call("exp", Float(3)))), Decl("b", Call("isnan", Float(1)))), ""},
		{"workgroup 1024", with(func(k *Kernel) { k.Local = [3]int{8, 8, 16} }), ""},
		{"storage types", with(func(k *Kernel) {
			k.Params = []Param{{Name: "a", Elem: U8}, {Name: "b", Elem: I8}, {Name: "c", Elem: I16},
				{Name: "d", Elem: F16}, {Name: "e", Elem: BF16, Write: true}, {Name: "f", Elem: Bool, Write: true}}
		}, Store(4, Int(0), Add(Load(3, F16, Int(0)), Bitcast(U32, Load(0, U8, Int(0))))),
			Store(5, Int(0), Lt(Load(1, I8, Int(0)), Load(2, I16, Int(0))))), ""},

		// Kernel-level errors.
		{"no name", with(func(k *Kernel) { k.Name = "" }), "kernel without a name"},
		{"name not an identifier", with(func(k *Kernel) { k.Name = "my-kernel" }), `"my-kernel" is not an identifier`},
		{"name a keyword", with(func(k *Kernel) { k.Name = "float" }), "reserved"},
		{"name main", with(func(k *Kernel) { k.Name = "main" }), `kernel name "main" is reserved`},
		{"workgroup 0", with(func(k *Kernel) { k.Local = [3]int{0, 1, 1} }), "each size must be 1..1024"},
		{"workgroup zero axis", with(func(k *Kernel) { k.Local = [3]int{64, 0, 1} }), "each size must be 1..1024"},
		{"workgroup negative axes", with(func(k *Kernel) { k.Local = [3]int{-1, -1, 1} }), "each size must be 1..1024"},
		{"workgroup 1025", with(func(k *Kernel) { k.Local = [3]int{1025, 1, 1} }), "each size must be 1..1024"},
		{"workgroup 2048 invocations", with(func(k *Kernel) { k.Local = [3]int{32, 32, 2} }), "has 2048 invocations"},
		{"parameter of a bad type", with(func(k *Kernel) { k.Params[0].Elem = BF16 + 1 }), "parameter x of type(10)"},
		{"parameter name on two lines", with(func(k *Kernel) { k.Params[0].Name = "x\nvoid f() {}" }), "spans lines"},
		{"empty workgroup array", with(func(k *Kernel) { k.Shared[0].Len = 0 }), "workgroup array tile of 0 f32"},
		{"workgroup array of a storage type", with(func(k *Kernel) { k.Shared[0].Elem = F16 }), "workgroup array tile of 64 f16"},

		// Statements.
		{"undeclared variable", checkKernel(store(Var("w", F32))), "use of undeclared w"},
		{"variable out of its scope", checkKernel(If(True(), []*Stmt{Decl("a", Float(1))}), store(Var("a", F32))), "use of undeclared a"},
		{"loop variable after the loop", checkKernel(For("i", Int(0), Int(1), Int(1)), Store(1, i, Float(0))), "use of undeclared i"},
		{"variable used with another type", checkKernel(g, store(Var("g", F32))), "g used as f32, declared i32"},
		{"duplicate declaration", checkKernel(g, Decl("g", Int(1))), "g declared twice"},
		{"loop variable redeclared in the body", checkKernel(For("i", Int(0), Int(1), Int(1), Decl("i", Int(2)))), "i declared twice"},
		{"declared type mismatch", checkKernel(&Stmt{Op: SDecl, T: I32, Name: "a", Args: []*Expr{Float(1)}}), "a: declared i32, initialized with f32"},
		{"declaration reading an outer namesake", checkKernel(g, If(True(), []*Stmt{Decl("g", Add(gv, Int(1)))})), "g initialized with an outer g"},
		{"loop bound reading an outer namesake", checkKernel(g, For("g", Int(0), gv, Int(1))), "loop g bounds read an outer g"},
		{"bad variable name", checkKernel(Decl("2x", Int(1))), `variable name "2x" is not an identifier`},
		{"variable named like a parameter", checkKernel(Decl("p0", Int(1))), "printer's name"},
		{"variable named like a workgroup array", checkKernel(Decl("s12", Int(1))), "printer's name"},
		{"variable named like a builtin", checkKernel(Decl("exp", Float(1))), "reserved"},
		{"variable named gl_", checkKernel(Decl("gl_x", Float(1))), "reserved"},
		{"variable named like the prelude", checkKernel(Decl("rlx_barrier", Float(1))), "reserved"},
		{"variable with __", checkKernel(Decl("a__b", Float(1))), "reserved"},
		{"variable named a GLSL type", checkKernel(Decl("uvec3", Float(1))), "GLSL type"},
		{"variable named a C++ keyword", checkKernel(Decl("new", Float(1))), "reserved"},
		{"bad loop variable name", checkKernel(For("int", Int(0), Int(1), Int(1))), "loop variable name"},
		{"assignment to undeclared", checkKernel(Assign("a", Int(1))), "assignment to undeclared a"},
		{"assignment type mismatch", checkKernel(g, Assign("g", Float(1))), "g: i32 assigned f32"},
		{"store to read-only parameter", checkKernel(Store(0, Int(0), Float(1))), "store to read-only parameter x"},
		{"store to a missing parameter", checkKernel(Store(3, Int(0), Float(1))), "store to parameter 3 of 3"},
		{"store at an f32 index", checkKernel(Store(1, Float(0), Float(1))), "store index of y has type f32"},
		{"store of the wrong type", checkKernel(Store(1, Int(0), Int(1))), "store of i32 to f32 elements of y"},
		{"store of f32 to f16", with(func(k *Kernel) { k.Params[1].Elem = F16 }, Store(1, Int(0), Float(1))), "store of f32 to f16 elements of y"},
		{"store to a missing workgroup array", checkKernel(StoreShared(1, Int(0), Float(1))), "store to workgroup array 1 of 1"},
		{"workgroup store of the wrong type", checkKernel(StoreShared(0, Int(0), Int(1))), "store of i32 at i32 index to tile"},
		{"workgroup store at an f32 index", checkKernel(StoreShared(0, Float(0), Float(1))), "store of f32 at f32 index to tile"},
		{"loop bound of type f32", checkKernel(For("i", Int(0), Float(4), Int(1))), "loop i bound of type f32"},
		{"if condition of type i32", checkKernel(If(Int(1), nil)), "if condition of type i32"},
		{"barrier inside an if", checkKernel(If(True(), []*Stmt{Barrier()})), "barrier inside a branch"},
		{"barrier inside an else", checkKernel(If(True(), nil, Barrier())), "barrier inside a branch"},
		{"barrier in a loop inside an if", checkKernel(If(True(), []*Stmt{For("i", Int(0), Int(2), Int(1), Barrier())})), "barrier inside a branch"},
		{"break outside a loop", checkKernel(Break()), "break outside a loop"},
		{"break in an if outside a loop", checkKernel(If(True(), []*Stmt{Break()})), "break outside a loop"},
		{"unknown statement", checkKernel(&Stmt{Op: SMMA + 1}), "unknown statement"},
		{"nil statement", checkKernel(nil), "missing statement"},
		{"store without a value", checkKernel(&Stmt{Op: SStore, I: 1, Args: []*Expr{Int(0)}}), "store statement with 1 expressions, want 2"},
		{"nil expression", checkKernel(Decl("a", Int(0)), &Stmt{Op: SAssign, Name: "a", Args: []*Expr{nil}}), "missing expression"},

		// Expressions.
		{"constant of a storage type", checkKernel(Decl("a", Const(U8, 1, 0))), "constant of storage type u8"},
		{"i32 constant out of range", checkKernel(Decl("a", Int(1<<31))), "i32 constant 2147483648 out of range"},
		{"i32 constant below range", checkKernel(Decl("a", Int(math.MinInt32-1))), "out of range"},
		{"bad index axis", checkKernel(Decl("a", &Expr{Op: OpIndex, T: I32, Name: "global", I: 3})), "bad index global.3"},
		{"bad index kind", checkKernel(Decl("a", &Expr{Op: OpIndex, T: I32, Name: "lane"})), "bad index lane.0"},
		{"load of a missing parameter", checkKernel(Decl("a", Load(3, F32, Int(0)))), "load of parameter 3 of 3"},
		{"bad load type", checkKernel(Decl("a", Load(0, I32, Int(0)))), "load of i32 from x"},
		{"load at an f32 index", checkKernel(Decl("a", Load(0, F32, Float(0)))), "load of f32 from x"},
		{"load without an index", checkKernel(Decl("a", &Expr{Op: OpLoad, T: F32})), "load with 0 operands, want 1"},
		{"workgroup load of the wrong type", checkKernel(Decl("a", LoadShared(0, I32, Int(0)))), "bad workgroup load 0"},
		{"workgroup load of a missing array", checkKernel(Decl("a", LoadShared(1, F32, Int(0)))), "bad workgroup load 1"},
		{"wrong operand count", checkKernel(Decl("a", &Expr{Op: OpAdd, T: I32, Args: []*Expr{Int(1)}})), "add with 1 operands, want 2"},
		{"type mismatch", checkKernel(Decl("a", Add(Int(1), Float(1)))), "add of i32 and f32"},
		{"comparison type mismatch", checkKernel(Decl("a", Lt(Int(1), Uint(1)))), "lt of i32 and u32"},
		{"arithmetic on bool", checkKernel(Decl("a", Add(True(), True()))), "arithmetic on bool"},
		{"negation of bool", checkKernel(Decl("a", Neg(True()))), "negation of bool"},
		{"ordering of bools", checkKernel(Decl("a", Lt(True(), False()))), "lt of bools"},
		{"remainder of f32", checkKernel(Decl("a", Rem(Float(1), Float(2)))), "integer operation rem on f32"},
		{"shift of f32", checkKernel(Decl("a", Shl(Float(1), Float(2)))), "integer operation shl on f32"},
		{"bitwise not of f32", checkKernel(Decl("a", BitNot(Float(1)))), "bitwise not of f32"},
		{"logical not of i32", checkKernel(Decl("a", Not(Int(1)))), "not of i32"},
		{"logic on i32", checkKernel(Decl("a", And(Int(1), Int(0)))), "logic on i32"},
		{"select on an i32 condition", checkKernel(Decl("a", Select(Int(1), Float(1), Float(2)))), "select of i32 ? f32 : f32"},
		{"select arms differ", checkKernel(Decl("a", Select(True(), Float(1), Int(2)))), "select of bool ? f32 : i32"},
		{"conversion from bool", checkKernel(Decl("a", Convert(I32, True()))), "conversion from bool to i32"},
		{"conversion to bool", checkKernel(Decl("a", Convert(Bool, Int(1)))), "conversion from i32 to bool"},
		{"conversion to a storage type", checkKernel(Decl("a", Convert(U8, Int(1)))), "conversion from i32 to u8"},
		{"bitcast of i64", checkKernel(Decl("a", Bitcast(F32, Const(I64, 1, 0)))), "bitcast from i64 to f32"},
		{"bitcast to bool", checkKernel(Decl("a", Bitcast(Bool, Int(1)))), "bitcast from i32 to bool"},
		{"unknown function", checkKernel(Decl("a", Call("tanh", Float(1)))), "unknown function tanh"},
		{"wrong argument count", checkKernel(Decl("a", Call("exp", Float(1), Float(2)))), "call with 2 operands, want 1"},
		{"fma with two arguments", checkKernel(Decl("a", Call("fma", Float(1), Float(2)))), "call with 2 operands, want 3"},
		{"call on i32", checkKernel(Decl("a", Call("sqrt", Int(4)))), "sqrt of i32"},
		{"unknown operation", checkKernel(Decl("a", &Expr{Op: OpCall + 1, T: I32})), "unknown operation"},
		{"error inside a loop body", checkKernel(For("i", Int(0), Int(1), Int(1), If(True(), []*Stmt{store(Var("q", F32))}))), "use of undeclared q"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.k)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("Check passed, want an error with %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("Check: %v\nwant an error with %q", err, c.want)
			}
			if err != nil && c.k.Name != "" && !strings.HasPrefix(err.Error(), "kernel "+c.k.Name) && !strings.HasPrefix(err.Error(), "kernel name") {
				t.Errorf("error %q does not name the kernel", err)
			}
			// Print checks first: an invalid kernel never prints.
			for _, l := range []Language{GLSL, CUDA, MSL} {
				src, perr := Print(l, c.k)
				if (perr != nil) != (err != nil) {
					t.Errorf("Print(%s) error %v, Check error %v", l, perr, err)
				}
				if perr != nil && src != "" {
					t.Errorf("Print(%s) returned source with an error", l)
				}
			}
		})
	}
}

// TestCheckDoesNotChangeKernel: Check reads the kernel, it does not fix it.
func TestCheckDoesNotChangeKernel(t *testing.T) {
	for _, k := range goldenKernels() {
		before, err := Print(CUDA, k)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := Check(k); err != nil {
				t.Fatal(err)
			}
		}
		after, _ := Print(CUDA, k)
		if before != after {
			t.Errorf("%s: Check changed the kernel", k.Name)
		}
	}
}

func TestPrintUnknownLanguage(t *testing.T) {
	_, err := Print("hlsl", checkKernel())
	if err == nil || !strings.Contains(err.Error(), `no printer for language "hlsl"`) {
		t.Errorf("Print(hlsl) = %v", err)
	}
}

func TestLanguage(t *testing.T) {
	k := checkKernel()
	for _, c := range []struct {
		l          Language
		ext, entry string
	}{{GLSL, ".comp", "main"}, {CUDA, ".cu", "k"}, {MSL, ".metal", "k"}, {"x", ".txt", "k"}} {
		if got := c.l.Ext(); got != c.ext {
			t.Errorf("%s.Ext() = %q, want %q", c.l, got, c.ext)
		}
		if got := c.l.Entry(k); got != c.entry {
			t.Errorf("%s.Entry() = %q, want %q", c.l, got, c.entry)
		}
	}
}

func TestTypes(t *testing.T) {
	for _, c := range []struct {
		t       Type
		name    string
		size    int
		compute Type
		isInt   bool
	}{
		{Bool, "bool", 1, Bool, false}, {I32, "i32", 4, I32, true}, {U32, "u32", 4, U32, true},
		{I64, "i64", 8, I64, true}, {F32, "f32", 4, F32, false}, {U8, "u8", 1, I32, false},
		{I8, "i8", 1, I32, false}, {I16, "i16", 2, I32, false}, {F16, "f16", 2, U32, false},
		{BF16, "bf16", 2, U32, false},
	} {
		if c.t.String() != c.name || c.t.Size() != c.size || c.t.Compute() != c.compute || c.t.IsInt() != c.isInt {
			t.Errorf("%d: %s %d %s %v, want %s %d %s %v", c.t, c.t, c.t.Size(), c.t.Compute(), c.t.IsInt(), c.name, c.size, c.compute, c.isInt)
		}
	}
	if s := Type(42).String(); s != "type(42)" {
		t.Errorf("Type(42) = %q", s)
	}
}

func TestUsesType(t *testing.T) {
	k := checkKernel(Decl("a", Convert(I64, Int(1))))
	for typ, want := range map[Type]bool{F32: true, I32: true, I64: true, U32: false, Bool: false, F16: false} {
		if got := k.UsesType(typ); got != want {
			t.Errorf("UsesType(%s) = %v, want %v", typ, got, want)
		}
	}
	if !checkKernel(If(Lt(Int(0), Int(1)), nil, Decl("b", Uint(1)))).UsesType(U32) {
		t.Error("UsesType misses a declaration in an else branch")
	}
	if k.Threads() != 64 {
		t.Errorf("Threads() = %d", k.Threads())
	}
}

// TestConstructors checks the types the constructors give their nodes.
func TestConstructors(t *testing.T) {
	for _, c := range []struct {
		e *Expr
		t Type
	}{
		{Int(1), I32}, {Uint(1), U32}, {Float(1), F32}, {Const(I64, 1, 0), I64}, {Const(F32, 7, 2.5), F32},
		{True(), Bool}, {False(), Bool}, {GlobalID(0), I32}, {LocalID(1), I32}, {GroupID(2), I32},
		{Load(0, F16, Int(0)), U32}, {Load(0, I8, Int(0)), I32}, {Load(0, Bool, Int(0)), Bool},
		{LoadShared(0, I64, Int(0)), I64}, {Add(Float(1), Float(2)), F32}, {Lt(Int(1), Int(2)), Bool},
		{And(True(), False()), Bool}, {Not(True()), Bool}, {BitNot(Uint(1)), U32}, {Neg(Int(1)), I32},
		{Select(True(), Uint(1), Uint(2)), U32}, {Convert(F32, Int(1)), F32}, {Bitcast(I32, Float(1)), I32},
		{Call("exp", Float(1)), F32}, {Call("isnan", Float(1)), Bool}, {Call("isinf", Float(1)), Bool},
	} {
		if c.e.T != c.t {
			t.Errorf("op %d: type %s, want %s", c.e.Op, c.e.T, c.t)
		}
	}
	if x := Int(1); Convert(I32, x) != x || Bitcast(I32, x) != x {
		t.Error("Convert or Bitcast to the same type is not a no-op")
	}
	if c := Const(F32, 7, 2.5); c.F != 2.5 {
		t.Errorf("Const(F32) reads v, not f: %v", c.F)
	}
	if c := Const(I32, 7, 2.5); c.I != 7 {
		t.Errorf("Const(I32) = %d", c.I)
	}
}
