package loader

import (
	"fmt"
	"strings"
	"time"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Profile receives the time of each step of a run when profiling.
type Profile func(step int, s *lir.Step, t StepTime)

// StepTime is one step's time in a profiled run.
type StepTime struct {
	// Wall is the step's time from start to end: on the host clock for
	// cpu, on the device's between its events for cuda.
	Wall time.Duration
	// Busy is, for cpu, the run time of the step's parallel chunks summed
	// over the threads that ran them: Busy/Wall is how many threads the
	// step kept busy on average. It is 0 for a step that split no work
	// over the worker pool, and on GPUs.
	Busy time.Duration
	// Generated is, for a cpu step that calls generated code, the kind of
	// the step the code replaced (conv2d_taps, ew, maxpool2d, ...); ""
	// otherwise.
	Generated string
}

// Executor runs one variant's program on its target's device, many times
// and from many goroutines at once.
type Executor interface {
	// Run runs the program on inputs ordered as the program's input slots
	// (the Model has checked them against the slots). reuse, when not
	// nil, is one tensor per output slot from an earlier run of this
	// executor: the executor may write the outputs into them and return
	// them (their old contents are lost), or ignore them. prof, when not
	// nil, receives each step's time; an executor that times no steps
	// (Runtime.ProfilesSteps is false) fails the run.
	Run(inputs, reuse []*tensor.Tensor, prof Profile) ([]*tensor.Tensor, error)
	// Close frees what the executor placed on the device.
	Close()
}

// Runtime is one target's runtime for one Model: its device, opened once
// with the artifact's weights, on which every variant runs.
type Runtime interface {
	// Device names what the model runs on: "cpu", or the GPU's API and
	// name.
	Device() string
	// ProfilesSteps reports whether the executors time each step (Run's
	// prof).
	ProfilesSteps() bool
	// HostArena reports whether each run allocates its arena and outputs
	// in host memory (what Options.MaxMemory bounds).
	HostArena() bool
	// Threads is how many host worker threads run the kernels (0 where
	// the device runs them).
	Threads() int
	// Prepare checks one variant's program against the target and the
	// weights and readies it to run.
	Prepare(p *lir.Program) (Executor, error)
	// Close frees the device and the weights placed on it, after every
	// executor is closed.
	Close()
}

// Target is one entry of the table of runtimes: a target rlxc builds for
// and how this rlxrun runs its artifacts.
type Target struct {
	Name string
	// Open opens the target's device for one Model, with the artifact's
	// mapped weights (indexed as its manifest's). Nil where this rlxrun
	// has no runtime for the target.
	Open func(weights [][]byte, opts Options) (Runtime, error)
	// NoRuntime says why there is no runtime, where Open is nil.
	NoRuntime string
}

// Targets lists the targets whose artifacts rlxrun knows, the default
// (cpu) first. Adding a runtime is adding an entry here.
func Targets() []Target {
	return []Target{
		{Name: "cpu", Open: openCPU},
		{Name: "vulkan", Open: openGPU(openVulkan)},
		{Name: "cuda", Open: openGPU(openCUDA)},
		{Name: "metal", NoRuntime: "rlxrun has no Metal runtime yet (it needs macOS)"},
	}
}

// openRuntime opens the runtime of an artifact's target.
func openRuntime(target string, weights [][]byte, opts Options) (Runtime, error) {
	var runs []string
	for _, t := range Targets() {
		if t.Name == target {
			if t.Open == nil {
				return nil, fmt.Errorf("artifact is for target %s; %s", t.Name, t.NoRuntime)
			}
			return t.Open(weights, opts)
		}
		if t.Open != nil {
			runs = append(runs, t.Name)
		}
	}
	return nil, fmt.Errorf("artifact is for target %q; this rlxrun runs %s artifacts", target, andList(runs))
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
