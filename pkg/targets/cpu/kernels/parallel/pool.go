package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Pool is a persistent set of worker goroutines that kernels split work
// with. The goroutine that calls For always takes part in the work itself, so
// a For never waits on a worker that is busy elsewhere: calls from several
// goroutines at once (several requests sharing one pool) and For calls nested
// inside a For body both make progress without deadlock.
//
// A For offers its job to the workers by storing it in a free slot and
// bumping a counter that idle workers poll; no lock is taken on the way.
// A channel of notices (one send per helper, each taking the channel's
// lock against every polling receiver) cost an empty For tens of
// microseconds at 16 threads (docs/perf/scheduling.md), more than most of
// a small model's kernels take.
//
// A nil *Pool, and a pool of one thread, run every For inline.
type Pool struct {
	threads int
	// yieldEvery is how many polls a spinning thread of this pool makes
	// between yields to the Go scheduler (see spin).
	yieldEvery int
	// slots hold the jobs on offer; a caller takes a free one (nil) and
	// empties it once no chunk is left to claim. With none free, the
	// caller runs its job alone.
	slots [poolSlots]atomic.Pointer[forJob]
	// posted counts the offers made: idle workers poll it.
	posted atomic.Uint64
	// sleepers counts the workers parked on wake after spinning for
	// spinFor without news; a For signals them under mu.
	sleepers atomic.Int32
	mu       sync.Mutex
	wake     *sync.Cond
	stop     atomic.Bool // set by Close: workers exit, For runs inline
	workers  sync.WaitGroup
	// measure makes For time each chunk it runs and add the time to
	// busy (a profiled run's parallel efficiency; see Measure).
	measure atomic.Bool
	busy    atomic.Int64 // nanoseconds
}

// poolSlots is how many jobs may be on offer at once: concurrent callers
// and For calls nested in a chunk. A caller that finds none free runs its
// job alone, as one that finds every worker busy would anyway.
const poolSlots = 16

// forJob is one For call: chunks are claimed with an atomic counter by the
// caller and by whichever workers pick the job up.
type forJob struct {
	n, chunks int
	fn        func(lo, hi int)
	shares    Shares       // the chunks, split among the threads in order
	runs      [4]shareRun  // shares' memory for up to 4 threads (one allocation)
	left      atomic.Int64 // chunks not finished yet
	helpers   atomic.Int64 // workers that may still join (see join)
	done      sync.WaitGroup
	panicked  atomic.Pointer[panicValue]
}

type panicValue struct{ v any }

// Shares splits tasks [0, n) into one contiguous run per thread,
// claimed one task at a time: a thread takes its own run's tasks first, in
// order, then helps with the runs after its own, from their fronts.
// Owning the same share of every kernel's index space (the caller the
// first, worker 1 the second, ...) keeps a thread on the part of the data
// it wrote in the kernel before, still in its own core's cache; claiming
// tasks first come first served scattered each kernel's pieces over the
// cores afresh.
type Shares []shareRun

// shareRun is one thread's run of tasks [lo, hi); next counts the claims
// made on it, by its owner or by threads helping.
type shareRun struct {
	lo, hi int
	next   atomic.Int64
	_      [40]byte // a cache line per run: owners claim concurrently
}

// Reset splits n tasks into k runs afresh, in s's memory where it has room
// (no claim may be in progress on s).
func (s Shares) Reset(n, k int) Shares {
	if cap(s) < k {
		s = make(Shares, k)
	}
	s = s[:k]
	for i := range s {
		s[i].lo, s[i].hi = i*n/k, (i+1)*n/k
		s[i].next.Store(0)
	}
	return s
}

// Claim returns the next task for thread id (taken modulo the runs), or
// -1 when none is left; *step, zero at a thread's first claim, is how many
// runs past its own the thread has moved on.
func (s Shares) Claim(id int, step *int) int {
	for ; *step < len(s); *step++ {
		r := &s[(id+*step)%len(s)]
		if t := r.lo + int(r.next.Add(1)-1); t < r.hi {
			return t
		}
	}
	return -1
}

// NewPool starts a pool of threads goroutines in all, counting the caller of
// For: threads-1 workers are started. threads < 1 is taken as 1.
func NewPool(threads int) *Pool {
	if threads < 1 {
		threads = 1
	}
	p := &Pool{threads: threads, yieldEvery: tuning.PoolSpinYield * threads}
	p.wake = sync.NewCond(&p.mu)
	if threads > 1 {
		p.workers.Add(threads - 1)
		for i := 1; i < threads; i++ {
			go p.worker(i)
		}
	}
	return p
}

// Measure turns on (or off) the timing of For's chunks: while on, Busy
// grows by each chunk's run time, on whichever thread ran it, so that a
// profile can tell a step's busy thread-time from its wall time (where a
// step used fewer threads than the pool has: too few chunks, or chunks
// of uneven work). A For nested in a chunk counts its chunks twice. It
// costs two clock reads a chunk.
func (p *Pool) Measure(on bool) {
	if p != nil {
		p.measure.Store(on)
	}
}

// Busy is the total run time of the chunks For has run while Measure was
// on (0 for a nil pool).
func (p *Pool) Busy() time.Duration {
	if p == nil {
		return 0
	}
	return time.Duration(p.busy.Load())
}

// Threads returns the pool's degree of parallelism (1 for a nil pool).
func (p *Pool) Threads() int {
	if p == nil {
		return 1
	}
	return p.threads
}

// worker waits for offers and runs the jobs on offer with chunks left,
// until the pool is closed.
func (p *Pool) worker(id int) {
	defer p.workers.Done()
	var seen uint64 // posted starts at 0: the first offer makes it 1
	for p.await(&seen) {
		for i := range p.slots {
			if j := p.slots[i].Load(); j != nil && j.join() {
				j.run(id)
			}
		}
	}
}

// spinFor is how long an idle worker polls for the next job before it
// parks. A model runs kernels back to back, microseconds apart: a worker
// that parked between them costs a wake-up (tens of microseconds here) per
// kernel, more than a small kernel's work. Between two parallel kernels the
// caller may run serial ones (layer norms, copies) for tens of
// microseconds, so the poll outlasts them (the value, tuning.PoolSpinFor,
// and its measurement are in the tuning table and docs/perf/kernels.md).
// The cost is that long of one core's time after a model's last kernel,
// as ONNX Runtime's spinning pool spends too.
const spinFor = tuning.PoolSpinFor

// await waits until posted differs from *seen (polling, then parked),
// stores the new count in *seen and reports whether the pool is still
// open. Offers made while a worker ran jobs change posted too, so it
// looks at the slots again at once; one it could not join (helpers
// enough) leaves posted as it was, so it is not seen twice.
func (p *Pool) await(seen *uint64) bool {
	news := func() bool { return p.posted.Load() != *seen || p.stop.Load() }
	p.spin(news)
	if !news() {
		// Counted before looking again under mu: a For that bumps posted
		// after this worker's last look sees it counted and signals under
		// mu, which it cannot take until the worker waits.
		p.sleepers.Add(1)
		p.mu.Lock()
		for !news() {
			p.wake.Wait()
		}
		p.mu.Unlock()
		p.sleepers.Add(-1)
	}
	*seen = p.posted.Load()
	return !p.stop.Load()
}

// offer puts j in a free slot and tells idle workers, returning the slot
// (-1 when none was free or the pool is closed: the caller runs j alone).
func (p *Pool) offer(j *forJob, helpers int) int {
	if p.stop.Load() {
		return -1
	}
	for i := range p.slots {
		if p.slots[i].Load() == nil && p.slots[i].CompareAndSwap(nil, j) {
			p.posted.Add(1)
			if n := int(p.sleepers.Load()); n > 0 {
				p.mu.Lock()
				for ; n > 0 && helpers > 0; n, helpers = n-1, helpers-1 {
					p.wake.Signal()
				}
				p.mu.Unlock()
			}
			return i
		}
	}
	return -1
}

// spin calls done until it reports true or spinFor has passed, with a
// spin hint after each call (pause) and a yield to the Go scheduler every
// yieldEvery calls. Where two hardware threads share a core, a thread
// polling without the hint takes issue slots from the one working on the
// sibling (Intel's optimization manual, on spin-wait loops).
//
// Yielding on every poll cost each parallel kernel microseconds:
// runtime.Gosched goes through the scheduler's global run queue and its
// lock, which the spinning threads take in turn. Yielding too rarely keeps
// a goroutine that waits for a P (the pool's caller back from a long
// native call, say) waiting for the next yield. The interval grows with
// the pool's size, so that its spinning threads together yield about as
// often whatever their number (tuning.PoolSpinYield has the measurements).
func (p *Pool) spin(done func() bool) {
	deadline := time.Now().Add(spinFor)
	for i := 1; !done(); i++ {
		pause()
		if i%p.yieldEvery == 0 {
			if time.Now().After(deadline) {
				return
			}
			runtime.Gosched()
		}
	}
}

// join reports whether one more worker may help with j: as many as it
// has shares besides the caller's. The others go back to polling at once
// rather than all racing for a few chunks' counters.
func (j *forJob) join() bool { return j.helpers.Add(-1) >= 0 }

// run claims and runs chunks until none are left, thread id's share first
// (see Shares). The chunks it ran are counted off left and done once,
// at the end: counting each off as it finished had both threads write the
// job's two counters' cache line per chunk, which cost an empty For of 16
// chunks on 2 threads more than the rest of its work.
func (j *forJob) run(id int) {
	step, ran := 0, 0
	for j.runChunks(id, &step, &ran) {
	}
	if ran > 0 {
		j.left.Add(-int64(ran))
		j.done.Add(-ran)
	}
}

// runChunks runs claimed chunks, adding each to *ran as it starts, until
// none is left (false) or one panics (true, with the panic recorded for
// For to re-raise; the caller goes on with the chunks left).
func (j *forJob) runChunks(id int, step, ran *int) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			j.panicked.CompareAndSwap(nil, &panicValue{r})
			panicked = true
		}
	}()
	for {
		c := j.shares.Claim(id, step)
		if c < 0 {
			return false
		}
		*ran++
		j.fn(c*j.n/j.chunks, (c+1)*j.n/j.chunks)
	}
}

// For splits [0,n) into contiguous chunks of at least grain elements (one
// chunk when n < 2*grain) and calls fn on each, in parallel, returning when
// all are done. A panic in fn is re-raised in the caller after every chunk
// has finished (with its original value; the stack is the caller's). For is safe to call from several goroutines at once.
//
// It makes n/grain chunks, at most 8 a thread, and where that is more
// than the threads but not a multiple of them, fewer, larger ones that
// are (see balanced).
func (p *Pool) For(n, grain int, fn func(lo, hi int)) {
	if grain < 1 {
		grain = 1
	}
	chunks := n / grain
	if p != nil {
		chunks = balanced(min(chunks, 8*p.threads), p.threads)
	}
	p.ForChunks(n, chunks, fn)
}

// balanced rounds a count of equal chunks down to a multiple of the
// threads where it is above them. Each thread owns an equal run of the
// chunks (Shares), so 5 chunks on 2 threads end when one thread has run
// 3 of them, 60% of the work, while 4 larger ones end at half of it.
// Below the threads nothing is rounded: the chunks are the most there
// can be.
func balanced(chunks, threads int) int {
	if threads > 1 && chunks > threads {
		return chunks - chunks%threads
	}
	return chunks
}

// ForChunks splits [0, n) into exactly chunks contiguous chunks (at
// least one, at most n) of n/chunks or n/chunks+1 elements and calls fn
// on each, in parallel, as For does. It is for callers that size their
// own chunks (the native functions', from the tuning table's grains and
// the thread count): For's cap of 8 a thread ran a native convolution of
// 51 long tasks as 16 chunks of 3 or 4 tasks on 2 threads, and one
// thread idled for most of a chunk at the end.
func (p *Pool) ForChunks(n, chunks int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	chunks = min(max(chunks, 1), n)
	if p != nil && p.measure.Load() {
		inner := fn
		fn = func(lo, hi int) {
			t0 := time.Now()
			inner(lo, hi)
			p.busy.Add(int64(time.Since(t0)))
		}
	}
	if p == nil || p.threads == 1 || chunks == 1 {
		fn(0, n)
		return
	}
	j := &forJob{n: n, chunks: chunks, fn: fn}
	runs := min(p.threads, chunks)
	j.shares = Shares(j.runs[:0]).Reset(chunks, runs)
	j.done.Add(chunks)
	j.left.Store(int64(chunks))
	j.helpers.Store(int64(runs - 1))
	slot := p.offer(j, runs-1)
	j.run(0)
	if slot >= 0 {
		// No chunk is left to claim: later workers need not see it.
		p.slots[slot].Store(nil)
	}
	// The last chunks are usually microseconds from done: poll for them
	// before blocking, since a blocked caller's thread may sleep, and waking
	// it costs more than the chunks.
	p.spin(func() bool { return j.left.Load() <= 0 })
	j.done.Wait()
	if pv := j.panicked.Load(); pv != nil {
		panic(pv.v)
	}
}

// Close stops the workers and waits for them to exit. For calls made after
// Close run inline. Close is idempotent.
func (p *Pool) Close() {
	if p == nil || p.threads == 1 || p.stop.Swap(true) {
		return
	}
	p.mu.Lock()
	p.wake.Broadcast()
	p.mu.Unlock()
	p.workers.Wait()
}
