// Package kernelgen lowers each kernel launch of a specialized program
// (the LIR that the CPU runtime interprets: "ew", "matmul", "conv2d", ...)
// to GPU kernels in the kernel IR, with launch geometry computed from the
// concrete shapes.
//
// Shapes, strides and buffer offsets are constants in the kernels: a
// program is specialized per binding anyway, and constant geometry lets
// every GPU compiler fold the index arithmetic. Each kernel parameter is a
// whole device buffer (the arena, one weight, an input or an output); the
// element offset of the tensor inside it is part of the kernel's index
// arithmetic, so no target needs aligned sub-buffer bindings.
package kernelgen

import (
	"fmt"
	"slices"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Launch is one kernel launch: the kernel, how many workgroups, and the
// program buffer bound to each of the kernel's parameters.
type Launch struct {
	Kernel *kir.Kernel
	Groups [3]int
	Args   []int
	Src    string // the source operation, for errors and profiles
}

// UnsupportedError names an operation a GPU target has no kernel for.
type UnsupportedError struct {
	Kernel string // the LIR kernel
	Src    string
	Why    string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Src, e.Kernel, e.Why)
}

// maxGroups is the workgroup count per axis every Vulkan device supports.
const maxGroups = 65535

// Lower turns every step of prog into GPU launches.
func Lower(prog *artifact.Program) ([]Launch, error) {
	var out []Launch
	for i := range prog.Steps {
		s := &prog.Steps[i]
		g := &gen{prog: prog, step: s}
		if err := g.lower(); err != nil {
			if _, ok := err.(*UnsupportedError); ok {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %s: %v", s.Src, s.Kernel, err)
		}
		for _, l := range g.launches {
			l.Src = s.Src
			out = append(out, l)
		}
	}
	return out, nil
}

// gen lowers one step; it may emit several launches (pad: fill, then copy).
type gen struct {
	prog     *artifact.Program
	step     *artifact.Step
	k        *kir.Kernel
	args     []int
	launches []Launch
	nvar     int
}

func (g *gen) unsupported(format string, args ...any) error {
	return &UnsupportedError{Kernel: g.step.Kernel, Src: g.step.Src, Why: fmt.Sprintf(format, args...)}
}

// begin starts a kernel named after its kind with the given workgroup size.
func (g *gen) begin(kind string, local [3]int) {
	g.k = &kir.Kernel{Name: kind, Local: local}
	g.args = nil
}

// end finishes the kernel with its body and workgroup counts.
func (g *gen) end(groups [3]int, body ...*kir.Stmt) {
	g.k.Body = body
	g.launches = append(g.launches, Launch{Kernel: g.k, Groups: groups, Args: g.args})
}

// elemType maps a tensor dtype to its kernel element type.
func (g *gen) elemType(dt tensor.DType) (kir.Type, error) {
	switch dt {
	case tensor.F32:
		return kir.F32, nil
	case tensor.F16:
		return kir.F16, nil
	case tensor.BF16:
		return kir.BF16, nil
	case tensor.I64:
		return kir.I64, nil
	case tensor.I32:
		return kir.I32, nil
	case tensor.I16:
		return kir.I16, nil
	case tensor.I8:
		return kir.I8, nil
	case tensor.U8:
		return kir.U8, nil
	case tensor.Bool:
		return kir.Bool, nil
	}
	return 0, g.unsupported("%s tensors are not supported on GPU targets", dt)
}

// operand is a parameter bound to one program buffer: its index in the
// kernel and the element offset of the tensor in the device buffer.
type operand struct {
	p    int
	elem kir.Type
	base int64
}

// param adds a parameter for step argument a (an index into Step.Args).
func (g *gen) param(a int, elem kir.Type, write bool, name string) (operand, error) {
	if a >= len(g.step.Args) {
		return operand{}, fmt.Errorf("malformed step: argument %d of %d", a, len(g.step.Args))
	}
	b := g.step.Args[a]
	if b < 0 || b >= len(g.prog.Buffers) {
		return operand{}, fmt.Errorf("malformed step: buffer %d of %d", b, len(g.prog.Buffers))
	}
	off := g.prog.Buffers[b].Offset
	if off%int64(elem.Size()) != 0 {
		return operand{}, fmt.Errorf("buffer %d at byte %d is not aligned for %s", b, off, elem)
	}
	g.k.Params = append(g.k.Params, kir.Param{Name: name, Elem: elem, Write: write})
	g.args = append(g.args, b)
	return operand{p: len(g.k.Params) - 1, elem: elem, base: off / int64(elem.Size())}, nil
}

// elems is how many elements of size bytes program buffer argument a holds.
func (g *gen) elems(a int, size int) int64 {
	return g.prog.Buffers[g.step.Args[a]].Bytes / int64(size)
}

// at is the index expression base + idx.
func (o operand) at(idx *kir.Expr) *kir.Expr {
	if o.base == 0 {
		return idx
	}
	return kir.Add(kir.Int(o.base), idx)
}

// load reads element idx (relative to the tensor) as its compute type;
// half floats widen to f32.
func (o operand) load(idx *kir.Expr) *kir.Expr {
	e := kir.Load(o.p, o.elem, o.at(idx))
	switch o.elem {
	case kir.F16:
		return kir.F16ToF32(e)
	case kir.BF16:
		return kir.BF16ToF32(e)
	}
	return e
}

// store writes v (the compute type of the element type, f32 for halves).
func (o operand) store(idx, v *kir.Expr) *kir.Stmt {
	switch o.elem {
	case kir.F16:
		v = kir.F32ToF16(v)
	case kir.BF16:
		v = kir.F32ToBF16(v)
	}
	return kir.Store(o.p, o.at(idx), v)
}

// fresh returns a new variable name.
func (g *gen) fresh(prefix string) string {
	g.nvar++
	return fmt.Sprintf("%s%d", prefix, g.nvar)
}

// gridStride is the launch shape of a one-thread-per-element kernel over n
// elements: workgroups of 256 along x, capped, with the body inside a
// grid-stride loop over i.
func (g *gen) gridStride(n int64, body func(i *kir.Expr) []*kir.Stmt) ([3]int, []*kir.Stmt) {
	const local = 256
	groups := (n + local - 1) / local
	groups = max(1, min(groups, maxGroups))
	stride := groups * local
	i := kir.Var("i", kir.I32)
	loop := kir.For("i", kir.GlobalID(0), kir.Int(n), kir.Int(stride), body(i)...)
	return [3]int{int(groups), 1, 1}, []*kir.Stmt{loop}
}

// decompose splits linear index i over shape into per-dim coordinates and
// returns Σ coord·strides[k][d] for each stride vector, as expressions over
// fresh variables it declares.
func (g *gen) decompose(i *kir.Expr, shape []int64, strides ...[]int64) ([]*kir.Stmt, []*kir.Expr) {
	var ss []*kir.Stmt
	offs := make([]*kir.Expr, len(strides))
	for k := range offs {
		offs[k] = kir.Int(0)
	}
	// A stride vector equal to the contiguous strides of shape is i itself.
	contig := tensor.Strides(shape)
	rest := []int{}
	for k, st := range strides {
		if slices.Equal(st, contig) {
			offs[k] = i
		} else {
			rest = append(rest, k)
		}
	}
	if len(rest) == 0 {
		return nil, offs
	}
	rem := i
	for d := len(shape) - 1; d >= 0; d-- {
		var c *kir.Expr
		if d == 0 {
			c = rem
		} else {
			cv := g.fresh("c")
			ss = append(ss, kir.Decl(cv, kir.Rem(rem, kir.Int(shape[d]))))
			c = kir.Var(cv, kir.I32)
			rv := g.fresh("q")
			ss = append(ss, kir.Decl(rv, kir.Div(rem, kir.Int(shape[d]))))
			rem = kir.Var(rv, kir.I32)
		}
		for _, k := range rest {
			if st := strides[k][d]; st != 0 && shape[d] != 1 {
				offs[k] = addConst(offs[k], kir.Mul(c, kir.Int(st)))
			}
		}
	}
	return ss, offs
}

func addConst(a, b *kir.Expr) *kir.Expr {
	if a.Op == kir.OpConst && a.I == 0 {
		return b
	}
	return kir.Add(a, b)
}

// checkSize refuses element counts the kernels' i32 indices cannot reach.
func (g *gen) checkSize(n int64) error {
	if n >= 1<<31 {
		return g.unsupported("%d elements exceed the 2^31 a GPU kernel indexes", n)
	}
	return nil
}

func (g *gen) lower() error {
	for _, b := range g.step.Args {
		if b >= 0 && b < len(g.prog.Buffers) {
			if err := g.checkSize(g.prog.Buffers[b].Bytes); err != nil {
				return err
			}
		}
	}
	switch g.step.Kernel {
	case "ew":
		return g.elementwise()
	case "matmul":
		return g.matmul()
	case "conv2d":
		return g.conv2d()
	case "maxpool2d", "avgpool2d":
		return g.pool2d()
	case "reduce":
		return g.reduce()
	case "argreduce":
		return g.argreduce()
	case "softmax":
		return g.softmax()
	case "layernorm", "add_layernorm":
		return g.layernorm()
	case "attention":
		return g.attention()
	case "memcpy":
		return g.memcpy()
	case "copy":
		return g.copy()
	case "fill":
		return g.fill()
	case "gather":
		return g.gather()
	case "iota":
		return g.iota()
	}
	return g.unsupported("no GPU kernel for LIR kernel %q", g.step.Kernel)
}

func (g *gen) need(ints, args int) error {
	if len(g.step.Ints) < ints || len(g.step.Args) < args {
		return fmt.Errorf("malformed step: %d ints and %d buffers, want %d and %d", len(g.step.Ints), len(g.step.Args), ints, args)
	}
	return nil
}
