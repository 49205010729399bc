// Package loader opens a .rlx artifact and runs it: it maps the file,
// verifies every section, picks the variant whose shapes match the inputs
// and runs it on the artifact's target. A Model is opened once and run many
// times, from many goroutines at once. It imports no compiler package.
//
// The targets' runtimes are one table (Targets): each opens its device
// once per Model and prepares an Executor per variant. The Model names no
// target; a new runtime is one entry in the table and an adapter beside it.
package loader

import (
	"fmt"
	"math"
	"strings"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/lir"
	cpurt "github.com/rlx-project/rlx/pkg/targets/cpu/runtime"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Options configure a Model.
type Options struct {
	Threads int // worker threads for kernels; 0 means one per CPU
	// MaxMemory bounds the host memory one run may allocate (arena and
	// outputs): a run of a variant that needs more fails with a
	// *MemoryError before allocating. It also bounds what Open decodes
	// (the artifact's compressed sections). 0 means DefaultMaxMemory();
	// < 0, no limit.
	MaxMemory int64
}

// Model is an opened artifact.
type Model struct {
	path      string
	file      *artifact.File
	Manifest  artifact.Manifest
	variants  []*variant
	rt        Runtime // the artifact's target's, from Targets
	maxMemory int64   // Options.MaxMemory resolved; < 0: no limit
	device    string  // rt.Device()
	threads   int     // the runtime's worker threads (Runtime.Threads)
}

type variant struct {
	info artifact.Variant
	exec Executor
	prog *lir.Program
}

// Device names what the model runs on: "cpu", or the GPU's API and name.
func (m *Model) Device() string { return m.device }

// ProfilesSteps reports whether Profile can time the model's steps (the
// cpu target's kernels).
func (m *Model) ProfilesSteps() bool { return m.rt != nil && m.rt.ProfilesSteps() }

// DeviceError is a failure to open the device an artifact's target runs
// on (no driver, no GPU, no runtime for this platform): the artifact may be
// fine, the machine lacks what it needs.
type DeviceError struct {
	Target string
	Err    error
}

func (e *DeviceError) Error() string { return e.Err.Error() }
func (e *DeviceError) Unwrap() error { return e.Err }

// MaxVariants bounds an artifact's variants: each is decoded, verified
// and prepared at Open, so the count is a memory and time demand; real
// artifacts have a handful (one per dim binding built).
const MaxVariants = 1 << 12

// InputsError is a run refused because the inputs do not fit the model
// (a missing or unknown input, another dtype or rank, shapes no variant
// was built for); nothing ran.
type InputsError struct{ Err error }

func (e *InputsError) Error() string { return e.Err.Error() }
func (e *InputsError) Unwrap() error { return e.Err }

// Open maps and verifies an artifact, opens its target's device and
// prepares every variant.
func Open(path string, opts Options) (*Model, error) {
	f, err := artifact.Open(path)
	if err != nil {
		return nil, err
	}
	m := &Model{path: path, file: f, maxMemory: opts.MaxMemory}
	if m.maxMemory == 0 {
		m.maxMemory = DefaultMaxMemory()
	}
	if err := checkSections(f, m.maxMemory); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.load(opts); err != nil {
		m.release()
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func (m *Model) load(opts Options) error {
	raw, err := m.file.Section("manifest")
	if err != nil {
		return err
	}
	if err := artifact.UnmarshalManifest(raw, &m.Manifest); err != nil {
		return fmt.Errorf("manifest: %v", err)
	}
	wsec, err := m.file.Section("weights")
	if err != nil {
		return err
	}
	weights := make([][]byte, len(m.Manifest.Weights))
	derived := int64(0)
	for i, w := range m.Manifest.Weights {
		if w.Derive != nil {
			if w.Bytes < 0 || w.Bytes > math.MaxInt64/2-derived {
				return fmt.Errorf("weight %s: %d bytes", w.Name, w.Bytes)
			}
			derived += w.Bytes
			continue
		}
		if w.Offset < 0 || w.Bytes < 0 || w.Offset > int64(len(wsec)) || w.Bytes > int64(len(wsec))-w.Offset {
			return fmt.Errorf("weight %s lies outside the weights section", w.Name)
		}
		weights[i] = wsec[w.Offset : w.Offset+w.Bytes : w.Offset+w.Bytes]
	}
	if m.maxMemory >= 0 && derived > m.maxMemory {
		return &MemoryError{Derived: derived, Limit: m.maxMemory}
	}
	// The derived weights, from the stored ones (after all of those are
	// in place: a derivation names its source by index).
	for i, w := range m.Manifest.Weights {
		if w.Derive != nil {
			if weights[i], err = derive(m.Manifest.Weights, i, weights); err != nil {
				return err
			}
		}
	}
	// Every program is decoded and verified before the device opens or
	// anything is allocated for it.
	if n := len(m.Manifest.Variants); n > MaxVariants {
		return fmt.Errorf("manifest: %d variants, more than the %d a model may have", n, MaxVariants)
	}
	progs := make([]*lir.Program, len(m.Manifest.Variants))
	for i, v := range m.Manifest.Variants {
		raw, err := m.file.Section(v.Section)
		if err != nil {
			return err
		}
		p := new(lir.Program)
		if err := artifact.UnmarshalManifest(raw, p); err != nil {
			return fmt.Errorf("section %q: %v", v.Section, err)
		}
		if err := m.verify(p); err != nil {
			return fmt.Errorf("variant %s (section %q): %v", artifact.BindingText(v.Binding), v.Section, err)
		}
		progs[i] = p
	}
	t := m.Manifest.Provenance.Target
	if m.rt, err = openRuntime(t, weights, opts); err != nil {
		return &DeviceError{Target: t, Err: err}
	}
	m.device, m.threads = m.rt.Device(), m.rt.Threads()
	for i, v := range m.Manifest.Variants {
		e, err := m.rt.Prepare(progs[i])
		if err != nil {
			return fmt.Errorf("section %q: %w", v.Section, err)
		}
		m.variants = append(m.variants, &variant{info: v, exec: e, prog: progs[i]})
	}
	if len(m.variants) == 0 {
		return fmt.Errorf("artifact has no variants")
	}
	return nil
}

// verify checks a variant's program (lir's Verify: every step's buffers,
// shapes and indices) and that its inputs and outputs are the signature's,
// in order, with its dtypes and ranks.
func (m *Model) verify(p *lir.Program) error {
	if err := p.Verify(); err != nil {
		return err
	}
	// Native code is checked for what it claims to be before any of it
	// is mapped executable.
	if err := cpurt.ValidateNative(p.Native); err != nil {
		return err
	}
	sig := m.Manifest.Signature
	for _, io := range []struct {
		what  string
		slots []lir.Slot
		sig   []artifact.SigTensor
	}{{"inputs", p.Inputs, sig.Inputs}, {"outputs", p.Outputs, sig.Outputs}} {
		if len(io.slots) != len(io.sig) {
			return fmt.Errorf("the program has %d %s, the signature %d", len(io.slots), io.what, len(io.sig))
		}
		for i, s := range io.slots {
			want := io.sig[i]
			if s.Name != want.Name || s.DType != want.DType || len(s.Shape) != len(want.Shape) {
				return fmt.Errorf("%s %d is %s %s%v, the signature says %s %s[%s]", io.what, i, s.Name, s.DType, s.Shape, want.Name, want.DType, strings.Join(want.Shape, ", "))
			}
		}
	}
	return nil
}

// Close frees the device objects, stops the workers and unmaps the file.
func (m *Model) Close() error {
	m.release()
	return m.file.Close()
}

// release closes the executors and the runtime.
func (m *Model) release() {
	for _, v := range m.variants {
		v.exec.Close()
	}
	m.variants = nil
	if m.rt != nil {
		m.rt.Close()
		m.rt = nil
	}
}

// Named is a tensor with its signature name.
type Named struct {
	Name   string
	Tensor *tensor.Tensor
}

// Variants lists the bindings the artifact was built for.
func (m *Model) Variants() []artifact.Variant {
	out := make([]artifact.Variant, len(m.variants))
	for i, v := range m.variants {
		out[i] = v.info
	}
	return out
}

// Inputs lists the program inputs of the variant that binding selects (or
// the first variant), with concrete shapes: what rlxrun --fill generates.
// binding may name only some dims: it selects the one variant that agrees
// on them, and is an error when none or several do.
// A *MemoryError says that the inputs and one run of the variant would
// need more host memory than the Model may use, before the caller
// allocates the inputs.
func (m *Model) Inputs(binding map[string]int64) ([]lir.Slot, error) {
	v := m.variants[0]
	if binding != nil {
		var matches []*variant
		for _, c := range m.variants {
			if agrees(c.info.Binding, binding) {
				matches = append(matches, c)
			}
		}
		switch {
		case len(matches) == 0:
			return nil, fmt.Errorf("no variant for %s; the artifact has %s", artifact.BindingText(binding), m.variantList())
		case len(matches) > 1:
			var names []string
			for _, c := range matches {
				names = append(names, artifact.BindingText(c.info.Binding))
			}
			return nil, fmt.Errorf("%s matches %d variants (%s): name more dims", artifact.BindingText(binding), len(matches), strings.Join(names, "; "))
		}
		v = matches[0]
	}
	if err := m.checkMemory(v, slotBytes(v.prog.Inputs)); err != nil {
		return nil, err
	}
	return v.prog.Inputs, nil
}

// agrees reports whether a variant's binding has every dim of part with
// the same value.
func agrees(binding, part map[string]int64) bool {
	for k, v := range part {
		if got, ok := binding[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func (m *Model) variantList() string {
	parts := make([]string, len(m.variants))
	for i, v := range m.variants {
		parts[i] = artifact.BindingText(v.info.Binding)
	}
	return strings.Join(parts, "; ")
}

// Run runs the model on inputs given by name. It picks the variant whose
// input shapes match, and says precisely what is wrong when none does.
func (m *Model) Run(inputs map[string]*tensor.Tensor) ([]Named, error) {
	return m.run(nil, inputs, nil)
}

// RunInto runs like Run, writing the outputs into dst's tensors where dst
// is the outputs of an earlier run of the same variant and the target's
// executor reuses them (the cpu target's does), so that a serving loop
// passing each run's outputs to the next allocates none; any other dst is
// ignored. dst's old contents are overwritten.
func (m *Model) RunInto(dst []Named, inputs map[string]*tensor.Tensor) ([]Named, error) {
	return m.run(dst, inputs, nil)
}

// Profile runs like RunInto and reports the time of every step; it fails
// where the target does not time steps (ProfilesSteps).
func (m *Model) Profile(dst []Named, inputs map[string]*tensor.Tensor, prof Profile) ([]Named, error) {
	return m.run(dst, inputs, prof)
}

func (m *Model) run(dst []Named, inputs map[string]*tensor.Tensor, prof Profile) ([]Named, error) {
	v, ordered, err := m.pick(inputs)
	if err != nil {
		return nil, &InputsError{Err: err}
	}
	if prof != nil && !m.ProfilesSteps() {
		return nil, fmt.Errorf("--profile times the steps on cpu and cuda; this artifact runs on %s, which times none", m.Device())
	}
	if err := m.checkMemory(v, 0); err != nil {
		return nil, err
	}
	p := v.prog
	var reuse []*tensor.Tensor
	for i, d := range dst {
		if i >= len(p.Outputs) || d.Name != p.Outputs[i].Name {
			reuse = nil
			break
		}
		reuse = append(reuse, d.Tensor)
	}
	outs, err := v.exec.Run(ordered, reuse, prof)
	if err != nil {
		return nil, err
	}
	named := make([]Named, len(outs))
	for i, o := range outs {
		named[i] = Named{Name: p.Outputs[i].Name, Tensor: o}
	}
	return named, nil
}

// pick checks names and dtypes against the signature, then finds the
// variant with exactly these shapes.
func (m *Model) pick(inputs map[string]*tensor.Tensor) (*variant, []*tensor.Tensor, error) {
	sig := m.Manifest.Signature
	known := map[string]bool{}
	for _, s := range sig.Inputs {
		known[s.Name] = true
		t, ok := inputs[s.Name]
		if !ok {
			return nil, nil, fmt.Errorf("missing input %s (%s%v)", s.Name, s.DType, s.Shape)
		}
		if t.DType.String() != s.DType {
			return nil, nil, fmt.Errorf("input %s is %s, the model takes %s", s.Name, t.DType, s.DType)
		}
		if len(t.Shape) != len(s.Shape) {
			return nil, nil, fmt.Errorf("input %s has rank %d %s, the model takes rank %d [%s]", s.Name, len(t.Shape), tensor.ShapeString(t.Shape), len(s.Shape), strings.Join(s.Shape, ", "))
		}
		if err := t.Check(); err != nil {
			return nil, nil, fmt.Errorf("input %s: %v", s.Name, err)
		}
	}
	for name := range inputs {
		if !known[name] {
			return nil, nil, fmt.Errorf("unknown input %s (the model takes %s)", name, inputNames(sig))
		}
	}
	var best string
	for _, v := range m.variants {
		p := v.prog
		ordered := make([]*tensor.Tensor, len(p.Inputs))
		mismatch := ""
		for i, slot := range p.Inputs {
			t := inputs[slot.Name]
			ordered[i] = t
			for d := range slot.Shape {
				if t.Shape[d] != slot.Shape[d] && mismatch == "" {
					mismatch = fmt.Sprintf("input %s: dim %d (%s) is %d", slot.Name, d, sigDim(sig, slot.Name, d), t.Shape[d])
				}
			}
		}
		if mismatch == "" {
			return v, ordered, nil
		}
		if best == "" {
			best = mismatch
		}
	}
	return nil, nil, fmt.Errorf("%s, but the artifact was built for %s (rebuild with --bind for these shapes)", best, m.variantList())
}

func sigDim(sig artifact.Signature, input string, d int) string {
	for _, s := range sig.Inputs {
		if s.Name == input && d < len(s.Shape) {
			return s.Shape[d]
		}
	}
	return "?"
}

func inputNames(sig artifact.Signature) string {
	var names []string
	for _, s := range sig.Inputs {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

func bindingText(v *variant) string { return artifact.BindingText(v.info.Binding) }
