package runtime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// fakeDevice records what an Exec asks of a device, with buffers in host
// memory and launches that copy input 0 to output 0 (enough to see that
// data goes in and comes out through the right buffers).
type fakeDevice struct {
	limit         int64 // refuse allocations larger than this (0: no limit)
	allocs, loads int
	freed         int
	prepared      []Launch
}

type fakeBuffer struct {
	d    *fakeDevice
	data []byte
}

func (b *fakeBuffer) Write(off int64, p []byte) error { copy(b.data[off:], p); return nil }
func (b *fakeBuffer) Read(off int64, p []byte) error  { copy(p, b.data[off:]); return nil }
func (b *fakeBuffer) Free()                           { b.d.freed++ }

type fakeKernel struct{}

func (fakeKernel) Free() {}

type fakeSeq struct{ ls []Launch }

func (s fakeSeq) Run() error {
	for _, l := range s.ls {
		if len(l.Buffers) < 2 {
			continue
		}
		src, dst := l.Buffers[0].(*fakeBuffer), l.Buffers[1].(*fakeBuffer)
		copy(dst.data, src.data)
	}
	return nil
}
func (fakeSeq) Free() {}

func (d *fakeDevice) Name() string { return "fake" }
func (d *fakeDevice) Alloc(n int64) (Buffer, error) {
	if n < 0 || (d.limit > 0 && n > d.limit) {
		return nil, fmt.Errorf("fake: cannot allocate %d bytes", n)
	}
	d.allocs++
	return &fakeBuffer{d: d, data: make([]byte, n)}, nil
}
func (d *fakeDevice) Load(*lir.Kernel) (Kernel, error) { d.loads++; return fakeKernel{}, nil }
func (d *fakeDevice) Prepare(ls []Launch) (Sequence, error) {
	d.prepared = ls
	return fakeSeq{ls}, nil
}
func (d *fakeDevice) Close() error { return nil }

// program is a valid copy program: input x -> output y through one kernel.
func program() *lir.Program {
	return &lir.Program{
		Inputs:     []lir.Slot{{Name: "x", DType: "f32", Shape: []int64{4}, Buffer: 0}},
		Outputs:    []lir.Slot{{Name: "y", DType: "f32", Shape: []int64{4}, Buffer: 1}},
		Buffers:    []lir.Buffer{{Kind: lir.BufInput, Index: 0, Bytes: 16}, {Kind: lir.BufOutput, Index: 0, Bytes: 16}, {Kind: lir.BufArena, Offset: 0, Bytes: 16}},
		ArenaBytes: 16,
		Kernels:    []lir.Kernel{{Name: "copy", Local: [3]int64{64, 1, 1}, Params: []lir.KernelParam{{Name: "src", DType: "f32"}, {Name: "dst", DType: "f32", Write: true}}}},
		Steps:      []lir.Step{{Op: &lir.Dispatch{Kernel: 0, Groups: [3]int64{1, 1, 1}, Args: []lir.Buf{0, 1}}, Src: "m.hir:1:1 copy"}},
	}
}

// dispatch is the program's one dispatch step.
func dispatch(p *lir.Program) *lir.Dispatch { return p.Steps[0].Op.(*lir.Dispatch) }

func TestExecRuns(t *testing.T) {
	d := &fakeDevice{}
	e, err := New(d, program(), NewWeights(d, nil))
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.FromF32([]int64{4}, []float32{1, 2, 3, 4})
	out, err := e.Run([]*tensor.Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].F32(); len(got) != 4 || got[0] != 1 || got[3] != 4 {
		t.Errorf("output %v", got)
	}
	if len(d.prepared) != 1 || d.prepared[0].Groups != [3]uint32{1, 1, 1} || d.prepared[0].Local != [3]uint32{64, 1, 1} {
		t.Errorf("prepared %+v", d.prepared)
	}
	if _, err := e.Run([]*tensor.Tensor{tensor.FromF32([]int64{3}, []float32{1, 2, 3})}); err == nil || !strings.Contains(err.Error(), "12 bytes, want 16") {
		t.Errorf("short input: %v", err)
	}
	e.Close()
	if d.freed != d.allocs {
		t.Errorf("closed with %d of %d buffers freed", d.freed, d.allocs)
	}

	// A kernel that takes launch offsets gets each dispatch's.
	p := program()
	p.Kernels[0].Offsets = true
	dispatch(p).Offsets = []int64{0, 3}
	d = &fakeDevice{}
	if e, err = New(d, p, NewWeights(d, nil)); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if len(d.prepared) != 1 || len(d.prepared[0].Offsets) != 2 || d.prepared[0].Offsets[1] != 3 {
		t.Errorf("prepared %+v", d.prepared)
	}
}

// TestExecRejects feeds New the ways a damaged or hand-made artifact's
// program can be wrong: each is an error naming the problem, never a
// panic, and nothing is left allocated.
func TestExecRejects(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(p *lir.Program)
		want  string
	}{
		{"kernel index", func(p *lir.Program) { dispatch(p).Kernel = 5 }, "kernel 5 of 1"},
		{"negative kernel", func(p *lir.Program) { dispatch(p).Kernel = -1 }, "kernel -1 of 1"},
		{"no groups", func(p *lir.Program) { dispatch(p).Groups[1] = 0 }, "0 workgroups along axis 1"},
		{"too many groups", func(p *lir.Program) { dispatch(p).Groups[0] = 1 << 20 }, "workgroups along axis 0"},
		{"cpu step", func(p *lir.Program) {
			p.Steps[0].Op = &lir.MatMul{A: 0, B: 0, Out: 1, AShape: []int64{2, 2}, BShape: []int64{2, 2}, Epilogue: lir.NoEpilogue()}
		}, `not a GPU dispatch (kernel "matmul")`},
		{"no operation", func(p *lir.Program) { p.Steps[0].Op = nil }, "has no operation"},
		{"parameter count", func(p *lir.Program) { dispatch(p).Args = []lir.Buf{0} }, "1 buffers for kernel copy of 2 parameters"},
		{"unexpected offsets", func(p *lir.Program) { dispatch(p).Offsets = []int64{1, 2} }, "2 launch offsets for kernel copy of 2 parameters (launch offsets: false)"},
		{"missing offsets", func(p *lir.Program) { p.Kernels[0].Offsets = true }, "0 launch offsets for kernel copy of 2 parameters (launch offsets: true)"},
		{"offset range", func(p *lir.Program) {
			p.Kernels[0].Offsets = true
			dispatch(p).Offsets = []int64{0, 1 << 31}
		}, "launch offset 2147483648 of parameter 1 is outside 0..2^31-1"},
		{"buffer index", func(p *lir.Program) { dispatch(p).Args = []lir.Buf{0, 9} }, "missing buffer 9"},
		{"absent buffer", func(p *lir.Program) { dispatch(p).Args = []lir.Buf{lir.NoBuf, 1} }, "missing buffer -1"},
		{"writes an input", func(p *lir.Program) { dispatch(p).Args = []lir.Buf{1, 0} }, "writes parameter dst to buffer 0, a read-only input"},
		{"writes a weight", func(p *lir.Program) {
			p.Buffers[2] = lir.Buffer{Kind: lir.BufWeight, Bytes: 16}
			dispatch(p).Args = []lir.Buf{0, 2}
		}, "writes parameter dst to buffer 2, a read-only weight"},
		{"arena overflow", func(p *lir.Program) { p.Buffers[2].Bytes = 32 }, "buffer 2 lies outside the arena"},
		{"input slot", func(p *lir.Program) { p.Buffers[0].Index = 3 }, "input slot 3 of 1"},
		{"buffer kind", func(p *lir.Program) { p.Buffers[2].Kind = "rom" }, `unknown kind "rom"`},
		{"weight index", func(p *lir.Program) { p.Buffers[2] = lir.Buffer{Kind: lir.BufWeight, Index: 7} }, "weight 7 of 0"},
		// Found by FuzzNew: Run made a host tensor of this shape.
		{"output dim", func(p *lir.Program) { p.Outputs[0].Shape = []int64{-24} }, "negative dim"},
		{"input dtype", func(p *lir.Program) { p.Inputs[0].DType = "f33" }, `unknown dtype "f33"`},
		{"output size", func(p *lir.Program) { p.Outputs[0].Shape = []int64{1 << 40, 1 << 40} }, "too large"},
	} {
		p := program()
		c.spoil(p)
		d := &fakeDevice{}
		_, err := New(d, p, NewWeights(d, nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if d.freed != d.allocs {
			t.Errorf("%s: %d of %d buffers freed after the error", c.name, d.freed, d.allocs)
		}
	}
}

// FuzzNew feeds New programs decoded from arbitrary bytes (what a damaged
// or hostile artifact's program section holds), then runs what it accepts:
// neither may panic or hang. The fake device refuses allocations over 1 MiB,
// as a real one refuses what it cannot hold.
func FuzzNew(f *testing.F) {
	seed, err := artifact.MarshalManifest(program())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p lir.Program
		if artifact.UnmarshalManifest(b, &p) != nil {
			return
		}
		d := &fakeDevice{limit: 1 << 20}
		e, err := New(d, &p, NewWeights(d, [][]byte{make([]byte, 64)}))
		if err != nil {
			return
		}
		defer e.Close()
		var inputs []*tensor.Tensor
		for _, s := range p.Inputs {
			dt, _ := tensor.ParseDType(s.DType)
			// The harness allocates the inputs: bound them without
			// overflow (a crafted slot has any dims).
			bytes := int64(dt.Size())
			for _, d := range s.Shape {
				if d < 0 || d > 1<<20 || bytes*max(d, 1) > 1<<20 {
					return
				}
				bytes *= d
			}
			inputs = append(inputs, tensor.New(dt, s.Shape...))
		}
		_, _ = e.Run(inputs)
	})
}
