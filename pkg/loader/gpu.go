package loader

import (
	"time"

	"github.com/rlx-project/rlx/pkg/lir"
	gpurt "github.com/rlx-project/rlx/pkg/targets/gpu/runtime"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// gpuRuntime runs the artifacts of a GPU target (vulkan, cuda): one
// device per Model, the weights copied to it once for every variant.
type gpuRuntime struct {
	dev     gpurt.Device
	weights *gpurt.Weights
}

// openGPU makes a target's Open from the function that opens its device.
func openGPU(open func() (gpurt.Device, error)) func([][]byte, Options) (Runtime, error) {
	return func(weights [][]byte, _ Options) (Runtime, error) {
		dev, err := open()
		if err != nil {
			return nil, err
		}
		return &gpuRuntime{dev: dev, weights: gpurt.NewWeights(dev, weights)}, nil
	}
}

// openVulkan and openCUDA return a nil Device, not a nil pointer in one,
// on failure.
func openVulkan() (gpurt.Device, error) {
	d, err := gpurt.OpenVulkan()
	if err != nil {
		return nil, err
	}
	return d, nil
}

func openCUDA() (gpurt.Device, error) {
	d, err := gpurt.OpenCUDA()
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (r *gpuRuntime) Device() string { return r.dev.Name() }

// ProfilesSteps is true where the device times launches (cuda with
// events); each step's time is then its kernel's time on the device.
func (r *gpuRuntime) ProfilesSteps() bool {
	t, ok := r.dev.(gpurt.StepTimer)
	return ok && t.TimesSteps()
}

// The arena lives on the device; outputs come back to host tensors the
// size of the program's outputs, which the device run bounds already.
func (*gpuRuntime) HostArena() bool { return false }
func (*gpuRuntime) Threads() int    { return 0 }

func (r *gpuRuntime) Prepare(p *lir.Program) (Executor, error) {
	e, err := gpurt.New(r.dev, p, r.weights)
	if err != nil {
		return nil, err
	}
	return &gpuExecutor{exec: e}, nil
}

// Close frees the weights and the device; a failure to close the device
// has nothing left to undo.
func (r *gpuRuntime) Close() {
	r.weights.Close()
	_ = r.dev.Close()
}

type gpuExecutor struct {
	exec *gpurt.Exec
}

// Run copies the outputs back into new tensors: reuse is ignored. A
// profiled run launches the steps one at a time, each timed on the device
// (Runtime.ProfilesSteps says where that is possible).
func (e *gpuExecutor) Run(inputs, _ []*tensor.Tensor, prof Profile) ([]*tensor.Tensor, error) {
	if prof == nil {
		return e.exec.Run(inputs)
	}
	steps := e.exec.Program().Steps
	return e.exec.Profile(inputs, func(i int, d time.Duration) { prof(i, &steps[i], StepTime{Wall: d}) })
}

func (e *gpuExecutor) Close() { e.exec.Close() }
