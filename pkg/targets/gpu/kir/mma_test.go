package kir

import (
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// mmaKernel is one warp's 16×8×8 tensor-core product over a tile of A
// and B in global memory, stored by the accumulators' fragment layout:
// the smallest kernel that uses SMMA the way kernelgen does.
func mmaKernel() *Kernel {
	I := Int
	V := func(n string) *Expr { return Var(n, I32) }
	a := func(r, c *Expr) *Expr { return Load(0, F32, Add(Mul(r, I(8)), c)) }
	b := func(r, c *Expr) *Expr { return Load(1, F32, Add(Mul(r, I(8)), c)) }
	g, t := V("g"), V("t")
	g8, t4 := Add(g, I(8)), Add(t, I(4))
	body := []*Stmt{
		Decl("g", Div(LocalID(0), I(4))),
		Decl("t", Rem(LocalID(0), I(4))),
		Decl("c0", Float(0)), Decl("c1", Float(0)), Decl("c2", Float(0)), Decl("c3", Float(0)),
		MMA([4]string{"c0", "c1", "c2", "c3"},
			[4]*Expr{a(g, t), a(g8, t), a(g, t4), a(g8, t4)},
			[2]*Expr{b(t, g), b(t4, g)}),
	}
	col := Mul(t, I(2))
	for i, rc := range [4][2]*Expr{{g, col}, {g, Add(col, I(1))}, {g8, col}, {g8, Add(col, I(1))}} {
		body = append(body, Store(2, Add(Mul(rc[0], I(8)), rc[1]), Var("c"+string(rune('0'+i)), F32)))
	}
	return &Kernel{Name: "mma16x8x8", Local: [3]int{32, 1, 1}, Body: body,
		Params: []Param{{Name: "a", Elem: F32}, {Name: "b", Elem: F32}, {Name: "d", Elem: F32, Write: true}}}
}

// TestMMAPrints checks that a tensor-core product prints as CUDA only,
// and that clang compiles it for the cuda target's architecture into the
// PTX instructions the statement means.
func TestMMAPrints(t *testing.T) {
	for _, l := range []Language{GLSL, MSL} {
		if _, err := Print(l, mmaKernel()); err == nil || !strings.Contains(err.Error(), "only as CUDA") {
			t.Errorf("%s: printed a tensor-core product (err %v)", l, err)
		}
	}
	src, err := Print(CUDA, mmaKernel())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, "rlx_mma_tf32(c0, c1, c2, c3, ") {
		t.Fatalf("no product call in\n%s", src)
	}
	// A kernel without one carries no inline PTX.
	if src, err := Print(CUDA, &Kernel{Name: "plain", Local: [3]int{1, 1, 1}}); err != nil || strings.Contains(src, "mma.sync") {
		t.Errorf("a kernel without products carries them (err %v)", err)
	}
	needTool(t, toolchain.Clang)
	ptx, _, err := toolchain.CUDAToPTX("mma16x8x8", src)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	text := string(ptx)
	for _, want := range []string{".target " + toolchain.PTXArch, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "cvt.rna.tf32.f32"} {
		if !strings.Contains(text, want) {
			t.Errorf("PTX lacks %q", want)
		}
	}
	if n := strings.Count(text, "cvt.rna.tf32.f32"); n != 6 {
		t.Errorf("PTX rounds %d operands to tf32, want 6", n)
	}
}

// TestMMACheck: the product is warp-wide, so never under a condition,
// and it updates variables.
func TestMMACheck(t *testing.T) {
	k := mmaKernel()
	k.Body = append(k.Body[:6:6], If(Lt(Var("g", I32), Int(4)), []*Stmt{k.Body[6]}))
	if err := Check(k); err == nil || !strings.Contains(err.Error(), "mma inside a branch") {
		t.Errorf("product in a branch: %v", err)
	}
	k = mmaKernel()
	k.Body[6].Args[2] = Float(1)
	if err := Check(k); err == nil || !strings.Contains(err.Error(), "accumulator 2 is not a variable") {
		t.Errorf("constant accumulator: %v", err)
	}
	k = mmaKernel()
	k.Body[6].Args[9] = Int(1)
	if err := Check(k); err == nil || !strings.Contains(err.Error(), "mma operand 9 of type i32") {
		t.Errorf("integer operand: %v", err)
	}
	if err := Check(mmaKernel()); err != nil {
		t.Errorf("the product kernel: %v", err)
	}
}
