package runtime

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/cu"
)

// CUDA adapts a CUDA device (PTX kernels, or CUDA C compiled by NVRTC).
type CUDA struct{ C *cu.Context }

// OpenCUDA opens the first CUDA device (RLX_CUDA_DEVICE picks another).
func OpenCUDA() (*CUDA, error) {
	c, err := cu.Open()
	if err != nil {
		return nil, err
	}
	return &CUDA{C: c}, nil
}

// Name is the device's name.
func (c *CUDA) Name() string {
	ma, mi := c.C.ComputeCapability()
	return fmt.Sprintf("cuda: %s (sm_%d%d)", c.C.Name(), ma, mi)
}

type cuBuffer struct {
	c    *cu.Context
	p    cu.DevicePtr
	size int64
}

// Alloc allocates device memory.
func (c *CUDA) Alloc(n int64) (Buffer, error) {
	p, err := c.C.Alloc(n)
	if err != nil {
		return nil, err
	}
	return &cuBuffer{c: c.C, p: p, size: n}, nil
}

func (b *cuBuffer) bounds(off int64, n int) error {
	if off < 0 || off+int64(n) > b.size {
		return fmt.Errorf("cuda: %d bytes at %d outside a buffer of %d", n, off, b.size)
	}
	return nil
}

func (b *cuBuffer) Write(off int64, p []byte) error {
	if err := b.bounds(off, len(p)); err != nil || len(p) == 0 {
		return err
	}
	return b.c.CopyToDevice(b.p.Add(off), p)
}

func (b *cuBuffer) Read(off int64, p []byte) error {
	if err := b.bounds(off, len(p)); err != nil || len(p) == 0 {
		return err
	}
	return b.c.CopyFromDevice(p, b.p.Add(off))
}

func (b *cuBuffer) Free() { _ = b.c.Free(b.p) }

type cuKernel struct {
	m *cu.Module
	f *cu.Function
}

func (k cuKernel) Free() { _ = k.m.Unload() }

// Load loads the kernel's PTX, or compiles its CUDA C with NVRTC for this
// device when the build had no PTX.
func (c *CUDA) Load(k *lir.Kernel) (Kernel, error) {
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

type cuSequence struct {
	c  *cu.Context
	ls []cuLaunch
}

type cuLaunch struct {
	f      *cu.Function
	grid   [3]uint32
	block  [3]uint32
	params []any
}

// Prepare resolves the launches' pointers once; a kernel's launch
// offsets follow its pointers as int arguments.
func (c *CUDA) Prepare(ls []Launch) (Sequence, error) {
	s := &cuSequence{c: c.C}
	for i, l := range ls {
		k, ok := l.Kernel.(cuKernel)
		if !ok {
			return nil, fmt.Errorf("launch %d: not a cuda kernel", i)
		}
		cl := cuLaunch{f: k.f, grid: l.Groups, block: l.Local}
		for _, b := range l.Buffers {
			cb, ok := b.(*cuBuffer)
			if !ok {
				return nil, fmt.Errorf("launch %d: not a cuda buffer", i)
			}
			cl.params = append(cl.params, cb.p)
		}
		for _, o := range l.Offsets { // the kernel's trailing int arguments
			cl.params = append(cl.params, o)
		}
		s.ls = append(s.ls, cl)
	}
	return s, nil
}

// Run launches everything on the default stream (launches on one stream
// run in order) and waits.
func (s *cuSequence) Run() error {
	for _, l := range s.ls {
		if err := s.c.Launch(l.f, l.grid, l.block, 0, l.params...); err != nil {
			return err
		}
	}
	return s.c.Synchronize()
}

func (s *cuSequence) Free() {}

// Close releases the context.
func (c *CUDA) Close() error { return c.C.Close() }
