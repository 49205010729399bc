package codegen

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// program has an input, an output and two arena buffers of 4 floats, and
// the given steps.
func program(ops ...lir.Op) *lir.Program {
	p := &lir.Program{
		Inputs:  []lir.Slot{{Name: "x", DType: "f32", Shape: []int64{4}, Buffer: 0}},
		Outputs: []lir.Slot{{Name: "y", DType: "f32", Shape: []int64{4}, Buffer: 1}},
		Buffers: []lir.Buffer{{Kind: lir.BufInput, Bytes: 16}, {Kind: lir.BufOutput, Bytes: 16},
			{Kind: lir.BufArena, Bytes: 16}, {Kind: lir.BufArena, Offset: 16, Bytes: 16}},
		ArenaBytes: 32,
	}
	for _, op := range ops {
		p.Steps = append(p.Steps, lir.Step{Op: op, Src: "m.hir:1:1 " + string(op.Kind())})
	}
	return p
}

func relu(in, out lir.Buf) lir.Op {
	return &lir.Elementwise{Shape: []int64{4}, In: []lir.EwIn{{Buf: in, DType: tensor.F32, Strides: []int64{1}}},
		Out:  []lir.EwOut{{Buf: out, DType: tensor.F32}},
		Code: []lir.Instr{{Op: lir.EwLoad, Dst: 0, A: 0}, {Op: lir.EwRelu, Dst: 1, A: 0}, {Op: lir.EwStore, Dst: 1, A: 0}}}
}

// TestGenerate checks the GPU program: the buffers as they were, one
// dispatch per launch, and one kernel table entry per distinct kernel,
// compiled once.
func TestGenerate(t *testing.T) {
	in := program(&lir.Memcpy{Src: 0, Dst: 2}, &lir.Memcpy{Src: 2, Dst: 3}, relu(3, 1),
		&lir.Softmax{X: 1, Out: 2, Outer: 1, Axis: 4, Inner: 1})
	var compiles atomic.Int32
	prog, err := Generate(in, Target{Name: "vulkan", Lang: kir.GLSL, Compile: func(name, src string) ([]byte, string, error) {
		compiles.Add(1)
		return []byte(name), "spirv", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.CheckRefs(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(prog.Buffers, in.Buffers) || prog.ArenaBytes != in.ArenaBytes || len(prog.Inputs) != 1 || len(prog.Outputs) != 1 {
		t.Errorf("buffers or slots changed")
	}
	// Both memcpys copy 16 aligned bytes at offsets a kernel sees as
	// different constants, so they are different kernels.
	if len(prog.Kernels) != 4 || compiles.Load() != 4 {
		t.Fatalf("%d kernels, %d compiles, want 4 and 4", len(prog.Kernels), compiles.Load())
	}
	wantArgs := [][]lir.Buf{{0, 2}, {2, 3}, {3, 1}, {1, 2}}
	if len(prog.Steps) != 4 {
		t.Fatalf("%d steps", len(prog.Steps))
	}
	for i, s := range prog.Steps {
		d, ok := s.Op.(*lir.Dispatch)
		if !ok {
			t.Fatalf("step %d is a %s", i, s.Kind())
		}
		if s.Src != in.Steps[i].Src {
			t.Errorf("step %d from %q", i, s.Src)
		}
		if d.Kernel != i || !slices.Equal(d.Args, wantArgs[i]) || d.Groups != [3]int64{1, 1, 1} {
			t.Errorf("step %d: %+v", i, d)
		}
		k := prog.Kernels[d.Kernel]
		if k.Lang != "glsl" || k.Entry != "main" || k.BinaryKind != "spirv" || string(k.Binary) != k.Name || len(k.Params) != len(d.Args) {
			t.Errorf("kernel %d: %+v", i, k)
		}
		if !strings.HasPrefix(k.Name, string(in.Steps[i].Op.Kind())+"_") {
			t.Errorf("kernel %d named %s", i, k.Name)
		}
		if last := k.Params[len(k.Params)-1]; !last.Write || last.DType != "f32" && last.DType != "i32" {
			t.Errorf("kernel %d result parameter %+v", i, last)
		}
	}
	if k := prog.Kernels[3]; k.Shared != k.Local[0]*4 {
		t.Errorf("softmax: %d bytes of workgroup memory for %d invocations", k.Shared, k.Local[0])
	}

	// The same step twice is one kernel, launched twice.
	prog, err = Generate(program(relu(0, 2), relu(0, 2)), Target{Name: "metal", Lang: kir.MSL})
	if err != nil {
		t.Fatal(err)
	}
	if len(prog.Kernels) != 1 || len(prog.Steps) != 2 || prog.Kernels[0].Binary != nil {
		t.Errorf("%d kernels for %d steps", len(prog.Kernels), len(prog.Steps))
	}
}

// TestGenerateErrors: an operation a GPU has no kernel for names the
// target; a compiler's error names the step and the kernel.
func TestGenerateErrors(t *testing.T) {
	packed := &lir.PackedMatMul{A: 0, B: 2, Out: 1, M: 1, N: 4, K: 4, Epilogue: lir.NoEpilogue()}
	_, err := Generate(program(packed), Target{Name: "cuda", Lang: kir.CUDA})
	if err == nil || !strings.Contains(err.Error(), "m.hir:1:1 matmul_packed: target cuda has no kernel for this operation") {
		t.Errorf("packed matmul: %v", err)
	}
	_, err = Generate(program(relu(0, 1)), Target{Name: "vulkan", Lang: kir.GLSL, Compile: func(string, string) ([]byte, string, error) {
		return nil, "", errors.New("compiler failed")
	}})
	if err == nil || !strings.Contains(err.Error(), "m.hir:1:1 ew: kernel ew_") || !strings.Contains(err.Error(), "compiler failed") {
		t.Errorf("compile error: %v", err)
	}
}
