// Package kernelgen lowers each step of a specialized LIR program (one
// typed kernel launch: lir.Elementwise, lir.MatMul, lir.Conv2D, ...) to
// GPU kernels in the kernel IR, with launch geometry computed from the
// concrete shapes.
//
// Shapes and strides are constants in the kernels: a program is
// specialized per binding anyway, and constant geometry lets every GPU
// compiler fold the index arithmetic. Each kernel parameter is a whole
// device buffer (the arena, one weight, an input or an output), so no
// target needs aligned sub-buffer bindings; the element offset of the
// tensor inside it is passed at launch (kir.Kernel.Offsets, the Launch's
// Offsets), so launches that compute the same thing on tensors at
// different places (the steps of an unrolled recurrence, say) share one
// kernel. A kernel with more parameters than launch offsets fit
// (kir.MaxOffsets) has them compiled in instead.
package kernelgen

import (
	"fmt"
	"math"
	"slices"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Launch is one kernel launch: the kernel, how many workgroups, the
// program buffer bound to each of the kernel's parameters and, where the
// kernel takes them (Kernel.Offsets), the element offset of each
// parameter's tensor in its buffer.
type Launch struct {
	Kernel  *kir.Kernel
	Groups  [3]int
	Args    []lir.Buf
	Offsets []int64 // one per Args entry, in elements of the parameter's type; nil without Kernel.Offsets
	Src     string  // the source operation, for errors and profiles
	// Precision is the operand type of a product's launches that
	// multiply on tensor cores ("tf32", "bf16": Options.Precision, on a
	// tile that takes them); "" for f32.
	Precision string
}

// UnsupportedError names an operation a GPU target has no kernel for.
type UnsupportedError struct {
	Kernel string // the LIR step's kind
	Src    string
	Why    string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Src, e.Kernel, e.Why)
}

// maxGroups is the workgroup count per axis every Vulkan device supports.
const maxGroups = 65535

// Options are the choices of one lowering that the program does not
// make.
type Options struct {
	// Precision is what the tiled products (matmuls and implicit-GEMM
	// convolutions) multiply in: "" or "fp32", f32 multiply-adds; "tf32"
	// or "bf16", tensor cores (kir.SMMA of that kind, which only CUDA
	// prints; sm_80 and later), operands rounded to that type and sums
	// kept in f32. Products on the smallest tile, GEMVs and attention
	// stay f32.
	Precision string
}

// mmaKinds are the tensor-core products by Options.Precision.
var mmaKinds = map[string]kir.MMAKind{"tf32": kir.MMATF32, "bf16": kir.MMABF16}

// Lower turns every step of prog into GPU launches. A step of a kind no
// GPU kernel implements (the CPU's packed and channels-last kernels) is an
// *UnsupportedError. The launches address the buffers of the program
// returned: prog's, plus scratch where a kernel needs it (see lower).
func Lower(prog *lir.Program, opts Options) ([]Launch, *lir.Program, error) {
	if opts.Precision == "" || opts.Precision == "fp32" {
		return lower(prog, planGemm, mmaOff, 0)
	}
	kind, ok := mmaKinds[opts.Precision]
	if !ok {
		return nil, nil, fmt.Errorf("unknown precision %q for products", opts.Precision)
	}
	return lower(prog, planGemm, mmaPTX, kind)
}

// mmaMode is how the tiled products multiply.
type mmaMode uint8

const (
	mmaOff mmaMode = iota // f32 multiply-adds in each invocation's micro-tile
	mmaPTX                // tensor-core products (kir.SMMA): CUDA only
	// mmaEmulated is mmaPTX's kernel with each warp's product computed
	// by its lanes from workgroup memory (operands rounded the same
	// way), in any language: tests run it on Vulkan, so everything but
	// the product's own fragment layout runs without an NVIDIA GPU.
	mmaEmulated
)

// lower is Lower with the GEMM kernels' tiling and K split chosen by plan
// (tests run every tiling on every shape) and their products by mma, of
// kind where they take tensor cores.
//
// Kernels that need scratch beyond workgroup memory (a split GEMM's
// partial sums) share one arena buffer after the program's arena: steps
// run one after another, so one region serves them all. The program
// returned has that buffer appended and its arena grown, or is prog
// itself where no step needs scratch.
func lower(prog *lir.Program, plan func(m, n, k, batch int64) (gemmTiling, int64), mma mmaMode, kind kir.MMAKind) ([]Launch, *lir.Program, error) {
	if err := prog.CheckRefs(); err != nil {
		return nil, nil, err
	}
	withScratch := *prog
	withScratch.Buffers = append(append([]lir.Buffer(nil), prog.Buffers...),
		lir.Buffer{Kind: lir.BufArena, Offset: alignUp(prog.ArenaBytes, scratchAlign)})
	scratch := lir.Buf(len(prog.Buffers))
	var out []Launch
	var scratchBytes int64
	for i := range prog.Steps {
		s := &prog.Steps[i]
		g := &gen{prog: &withScratch, step: s, plan: plan, mma: mma, kind: kind, scratch: scratch}
		if err := g.lower(); err != nil {
			if _, ok := err.(*UnsupportedError); ok {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("%s: %s: %v", s.Src, s.Kind(), err)
		}
		scratchBytes = max(scratchBytes, g.scratchBytes)
		for _, l := range g.launches {
			l.Src = s.Src
			out = append(out, l)
		}
	}
	if scratchBytes == 0 {
		return out, prog, nil
	}
	sb := &withScratch.Buffers[scratch]
	sb.Bytes = scratchBytes
	withScratch.ArenaBytes = sb.Offset + scratchBytes
	return out, &withScratch, nil
}

// scratchAlign is the alignment of the scratch buffer in the arena (the
// largest any GPU asks of a storage buffer binding's offset).
const scratchAlign = 256

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// gen lowers one step to its launches.
type gen struct {
	prog     *lir.Program
	step     *lir.Step
	k        *kir.Kernel
	args     []lir.Buf
	bases    []int64 // each parameter's element offset in its buffer
	launches []Launch
	nvar     int
	// plan is the GEMM kernels' tiling and K split of an M×N×K product,
	// batch times over.
	plan func(m, n, k, batch int64) (gemmTiling, int64)
	// mma is how the tiled products multiply, kind the tensor-core
	// product where they take one, and precision that of the step's
	// product where it does (its launches' Precision).
	mma       mmaMode
	kind      kir.MMAKind
	precision string
	// scratch is the program's scratch buffer, and scratchBytes how much
	// of it the step's kernels use.
	scratch      lir.Buf
	scratchBytes int64
}

func (g *gen) unsupported(format string, args ...any) error {
	return &UnsupportedError{Kernel: g.step.Kind(), Src: g.step.Src, Why: fmt.Sprintf(format, args...)}
}

// begin starts a kernel named after the step's kind with the given
// workgroup size.
func (g *gen) begin(local [3]int) {
	g.k = &kir.Kernel{Name: g.step.Kind(), Local: local}
	g.args = nil
	g.bases = nil
}

// end finishes the kernel with its body and workgroup counts. The body
// indexes each parameter relative to its tensor; the tensors' offsets
// become launch offsets, or, for a kernel with more parameters than
// those fit, constants added to every index.
func (g *gen) end(groups [3]int, body ...*kir.Stmt) {
	g.k.Body = body
	l := Launch{Kernel: g.k, Groups: groups, Args: g.args, Precision: g.precision}
	if len(g.k.Params) > 0 && len(g.k.Params) <= kir.MaxOffsets {
		g.k.Offsets = true
		l.Offsets = g.bases
	} else {
		addBases(body, g.bases)
	}
	g.launches = append(g.launches, l)
}

// addBases adds bases[p] to the index of every load from and store to
// parameter p, each node once (nodes may be shared between trees).
func addBases(body []*kir.Stmt, bases []int64) {
	seen := map[*kir.Expr]bool{}
	at := func(p int, idx *kir.Expr) *kir.Expr {
		if bases[p] == 0 {
			return idx
		}
		return kir.Add(kir.Int(bases[p]), idx)
	}
	var expr func(e *kir.Expr)
	expr = func(e *kir.Expr) {
		if e == nil || seen[e] {
			return
		}
		seen[e] = true
		for _, a := range e.Args {
			expr(a)
		}
		if e.Op == kir.OpLoad {
			e.Args[0] = at(int(e.I), e.Args[0])
		}
	}
	var stmts func(ss []*kir.Stmt)
	stmts = func(ss []*kir.Stmt) {
		for _, s := range ss {
			for _, a := range s.Args {
				expr(a)
			}
			if s.Op == kir.SStore {
				s.Args[0] = at(s.I, s.Args[0])
			}
			stmts(s.Body)
			stmts(s.Else)
		}
	}
	stmts(body)
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
// kernel and its element type. Its indices are relative to the tensor;
// where the tensor lies in the buffer is g.bases[p].
type operand struct {
	p    int
	elem kir.Type
}

// param adds a parameter bound to program buffer b.
func (g *gen) param(b lir.Buf, elem kir.Type, write bool, name string) (operand, error) {
	if b < 0 || int(b) >= len(g.prog.Buffers) {
		return operand{}, fmt.Errorf("malformed step: buffer %d of %d", b, len(g.prog.Buffers))
	}
	off := g.prog.Buffers[b].Offset
	if off%int64(elem.Size()) != 0 {
		return operand{}, fmt.Errorf("buffer %d at byte %d is not aligned for %s", b, off, elem)
	}
	if end := (off + g.prog.Buffers[b].Bytes) / int64(elem.Size()); end > math.MaxInt32 {
		return operand{}, g.unsupported("buffer %d ends at element %d of its device buffer, past the 2^31 a GPU kernel indexes", b, end)
	}
	g.k.Params = append(g.k.Params, kir.Param{Name: name, Elem: elem, Write: write})
	g.args = append(g.args, b)
	g.bases = append(g.bases, off/int64(elem.Size()))
	return operand{p: len(g.k.Params) - 1, elem: elem}, nil
}

// shift moves operand o's tensor by n elements within its buffer.
func (g *gen) shift(o operand, n int64) { g.bases[o.p] += n }

// elems is how many elements of size bytes program buffer b holds (b is
// one of the step's operands, which Lower checked exist).
func (g *gen) elems(b lir.Buf, size int) int64 {
	return g.prog.Buffers[b].Bytes / int64(size)
}

// load reads element idx (relative to the tensor) as its compute type;
// half floats widen to f32.
func (o operand) load(idx *kir.Expr) *kir.Expr {
	e := kir.Load(o.p, o.elem, idx)
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
	return kir.Store(o.p, idx, v)
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
	for _, r := range g.step.Op.Refs() { // Lower checked they exist
		if err := g.checkSize(g.prog.Buffers[r.Buf].Bytes); err != nil {
			return err
		}
	}
	switch op := g.step.Op.(type) {
	case *lir.Elementwise:
		return g.elementwise(op)
	case *lir.MatMul:
		return g.matmul(foldBatch(op))
	case *lir.Conv2D:
		return g.conv2d(op)
	case *lir.Pool2D:
		return g.pool2d(op)
	case *lir.Reduce:
		return g.reduce(op)
	case *lir.ArgReduce:
		return g.argreduce(op)
	case *lir.TopK:
		return g.topk(op)
	case *lir.Scatter:
		return g.scatter(op)
	case *lir.Softmax:
		return g.softmax(op)
	case *lir.LayerNorm:
		return g.layernorm(norm{x: op.X, r: lir.NoBuf, scale: op.Scale, bias: op.Bias, out: op.Out, sum: lir.NoBuf,
			rows: op.Rows, cols: op.Cols, rms: op.RMS, eps: op.Eps})
	case *lir.AddLayerNorm:
		return g.layernorm(norm{x: op.A, r: op.B, scale: op.Scale, bias: op.Bias, out: op.Out, sum: op.Sum,
			rows: op.Rows, cols: op.Cols, eps: op.Eps})
	case *lir.Attention:
		return g.attention(op)
	case *lir.Memcpy:
		return g.memcpy(op)
	case *lir.Copy:
		return g.copy(op)
	case *lir.Fill:
		return g.fill(op)
	case *lir.Gather:
		return g.gather(op)
	case *lir.Iota:
		return g.iota(op)
	}
	return g.unsupported("no GPU kernel for LIR kernel %q", g.step.Kind())
}
