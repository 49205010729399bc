package runtime

import (
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// A program whose digests are fine but whose content is not (a crafted or
// buggy artifact) must give errors, never crash the process that embeds
// the runtime.
func TestMalformedPrograms(t *testing.T) {
	in := artifact.Slot{Name: "x", DType: "f32", Shape: []int64{4}, Buffer: 0}
	out := artifact.Slot{Name: "y", DType: "f32", Shape: []int64{4}, Buffer: 1}
	base := func() *artifact.Program {
		return &artifact.Program{
			Inputs:  []artifact.Slot{in},
			Outputs: []artifact.Slot{out},
			Buffers: []artifact.Buffer{{Kind: artifact.BufInput, Index: 0, Bytes: 16}, {Kind: artifact.BufOutput, Index: 0, Bytes: 16}},
			Steps:   []artifact.Step{{Kernel: "memcpy", Args: []int{0, 1}}},
		}
	}
	for _, c := range []struct {
		name   string
		mutate func(p *artifact.Program)
		atNew  string // error from New, or
		atRun  string // error from Run
	}{
		{"buffer past the arena", func(p *artifact.Program) {
			p.Buffers[0] = artifact.Buffer{Kind: artifact.BufArena, Offset: 8, Bytes: 16}
		}, "past the arena", ""},
		{"missing weight", func(p *artifact.Program) {
			p.Buffers[0] = artifact.Buffer{Kind: artifact.BufWeight, Index: 3, Bytes: 16}
		}, "missing or short weight", ""},
		{"unknown kind", func(p *artifact.Program) { p.Buffers[0].Kind = "gpu" }, "unknown kind", ""},
		{"step names a missing buffer", func(p *artifact.Program) { p.Steps[0].Args = []int{0, 9} }, "missing buffer 9", ""},
		{"slot with a bad dtype", func(p *artifact.Program) { p.Outputs[0].DType = "f128" }, "unknown dtype", ""},
		{"unknown kernel", func(p *artifact.Program) { p.Steps[0].Kernel = "frobnicate" }, "", "unknown kernel"},
		{"short step parameters", func(p *artifact.Program) { p.Steps[0] = artifact.Step{Kernel: "softmax", Args: []int{0, 1}} }, "", "malformed softmax step"},
		{"geometry past the buffers", func(p *artifact.Program) {
			p.Steps[0] = artifact.Step{Kernel: "softmax", Args: []int{0, 1}, Ints: []int64{1, 1000, 1, 0}}
		}, "", "malformed program"},
		{"bad bytecode", func(p *artifact.Program) {
			p.Steps[0] = artifact.Step{Kernel: "ew", Args: []int{0, 1}, Ints: []int64{1, 1, 1, 1}, Shapes: [][]int64{{4}, {1}},
				Code: []artifact.Instr{{Op: "load", Dst: 0, A: 0}, {Op: "nope", Dst: 1, A: 0}, {Op: "store", Dst: 1, A: 0}}}
		}, "", "unknown elementwise instruction"},
	} {
		p := base()
		c.mutate(p)
		e, err := New(p, nil)
		if c.atNew != "" {
			if err == nil || !strings.Contains(err.Error(), c.atNew) {
				t.Errorf("%s: New: %v, want %q", c.name, err, c.atNew)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: New: %v", c.name, err)
			continue
		}
		pool := kernels.NewPool(1)
		_, err = e.Run(pool, []*tensor.Tensor{tensor.New(tensor.F32, 4)}, nil)
		pool.Close()
		if err == nil || !strings.Contains(err.Error(), c.atRun) {
			t.Errorf("%s: Run: %v, want %q", c.name, err, c.atRun)
		}
	}
}
