package runtime

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/cu"
)

// CUDA adapts a CUDA device (PTX kernels, or CUDA C compiled by NVRTC).
// Every copy and launch goes on one stream, in order; a prepared sequence
// of launches is captured once into a CUDA graph and replayed per run.
type CUDA struct {
	C *cu.Context
	// stream carries the copies and launches; nil where the driver has no
	// streams (the default stream then, launch by launch).
	stream *cu.Stream
	// graphs says whether sequences replay as CUDA graphs: true unless
	// RLX_CUDA_GRAPH=0 (launch by launch, to compare or to rule graphs
	// out) or the driver has none.
	graphs bool
}

// OpenCUDA opens the first CUDA device (RLX_CUDA_DEVICE picks another).
// RLX_CUDA_GRAPH=0 turns the graph replay off.
func OpenCUDA() (*CUDA, error) {
	c, err := cu.Open()
	if err != nil {
		return nil, err
	}
	d := &CUDA{C: c}
	switch d.stream, err = c.NewStream(); {
	case errors.Is(err, cu.ErrNoStreams):
	case err != nil:
		_ = c.Close()
		return nil, err
	default:
		d.graphs = os.Getenv("RLX_CUDA_GRAPH") != "0"
	}
	return d, nil
}

// TimesSteps reports whether sequences time their launches (Profiler):
// they do where the driver has events.
func (c *CUDA) TimesSteps() bool { return c.stream != nil }

// Name is the device's name.
func (c *CUDA) Name() string {
	ma, mi := c.C.ComputeCapability()
	return fmt.Sprintf("cuda: %s (sm_%d%d)", c.C.Name(), ma, mi)
}

type cuBuffer struct {
	dev  *CUDA
	p    cu.DevicePtr
	size int64
}

// Alloc allocates device memory.
func (c *CUDA) Alloc(n int64) (Buffer, error) {
	p, err := c.C.Alloc(n)
	if err != nil {
		return nil, err
	}
	return &cuBuffer{dev: c, p: p, size: n}, nil
}

func (b *cuBuffer) bounds(off int64, n int) error {
	if off < 0 || off+int64(n) > b.size {
		return fmt.Errorf("cuda: %d bytes at %d outside a buffer of %d", n, off, b.size)
	}
	return nil
}

// Write queues the copy after the stream's earlier work.
func (b *cuBuffer) Write(off int64, p []byte) error {
	if err := b.bounds(off, len(p)); err != nil || len(p) == 0 {
		return err
	}
	if s := b.dev.stream; s != nil {
		return s.CopyToDevice(b.p.Add(off), p)
	}
	return b.dev.C.CopyToDevice(b.p.Add(off), p)
}

// Read waits for the stream's earlier work (a run's launches) and copies.
func (b *cuBuffer) Read(off int64, p []byte) error {
	if err := b.bounds(off, len(p)); err != nil {
		return err
	}
	if s := b.dev.stream; s != nil {
		return s.CopyFromDevice(p, b.p.Add(off))
	}
	if len(p) == 0 {
		return b.dev.C.Synchronize()
	}
	return b.dev.C.CopyFromDevice(p, b.p.Add(off))
}

func (b *cuBuffer) Free() { _ = b.dev.C.Free(b.p) }

type cuKernel struct {
	m *cu.Module
	f *cu.Function
}

func (k cuKernel) Free() { _ = k.m.Unload() }

// Load loads the kernel's PTX, or compiles its CUDA C with NVRTC for this
// device when the build had no PTX.
func (c *CUDA) Load(k *lir.Kernel) (Kernel, error) {
	// Tensor-core products (rlxc build --precision tf32 or bf16) need sm_80: on
	// an older GPU say so, rather than pass on ptxas's complaint.
	if ma, mi := c.C.ComputeCapability(); ma < 8 && strings.Contains(k.Source, "mma.sync") {
		return nil, fmt.Errorf("kernel %s multiplies on tensor cores (built with --precision tf32 or bf16), which needs compute capability 8.0 or later; this GPU has %d.%d: rebuild with --precision fp32", k.Name, ma, mi)
	}
	ptx := k.Binary
	if k.BinaryKind != "ptx" || len(ptx) == 0 {
		var err error
		if ptx, err = cu.CompileCUDA(k.Source, k.Name+".cu", []string{c.C.ArchOption()}); err != nil {
			return nil, err
		}
	}
	m, err := c.C.LoadPTX(ptx)
	if err != nil {
		return nil, err
	}
	f, err := m.Function(k.Entry)
	if err != nil {
		_ = m.Unload()
		return nil, err
	}
	return cuKernel{m, f}, nil
}

// cuSequence is a prepared list of launches and, where graphs are on, the
// graph they were captured into.
type cuSequence struct {
	dev   *CUDA
	steps []cu.Step
	graph *cu.Graph
	// profile is the steps with timing events as one graph, made at the
	// first Profile; direct says that failed, and steps are timed launch
	// by launch instead (host gaps included).
	profile *cu.StepProfile
	direct  bool
}

// Prepare resolves the launches' pointers once (a kernel's launch offsets
// follow its pointers as int arguments) and captures them into a graph.
func (c *CUDA) Prepare(ls []Launch) (Sequence, error) {
	s := &cuSequence{dev: c}
	for i, l := range ls {
		k, ok := l.Kernel.(cuKernel)
		if !ok {
			return nil, fmt.Errorf("launch %d: not a cuda kernel", i)
		}
		st := cu.Step{F: k.f, Grid: l.Groups, Block: l.Local}
		for _, b := range l.Buffers {
			cb, ok := b.(*cuBuffer)
			if !ok {
				return nil, fmt.Errorf("launch %d: not a cuda buffer", i)
			}
			st.Args = append(st.Args, cb.p)
		}
		for _, o := range l.Offsets { // the kernel's trailing int arguments
			st.Args = append(st.Args, o)
		}
		s.steps = append(s.steps, st)
	}
	if c.graphs && len(s.steps) > 0 {
		g, err := c.stream.NewGraph(s.steps)
		if err != nil {
			return nil, fmt.Errorf("capturing %d launches into a CUDA graph (RLX_CUDA_GRAPH=0 launches them one by one): %w", len(s.steps), err)
		}
		s.graph = g
	}
	return s, nil
}

// Run queues the run's launches after the inputs' copies: the graph's
// replay, or each launch. The outputs' Read waits for them.
func (s *cuSequence) Run() error {
	switch {
	case s.graph != nil:
		return s.graph.Launch(s.dev.stream)
	case s.dev.stream != nil:
		return s.dev.stream.LaunchOn(s.steps)
	}
	for _, l := range s.steps {
		if err := s.dev.C.Launch(l.F, l.Grid, l.Block, l.SharedBytes, l.Args...); err != nil {
			return err
		}
	}
	return nil
}

// Profile times each step on the device: a replay of the steps with
// an event before and after each, captured as one graph at the first call,
// or, where the driver cannot capture that, the steps launched one by one
// between events. The outputs hold the run's results afterwards.
func (s *cuSequence) Profile() ([]time.Duration, error) {
	st := s.dev.stream
	if st == nil {
		return nil, cu.ErrNoStreams
	}
	if s.profile == nil && !s.direct {
		p, err := st.NewProfile(s.steps)
		if err != nil {
			s.direct = true
		}
		s.profile = p
	}
	if s.direct {
		return st.Profile(s.steps)
	}
	return s.profile.Run(st)
}

func (s *cuSequence) Free() {
	if s.profile != nil {
		_ = s.profile.Destroy()
		s.profile = nil
	}
	if s.graph != nil {
		_ = s.graph.Destroy()
		s.graph = nil
	}
}

// Close releases the stream and the context.
func (c *CUDA) Close() error {
	if c.stream != nil {
		_ = c.stream.Destroy()
	}
	return c.C.Close()
}
