// Package lir is the low-level IR: one variant of a model, fully
// specialized. Shapes, strides and geometry are concrete numbers, tensors
// live in numbered buffers (arena ranges, weights, inputs, outputs), and
// the schedule is a list of steps, each one typed kernel launch (MatMul,
// Conv2D, Elementwise, ...). Backends read these structs; the runtimes
// run them; the artifact stores them, one Program per variant.
//
// lir is data: it imports no compiler package, so the runtime links it.
package lir

import "fmt"

// Program is one variant: concrete shapes, a buffer table and a schedule.
type Program struct {
	Inputs     []Slot   `msgpack:"inputs"`
	Outputs    []Slot   `msgpack:"outputs"`
	Buffers    []Buffer `msgpack:"buffers"`
	ArenaBytes int64    `msgpack:"arena_bytes"`
	Steps      []Step   `msgpack:"steps"`
	// Kernels is a GPU program's kernel table: its steps are Dispatch
	// launches into it. Empty on the CPU.
	Kernels []Kernel `msgpack:"kernels,omitempty"`
	// Native is a CPU program's compiled code: its NativeCall steps call
	// functions of it. Nil when every step runs on the runtime's kernels.
	Native *Native `msgpack:"native,omitempty"`
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
	BufWeight = "weight" // Index into the manifest's weights, Offset within that weight
	BufInput  = "input"  // Index of the input slot
	BufOutput = "output" // Index of the output slot (allocated per run)
)

// Buffer is a run of bytes a kernel reads or writes. Views (reshapes) are
// buffers that share bytes with another.
type Buffer struct {
	Kind   string `msgpack:"kind"`
	Index  int    `msgpack:"index"`
	Offset int64  `msgpack:"offset"`
	Bytes  int64  `msgpack:"bytes"`
}

// Buf is an index into Program.Buffers. An optional operand that is absent
// is NoBuf.
type Buf int

// NoBuf marks an absent optional operand (a matmul without a bias, say).
const NoBuf Buf = -1

func (b Buf) String() string {
	if b == NoBuf {
		return "-"
	}
	return fmt.Sprintf("b%d", int(b))
}

// Step is one kernel launch: the operation and where it came from.
type Step struct {
	Op  Op
	Src string // the source operation, for profiles and errors: "mlp.hir:12:7 linear"
}

// Kind names an operation in the artifact and in reports.
func (s *Step) Kind() string { return string(s.Op.Kind()) }

// Kind is the tag an operation is encoded under.
type Kind string

// Op is one kernel launch's parameters. Each kind of kernel is its own
// struct type in ops.go; a backend switches on the type.
type Op interface {
	// Kind is the operation's tag; for a few types it depends on a field
	// (Pool2D: maxpool2d or avgpool2d).
	Kind() Kind
	// Refs lists every buffer the operation reads or writes, optional
	// operands only when present.
	Refs() []Ref
}

// Ref is one buffer an operation uses.
type Ref struct {
	Buf   Buf
	Write bool
}

func reads(bs ...Buf) []Ref {
	out := make([]Ref, 0, len(bs))
	for _, b := range bs {
		out = append(out, Ref{Buf: b})
	}
	return out
}

// opt appends the optional operands that are present.
func opt(rs []Ref, write bool, bs ...Buf) []Ref {
	for _, b := range bs {
		if b != NoBuf {
			rs = append(rs, Ref{Buf: b, Write: write})
		}
	}
	return rs
}

func writes(rs []Ref, bs ...Buf) []Ref {
	for _, b := range bs {
		rs = append(rs, Ref{Buf: b, Write: true})
	}
	return rs
}

// Kernel is one GPU kernel: its source, and its compiled form where the
// build compiled it (SPIR-V for vulkan, PTX for cuda). A Dispatch step
// launches one. A parameter sees its whole device buffer (the arena, one
// weight, one input or output), so buffers need no aligned sub-buffer
// bindings. The element offset of the tensor within it is either compiled
// into the kernel, or, where Offsets is set, passed at launch (the
// Dispatch's Offsets: a push-constant block of one int per parameter in
// GLSL, trailing int arguments in CUDA, a constant int array in MSL), so
// launches that differ only in where their tensors lie share one kernel.
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
	Offsets    bool          `msgpack:"offsets,omitempty"` // takes its parameters' offsets at launch
}

// KernelParam is one buffer parameter of a kernel.
type KernelParam struct {
	Name  string `msgpack:"name"`
	DType string `msgpack:"dtype"` // element type: f32, i64, u8, ...
	Write bool   `msgpack:"write"`
}

// Native is a CPU program's compiled code: functions generated for this
// variant (a fused elementwise region each, say), compiled ahead of time
// for one or more CPU levels. Every object defines every function; the
// runtime maps the best object this CPU runs and NativeCall steps call
// into it.
type Native struct {
	Funcs   []NativeFunc   `msgpack:"funcs"`
	Objects []NativeObject `msgpack:"objects"`
}

// NativeFunc is one generated function, of the C type
//
//	int64_t name(void *const *args, const int64_t *bytes, int64_t lo, int64_t hi)
//
// args holds the base address of each buffer of the call (its inputs,
// then its outputs) and bytes their sizes; the function computes the
// indices [lo, hi) of its range [0, N), so the runtime splits the range
// among its workers in chunks of at least Grain. It returns 0, or 1
// without touching anything when a buffer is smaller than In or Out
// says (the compiled sizes are in its code too).
type NativeFunc struct {
	Name  string `msgpack:"name"` // the exported symbol
	N     int64  `msgpack:"n"`
	Grain int64  `msgpack:"grain"`
	// In and Out are the bytes the function reads from each input buffer
	// and writes to each output buffer: a call binds buffers at least
	// that large (Verify checks it).
	In  []int64 `msgpack:"in"`
	Out []int64 `msgpack:"out"`
	// Source is the generated C, for inspection and reproducing a build.
	Source string `msgpack:"source,omitempty"`
}

// NativeObject is the functions compiled for one CPU level: an ELF shared
// object with no imports, which the runtime's own loader maps.
type NativeObject struct {
	Level string `msgpack:"level"` // x86-64-v3, x86-64-v4, armv8.2-a
	ELF   []byte `msgpack:"elf"`
}
