package loader

import "github.com/rlx-project/rlx/pkg/tensor"

// RunInfo says what runs a set of inputs: for reports (rlxrun --json).
type RunInfo struct {
	Variant string // the binding, as rlxc build --bind takes it
	Device  string // Model.Device
	Threads int    // the cpu runtime's worker threads; 0 for a GPU
	// Code is what the variant's steps run as where the target says:
	// "native x86-64-v4" or "portable" on the cpu.
	Code string
}

// Describer is an Executor that says what its code is (RunInfo.Code).
type Describer interface{ Code() string }

// Info says which variant inputs select and what runs it, or why no
// variant fits them (an *InputsError).
func (m *Model) Info(inputs map[string]*tensor.Tensor) (RunInfo, error) {
	v, _, err := m.pick(inputs)
	if err != nil {
		return RunInfo{}, &InputsError{Err: err}
	}
	info := RunInfo{Variant: bindingText(v), Device: m.Device(), Threads: m.threads}
	if d, ok := v.exec.(Describer); ok {
		info.Code = d.Code()
	}
	return info, nil
}
