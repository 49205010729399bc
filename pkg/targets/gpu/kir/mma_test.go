package kir

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

var mmaKinds = []MMAKind{MMATF32, MMABF16}

// mmaKernel is one warp's 16×8×K tensor-core product of kind m over a
// 16×K A and a K×8 B in global memory (row-major), stored by the
// accumulators' fragment layout: the smallest kernel that uses SMMA the
// way kernelgen does.
func mmaKernel(m MMAKind) *Kernel {
	I := Int
	V := func(n string) *Expr { return Var(n, I32) }
	K := int64(m.K())
	g, t := V("g"), V("t")
	tk := Mul(t, I(int64(m.TMul())))
	var a, b []*Expr
	for e := range m.A() {
		r, c := m.AElem(e)
		a = append(a, Load(0, F32, Add(Mul(Add(g, I(int64(r))), I(K)), Add(tk, I(int64(c))))))
	}
	for e := range m.B() {
		b = append(b, Load(1, F32, Add(Mul(Add(tk, I(int64(m.BElem(e)))), I(8)), g)))
	}
	body := []*Stmt{
		Decl("g", Div(LocalID(0), I(4))),
		Decl("t", Rem(LocalID(0), I(4))),
		Decl("c0", Float(0)), Decl("c1", Float(0)), Decl("c2", Float(0)), Decl("c3", Float(0)),
		MMA(m, [4]string{"c0", "c1", "c2", "c3"}, a, b),
	}
	col := Mul(t, I(2))
	g8 := Add(g, I(8))
	for i, rc := range [4][2]*Expr{{g, col}, {g, Add(col, I(1))}, {g8, col}, {g8, Add(col, I(1))}} {
		body = append(body, Store(2, Add(Mul(rc[0], I(8)), rc[1]), Var(fmt.Sprintf("c%d", i), F32)))
	}
	return &Kernel{Name: "mma_" + m.String(), Local: [3]int{32, 1, 1}, Body: body,
		Params: []Param{{Name: "a", Elem: F32}, {Name: "b", Elem: F32}, {Name: "d", Elem: F32, Write: true}}}
}

// TestMMAPrints checks that a tensor-core product prints as CUDA only,
// and that clang compiles it for the cuda target's architecture into the
// PTX instructions the statement means.
func TestMMAPrints(t *testing.T) {
	for _, m := range mmaKinds {
		for _, l := range []Language{GLSL, MSL} {
			if _, err := Print(l, mmaKernel(m)); err == nil || !strings.Contains(err.Error(), "only as CUDA") {
				t.Errorf("%s %s: printed a tensor-core product (err %v)", m, l, err)
			}
		}
	}
	// A kernel without one carries no inline PTX.
	if src, err := Print(CUDA, &Kernel{Name: "plain", Local: [3]int{1, 1, 1}}); err != nil || strings.Contains(src, "mma.sync") {
		t.Errorf("a kernel without products carries them (err %v)", err)
	}
	for _, c := range []struct {
		m          MMAKind
		call, inst string
		cvt        string
		cvts       int
	}{
		{MMATF32, "rlx_mma_tf32(c0, c1, c2, c3, ", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "cvt.rna.tf32.f32", 6},
		{MMABF16, "rlx_mma_bf16(c0, c1, c2, c3, ", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "cvt.rn.bf16x2.f32", 6},
	} {
		src, err := Print(CUDA, mmaKernel(c.m))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(src, c.call) {
			t.Fatalf("no product call in\n%s", src)
		}
		needTool(t, toolchain.Clang)
		ptx, _, err := toolchain.CUDAToPTX("mma", src)
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		text := string(ptx)
		for _, want := range []string{".target " + toolchain.PTXArch, c.inst} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: PTX lacks %q", c.m, want)
			}
		}
		if n := strings.Count(text, c.cvt); n != c.cvts {
			t.Errorf("%s: PTX has %d %s, want %d", c.m, n, c.cvt, c.cvts)
		}
	}
}

// TestMMACheck: the product is warp-wide, so never under a condition,
// and it updates variables, from operands of its kind's number.
func TestMMACheck(t *testing.T) {
	for _, m := range mmaKinds {
		k := mmaKernel(m)
		k.Body = append(k.Body[:6:6], If(Lt(Var("g", I32), Int(4)), []*Stmt{k.Body[6]}))
		if err := Check(k); err == nil || !strings.Contains(err.Error(), "mma inside a branch") {
			t.Errorf("%s: product in a branch: %v", m, err)
		}
		k = mmaKernel(m)
		k.Body[6].Args[2] = Float(1)
		if err := Check(k); err == nil || !strings.Contains(err.Error(), "accumulator 2 is not a variable") {
			t.Errorf("%s: constant accumulator: %v", m, err)
		}
		k = mmaKernel(m)
		last := len(k.Body[6].Args) - 1
		k.Body[6].Args[last] = Int(1)
		if err := Check(k); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("mma operand %d of type i32", last)) {
			t.Errorf("%s: integer operand: %v", m, err)
		}
		k = mmaKernel(m)
		k.Body[6].Args = k.Body[6].Args[:len(k.Body[6].Args)-1]
		if err := Check(k); err == nil || !strings.Contains(err.Error(), "mma statement with") {
			t.Errorf("%s: an operand short: %v", m, err)
		}
		if err := Check(mmaKernel(m)); err != nil {
			t.Errorf("%s: the product kernel: %v", m, err)
		}
	}
	k := mmaKernel(MMATF32)
	k.Body[6].I = 7
	if err := Check(k); err == nil || !strings.Contains(err.Error(), "unknown kind 7") {
		t.Errorf("unknown kind: %v", err)
	}
}
