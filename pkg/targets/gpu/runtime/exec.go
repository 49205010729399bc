// Package runtime runs GPU programs (vulkan, cuda) on a Device: it places
// the program's buffers in device memory, loads its kernels, prepares the
// launches once, and per run copies inputs in, launches, and copies
// outputs out. The Device interface is what a GPU API must provide; the
// vulkan and cuda adapters live beside it.
package runtime

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Device is one GPU as the executor needs it.
type Device interface {
	Name() string
	Alloc(bytes int64) (Buffer, error)
	// Load prepares kernel k (its binary, or its source where the API can
	// compile it).
	Load(k *lir.Kernel) (Kernel, error)
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

// Launch is one kernel launch over whole buffers. Offsets, for a kernel
// that takes them (lir.Kernel.Offsets), is where each parameter's tensor
// starts in its buffer, in elements: the adapter passes them as the
// kernel's language expects (push constants, trailing int arguments).
type Launch struct {
	Kernel  Kernel
	Buffers []Buffer
	Offsets []int32 // one per buffer, or none
	Groups  [3]uint32
	Local   [3]uint32
}

// Sequence is a prepared list of launches.
type Sequence interface {
	// Run launches the list once. It may return before the launches
	// finish: a Buffer's Read afterwards waits for them.
	Run() error
	Free()
}

// Profiler is a Sequence that can time its launches: Profile runs them
// once, one at a time, and returns each one's time on the device.
type Profiler interface {
	Profile() ([]time.Duration, error)
}

// StepTimer is a Device whose sequences are Profilers.
type StepTimer interface {
	TimesSteps() bool
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
	prog    *lir.Program
	mu      sync.Mutex // one run at a time: runs share the arena
	arena   Buffer
	inputs  []Buffer
	outputs []Buffer
	kernels []Kernel
	seq     Sequence
	owned   []Buffer
}

// New places program p on the device (weights through ws) and prepares its
// launches. Every step must be a lir.Dispatch.
func New(dev Device, p *lir.Program, ws *Weights) (_ *Exec, err error) {
	if err := check(p); err != nil {
		return nil, err
	}
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
		case lir.BufArena:
			if b.Offset < 0 || b.Offset+b.Bytes > p.ArenaBytes {
				return nil, fmt.Errorf("buffer %d lies outside the arena", i)
			}
			bufs[i] = e.arena
		case lir.BufWeight:
			if bufs[i], err = ws.buffer(b.Index); err != nil {
				return nil, err
			}
		case lir.BufInput, lir.BufOutput:
			list := e.inputs
			if b.Kind == lir.BufOutput {
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
	for si := range p.Steps {
		d := p.Steps[si].Op.(*lir.Dispatch) // check made sure
		k := &p.Kernels[d.Kernel]
		l := Launch{Kernel: e.kernels[d.Kernel], Local: [3]uint32{uint32(k.Local[0]), uint32(k.Local[1]), uint32(k.Local[2])}}
		for i, g := range d.Groups {
			l.Groups[i] = uint32(g)
		}
		for _, a := range d.Args {
			l.Buffers = append(l.Buffers, bufs[a])
		}
		for _, o := range d.Offsets { // check made sure they fit
			l.Offsets = append(l.Offsets, int32(o))
		}
		ls = append(ls, l)
	}
	if e.seq, err = dev.Prepare(ls); err != nil {
		return nil, err
	}
	return e, nil
}

// check validates p's steps before anything is allocated: each step is a
// dispatch of a kernel in the table over a workgroup grid every device
// supports, with one existing buffer per kernel parameter, and no
// parameter the kernel writes is bound to a weight or an input.
func check(p *lir.Program) error {
	if err := p.CheckRefs(); err != nil {
		return err
	}
	for _, s := range p.Inputs {
		if err := checkSlot("input", s); err != nil {
			return err
		}
	}
	for _, s := range p.Outputs {
		if err := checkSlot("output", s); err != nil {
			return err
		}
	}
	for si := range p.Steps {
		s := &p.Steps[si]
		d, ok := s.Op.(*lir.Dispatch)
		if !ok {
			return fmt.Errorf("step %d (%s): not a GPU dispatch (kernel %q)", si, s.Src, s.Kind())
		}
		if d.Kernel < 0 || d.Kernel >= len(p.Kernels) {
			return fmt.Errorf("step %d (%s): kernel %d of %d", si, s.Src, d.Kernel, len(p.Kernels))
		}
		k := &p.Kernels[d.Kernel]
		if len(d.Args) != len(k.Params) {
			return fmt.Errorf("step %d (%s): %d buffers for kernel %s of %d parameters", si, s.Src, len(d.Args), k.Name, len(k.Params))
		}
		if want := len(k.Params); !k.Offsets && len(d.Offsets) != 0 || k.Offsets && len(d.Offsets) != want {
			return fmt.Errorf("step %d (%s): %d launch offsets for kernel %s of %d parameters (launch offsets: %v)", si, s.Src, len(d.Offsets), k.Name, want, k.Offsets)
		}
		for i, o := range d.Offsets {
			if o < 0 || o > math.MaxInt32 {
				return fmt.Errorf("step %d (%s): launch offset %d of parameter %d is outside 0..2^31-1", si, s.Src, o, i)
			}
		}
		for i, g := range d.Groups {
			if g < 1 || g > 65535 {
				return fmt.Errorf("step %d (%s): %d workgroups along axis %d", si, s.Src, g, i)
			}
		}
		for i, a := range d.Args { // CheckRefs made sure they exist
			if kind := p.Buffers[a].Kind; k.Params[i].Write && (kind == lir.BufWeight || kind == lir.BufInput) {
				return fmt.Errorf("step %d (%s): kernel %s writes parameter %s to buffer %d, a read-only %s", si, s.Src, k.Name, k.Params[i].Name, a, kind)
			}
		}
	}
	return nil
}

func slotBytes(s lir.Slot) int64 {
	dt, ok := tensor.ParseDType(s.DType)
	if !ok {
		return 0
	}
	return tensor.NumElements(s.Shape) * int64(dt.Size())
}

// checkSlot refuses an input or output slot whose tensor cannot exist: an
// unknown dtype, a negative dim, or more bytes than an int64 (or the
// device) counts. Run makes host tensors of the outputs' shapes.
func checkSlot(kind string, s lir.Slot) error {
	dt, ok := tensor.ParseDType(s.DType)
	if !ok {
		return fmt.Errorf("%s %s: unknown dtype %q", kind, s.Name, s.DType)
	}
	bytes := int64(dt.Size())
	for _, d := range s.Shape {
		if d < 0 {
			return fmt.Errorf("%s %s: negative dim in shape %v", kind, s.Name, s.Shape)
		}
		if d > 0 && bytes > math.MaxInt32*int64(math.MaxInt32)/d {
			return fmt.Errorf("%s %s: shape %v is too large", kind, s.Name, s.Shape)
		}
		bytes *= d
	}
	return nil
}

// Program is the variant's program.
func (e *Exec) Program() *lir.Program { return e.prog }

// Run copies the inputs (in program order, already checked against the
// slots) to the device, runs every launch, and copies the outputs back.
func (e *Exec) Run(inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	return e.run(inputs, nil)
}

// Profile runs like Run with the launches one at a time, and passes each
// step's time on the device to prof. It fails where the device's
// sequences time no launches (StepTimer).
func (e *Exec) Profile(inputs []*tensor.Tensor, prof func(step int, d time.Duration)) ([]*tensor.Tensor, error) {
	if prof == nil {
		return nil, fmt.Errorf("Profile: nil prof")
	}
	return e.run(inputs, prof)
}

func (e *Exec) run(inputs []*tensor.Tensor, prof func(step int, d time.Duration)) ([]*tensor.Tensor, error) {
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
		if prof == nil {
			if err := e.seq.Run(); err != nil {
				return nil, err
			}
		} else {
			p, ok := e.seq.(Profiler)
			if !ok {
				return nil, fmt.Errorf("this device times no launches")
			}
			times, err := p.Profile()
			if err != nil {
				return nil, err
			}
			for i, d := range times {
				prof(i, d)
			}
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
