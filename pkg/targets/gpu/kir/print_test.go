package kir

import (
	"bytes"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var languages = []Language{GLSL, CUDA, MSL}

// goldenKernels are small kernels that between them use every statement,
// every operation, every parameter type and every function of the IR, as
// the lowering builds them.
func goldenKernels() []*Kernel {
	return []*Kernel{elementwiseKernel(1000, 4), reduceKernel(1000), miscKernel(), narrowKernel(), offsetsKernel()}
}

// elementwiseKernel is a grid-stride loop over n elements (groups
// workgroups of 256) that reads f32, f16, bool, u8 and i64 parameters and
// writes each type back:
//
//	y[i]  = m[i] ? x[i]*h[i] : -x[i]
//	yh[i] = f16(x[i] + h[i])
//	ym[i] = !m[i] || x[i] > 0
//	yq[i] = u8(q[i] + 1)
//	yl[i] = l[i]*2 + q[i] - 3
func elementwiseKernel(n, groups int) *Kernel {
	i := Var("i", I32)
	xv, hv, mv, qv, lv := Var("xv", F32), Var("hv", F32), Var("mv", Bool), Var("qv", I32), Var("lv", I64)
	return &Kernel{
		Name: "ew",
		Params: []Param{
			{Name: "x", Elem: F32}, {Name: "h", Elem: F16}, {Name: "m", Elem: Bool}, {Name: "q", Elem: U8}, {Name: "l", Elem: I64},
			{Name: "y", Elem: F32, Write: true}, {Name: "yh", Elem: F16, Write: true}, {Name: "ym", Elem: Bool, Write: true},
			{Name: "yq", Elem: U8, Write: true}, {Name: "yl", Elem: I64, Write: true},
		},
		Local: [3]int{256, 1, 1},
		Body: []*Stmt{
			For("i", GlobalID(0), Int(int64(n)), Int(int64(groups*256)),
				Decl("xv", Load(0, F32, i)),
				Decl("hv", F16ToF32(Load(1, F16, i))),
				Decl("mv", Load(2, Bool, i)),
				Decl("qv", Load(3, U8, i)),
				Decl("lv", Load(4, I64, i)),
				Store(5, i, Select(mv, Mul(xv, hv), Neg(xv))),
				Store(6, i, F32ToF16(Add(xv, hv))),
				Store(7, i, Or(Not(mv), Gt(xv, Float(0)))),
				Store(8, i, Wrap(Add(qv, Int(1)), U8)),
				Store(9, i, Add(Add(Mul(lv, Const(I64, 2, 0)), Convert(I64, qv)), Const(I64, -3, 0)))),
		},
	}
}

// reduceKernel sums each row of a rows×n f32 matrix with one workgroup
// of 256 per row: a strided partial sum per invocation, then a tree
// reduction in workgroup memory with a barrier after each level.
func reduceKernel(n int) *Kernel {
	tid, row, s := Var("tid", I32), Var("row", I32), Var("s", I32)
	j, acc := Var("j", I32), Var("acc", F32)
	return &Kernel{
		Name:   "rowsum",
		Params: []Param{{Name: "x", Elem: F32}, {Name: "out", Elem: F32, Write: true}},
		Shared: []Shared{{Name: "partial", Elem: F32, Len: 256}},
		Local:  [3]int{256, 1, 1},
		Body: []*Stmt{
			Decl("tid", LocalID(0)),
			Decl("row", GroupID(0)),
			Decl("acc", Float(0)),
			For("j", tid, Int(int64(n)), Int(256),
				Assign("acc", Add(acc, Load(0, F32, Add(Mul(row, Int(int64(n))), j))))),
			StoreShared(0, tid, acc),
			Barrier(),
			For("k", Int(0), Int(8), Int(1),
				Decl("s", Shr(Int(128), Var("k", I32))),
				If(Lt(tid, s), []*Stmt{
					StoreShared(0, tid, Add(LoadShared(0, F32, tid), LoadShared(0, F32, Add(tid, s)))),
				}),
				Barrier()),
			If(Eq(tid, Int(0)), []*Stmt{Store(1, row, LoadShared(0, F32, Int(0)))}),
		},
	}
}

// miscKernel uses the rest of the IR: every function, every conversion
// and bitcast, integer and bitwise operations on i32, u32 and i64,
// non-finite, signed-zero, subnormal and extreme constants, a 3-D
// workgroup, if/else, break and a u32 workgroup array. One invocation per
// element of x (n of them), 64 at most.
func miscKernel() *Kernel {
	g, v, bits, acc, iv := Var("g", I32), Var("v", F32), Var("bits", U32), Var("acc", I32), Var("iv", I64)
	fn := func(name string) *Expr {
		if Funcs[name] == 3 {
			return Call(name, v, Float(2), Float(-0.5))
		}
		return Call(name, v)
	}
	sum := fn("exp")
	for _, name := range []string{"log", "sqrt", "sin", "cos", "floor", "ceil", "trunc", "rint", "abs", "exp2", "log2", "fma"} {
		sum = Add(sum, fn(name))
	}
	return &Kernel{
		Name: "misc",
		Params: []Param{
			{Name: "x", Elem: F32}, {Name: "n", Elem: I32},
			{Name: "out", Elem: F32, Write: true}, {Name: "outi", Elem: I32, Write: true},
			{Name: "outu", Elem: U32, Write: true}, {Name: "outl", Elem: I64, Write: true},
		},
		Shared: []Shared{{Name: "flags", Elem: U32, Len: 4}},
		Local:  [3]int{4, 4, 4},
		Body: []*Stmt{
			Decl("g", Add(Add(Mul(GroupID(0), Int(64)), Mul(LocalID(2), Int(16))), Add(Mul(LocalID(1), Int(4)), LocalID(0)))),
			If(And(Eq(LocalID(1), Int(0)), Eq(LocalID(2), Int(0))), []*Stmt{
				StoreShared(0, LocalID(0), BitNot(Uint(0))),
			}),
			Barrier(),
			If(Ge(g, Load(1, I32, Int(0))), []*Stmt{}, // nothing to do past n; the else branch does the work
				Decl("v", Load(0, F32, g)),
				Decl("bits", Bitcast(U32, v)),
				Decl("special", Select(Or(Call("isnan", v), Call("isinf", v)), Float(math.Inf(-1)), Float(math.Inf(1)))),
				Decl("consts", Add(Add(Float(math.Copysign(0, -1)), Float(-1.5)), Add(Float(1e-45), Float(math.MaxFloat32)))),
				Decl("nanv", Select(Lt(v, Float(0)), NaN(), Float(1.25e-7))),
				Store(2, g, Add(Add(sum, Var("special", F32)), Add(Var("consts", F32), Var("nanv", F32)))),
				Decl("acc", Int(0)),
				For("j", Int(0), Load(1, I32, Int(0)), Int(1),
					If(Gt(Var("j", I32), Int(3)), []*Stmt{Break()}),
					Assign("acc", Add(acc, Rem(Mul(Var("j", I32), Int(-7)), Int(3))))),
				Store(3, g, Add(Add(acc, Div(Convert(I32, v), Int(math.MinInt32))),
					Add(Bitcast(I32, Shr(bits, Uint(3))), Shr(Neg(Bitcast(I32, Shr(bits, Uint(1)))), Int(2))))),
				Store(4, g, BitXor(BitOr(BitAnd(bits, LoadShared(0, U32, Int(0))), Uint(math.MaxUint32)),
					Add(Bitcast(U32, Convert(I32, v)), Convert(U32, Abs(v))))),
				Decl("iv", Convert(I64, g)),
				Store(5, g, Select(Ne(iv, Const(I64, math.MinInt64, 0)),
					Rem(Sub(Mul(iv, Const(I64, -5, 0)), Convert(I64, v)), Const(I64, math.MaxInt64, 0)),
					Max(Shl(iv, Const(I64, 3, 0)), Min(BitNot(iv), Const(I64, 1<<40, 0))))),
			),
		},
	}
}

// narrowKernel is a 2-D kernel over i8, i16 and bf16 storage with the
// integer and float composite builders (floored modulo, division, pow,
// erf) and the bf16 conversions.
func narrowKernel() *Kernel {
	x, y := GlobalID(0), GlobalID(1)
	a, b, h, idx := Var("a", I32), Var("b", I32), Var("h", F32), Var("idx", I32)
	return &Kernel{
		Name: "narrow",
		Params: []Param{
			{Name: "a", Elem: I8}, {Name: "b", Elem: I16}, {Name: "h", Elem: BF16},
			{Name: "ya", Elem: I8, Write: true}, {Name: "yb", Elem: I16, Write: true}, {Name: "yh", Elem: BF16, Write: true},
		},
		Local: [3]int{8, 8, 1},
		Body: []*Stmt{
			If(Or(Ge(x, Int(16)), Ge(y, Int(16))), []*Stmt{},
				Decl("idx", Add(Mul(y, Int(16)), x)),
				Decl("a", Load(0, I8, idx)),
				Decl("b", Load(1, I16, idx)),
				Decl("h", BF16ToF32(Load(2, BF16, idx))),
				Store(3, idx, Wrap(IntFloorMod(a, b), I8)),
				Store(4, idx, Wrap(Sub(IntDiv(b, a), Int(40000)), I16)),
				Store(5, idx, F32ToBF16(Add(Pow(h, Convert(F32, a)), Erf(h))))),
		},
	}
}

// offsetsKernel is a strided copy of 8-bit and 64-bit elements that takes
// its parameters' offsets at launch (Kernel.Offsets): every load and
// store index is relative to one.
func offsetsKernel() *Kernel {
	i := Var("i", I32)
	return &Kernel{
		Name: "offsets",
		Params: []Param{
			{Name: "src", Elem: U8}, {Name: "srcl", Elem: I64},
			{Name: "dst", Elem: U8, Write: true}, {Name: "dstl", Elem: I64, Write: true},
		},
		Local: [3]int{256, 1, 1},
		Body: []*Stmt{
			For("i", GlobalID(0), Int(100), Int(256),
				Store(2, i, Wrap(Load(0, U8, Mul(i, Int(2))), U8)),
				Store(3, Add(i, Int(7)), Load(1, I64, i))),
		},
		Offsets: true,
	}
}

func goldenPath(k *Kernel, l Language) string {
	return filepath.Join("testdata", k.Name+l.Ext())
}

// TestGolden prints every golden kernel in every language and compares
// the text with testdata/<kernel><ext>; -update rewrites the files.
func TestGolden(t *testing.T) {
	for _, k := range goldenKernels() {
		for _, l := range languages {
			src, err := Print(l, k)
			if err != nil {
				t.Fatalf("Print(%s, %s): %v", l, k.Name, err)
			}
			path := goldenPath(k, l)
			if *update {
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if src != string(want) {
				t.Errorf("%s differs from the printed kernel (go test -run TestGolden -update rewrites it; review the diff):\n%s", path, lineDiff(string(want), src))
			}
		}
	}
}

// lineDiff lists the first lines where got differs from want.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(w), len(g)) && n < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			n++
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
		}
	}
	return b.String()
}

// TestPrintDeterministic: printing twice gives the same text (the
// printers range over maps only to fill lookup tables).
func TestPrintDeterministic(t *testing.T) {
	for _, k := range goldenKernels() {
		for _, l := range languages {
			a, _ := Print(l, k)
			b, _ := Print(l, k)
			if a != b {
				t.Errorf("%s %s: two prints differ", k.Name, l)
			}
		}
	}
}

// TestPrintParenthesized: the printers parenthesize every operation, so
// the tree's grouping survives whatever the languages' precedence rules:
// a-(b-c), (a-b)-c, a*(b+c), -(-a), a<<(b+c), and negative constants.
func TestPrintParenthesized(t *testing.T) {
	a, b, c := Var("a", I32), Var("b", I32), Var("c", I32)
	k := checkKernel(Decl("a", Int(1)), Decl("b", Int(2)), Decl("c", Int(3)),
		Decl("e1", Sub(a, Sub(b, c))),
		Decl("e2", Sub(Sub(a, b), c)),
		Decl("e3", Mul(a, Add(b, c))),
		Decl("e4", Neg(Neg(a))),
		Decl("e5", Shl(a, Add(b, c))),
		Decl("e6", Sub(a, Int(-1))),
		Decl("e7", Sub(Float(1), Float(-0.5))),
		Decl("e8", Neg(Int(math.MinInt32))),
		Decl("e9", Sub(Const(I64, 1, 0), Const(I64, math.MinInt64, 0))),
	)
	want := map[Language][]string{
		GLSL: {"int e1 = (a - (b - c));", "int e2 = ((a - b) - c);", "int e3 = (a * (b + c));", "int e4 = (-(-a));",
			"int e5 = (a << (b + c));", "int e6 = (a - (-1));", "float e7 = (1.0 - (-0.5));", "int e8 = (-(-2147483647 - 1));",
			"int64_t e9 = (1l - (-9223372036854775807l - 1l));"},
		CUDA: {"int e6 = (a - (-1));", "float e7 = (1.0f - (-0.5f));", "long long e9 = (1LL - (-9223372036854775807LL - 1LL));"},
		MSL:  {"float e7 = (1.0f - (-0.5f));", "long e9 = (1L - (-9223372036854775807L - 1L));"},
	}
	for l, lines := range want {
		src, err := Print(l, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range lines {
			if !strings.Contains(src, "  "+line+"\n") {
				t.Errorf("%s print lacks %q:\n%s", l, line, src)
			}
		}
	}
}

// TestPrintConstants checks the spelling of f32 constants: shortest
// round-trip digits, always a float literal, non-finite values as bits.
func TestPrintConstants(t *testing.T) {
	for _, c := range []struct {
		f          float64
		glsl, cuda string
	}{
		{0, "0.0", "0.0f"},
		{math.Copysign(0, -1), "(-0.0)", "(-0.0f)"},
		{1, "1.0", "1.0f"},
		{-2, "(-2.0)", "(-2.0f)"},
		{0.1, "0.1", "0.1f"},
		{1e10, "1e+10", "1e+10f"},
		{1e-45, "1e-45", "1e-45f"},
		{math.MaxFloat32, "3.4028235e+38", "3.4028235e+38f"},
		{1e39, "uintBitsToFloat(0x7f800000u)", "rlx_u2f(0x7f800000u)"}, // rounds to +Inf in f32
		{math.Inf(-1), "uintBitsToFloat(0xff800000u)", "rlx_u2f(0xff800000u)"},
		{math.NaN(), "uintBitsToFloat(0x7fc00000u)", "rlx_u2f(0x7fc00000u)"},
		{16777217, "1.6777216e+07", "1.6777216e+07f"}, // rounds to f32
	} {
		k := checkKernel(Decl("a", Float(c.f)))
		for l, want := range map[Language]string{GLSL: c.glsl, CUDA: c.cuda} {
			src, err := Print(l, k)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(src, "float a = "+want+";") {
				t.Errorf("%s: %v printed as %s, want %s", l, c.f, grepLine(src, "float a = "), want)
			}
		}
	}
}

func grepLine(src, prefix string) string {
	for _, l := range strings.Split(src, "\n") {
		if strings.Contains(l, prefix) {
			return strings.TrimSpace(l)
		}
	}
	return "(no line)"
}

// TestPrintExtensions: the GLSL print asks for the extensions of the
// types it uses and no others.
func TestPrintExtensions(t *testing.T) {
	const (
		i64 = "GL_EXT_shader_explicit_arithmetic_types_int64"
		s8  = "GL_EXT_shader_8bit_storage"
		s16 = "GL_EXT_shader_16bit_storage"
	)
	for _, c := range []struct {
		name string
		k    *Kernel
		want []string
	}{
		{"f32 only", checkKernel(), nil},
		{"i64 local", checkKernel(Decl("a", Const(I64, 1, 0))), []string{i64}},
		{"i64 param", with(func(k *Kernel) { k.Params[0].Elem = I64 }), []string{i64}},
		{"bool param", with(func(k *Kernel) { k.Params[0].Elem = Bool }), []string{s8}},
		{"i8 param", with(func(k *Kernel) { k.Params[0].Elem = I8 }), []string{s8}},
		{"u8 param", with(func(k *Kernel) { k.Params[0].Elem = U8 }), []string{s8}},
		{"i16 param", with(func(k *Kernel) { k.Params[0].Elem = I16 }), []string{s16}},
		{"f16 param", with(func(k *Kernel) { k.Params[0].Elem = F16 }), []string{s16}},
		{"bf16 param", with(func(k *Kernel) { k.Params[0].Elem = BF16 }), []string{s16}},
	} {
		src, err := Print(GLSL, c.k)
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{i64, s8, s16} {
			want := false
			for _, w := range c.want {
				want = want || w == ext
			}
			if got := strings.Contains(src, ext); got != want {
				t.Errorf("%s: %s requested = %v, want %v", c.name, ext, got, want)
			}
		}
	}
}

// Compile checks: every golden kernel must compile in every language with
// the compilers the build uses. They run in parallel (each compile is a
// process).

func TestGoldenGLSLCompiles(t *testing.T) {
	needTool(t, toolchain.Glslang)
	if _, err := toolchain.SpirvVal.Path(); err != nil {
		skipOrFail(t, "%v", err) // GLSLToSPIRV validates only when spirv-val is there
	}
	for _, k := range goldenKernels() {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			src, err := Print(GLSL, k)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := toolchain.GLSLToSPIRV(k.Name, src); err != nil {
				t.Fatalf("%v\n%s", err, numbered(src))
			}
		})
	}
}

func TestGoldenCUDACompiles(t *testing.T) {
	needTool(t, toolchain.Clang)
	for _, k := range goldenKernels() {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			src, err := Print(CUDA, k)
			if err != nil {
				t.Fatal(err)
			}
			ptx, _, err := toolchain.CUDAToPTX(k.Name, src)
			if err != nil {
				t.Fatalf("%v\n%s", err, numbered(src))
			}
			if !bytes.Contains(ptx, []byte(".entry "+k.Name)) {
				t.Errorf("PTX has no entry %s", k.Name)
			}
		})
	}
}

// TestGoldenMSLSyntax checks each MSL print as C++17 against
// testdata/metal_stub.h, a stand-in for <metal_stdlib> that declares the
// names the printer uses (address-space keywords as empty macros, uint3,
// as_type, precise::, the math functions, threadgroup_barrier). This
// checks C++ syntax, that every name the print uses is one Metal has, and
// C++'s typing of the expressions; it does not check Metal semantics
// (address spaces, attributes, which overloads Metal really has), which
// only the Metal compiler on macOS can.
func TestGoldenMSLSyntax(t *testing.T) {
	clangxx := clangPP(t)
	stub, err := filepath.Abs(filepath.Join("testdata", "metal_stub.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range goldenKernels() {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			src, err := Print(MSL, k)
			if err != nil {
				t.Fatal(err)
			}
			if err := mslSyntax(clangxx, stub, src); err != nil {
				t.Fatalf("%v\n%s", err, numbered(src))
			}
		})
	}
}

// mslSyntax runs clang++ -fsyntax-only on an MSL print with the stub
// header in place of <metal_stdlib>.
func mslSyntax(clangxx, stub, src string) error {
	src = strings.Replace(src, "#include <metal_stdlib>\n", "", 1)
	cmd := exec.Command(clangxx, "-std=c++17", "-fsyntax-only", "-fsigned-char", "-Werror", "-Wno-unknown-attributes", "-x", "c++", "-include", stub, "-")
	cmd.Stdin = strings.NewReader(src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &compileError{err, string(out)}
	}
	return nil
}

type compileError struct {
	err error
	out string
}

func (e *compileError) Error() string { return "clang++: " + e.err.Error() + "\n" + e.out }

var (
	clangPPOnce sync.Once
	clangPPPath string
)

// clangPP finds clang++ (the clang package installs it with clang).
func clangPP(t *testing.T) string {
	t.Helper()
	needTool(t, toolchain.Clang)
	clangPPOnce.Do(func() {
		if p, err := exec.LookPath("clang++"); err == nil {
			clangPPPath = p
		} else if p, err := toolchain.Clang.Path(); err == nil {
			clangPPPath = p + "++"
			if _, err := os.Stat(clangPPPath); err != nil {
				clangPPPath = ""
			}
		}
	})
	if clangPPPath == "" {
		skipOrFail(t, "clang++ not found (on Debian: apt-get install clang)")
	}
	return clangPPPath
}
