package kernelgen

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// wordType is the element type a copy of size-byte elements moves: bits,
// not values, so floats (NaN payloads included) copy exactly. 8-byte
// elements move as two 32-bit words, so copies never need 64-bit support.
func wordType(size int64) (kir.Type, int64, error) {
	switch size {
	case 1:
		return kir.U8, 1, nil
	case 2:
		return kir.I16, 1, nil
	case 4:
		return kir.I32, 1, nil
	case 8:
		return kir.I32, 2, nil
	}
	return 0, 0, fmt.Errorf("copy of %d-byte elements", size)
}

// memcpy copies a whole buffer.
func (g *gen) memcpy(op *lir.Memcpy) error {
	sb, db := &g.prog.Buffers[op.Src], &g.prog.Buffers[op.Dst] // Lower checked they exist
	n := min(sb.Bytes, db.Bytes)
	size := int64(4)
	for n%size != 0 || sb.Offset%size != 0 || db.Offset%size != 0 {
		size /= 2
	}
	wt, _, err := wordType(size)
	if err != nil {
		return err
	}
	g.begin([3]int{256, 1, 1})
	src, err := g.param(op.Src, wt, false, "src")
	if err != nil {
		return err
	}
	dst, err := g.param(op.Dst, wt, true, "dst")
	if err != nil {
		return err
	}
	grid, body := g.gridStride(n/size, func(i *kir.Expr) []*kir.Stmt {
		return []*kir.Stmt{dst.store(i, src.load(i))}
	})
	g.end(grid, body...)
	return nil
}

// copy lowers a strided copy: shape elements from src (offset, strides) to
// dst (offset, strides), all in elements of ElemSize bytes.
func (g *gen) copy(op *lir.Copy) error {
	size, dstOff, srcOff := op.ElemSize, op.DstOff, op.SrcOff
	shape, dstSt, srcSt := op.Shape, op.DstStrides, op.SrcStrides
	if len(dstSt) != len(shape) || len(srcSt) != len(shape) {
		return fmt.Errorf("malformed copy step")
	}
	wt, words, err := wordType(size)
	if err != nil {
		return err
	}
	if words > 1 {
		// 8-byte elements: one more, innermost dim of two words.
		shape = append(append([]int64(nil), shape...), words)
		dstSt, srcSt = scaled(dstSt, words), scaled(srcSt, words)
		dstOff, srcOff = dstOff*words, srcOff*words
	}
	g.begin([3]int{256, 1, 1})
	src, err := g.param(op.Src, wt, false, "src")
	if err != nil {
		return err
	}
	dst, err := g.param(op.Dst, wt, true, "dst")
	if err != nil {
		return err
	}
	g.shift(src, srcOff)
	g.shift(dst, dstOff)
	grid, body := g.gridStride(tensor.NumElements(shape), func(i *kir.Expr) []*kir.Stmt {
		pre, offs := g.decompose(i, shape, dstSt, srcSt)
		return append(pre, dst.store(offs[0], src.load(offs[1])))
	})
	g.end(grid, body...)
	return nil
}

// scaled multiplies strides by w and appends the unit stride of the new
// innermost dim.
func scaled(st []int64, w int64) []int64 {
	out := make([]int64, len(st)+1)
	for i, v := range st {
		out[i] = v * w
	}
	out[len(st)] = 1
	return out
}

// fill sets every element of the buffer to a constant.
func (g *gen) fill(op *lir.Fill) error {
	dt := op.DType
	et, err := g.elemType(dt)
	if err != nil {
		return err
	}
	g.begin([3]int{256, 1, 1})
	dst, err := g.param(op.Dst, et, true, "dst")
	if err != nil {
		return err
	}
	v := castTo(kir.Float(op.Value), dt)
	if dt == tensor.I64 {
		v = kir.Const(kir.I64, int64(op.Value), 0)
	}
	grid, body := g.gridStride(g.elems(op.Dst, et.Size()), func(i *kir.Expr) []*kir.Stmt {
		return []*kir.Stmt{dst.store(i, v)}
	})
	g.end(grid, body...)
	return nil
}

// gather lowers x[o, idx[j], in] → out[o, j, in]. Negative indices count
// from the end; an index out of range is clamped (the CPU target reports
// it; a kernel has no way to fail).
func (g *gen) gather(op *lir.Gather) error {
	outer, axisLen, inner, size, idt := op.Outer, op.AxisLen, op.Inner, op.ElemSize, op.IdxDType
	wt, words, err := wordType(size)
	if err != nil {
		return err
	}
	it, err := g.elemType(idt)
	if err != nil {
		return err
	}
	nidx := g.elems(op.Idx, it.Size())
	g.begin([3]int{256, 1, 1})
	x, err := g.param(op.X, wt, false, "x")
	if err != nil {
		return err
	}
	idx, err := g.param(op.Idx, it, false, "idx")
	if err != nil {
		return err
	}
	out, err := g.param(op.Out, wt, true, "out")
	if err != nil {
		return err
	}
	I := kir.Int
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	inner *= words
	grid, body := g.gridStride(outer*nidx*inner, func(i *kir.Expr) []*kir.Stmt {
		raw := kir.Convert(kir.I32, idx.load(kir.Rem(kir.Div(i, I(inner)), I(nidx))))
		return []*kir.Stmt{
			kir.Decl("j", raw),
			kir.Assign("j", kir.Select(kir.Lt(VI("j"), I(0)), kir.Add(VI("j"), I(axisLen)), VI("j"))),
			kir.Assign("j", kir.Min(kir.Max(VI("j"), I(0)), I(max(axisLen-1, 0)))),
			kir.Decl("o", kir.Div(i, I(nidx*inner))),
			out.store(i, x.load(kir.Add(kir.Mul(kir.Add(kir.Mul(VI("o"), I(axisLen)), VI("j")), I(inner)), kir.Rem(i, I(inner))))),
		}
	})
	g.end(grid, body...)
	return nil
}

// scatter writes the updates over out in order, in one invocation: the
// order is the meaning (of two updates of one index the later wins, as on
// the cpu target), and a scatter's updates are few (a cache row, a mask's
// cells). An index out of range is skipped: a kernel cannot stop the run
// (the cpu target reports it).
func (g *gen) scatter(op *lir.Scatter) error {
	n, m, size, idt := op.N, op.M, op.ElemSize, op.IdxDType
	wt, words, err := wordType(size)
	if err != nil {
		return err
	}
	it, err := g.elemType(idt)
	if err != nil {
		return err
	}
	g.begin([3]int{1, 1, 1})
	out, err := g.param(op.Out, wt, true, "out")
	if err != nil {
		return err
	}
	idx, err := g.param(op.Idx, it, false, "idx")
	if err != nil {
		return err
	}
	upd, err := g.param(op.Upd, wt, false, "upd")
	if err != nil {
		return err
	}
	I := kir.Int
	VI := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	var moves []*kir.Stmt
	for w := range words {
		moves = append(moves, out.store(kir.Add(kir.Mul(VI("j"), I(words)), I(w)), upd.load(kir.Add(kir.Mul(VI("k"), I(words)), I(w)))))
	}
	body := []*kir.Stmt{
		kir.If(kir.Eq(kir.GlobalID(0), I(0)), []*kir.Stmt{
			kir.For("k", I(0), I(m), I(1),
				kir.Decl("j", kir.Convert(kir.I32, idx.load(VI("k")))),
				kir.Assign("j", kir.Select(kir.Lt(VI("j"), I(0)), kir.Add(VI("j"), I(n)), VI("j"))),
				kir.If(kir.And(kir.Ge(VI("j"), I(0)), kir.Lt(VI("j"), I(n))), moves)),
		}),
	}
	g.end([3]int{1, 1, 1}, body...)
	return nil
}

// iota writes 0, 1, ..., n-1.
func (g *gen) iota(op *lir.Iota) error {
	n, dt := op.N, op.DType
	et, err := g.elemType(dt)
	if err != nil {
		return err
	}
	g.begin([3]int{256, 1, 1})
	dst, err := g.param(op.Out, et, true, "dst")
	if err != nil {
		return err
	}
	grid, body := g.gridStride(n, func(i *kir.Expr) []*kir.Stmt {
		return []*kir.Stmt{dst.store(i, castTo(i, dt))}
	})
	g.end(grid, body...)
	return nil
}
