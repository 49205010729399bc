// Package runtime runs CPU programs (lir.Program) from an artifact: it
// resolves buffers to bytes (arena, mapped weights, inputs, outputs) and
// launches each step's kernel. It imports no compiler package.
package runtime

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Exec is a validated program bound to its weights, ready to run many times,
// concurrently. Arenas are pooled so steady-state runs do not allocate one.
type Exec struct {
	prog    *lir.Program
	weights [][]byte
	arenas  sync.Pool   // *runState: one run's arena and scratch
	native  *nativeCode // the program's native code, mapped; nil without
}

// New validates p against the weights it references: every buffer lies
// inside its backing store, every step names valid buffers and writes no
// weight or input (lir's CheckRefs), and packed weights are in this CPU's
// layout. Weights are the manifest's weights, in order. A program with
// native code gets the object of the best CPU level this machine runs
// mapped (a LevelError when there is none); Close unmaps it.
func New(p *lir.Program, weights [][]byte) (*Exec, error) {
	for i, b := range p.Buffers {
		if b.Bytes < 0 || b.Offset < 0 {
			return nil, fmt.Errorf("buffer %d has a negative size or offset", i)
		}
		switch b.Kind {
		case lir.BufArena:
			if b.Offset+b.Bytes > p.ArenaBytes {
				return nil, fmt.Errorf("buffer %d runs past the arena (%d+%d > %d)", i, b.Offset, b.Bytes, p.ArenaBytes)
			}
		case lir.BufWeight:
			if b.Index < 0 || b.Index >= len(weights) || b.Offset+b.Bytes > int64(len(weights[b.Index])) {
				return nil, fmt.Errorf("buffer %d refers to a missing or short weight %d", i, b.Index)
			}
		case lir.BufInput:
			if b.Index < 0 || b.Index >= len(p.Inputs) {
				return nil, fmt.Errorf("buffer %d refers to missing input %d", i, b.Index)
			}
		case lir.BufOutput:
			if b.Index < 0 || b.Index >= len(p.Outputs) {
				return nil, fmt.Errorf("buffer %d refers to missing output %d", i, b.Index)
			}
		default:
			return nil, fmt.Errorf("buffer %d has unknown kind %q", i, b.Kind)
		}
	}
	for _, s := range append(append([]lir.Slot(nil), p.Inputs...), p.Outputs...) {
		if s.Buffer < 0 || s.Buffer >= len(p.Buffers) {
			return nil, fmt.Errorf("slot %s refers to missing buffer %d", s.Name, s.Buffer)
		}
		if _, ok := tensor.ParseDType(s.DType); !ok {
			return nil, fmt.Errorf("slot %s has unknown dtype %q", s.Name, s.DType)
		}
	}
	if err := p.CheckRefs(); err != nil {
		return nil, err
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		var packed lir.Buf
		switch op := s.Op.(type) {
		case *lir.PackedMatMul:
			packed = op.B
		case *lir.PackedConv1x1:
			packed = op.W
		default:
			continue
		}
		// Packed weights carry their layout; a CPU with another micro-kernel
		// must not read them as its own.
		b := p.Buffers[packed]
		if b.Kind != lir.BufWeight {
			return nil, fmt.Errorf("step %d (%s): packed operand is not a weight", i, s.Src)
		}
		w := weights[b.Index]
		if got := gemm.PackedHeaderLayout(tensor.AsF32(w)); got != gemm.PackedLayout() {
			return nil, fmt.Errorf("step %d (%s): the artifact packs weights as %s, but this CPU's kernels need %s: rebuild the artifact for this machine (rlxc build --target cpu)", i, s.Src, got, gemm.PackedLayout())
		}
	}
	e := &Exec{prog: p, weights: weights}
	if p.Native != nil {
		// Native code does not check its bounds: the buffers of every
		// call must be the sizes its function was compiled for.
		if err := p.Verify(); err != nil {
			return nil, err
		}
		// The loader has validated every object (ValidateNative); the one
		// mapped is validated again by native.Load itself.
		nc, err := loadNative(p.Native)
		if err != nil {
			return nil, err
		}
		e.native = nc
	}
	e.arenas.New = func() any { return newRunState(p) }
	return e, nil
}

// fits reports whether ts are tensors of the program's output dtypes and
// shapes, one per output, with data of their full size.
func (e *Exec) fits(ts []*tensor.Tensor) bool {
	outs := e.prog.Outputs
	if len(ts) != len(outs) {
		return false
	}
	for i, s := range outs {
		t := ts[i]
		if t == nil || t.DType.String() != s.DType || !slices.Equal(t.Shape, s.Shape) ||
			len(t.Data) != int(tensor.NumElements(t.Shape))*t.DType.Size() {
			return false
		}
	}
	return true
}

// Close unmaps the program's native code; no run may be in progress or
// start after it.
func (e *Exec) Close() error {
	if e.native == nil {
		return nil
	}
	err := e.native.module.Close()
	e.native = nil
	return err
}

// NativeLevel is the CPU level of the native code the program runs, ""
// when it has none.
func (e *Exec) NativeLevel() string {
	if e.native == nil {
		return ""
	}
	return e.native.level
}

// Program returns the program being run.
func (e *Exec) Program() *lir.Program { return e.prog }

// Profile receives the time of each step when profiling: its wall time,
// and busy, the run time of its parallel chunks summed over the threads
// that ran them (0 for a step that split no work over the pool).
type Profile func(step int, s *lir.Step, wall, busy time.Duration)

// Run executes the program on inputs (already checked against the program's
// input slots by the caller) and returns newly allocated outputs.
func (e *Exec) Run(pool *parallel.Pool, inputs []*tensor.Tensor, prof Profile) (outs []*tensor.Tensor, err error) {
	return e.RunInto(pool, nil, inputs, prof)
}

// RunInto is Run with the outputs written into dst's tensors when dst holds
// one tensor per output of exactly its dtype and shape (the outputs of an
// earlier run), and returned; any other dst is ignored and the outputs are
// allocated. A loop that passes each run's outputs to the next spares the
// allocation and, on pages the Go runtime has returned to the system, the
// kernel's first touch of them (docs/perf/kernels.md has the measurement).
// The caller must not use dst's old contents.
func (e *Exec) RunInto(pool *parallel.Pool, dst, inputs []*tensor.Tensor, prof Profile) (outs []*tensor.Tensor, err error) {
	p := e.prog
	if prof != nil {
		pool.Measure(true)
		defer pool.Measure(false)
	}
	if len(inputs) != len(p.Inputs) {
		return nil, fmt.Errorf("got %d inputs, the program takes %d", len(inputs), len(p.Inputs))
	}
	st := e.arenas.Get().(*runState)
	defer e.arenas.Put(st)
	defer st.release() // no pointer to this run's tensors outlives it
	arena := st.arena
	outs = dst
	if !e.fits(dst) {
		outs = make([]*tensor.Tensor, len(p.Outputs))
		for i, s := range p.Outputs {
			dt, _ := tensor.ParseDType(s.DType)
			outs[i] = tensor.New(dt, s.Shape...)
		}
	}
	bufs := st.bufs
	for i, b := range p.Buffers {
		var base []byte
		switch b.Kind {
		case lir.BufArena:
			base = arena
		case lir.BufWeight:
			base = e.weights[b.Index]
		case lir.BufInput:
			base = inputs[b.Index].Data
		case lir.BufOutput:
			base = outs[b.Index].Data
		}
		if b.Offset+b.Bytes > int64(len(base)) {
			return nil, fmt.Errorf("buffer %d (%s) needs %d bytes, has %d", i, b.Kind, b.Offset+b.Bytes, len(base))
		}
		bufs[i] = base[b.Offset : b.Offset+b.Bytes : b.Offset+b.Bytes]
	}
	// A malformed program (consistent digests, inconsistent content) must not
	// crash a server that embeds the runtime: a slice bound panic inside a
	// kernel becomes an error naming the step.
	step := -1
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("step %d (%s, %s): malformed program: %v", step, p.Steps[step].Kind(), p.Steps[step].Src, r)
			outs = nil
		}
	}()
	for i := range p.Steps {
		step = i
		s := &p.Steps[i]
		var t0 time.Time
		var b0 time.Duration
		if prof != nil {
			b0 = pool.Busy()
			t0 = time.Now()
		}
		if c, ok := s.Op.(*lir.NativeCall); ok {
			if e.native == nil {
				return nil, fmt.Errorf("%s: a native call in a program without native code", s.Src)
			}
			if err := st.call(pool, &p.Native.Funcs[c.Func], e.native.funcs[c.Func], c, bufs); err != nil {
				return nil, fmt.Errorf("%s: %v", s.Src, err)
			}
		} else if err := run(pool, s, bufs); err != nil {
			return nil, fmt.Errorf("%s: %v", s.Src, err)
		}
		if prof != nil {
			prof(i, s, time.Since(t0), pool.Busy()-b0)
		}
	}
	return outs, nil
}
