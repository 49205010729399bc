package loader

import (
	"errors"
	"runtime"
	"strings"
	"time"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	cpurt "github.com/rlx-project/rlx/pkg/targets/cpu/runtime"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// cpuRuntime runs cpu artifacts: the weights stay mapped, and the Model's
// worker pool (Options.Threads) runs every variant's kernels.
type cpuRuntime struct {
	weights [][]byte
	pool    *parallel.Pool
}

func openCPU(weights [][]byte, opts Options) (Runtime, error) {
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	return &cpuRuntime{weights: weights, pool: parallel.NewPool(threads)}, nil
}

func (*cpuRuntime) Device() string      { return "cpu" }
func (*cpuRuntime) ProfilesSteps() bool { return true }
func (*cpuRuntime) HostArena() bool     { return true }
func (r *cpuRuntime) Threads() int      { return r.pool.Threads() }

func (r *cpuRuntime) Prepare(p *lir.Program) (Executor, error) {
	e, err := cpurt.New(p, r.weights)
	if err != nil {
		var le *cpurt.LevelError
		if errors.As(err, &le) {
			return nil, &DeviceError{Target: "cpu", Err: err}
		}
		return nil, err
	}
	return &cpuExecutor{exec: e, pool: r.pool, prog: p}, nil
}

func (r *cpuRuntime) Close() { r.pool.Close() }

type cpuExecutor struct {
	exec *cpurt.Exec
	pool *parallel.Pool
	prog *lir.Program
}

func (e *cpuExecutor) Run(inputs, reuse []*tensor.Tensor, prof Profile) ([]*tensor.Tensor, error) {
	var p cpurt.Profile
	if prof != nil {
		p = func(i int, s *lir.Step, wall, busy time.Duration) {
			prof(i, s, StepTime{Wall: wall, Busy: busy, Generated: generatedKind(e.prog, s)})
		}
	}
	return e.exec.RunInto(e.pool, reuse, inputs, p)
}

// Close unmaps the program's native code; arenas are garbage collected.
func (e *cpuExecutor) Close() { e.exec.Close() }

// Code says whether the variant runs native code, and for which level.
func (e *cpuExecutor) Code() string {
	if l := e.exec.NativeLevel(); l != "" {
		return "native " + l
	}
	return "portable"
}

// generatedKind is the kind of the step a native call replaced, read from
// its function's name (rlx_<kind>_<digest>, cgen's naming), or "" for any
// other step.
func generatedKind(p *lir.Program, s *lir.Step) string {
	call, ok := s.Op.(*lir.NativeCall)
	if !ok || p.Native == nil || call.Func < 0 || call.Func >= len(p.Native.Funcs) {
		return ""
	}
	name := strings.TrimPrefix(p.Native.Funcs[call.Func].Name, "rlx_")
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		return name[:i]
	}
	return ""
}
