package loader

import (
	"fmt"

	"github.com/rlx-project/rlx/internal/bytesize"
	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// MemoryError is a run that would need more host memory than the Model
// may use (Options.MaxMemory): the artifact is fine, this machine (or the
// limit) is too small for the variant.
type MemoryError struct {
	Variant       string // its binding; "" for Sections
	Arena, Output int64  // bytes each run allocates
	Input         int64  // bytes of inputs the caller is about to allocate (rlxrun --fill), or 0
	// Sections is, for an artifact refused at Open, the bytes its
	// compressed sections decode to (the Model decodes them all).
	Sections int64
	// Derived is, for an artifact refused at Open, the bytes of the
	// weights the loader derives (artifact.Derivation).
	Derived int64
	Limit   int64
}

func (e *MemoryError) Error() string {
	if e.Variant == "" && e.Derived > 0 {
		return fmt.Sprintf("the weights the artifact derives at load take %s, more than the limit of %s (rlxrun --max-memory)",
			bytesize.Format(e.Derived), bytesize.Format(e.Limit))
	}
	if e.Variant == "" {
		return fmt.Sprintf("the artifact's compressed sections decode to %s, more than the limit of %s (rlxrun --max-memory)",
			bytesize.Format(e.Sections), bytesize.Format(e.Limit))
	}
	what := fmt.Sprintf("arena %s, outputs %s", bytesize.Format(e.Arena), bytesize.Format(e.Output))
	if e.Input > 0 {
		what += ", inputs " + bytesize.Format(e.Input)
	}
	return fmt.Sprintf("variant %s needs %s per run (%s), more than the limit of %s (rlxrun --max-memory)",
		e.Variant, bytesize.Format(e.Arena+e.Output+e.Input), what, bytesize.Format(e.Limit))
}

// MaxMemory is the host memory one run may allocate (< 0: no limit): also
// the bound a caller puts on inputs it reads for the model.
func (m *Model) MaxMemory() int64 { return m.maxMemory }

// DefaultMaxMemory is the limit a Model gets when Options.MaxMemory is 0:
// three quarters of the machine's physical memory (no limit where it
// cannot be read), so that a variant too large for the machine is an error
// that says so instead of the Go runtime's fatal out-of-memory.
func DefaultMaxMemory() int64 {
	total := physicalMemory()
	if total <= 0 {
		return -1
	}
	return total / 4 * 3
}

// slotBytes is the size of the tensors of slots (verified programs: the
// products fit).
func slotBytes(slots []lir.Slot) int64 {
	n := int64(0)
	for _, s := range slots {
		dt, _ := tensor.ParseDType(s.DType)
		n += tensor.NumElements(s.Shape) * int64(dt.Size())
	}
	return n
}

// checkMemory refuses a run of v past the limit: its arena and outputs,
// plus inputs bytes the caller is about to allocate for it.
func (m *Model) checkMemory(v *variant, inputs int64) error {
	if m.maxMemory < 0 || !m.rt.HostArena() {
		return nil // no limit, or a GPU target: its arena lives on the device
	}
	arena, out := v.prog.ArenaBytes, slotBytes(v.prog.Outputs)
	if arena+out+inputs > m.maxMemory {
		return &MemoryError{Variant: artifact.BindingText(v.info.Binding), Arena: arena, Output: out, Input: inputs, Limit: m.maxMemory}
	}
	return nil
}

// checkSections refuses, before decoding anything, an artifact whose
// compressed sections decode to more than the limit: Open decodes the
// manifest, every program and compressed weights, and a section's raw
// size may be up to artifact.MaxZstdRatio times its stored size.
func checkSections(f *artifact.File, limit int64) error {
	if limit < 0 {
		return nil
	}
	total := int64(0)
	for _, s := range f.Sections() {
		if s.Codec == artifact.CodecRaw {
			continue // mapped, not allocated
		}
		if total += s.Raw; total > limit || total < 0 {
			return &MemoryError{Sections: total, Limit: limit}
		}
	}
	return nil
}
