package hir

import (
	"fmt"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestEwOpsInHIR ties the HIR op table to lir.EwOps, the one table of
// elementwise instructions: every instruction that is also a MIR op (all
// but the bytecode's own) is an HIR op of the same name and arity, and
// every elementwise HIR op is such an instruction, or clamp (which
// compiles to max and min).
func TestEwOpsInHIR(t *testing.T) {
	for op := lir.EwOp(1); op < lir.NumEwOps; op++ {
		info := op.Info()
		if info.Bytecode {
			continue
		}
		sp, ok := lookupOp(info.Name)
		switch {
		case !ok:
			t.Errorf("lir.EwOps has %s but HIR has no op of that name (pkg/hir/ops.go derives the plain unary and binary ops; write a spec for one with attributes)", info.Name)
		case !sp.elementwise:
			t.Errorf("%s: its HIR spec is not marked elementwise", info.Name)
		case sp.minArgs != info.Arity || sp.maxArgs != info.Arity:
			t.Errorf("%s: HIR takes %d to %d operands, lir.EwOps %d", info.Name, sp.minArgs, sp.maxArgs, info.Arity)
		}
	}
	for _, name := range opNames() {
		if !opTable[name].elementwise || name == "clamp" {
			continue
		}
		if op, ok := lir.ParseEwOp(name); !ok || op.Info().Bytecode {
			t.Errorf("HIR op %s is elementwise but no row of lir.EwOps (pkg/lir/ew.go): the backends would not know it", name)
		}
	}
}

// ewDerived reports an HIR op that buildOps derives from lir.EwOps.
// TestEwOpsInfer covers its inference, so it needs no row in inferCases.
func ewDerived(name string) bool {
	op, ok := lir.ParseEwOp(name)
	return ok && !op.Info().Bytecode && !hirEwSpecial[op]
}

// TestEwOpsInfer checks the inference of every op buildOps derives from
// lir.EwOps, from its row: operands of a dtype in its class give the
// broadcast shape with their dtype (bool for a comparison), and operands
// of a dtype outside it give the message that names the class.
func TestEwOpsInfer(t *testing.T) {
	inClass := []tensor.DType{tensor.F32, tensor.F16, tensor.I32, tensor.Bool}
	outClass := []tensor.DType{tensor.I64, tensor.Bool, tensor.F32}
	for op := lir.EwOp(1); op < lir.NumEwOps; op++ {
		info := op.Info()
		if !ewDerived(info.Name) {
			continue
		}
		_, want := operandClass(info.Operands)
		for _, dt := range inClass {
			if !info.Operands.Admits(dt) {
				continue
			}
			res := dt
			if info.BoolResult {
				res = tensor.Bool
			}
			tc := inferCase{sig: fmt.Sprintf("x: %s[batch, 4]", dt), body: fmt.Sprintf("y = %s(x)", info.Name), want: fmt.Sprintf("%s[batch, 4]", res)}
			if info.Arity == 2 {
				tc.sig += fmt.Sprintf(", z: %s[4]", dt)
				tc.body = fmt.Sprintf("y = %s(x, z)", info.Name)
			}
			t.Run(tc.body+" "+dt.String(), func(t *testing.T) { runInfer(t, tc) })
		}
		for _, dt := range outClass {
			if info.Operands.Admits(dt) {
				continue
			}
			tc := inferCase{sig: fmt.Sprintf("x: %s[4]", dt), body: fmt.Sprintf("y = %s(x)", info.Name),
				err: fmt.Sprintf("%s: x must be %s, found %s", info.Name, want, dt)}
			if info.Arity == 2 {
				tc.sig += fmt.Sprintf(", z: %s[4]", dt)
				tc.body = fmt.Sprintf("y = %s(x, z)", info.Name)
			}
			t.Run(tc.body+" "+dt.String(), func(t *testing.T) { runInfer(t, tc) })
			break
		}
	}
}
