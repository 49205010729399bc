package artifact

// This file defines what an artifact means: the manifest and the executable
// program of each variant. The compiler's codegen writes these; the runtime
// reads them. They are the contract between the two, so every field is
// plain data (msgpack) and kernels are named by string.

// Manifest is the "manifest" section.
type Manifest struct {
	Module     string      `msgpack:"module"`
	Provenance Provenance  `msgpack:"provenance"`
	Signature  Signature   `msgpack:"signature"`
	Variants   []Variant   `msgpack:"variants"`
	Weights    []WeightRef `msgpack:"weights"`
}

// Provenance records how the artifact was built.
type Provenance struct {
	Compiler      string   `msgpack:"compiler"`       // rlxc version
	Target        string   `msgpack:"target"`         // "cpu"
	Features      []string `msgpack:"features"`       // CPU features the kernels rely on
	Options       []string `msgpack:"options"`        // build options that change the output
	Bindings      []string `msgpack:"bindings"`       // "batch=1,seq=128" per variant
	SourceDigest  string   `msgpack:"source_digest"`  // sha256 of the canonical HIR
	WeightsDigest string   `msgpack:"weights_digest"` // sha256 over the weights
	Entry         string   `msgpack:"entry"`          // the function compiled
}

// Signature is the entry function's interface with symbolic dims as text.
type Signature struct {
	Inputs  []SigTensor `msgpack:"inputs"`
	Outputs []SigTensor `msgpack:"outputs"`
	Dims    []DimInfo   `msgpack:"dims"`
}

// SigTensor is one input or output: name, dtype name and dims ("batch", "512").
type SigTensor struct {
	Name  string   `msgpack:"name"`
	DType string   `msgpack:"dtype"`
	Shape []string `msgpack:"shape"`
}

// DimInfo is a symbolic dim and its bounds.
type DimInfo struct {
	Name string `msgpack:"name"`
	Lo   int64  `msgpack:"lo"`
	Hi   int64  `msgpack:"hi"`
}

// Variant is the program specialized for one binding.
type Variant struct {
	Binding    map[string]int64 `msgpack:"binding"`
	Section    string           `msgpack:"section"`     // the section holding its Program
	ArenaBytes int64            `msgpack:"arena_bytes"` // scratch memory per run
	TempBytes  int64            `msgpack:"temp_bytes"`  // sum of all intermediate tensors, for comparison
	Steps      int              `msgpack:"steps"`
}

// WeightRef locates one weight (or folded constant) in the "weights" section.
type WeightRef struct {
	Name   string  `msgpack:"name"`
	DType  string  `msgpack:"dtype"`
	Shape  []int64 `msgpack:"shape"`
	Offset int64   `msgpack:"offset"` // within the section, 64-byte aligned
	Bytes  int64   `msgpack:"bytes"`
}

// Program is one variant: concrete shapes, a buffer table and a schedule of
// kernel launches.
type Program struct {
	Inputs     []Slot   `msgpack:"inputs"`
	Outputs    []Slot   `msgpack:"outputs"`
	Buffers    []Buffer `msgpack:"buffers"`
	ArenaBytes int64    `msgpack:"arena_bytes"`
	Steps      []Step   `msgpack:"steps"`
	// Kernels is a GPU program's kernel table; its steps are "dispatch"
	// launches into it. Empty for the cpu target.
	Kernels []Kernel `msgpack:"kernels,omitempty"`
}

// Kernel is one GPU kernel: its source, and its compiled form where the
// build compiled it (SPIR-V for vulkan, PTX for cuda).
//
// A "dispatch" step launches one: Ints are [kernel index, groups x, y, z];
// Args bind the kernel's parameters, in order, to program buffers. A
// parameter sees its whole device buffer (the arena, one weight, one input
// or output); the element offset of the tensor within it is compiled into
// the kernel, so buffers need no aligned sub-buffer bindings.
type Kernel struct {
	Name       string        `msgpack:"name"`
	Lang       string        `msgpack:"lang"`  // glsl, cuda, msl
	Entry      string        `msgpack:"entry"` // the entry point in Source and Binary
	Source     string        `msgpack:"source"`
	Binary     []byte        `msgpack:"binary,omitempty"`
	BinaryKind string        `msgpack:"binary_kind,omitempty"` // spirv, ptx
	Local      [3]int64      `msgpack:"local"`                 // workgroup size
	Shared     int64         `msgpack:"shared"`                // workgroup memory, bytes
	Params     []KernelParam `msgpack:"params"`
}

// KernelParam is one buffer parameter of a kernel.
type KernelParam struct {
	Name  string `msgpack:"name"`
	DType string `msgpack:"dtype"` // element type: f32, i64, u8, ...
	Write bool   `msgpack:"write"`
}

// Slot binds a program input or output to a buffer.
type Slot struct {
	Name   string  `msgpack:"name"`
	DType  string  `msgpack:"dtype"`
	Shape  []int64 `msgpack:"shape"`
	Buffer int     `msgpack:"buffer"`
}

// Where a buffer's bytes live.
const (
	BufArena  = "arena"  // Offset within the per-run arena
	BufWeight = "weight" // Index into Manifest.Weights, Offset within that weight
	BufInput  = "input"  // Index of the input slot
	BufOutput = "output" // Index of the output slot (allocated per run)
)

// Buffer is a run of bytes a kernel reads or writes. Views (reshapes)
// are buffers that share bytes with another.
type Buffer struct {
	Kind   string `msgpack:"kind"`
	Index  int    `msgpack:"index"`
	Offset int64  `msgpack:"offset"`
	Bytes  int64  `msgpack:"bytes"`
}

// Step is one kernel launch. Kernel names the kernel; Args are buffer
// indices (operands, then results). Ints, Floats and Shapes are the
// kernel's parameters, whose meaning each kernel documents; Code is the
// bytecode of a fused elementwise kernel.
type Step struct {
	Kernel string    `msgpack:"kernel"`
	Args   []int     `msgpack:"args"`
	Ints   []int64   `msgpack:"ints,omitempty"`
	Floats []float64 `msgpack:"floats,omitempty"`
	Shapes [][]int64 `msgpack:"shapes,omitempty"`
	Code   []Instr   `msgpack:"code,omitempty"`
	Src    string    `msgpack:"src"` // the source operation, for profiles and errors
}

// Instr is one instruction of a fused elementwise kernel: Dst = Op(A, B, C)
// over registers, or a load of operand A / a store to result A / an
// immediate Imm.
type Instr struct {
	Op  string  `msgpack:"op"`
	Dst int     `msgpack:"d"`
	A   int     `msgpack:"a"`
	B   int     `msgpack:"b,omitempty"`
	C   int     `msgpack:"c,omitempty"`
	Imm float64 `msgpack:"imm,omitempty"`
}
