package runtime

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// LevelError is a program whose native code is built for no CPU level
// this machine runs: the artifact may be fine, the CPU lacks what it
// needs.
type LevelError struct{ Err error }

func (e *LevelError) Error() string { return e.Err.Error() }
func (e *LevelError) Unwrap() error { return e.Err }

// nativeCode is a program's native code, mapped: the object of the best
// level this CPU runs, and each function's entry.
type nativeCode struct {
	level  string
	module *native.Module
	funcs  []uintptr
}

// pickObject returns the object of the highest level (in native.Levels'
// order) this CPU runs, or a LevelError that says what each level lacks.
func pickObject(n *lir.Native) (*lir.NativeObject, error) {
	rank := map[string]int{}
	for i, l := range native.Levels() {
		rank[l.Name] = i
	}
	var best *lir.NativeObject
	var why []string
	for i := range n.Objects {
		o := &n.Objects[i]
		l, err := native.LookupLevel(o.Level)
		if err == nil {
			err = l.Runs()
		}
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		if best == nil || rank[o.Level] > rank[best.Level] {
			best = o
		}
	}
	if best == nil {
		return nil, &LevelError{Err: fmt.Errorf("the artifact's native code runs on no CPU level this machine has (%s): rebuild it with rlxc build --cpu native (or --cpu portable)",
			strings.Join(why, "; "))}
	}
	return best, nil
}

// ValidateNative checks every object of a program's native code against
// the architecture of the level it claims, before anything is mapped:
// an error is a corrupt or foreign object.
func ValidateNative(n *lir.Native) error {
	if n == nil {
		return nil
	}
	for _, o := range n.Objects {
		l, err := native.LookupLevel(o.Level)
		if err != nil {
			return fmt.Errorf("native code: %v", err)
		}
		if err := native.Validate(o.ELF, l.GOARCH); err != nil {
			return fmt.Errorf("native code for %s: corrupt or foreign object: %v", o.Level, err)
		}
	}
	return nil
}

// loadNative maps the best object of n and resolves its functions.
func loadNative(n *lir.Native) (*nativeCode, error) {
	obj, err := pickObject(n)
	if err != nil {
		return nil, err
	}
	m, err := native.Load(obj.ELF)
	if err != nil {
		return nil, fmt.Errorf("native code for %s: corrupt or foreign object: %v", obj.Level, err)
	}
	c := &nativeCode{level: obj.Level, module: m}
	for _, f := range n.Funcs {
		fn, err := m.Func(f.Name)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("native code for %s: %v", obj.Level, err)
		}
		c.funcs = append(c.funcs, fn)
	}
	return c, nil
}

// runState is what one run owns: the arena, the buffers' slices and a
// native call's argument arrays and chunk function, reused from run to
// run (Exec.arenas) so that a step allocates nothing. Steps run one after
// another, so one set serves every native call of a run.
type runState struct {
	arena []byte
	bufs  [][]byte
	args  []unsafe.Pointer // a native call's buffers' base addresses
	sizes []int64          // and sizes
	fn    uintptr          // the function the chunks call
	lo    int              // the first item of the call's range
	// refused is set by a chunk whose function refused its buffers.
	refused atomic.Bool
	chunk   func(lo, hi int) // calls fn on args, sizes over [lo, hi)
}

func newRunState(p *lir.Program) *runState {
	st := &runState{arena: make([]byte, p.ArenaBytes), bufs: make([][]byte, len(p.Buffers))}
	st.chunk = func(lo, hi int) {
		if native.Call(st.fn, unsafe.Pointer(&st.args[0]), unsafe.Pointer(&st.sizes[0]), int64(st.lo+lo), int64(st.lo+hi)) != 0 {
			st.refused.Store(true)
		}
	}
	return st
}

// release drops the run's references to its inputs and outputs.
func (st *runState) release() {
	clear(st.bufs)
	clear(st.args[:cap(st.args)])
}

// chunkCount is how many chunks a native function's range of n items is
// split into on threads. At its own grain (work enough that a call
// through purego costs about 1% of a chunk) that is n/grain; where that
// leaves threads without a chunk, one chunk a thread, as small as a
// 1/tuning.NativeGrainFloor of the grain; and where it is not a multiple
// of the threads, the next multiple while the chunks stay above that
// floor, else the one below. Each thread owns an equal run of the
// chunks (parallel.Shares): RegNetX-400MF's grouped convolutions over
// 7x7 planes (50 items, a grain of 9) ran as 5 chunks on 2 threads, 3
// on one and 2 on the other.
func chunkCount(n, grain, threads int) int {
	grain = max(grain, 1)
	chunks := n / grain
	if threads <= 1 {
		return chunks
	}
	floor := max(1, grain/tuning.NativeGrainFloor)
	if chunks < threads {
		return min(threads, n/floor)
	}
	if chunks%threads == 0 {
		return chunks
	}
	if up := (chunks/threads + 1) * threads; n/up >= floor {
		return up
	}
	return chunks - chunks%threads
}

// call runs one NativeCall step: its function over its range (or the
// part of it the call names), in chunks
// on the pool's workers. The argument arrays live on the Go heap (they
// do not move) and hold the buffers' base addresses and sizes; all stay
// alive until every chunk has returned. A function refuses buffers
// smaller than it was compiled for (the verifier has checked them
// already; this holds whatever the tables say).
func (st *runState) call(pool *parallel.Pool, f *lir.NativeFunc, fn uintptr, op *lir.NativeCall, bufs [][]byte) error {
	n := len(op.In) + len(op.Out)
	st.args, st.sizes = st.args[:0], st.sizes[:0]
	for _, list := range [2][]lir.Buf{op.In, op.Out} {
		for _, b := range list {
			st.args = append(st.args, unsafe.Pointer(unsafe.SliceData(bufs[b])))
			st.sizes = append(st.sizes, int64(len(bufs[b])))
		}
	}
	st.args, st.sizes = append(st.args, nil), append(st.sizes, 0) // never empty
	st.fn = fn
	st.refused.Store(false)
	items := int(f.N)
	st.lo = 0
	if op.Hi > 0 { // part of the range
		items, st.lo = int(op.Hi-op.Lo), int(op.Lo)
	}
	pool.ForChunks(items, chunkCount(items, int(f.Grain), pool.Threads()), st.chunk)
	goruntime.KeepAlive(bufs)
	if st.refused.Load() {
		return fmt.Errorf("native function %s refused its buffers (%v bytes): they are smaller than it was compiled for", f.Name, st.sizes[:n])
	}
	return nil
}
