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
	// Both memcpys copy 16 aligned bytes, at different offsets: one
	// kernel, launched with each one's offsets.
	if len(prog.Kernels) != 3 || compiles.Load() != 3 {
		t.Fatalf("%d kernels, %d compiles, want 3 and 3", len(prog.Kernels), compiles.Load())
	}
	wantArgs := [][]lir.Buf{{0, 2}, {2, 3}, {3, 1}, {1, 2}}
	wantKernel := []int{0, 0, 1, 2}
	wantOffsets := [][]int64{{0, 0}, {0, 4}, {4, 0}, {0, 0}} // in 4-byte words
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
		if d.Kernel != wantKernel[i] || !slices.Equal(d.Args, wantArgs[i]) || !slices.Equal(d.Offsets, wantOffsets[i]) || d.Groups != [3]int64{1, 1, 1} {
			t.Errorf("step %d: %+v", i, d)
		}
		k := prog.Kernels[d.Kernel]
		if k.Lang != "glsl" || k.Entry != "main" || k.BinaryKind != "spirv" || string(k.Binary) != k.Name || len(k.Params) != len(d.Args) || !k.Offsets {
			t.Errorf("kernel %d: %+v", i, k)
		}
		if !strings.HasPrefix(k.Name, string(in.Steps[i].Op.Kind())+"_") {
			t.Errorf("kernel %d named %s", i, k.Name)
		}
		if last := k.Params[len(k.Params)-1]; !last.Write || last.DType != "f32" && last.DType != "i32" {
			t.Errorf("kernel %d result parameter %+v", i, last)
		}
	}
	if k := prog.Kernels[2]; k.Shared != k.Local[0]*4 {
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

// TestOffsetsShareKernels: launches that differ only in where their
// tensors lie share one kernel and one compile, each dispatch carrying
// its offsets; a different word type, chosen from the offsets'
// alignment, is a different kernel.
func TestOffsetsShareKernels(t *testing.T) {
	in := &lir.Program{ArenaBytes: 4096}
	for _, off := range []int64{0, 64, 1072, 368, 2000, 2002} {
		in.Buffers = append(in.Buffers, lir.Buffer{Kind: lir.BufArena, Offset: off, Bytes: 32})
	}
	cp := func(src, dst lir.Buf, srcOff int64) lir.Op {
		return &lir.Copy{Src: src, Dst: dst, ElemSize: 4, Shape: []int64{2, 3}, SrcOff: srcOff,
			SrcStrides: []int64{1, 2}, DstStrides: []int64{3, 1}}
	}
	for _, op := range []lir.Op{cp(0, 1, 0), cp(2, 3, 1), cp(3, 2, 2), &lir.Memcpy{Src: 0, Dst: 1}, &lir.Memcpy{Src: 2, Dst: 4}, &lir.Memcpy{Src: 0, Dst: 5}} {
		in.Steps = append(in.Steps, lir.Step{Op: op, Src: "m.hir:1:1 " + string(op.Kind())})
	}
	var compiles atomic.Int32
	prog, err := Generate(in, Target{Name: "vulkan", Lang: kir.GLSL, Compile: func(name, src string) ([]byte, string, error) {
		compiles.Add(1)
		return []byte(name), "spirv", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Verify(); err != nil {
		t.Fatal(err)
	}
	// The copies: one kernel. The memcpys at 4-byte aligned offsets: one
	// kernel of i32 words; the one to byte 2002: 2-byte words, another.
	if len(prog.Kernels) != 3 || compiles.Load() != 3 {
		t.Fatalf("%d kernels, %d compiles, want 3 and 3", len(prog.Kernels), compiles.Load())
	}
	want := []struct {
		kernel  int
		offsets []int64
	}{{0, []int64{0, 16}}, {0, []int64{268 + 1, 92}}, {0, []int64{92 + 2, 268}}, {1, []int64{0, 16}}, {1, []int64{268, 500}}, {2, []int64{0, 1001}}}
	for i, s := range prog.Steps {
		d := s.Op.(*lir.Dispatch)
		if d.Kernel != want[i].kernel || !slices.Equal(d.Offsets, want[i].offsets) {
			t.Errorf("step %d: kernel %d offsets %v, want kernel %d offsets %v", i, d.Kernel, d.Offsets, want[i].kernel, want[i].offsets)
		}
		if s.Kind() != "dispatch_offsets" {
			t.Errorf("step %d tagged %s", i, s.Kind())
		}
	}
	for _, k := range prog.Kernels {
		if !k.Offsets || !strings.Contains(k.Source, "layout(push_constant)") || strings.Contains(k.Source, "268") {
			t.Errorf("kernel %s takes no launch offsets:\n%s", k.Name, k.Source)
		}
	}
	if p := prog.Kernels[2].Params[0]; p.DType != "i16" {
		t.Errorf("memcpy to byte 2002 moves %s words", p.DType)
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
