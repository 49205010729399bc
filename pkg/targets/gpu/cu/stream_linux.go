//go:build linux && (amd64 || arm64)

package cu

import (
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CUstream_flags, CUstreamCaptureMode and CUevent_flags values (cuda.h).
const (
	streamNonBlocking      = 1 // no implicit ordering with the legacy default stream
	captureModeThreadLocal = 1 // only this thread's unsafe calls break the capture
	eventDefault           = 0
	eventRecordExternal    = 1 // under capture: an event record node, not a dependency
)

// Step is one kernel launch as LaunchOn, NewGraph and Profile take it: the
// grid and block in blocks and threads, dynamic shared memory, and the
// kernel's arguments as Launch takes them.
type Step struct {
	F           *Function
	Grid, Block [3]uint32
	SharedBytes uint32
	Args        []any
}

// Stream is a CUDA stream that does not synchronize with the default
// stream: work queued on it runs in order, after nothing else. Everything
// one executor does (copies in, launches, copies out) goes on one Stream,
// so that order is all the ordering it needs.
type Stream struct {
	ctx *Context
	h   uintptr // CUstream; 0 once destroyed (guarded by ctx.mu)
}

// NewStream creates a stream.
func (c *Context) NewStream() (*Stream, error) {
	if !c.d.streams {
		return nil, ErrNoStreams
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	var h uintptr
	r, _, _ := purego.SyscallN(c.d.cuStreamCreate, uintptr(unsafe.Pointer(&h)), streamNonBlocking)
	if err := c.d.check("cuStreamCreate", r); err != nil {
		return nil, err
	}
	return &Stream{ctx: c, h: h}, nil
}

// Destroy destroys the stream once its queued work is done. Destroying
// twice is a no-op.
func (s *Stream) Destroy() error {
	c := s.ctx
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if s.h == 0 {
		return nil
	}
	r, _, _ := purego.SyscallN(c.d.cuStreamDestroy, s.h)
	s.h = 0
	return c.d.check("cuStreamDestroy_v2", r)
}

// live is entered s's context with s not destroyed; exit afterwards.
func (s *Stream) live(op string) error {
	if err := s.ctx.enter(); err != nil {
		return err
	}
	if s.h == 0 {
		s.ctx.exit()
		return fmt.Errorf("cuda: %s: stream is destroyed", op)
	}
	return nil
}

// CopyToDevice queues a copy of src to device memory at dst, after the
// stream's earlier work. src is Go (pageable) memory, which the driver
// stages before the call returns, so src may be reused at once.
func (s *Stream) CopyToDevice(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if err := s.live("CopyToDevice"); err != nil {
		return err
	}
	defer s.ctx.exit()
	r, _, _ := purego.SyscallN(s.ctx.d.cuMemcpyHtoDAsync, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), s.h)
	return s.ctx.d.check("cuMemcpyHtoDAsync_v2", r)
}

// CopyFromDevice copies len(dst) bytes from device memory at src to dst
// after the stream's earlier work, and waits for it: dst holds the bytes
// when it returns, and an error any earlier launch on the stream hit is
// returned here.
func (s *Stream) CopyFromDevice(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return s.Synchronize()
	}
	if err := s.live("CopyFromDevice"); err != nil {
		return err
	}
	defer s.ctx.exit()
	r, _, _ := purego.SyscallN(s.ctx.d.cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)), s.h)
	if err := s.ctx.d.check("cuMemcpyDtoHAsync_v2", r); err != nil {
		return err
	}
	r, _, _ = purego.SyscallN(s.ctx.d.cuStreamSynchronize, s.h)
	return s.ctx.d.check("cuStreamSynchronize", r)
}

// Synchronize waits for the stream's queued work.
func (s *Stream) Synchronize() error {
	if err := s.live("Synchronize"); err != nil {
		return err
	}
	defer s.ctx.exit()
	r, _, _ := purego.SyscallN(s.ctx.d.cuStreamSynchronize, s.h)
	return s.ctx.d.check("cuStreamSynchronize", r)
}

// packSteps checks the steps and packs their arguments; the pinner must
// outlive the launches' calls.
func (c *Context) packSteps(pin *runtime.Pinner, steps []Step) ([][]unsafe.Pointer, error) {
	params := make([][]unsafe.Pointer, len(steps))
	for i, st := range steps {
		if err := c.checkLaunch(st.F, st.Grid, st.Block); err != nil {
			return nil, err
		}
		p, err := packArgs(pin, st.Args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.F.name, err)
		}
		params[i] = p
	}
	return params, nil
}

// launch calls cuLaunchKernel for st on stream h; the caller has entered.
func (c *Context) launch(st *Step, params []unsafe.Pointer, h uintptr) error {
	if st.F.mod.h == 0 {
		return fmt.Errorf("cuda: Launch(%s): module is unloaded", st.F.name)
	}
	r, _, _ := purego.SyscallN(c.d.cuLaunchKernel, st.F.h,
		uintptr(st.Grid[0]), uintptr(st.Grid[1]), uintptr(st.Grid[2]),
		uintptr(st.Block[0]), uintptr(st.Block[1]), uintptr(st.Block[2]),
		uintptr(st.SharedBytes), h,
		uintptr(unsafe.Pointer(unsafe.SliceData(params))), 0) // extra: NULL
	if r != 0 {
		return c.d.check("cuLaunchKernel("+st.F.name+")", r)
	}
	return nil
}

// withPacked packs the steps' arguments, enters s's context and calls
// fn with them; the arguments stay pinned until fn returns.
func (s *Stream) withPacked(op string, steps []Step, fn func(params [][]unsafe.Pointer) error) error {
	c := s.ctx
	var pin runtime.Pinner
	defer pin.Unpin()
	params, err := c.packSteps(&pin, steps)
	if err != nil {
		return err
	}
	if err := s.live(op); err != nil {
		return err
	}
	defer c.exit()
	return fn(params)
}

// launchAll launches the steps on s in order, with record called on
// events[i] before step i and on the last event after the last step where
// events is not nil; s's context is entered.
func (s *Stream) launchAll(steps []Step, params [][]unsafe.Pointer, events []uintptr, record func(e uintptr) error) error {
	for i := range steps {
		if events != nil {
			if err := record(events[i]); err != nil {
				return err
			}
		}
		if err := s.ctx.launch(&steps[i], params[i], s.h); err != nil {
			return err
		}
	}
	if events != nil {
		return record(events[len(steps)])
	}
	return nil
}

// LaunchOn queues the steps on the stream, in order, without waiting.
func (s *Stream) LaunchOn(steps []Step) error {
	return s.withPacked("LaunchOn", steps, func(params [][]unsafe.Pointer) error {
		return s.launchAll(steps, params, nil, nil)
	})
}

// Graph is a list of launches captured once into a CUDA graph: replaying
// it costs one call and lets the GPU start each kernel without the host.
type Graph struct {
	ctx         *Context
	graph, exec uintptr // CUgraph, CUgraphExec; 0 once destroyed (guarded by ctx.mu)
	n           int
}

// NewGraph captures the steps, in order, into a graph. The arguments are
// copied at capture: a replay launches the kernels with the same pointers
// and values.
func (s *Stream) NewGraph(steps []Step) (*Graph, error) {
	return s.capture("NewGraph", steps, nil)
}

// capture records the steps, in order, into a graph, with an external
// event record node before each step and after the last where events is
// not nil.
func (s *Stream) capture(op string, steps []Step, events []uintptr) (*Graph, error) {
	if len(steps) == 0 {
		return nil, fmt.Errorf("cuda: %s: no steps", op)
	}
	c := s.ctx
	var g *Graph
	err := s.withPacked(op, steps, func(params [][]unsafe.Pointer) error {
		// withPacked entered, which locked this goroutine to its thread:
		// the capture is thread-local, and every launch below is made
		// from that thread.
		r, _, _ := purego.SyscallN(c.d.cuStreamBeginCapture, s.h, captureModeThreadLocal)
		if err := c.d.check("cuStreamBeginCapture_v2", r); err != nil {
			return err
		}
		lerr := s.launchAll(steps, params, events, func(e uintptr) error {
			r, _, _ := purego.SyscallN(c.d.cuEventRecordWithFlags, e, s.h, eventRecordExternal)
			return c.d.check("cuEventRecordWithFlags", r)
		})
		var err error
		g, err = c.endCapture(s.h, len(steps), lerr)
		return err
	})
	return g, err
}

// endCapture ends the capture on stream h and instantiates the graph of
// n launches, or destroys it where the capture failed (cerr); the caller
// has entered.
func (c *Context) endCapture(h uintptr, n int, cerr error) (*Graph, error) {
	var graph uintptr
	r, _, _ := purego.SyscallN(c.d.cuStreamEndCapture, h, uintptr(unsafe.Pointer(&graph)))
	if cerr == nil {
		cerr = c.d.check("cuStreamEndCapture", r)
	}
	if cerr != nil {
		if graph != 0 {
			purego.SyscallN(c.d.cuGraphDestroy, graph)
		}
		return nil, cerr
	}
	var exec uintptr
	r, _, _ = purego.SyscallN(c.d.cuGraphInstantiateWithFlags, uintptr(unsafe.Pointer(&exec)), graph, 0)
	if err := c.d.check("cuGraphInstantiateWithFlags", r); err != nil {
		purego.SyscallN(c.d.cuGraphDestroy, graph)
		return nil, err
	}
	return &Graph{ctx: c, graph: graph, exec: exec, n: n}, nil
}

// Len is the number of launches in the graph.
func (g *Graph) Len() int { return g.n }

// Launch queues one replay of the graph on s without waiting.
func (g *Graph) Launch(s *Stream) error {
	if s.ctx != g.ctx {
		return errors.New("cuda: Graph.Launch: the stream belongs to another Context")
	}
	if err := s.live("Graph.Launch"); err != nil {
		return err
	}
	defer s.ctx.exit()
	if g.exec == 0 {
		return errors.New("cuda: Graph.Launch: graph is destroyed")
	}
	r, _, _ := purego.SyscallN(g.ctx.d.cuGraphLaunch, g.exec, s.h)
	return g.ctx.d.check("cuGraphLaunch", r)
}

// Destroy frees the graph. Destroying twice is a no-op.
func (g *Graph) Destroy() error {
	c := g.ctx
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if g.exec == 0 {
		return nil
	}
	r1, _, _ := purego.SyscallN(c.d.cuGraphExecDestroy, g.exec)
	r2, _, _ := purego.SyscallN(c.d.cuGraphDestroy, g.graph)
	g.exec, g.graph = 0, 0
	return errors.Join(c.d.check("cuGraphExecDestroy", r1), c.d.check("cuGraphDestroy", r2))
}

// newEvents creates n timing events; the caller has entered.
func (c *Context) newEvents(n int) ([]uintptr, error) {
	events := make([]uintptr, n)
	for i := range events {
		r, _, _ := purego.SyscallN(c.d.cuEventCreate, uintptr(unsafe.Pointer(&events[i])), eventDefault)
		if err := c.d.check("cuEventCreate", r); err != nil {
			c.destroyEvents(events)
			return nil, err
		}
	}
	return events, nil
}

// destroyEvents destroys what newEvents made; the caller has entered.
func (c *Context) destroyEvents(events []uintptr) {
	for _, e := range events {
		if e != 0 {
			purego.SyscallN(c.d.cuEventDestroy, e)
		}
	}
}

// elapsed is the time between consecutive events, which have completed;
// the caller has entered.
func (c *Context) elapsed(events []uintptr) ([]time.Duration, error) {
	times := make([]time.Duration, len(events)-1)
	for i := range times {
		var ms float32
		r, _, _ := purego.SyscallN(c.d.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), events[i], events[i+1])
		if err := c.d.check("cuEventElapsedTime", r); err != nil {
			return nil, err
		}
		times[i] = time.Duration(float64(ms) * float64(time.Millisecond))
	}
	return times, nil
}

// Profile launches the steps on s one by one between events, waits, and
// returns each one's GPU time (the events' resolution is about half a
// microsecond). Where kernels are shorter than a launch call, the GPU
// waits for the host between them and the wait counts too: a
// StepProfile, which replays launches and events as one graph, does not
// have that gap.
func (s *Stream) Profile(steps []Step) ([]time.Duration, error) {
	c := s.ctx
	var times []time.Duration
	err := s.withPacked("Profile", steps, func(params [][]unsafe.Pointer) error {
		events, err := c.newEvents(len(steps) + 1)
		if err != nil {
			return err
		}
		defer c.destroyEvents(events)
		err = s.launchAll(steps, params, events, func(e uintptr) error {
			r, _, _ := purego.SyscallN(c.d.cuEventRecord, e, s.h)
			return c.d.check("cuEventRecord", r)
		})
		if err != nil {
			return err
		}
		r, _, _ := purego.SyscallN(c.d.cuStreamSynchronize, s.h)
		if err := c.d.check("cuStreamSynchronize", r); err != nil {
			return err
		}
		times, err = c.elapsed(events)
		return err
	})
	return times, err
}

// StepProfile is a graph of the steps with an event recorded before and
// after each: a replay times every kernel with no host in between.
type StepProfile struct {
	g      *Graph
	events []uintptr
}

// NewProfile captures the steps and their events into a StepProfile.
func (s *Stream) NewProfile(steps []Step) (*StepProfile, error) {
	c := s.ctx
	if err := c.enter(); err != nil {
		return nil, err
	}
	events, err := c.newEvents(len(steps) + 1)
	c.exit()
	if err != nil {
		return nil, err
	}
	g, err := s.capture("NewProfile", steps, events)
	if err != nil {
		if c.enter() == nil {
			c.destroyEvents(events)
			c.exit()
		}
		return nil, err
	}
	return &StepProfile{g: g, events: events}, nil
}

// Run replays the profile on s, waits, and returns each step's time.
func (p *StepProfile) Run(s *Stream) ([]time.Duration, error) {
	if err := p.g.Launch(s); err != nil {
		return nil, err
	}
	if err := s.live("StepProfile.Run"); err != nil {
		return nil, err
	}
	defer s.ctx.exit()
	r, _, _ := purego.SyscallN(s.ctx.d.cuStreamSynchronize, s.h)
	if err := s.ctx.d.check("cuStreamSynchronize", r); err != nil {
		return nil, err
	}
	return s.ctx.elapsed(p.events)
}

// Destroy frees the profile's graph and events.
func (p *StepProfile) Destroy() error {
	err := p.g.Destroy()
	c := p.g.ctx
	if cerr := c.enter(); cerr != nil {
		return errors.Join(err, cerr)
	}
	defer c.exit()
	c.destroyEvents(p.events)
	p.events = nil
	return err
}
