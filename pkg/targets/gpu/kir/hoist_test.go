package kir

import (
	"strings"
	"testing"
)

// printBody prints k in GLSL and returns the lines of main's body.
func printBody(t *testing.T, k *Kernel) string {
	t.Helper()
	src, err := Print(GLSL, k)
	if err != nil {
		t.Fatalf("Print: %v", err)
	}
	return src[strings.Index(src, "void main() {\n")+len("void main() {\n"):]
}

func TestHoist(t *testing.T) {
	v := Var("v", F32)
	e := Add(v, Float(1)) // one node, used twice below
	t.Run("shared node printed once", func(t *testing.T) {
		k := checkKernel(Decl("v", Load(0, F32, Int(0))), Store(1, Int(0), Mul(e, e)))
		want := "  float v = p0.v[0];\n  float h_1 = (v + 1.0);\n  p1.v[0] = (h_1 * h_1);\n}\n"
		if got := printBody(t, k); got != want {
			t.Errorf("got\n%swant\n%s", got, want)
		}
	})
	t.Run("operands min, max and rem repeat", func(t *testing.T) {
		// Max and Min print each operand twice, so an operand used once
		// there is printed twice and must be hoisted: four copies of e
		// without it.
		k := checkKernel(Decl("v", Load(0, F32, Int(0))), Store(1, Int(0), Min(Max(e, Float(0)), Float(6))))
		got := printBody(t, k)
		if strings.Count(got, "(v + 1.0)") != 1 {
			t.Errorf("v + 1 printed %d times:\n%s", strings.Count(got, "(v + 1.0)"), got)
		}
		i := Var("i", I32)
		r := Rem(Add(i, Int(3)), Add(i, Int(1)))
		got = printBody(t, checkKernel(Decl("i", GlobalID(0)), Store(1, Int(0), Convert(F32, r))))
		if strings.Count(got, "(i + 3)") != 1 || strings.Count(got, "(i + 1)") != 1 {
			t.Errorf("rem operands printed more than once:\n%s", got)
		}
	})
	t.Run("loads stay in place", func(t *testing.T) {
		// A load under a select may only be in bounds when the select
		// picks it: it is never evaluated ahead of its statement.
		ld := Load(0, F32, Var("g", I32))
		k := checkKernel(Decl("g", GlobalID(0)),
			Store(1, Int(0), Select(Lt(Var("g", I32), Int(10)), Mul(ld, ld), Float(0))))
		if got := printBody(t, k); strings.Contains(got, "h_") {
			t.Errorf("a load was hoisted:\n%s", got)
		}
	})
	t.Run("names the kernel uses are skipped", func(t *testing.T) {
		// The kernel has its own h_1, read inside the branch where the
		// hoisted variable is declared: a hoisted h_1 would hide it.
		k := checkKernel(Decl("v", Load(0, F32, Int(0))), Decl("h_1", Float(3)),
			If(True(), []*Stmt{Store(1, Int(0), Add(Mul(e, e), Var("h_1", F32)))}))
		got := printBody(t, k)
		if !strings.Contains(got, "float h_2 = (v + 1.0);") || !strings.Contains(got, "((h_2 * h_2) + h_1)") {
			t.Errorf("hoisting reused the kernel's h_1:\n%s", got)
		}
	})
	t.Run("hoisting twice", func(t *testing.T) {
		k := checkKernel(Decl("v", Load(0, F32, Int(0))), Store(1, Int(0), Mul(e, e)), Store(1, Int(1), Add(e, e)))
		first := printBody(t, k)
		if second := printBody(t, k); first != second {
			t.Errorf("second print differs:\n%s\nfirst:\n%s", second, first)
		}
	})
	t.Run("malformed kernels", func(t *testing.T) {
		// Hoist leaves what it cannot read for Check to report.
		for _, k := range []*Kernel{
			checkKernel(nil),
			checkKernel(&Stmt{Op: SAssign, Name: "a", Args: []*Expr{nil}}),
			checkKernel(Store(1, Int(0), Mul(e, &Expr{Op: OpAdd, T: F32, Args: []*Expr{nil, e}}))),
		} {
			Hoist(k)
			if _, err := Print(GLSL, k); err == nil {
				t.Error("Print of a malformed kernel succeeded")
			}
		}
	})
}
