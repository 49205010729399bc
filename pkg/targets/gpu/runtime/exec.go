// Package runtime runs GPU programs (vulkan, cuda) on a Device: it places
// the program's buffers in device memory, loads its kernels, prepares the
// launches once, and per run copies inputs in, launches, and copies
// outputs out. The Device interface is what a GPU API must provide; the
// vulkan and cuda adapters live beside it.
package runtime

import (
	"fmt"
	"sync"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Device is one GPU as the executor needs it.
type Device interface {
	Name() string
	Alloc(bytes int64) (Buffer, error)
	// Load prepares kernel k (its binary, or its source where the API can
	// compile it).
	Load(k *artifact.Kernel) (Kernel, error)
	// Prepare readies a sequence of launches that later runs in order,
	// each seeing the previous ones' writes.
	Prepare(ls []Launch) (Sequence, error)
	Close() error
}

// Buffer is device memory.
type Buffer interface {
	Write(off int64, p []byte) error
	Read(off int64, p []byte) error
	Free()
}

// Kernel is a loaded kernel.
type Kernel interface{ Free() }

// Launch is one kernel launch over whole buffers.
type Launch struct {
	Kernel  Kernel
	Buffers []Buffer
	Groups  [3]uint32
	Local   [3]uint32
}

// Sequence is a prepared list of launches.
type Sequence interface {
	Run() error
	Free()
}

// Weights places an artifact's weights on a device once, for all the
// variants that use them.
type Weights struct {
	dev  Device
	data [][]byte
	mu   sync.Mutex
	bufs map[int]Buffer
}

// NewWeights serves the artifact's weights (indexed as its manifest).
func NewWeights(dev Device, data [][]byte) *Weights {
	return &Weights{dev: dev, data: data, bufs: map[int]Buffer{}}
}

func (w *Weights) buffer(i int) (Buffer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b, ok := w.bufs[i]; ok {
		return b, nil
	}
	if i < 0 || i >= len(w.data) {
		return nil, fmt.Errorf("weight %d of %d", i, len(w.data))
	}
	b, err := w.dev.Alloc(int64(len(w.data[i])))
	if err != nil {
		return nil, err
	}
	if err := b.Write(0, w.data[i]); err != nil {
		b.Free()
		return nil, err
	}
	w.bufs[i] = b
	return b, nil
}

// Close frees the weights' device memory.
func (w *Weights) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.bufs {
		b.Free()
	}
	w.bufs = map[int]Buffer{}
}

// Exec is one variant ready to run on a device.
type Exec struct {
	prog    *artifact.Program
	mu      sync.Mutex // one run at a time: runs share the arena
	arena   Buffer
	inputs  []Buffer
	outputs []Buffer
	kernels []Kernel
	seq     Sequence
	owned   []Buffer
}

// New places program p on the device (weights through ws) and prepares its
// launches.
func New(dev Device, p *artifact.Program, ws *Weights) (_ *Exec, err error) {
	// e, not the named result: a failing return sets that to nil, and what
	// was allocated must still be freed.
	e := &Exec{prog: p}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	alloc := func(n int64) (Buffer, error) {
		b, err := dev.Alloc(max(n, 4))
		if err == nil {
			e.owned = append(e.owned, b)
		}
		return b, err
	}
	if e.arena, err = alloc(p.ArenaBytes); err != nil {
		return nil, err
	}
	for _, s := range p.Inputs {
		b, err := alloc(slotBytes(s))
		if err != nil {
			return nil, err
		}
		e.inputs = append(e.inputs, b)
	}
	for _, s := range p.Outputs {
		b, err := alloc(slotBytes(s))
		if err != nil {
			return nil, err
		}
		e.outputs = append(e.outputs, b)
	}
	bufs := make([]Buffer, len(p.Buffers))
	for i, b := range p.Buffers {
		switch b.Kind {
		case artifact.BufArena:
			if b.Offset < 0 || b.Offset+b.Bytes > p.ArenaBytes {
				return nil, fmt.Errorf("buffer %d lies outside the arena", i)
			}
			bufs[i] = e.arena
		case artifact.BufWeight:
			if bufs[i], err = ws.buffer(b.Index); err != nil {
				return nil, err
			}
		case artifact.BufInput, artifact.BufOutput:
			list := e.inputs
			if b.Kind == artifact.BufOutput {
				list = e.outputs
			}
			if b.Index < 0 || b.Index >= len(list) {
				return nil, fmt.Errorf("buffer %d: %s slot %d of %d", i, b.Kind, b.Index, len(list))
			}
			bufs[i] = list[b.Index]
		default:
			return nil, fmt.Errorf("buffer %d has unknown kind %q", i, b.Kind)
		}
	}
	for i := range p.Kernels {
		k, err := dev.Load(&p.Kernels[i])
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %v", p.Kernels[i].Name, err)
		}
		e.kernels = append(e.kernels, k)
	}
	var ls []Launch
	for si, s := range p.Steps {
		if s.Kernel != "dispatch" || len(s.Ints) != 4 {
			return nil, fmt.Errorf("step %d (%s): not a GPU dispatch (kernel %q)", si, s.Src, s.Kernel)
		}
		ki := int(s.Ints[0])
		if ki < 0 || ki >= len(e.kernels) {
			return nil, fmt.Errorf("step %d (%s): kernel %d of %d", si, s.Src, ki, len(e.kernels))
		}
		k := &p.Kernels[ki]
		if len(s.Args) != len(k.Params) {
			return nil, fmt.Errorf("step %d (%s): %d buffers for kernel %s of %d parameters", si, s.Src, len(s.Args), k.Name, len(k.Params))
		}
		l := Launch{Kernel: e.kernels[ki], Local: [3]uint32{uint32(k.Local[0]), uint32(k.Local[1]), uint32(k.Local[2])}}
		for d := 0; d < 3; d++ {
			g := s.Ints[1+d]
			if g < 1 || g > 65535 {
				return nil, fmt.Errorf("step %d (%s): %d workgroups along axis %d", si, s.Src, g, d)
			}
			l.Groups[d] = uint32(g)
		}
		for _, a := range s.Args {
			if a < 0 || a >= len(bufs) {
				return nil, fmt.Errorf("step %d (%s): buffer %d of %d", si, s.Src, a, len(bufs))
			}
			l.Buffers = append(l.Buffers, bufs[a])
		}
		ls = append(ls, l)
	}
	if e.seq, err = dev.Prepare(ls); err != nil {
		return nil, err
	}
	return e, nil
}

func slotBytes(s artifact.Slot) int64 {
	dt, ok := tensor.ParseDType(s.DType)
	if !ok {
		return 0
	}
	return tensor.NumElements(s.Shape) * int64(dt.Size())
}

// Program is the variant's program.
func (e *Exec) Program() *artifact.Program { return e.prog }

// Run copies the inputs (in program order, already checked against the
// slots) to the device, runs every launch, and copies the outputs back.
func (e *Exec) Run(inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(inputs) != len(e.inputs) {
		return nil, fmt.Errorf("%d inputs, want %d", len(inputs), len(e.inputs))
	}
	for i, t := range inputs {
		if int64(len(t.Data)) != slotBytes(e.prog.Inputs[i]) {
			return nil, fmt.Errorf("input %s: %d bytes, want %d", e.prog.Inputs[i].Name, len(t.Data), slotBytes(e.prog.Inputs[i]))
		}
		if err := e.inputs[i].Write(0, t.Data); err != nil {
			return nil, err
		}
	}
	if len(e.prog.Steps) > 0 {
		if err := e.seq.Run(); err != nil {
			return nil, err
		}
	}
	outs := make([]*tensor.Tensor, len(e.outputs))
	for i, s := range e.prog.Outputs {
		dt, _ := tensor.ParseDType(s.DType)
		t := tensor.New(dt, s.Shape...)
		if err := e.outputs[i].Read(0, t.Data); err != nil {
			return nil, err
		}
		outs[i] = t
	}
	return outs, nil
}

// Close frees the variant's device objects (not the shared weights).
func (e *Exec) Close() {
	if e.seq != nil {
		e.seq.Free()
		e.seq = nil
	}
	for _, k := range e.kernels {
		k.Free()
	}
	e.kernels = nil
	for _, b := range e.owned {
		b.Free()
	}
	e.owned = nil
}
