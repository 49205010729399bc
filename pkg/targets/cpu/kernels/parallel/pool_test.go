package parallel

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// forCovers runs p.For and checks each index is visited exactly once and
// every chunk has at least grain elements (unless it is the only one).
func forCovers(t *testing.T, p *Pool, n, grain int) {
	t.Helper()
	seen := make([]atomic.Int32, max(n, 0))
	var chunks atomic.Int32
	var small atomic.Int32
	p.For(n, grain, func(lo, hi int) {
		chunks.Add(1)
		if hi-lo < grain {
			small.Add(1)
		}
		for i := lo; i < hi; i++ {
			seen[i].Add(1)
		}
	})
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("threads=%d n=%d grain=%d: index %d visited %d times", p.Threads(), n, grain, i, c)
		}
	}
	if chunks.Load() > 1 && small.Load() > 0 {
		t.Fatalf("threads=%d n=%d grain=%d: %d chunks smaller than grain", p.Threads(), n, grain, small.Load())
	}
}

func TestPoolFor(t *testing.T) {
	var nilPool *Pool
	ps := append([]*Pool{nilPool, NewPool(0), NewPool(3), NewPool(8)}, pools(t)...)
	for _, p := range ps {
		for _, n := range []int{0, 1, 2, 7, 64, 1000, 1001} {
			for _, grain := range []int{0, 1, 3, 64, 5000} {
				forCovers(t, p, n, grain)
			}
		}
	}
	if nilPool.Threads() != 1 || ps[1].Threads() != 1 || ps[2].Threads() != 3 {
		t.Errorf("Threads: %d %d %d", nilPool.Threads(), ps[1].Threads(), ps[2].Threads())
	}
	for _, p := range ps[1:4] {
		p.Close()
	}
}

func TestPoolConcurrentCallers(t *testing.T) {
	// Several goroutines share one pool (several requests), and For bodies
	// call For again (a kernel calling a kernel): all finish, exactly once.
	p := NewPool(3)
	defer p.Close()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for iter := 0; iter < 50; iter++ {
				if !nestedSum(t, p, 100+g*7+iter, 3) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestPoolPanic(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	var ran atomic.Int32
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		p.For(100, 1, func(lo, hi int) {
			ran.Add(int32(hi - lo))
			if lo == 0 {
				panic("boom")
			}
		})
	}()
	if ran.Load() != 100 {
		t.Errorf("%d of 100 elements ran; every chunk should finish before the panic is re-raised", ran.Load())
	}
	// The pool still works afterwards.
	forCovers(t, p, 1000, 1)
}

func TestPoolClose(t *testing.T) {
	p := NewPool(4)
	p.Close()
	p.Close()               // idempotent
	forCovers(t, p, 100, 1) // runs inline
}

// TestTaskShares: claimed from any mix of threads at once, every task is
// handed out exactly once; a thread takes its own run first, in order,
// before helping with others'.
func TestTaskShares(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{1, 1}, {7, 2}, {64, 2}, {5, 3}, {100, 8}} {
		s := Shares(nil).Reset(tc.n, tc.k)
		seen := make([]atomic.Int32, tc.n)
		var wg sync.WaitGroup
		for id := 0; id < tc.k+1; id++ { // one more claimer than runs: ids wrap
			wg.Add(1)
			go func() {
				defer wg.Done()
				for step := 0; ; {
					task := s.Claim(id, &step)
					if task < 0 {
						return
					}
					seen[task].Add(1)
				}
			}()
		}
		wg.Wait()
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d k=%d: task %d claimed %d times", tc.n, tc.k, i, c)
			}
		}
		// Alone, thread 1 walks its own run, then the ones after it, wrapping.
		s = Shares(nil).Reset(tc.n, tc.k)
		var order []int
		for step := 0; ; {
			task := s.Claim(1, &step)
			if task < 0 {
				break
			}
			order = append(order, task)
		}
		start := tc.n / tc.k
		if tc.k == 1 {
			start = 0
		}
		for i, task := range order {
			if want := (start + i) % tc.n; task != want {
				t.Fatalf("n=%d k=%d: claim %d by thread 1 is task %d, want %d", tc.n, tc.k, i, task, want)
			}
		}
		if len(order) != tc.n {
			t.Fatalf("n=%d k=%d: thread 1 alone claimed %d tasks", tc.n, tc.k, len(order))
		}
	}
}

// TestMeasure checks that Busy grows by the chunks' run time only while
// Measure is on, counting every thread's chunks, and that a nil pool
// measures nothing without failing.
func TestMeasure(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	work := func(lo, hi int) { time.Sleep(time.Duration(hi-lo) * time.Millisecond) }
	p.For(4, 1, work)
	if b := p.Busy(); b != 0 {
		t.Fatalf("busy %v before Measure", b)
	}
	p.Measure(true)
	start := time.Now()
	p.For(4, 1, work)
	wall := time.Since(start)
	p.Measure(false)
	b := p.Busy()
	// Four chunks that each sleep a millisecond: at least four of busy
	// time, spread over two threads, so more than the For's wall time
	// unless one thread ran them all.
	if b < 4*time.Millisecond || b > wall*2+time.Millisecond {
		t.Errorf("busy %v for four 1 ms chunks in %v of wall time", b, wall)
	}
	p.For(4, 1, work)
	if p.Busy() != b {
		t.Errorf("busy grew after Measure(false): %v -> %v", b, p.Busy())
	}
	var nilPool *Pool
	nilPool.Measure(true)
	if nilPool.Busy() != 0 {
		t.Errorf("a nil pool is busy")
	}
}

// TestForChunks checks that ForChunks visits every index once in exactly
// the chunks asked for (clamped to [1, n]), and that For makes n/grain
// chunks, at most 8 a thread, rounded down to a multiple of the threads
// above them.
func TestForChunks(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	count := func(n int, run func(fn func(lo, hi int))) int {
		seen := make([]atomic.Int32, n)
		var calls atomic.Int32
		run(func(lo, hi int) {
			calls.Add(1)
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if v := seen[i].Load(); v != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, v)
			}
		}
		return int(calls.Load())
	}
	for _, c := range []struct{ n, chunks, want int }{{51, 51, 51}, {100, 33, 33}, {5, 0, 1}, {5, 9, 5}, {1000, 1000, 1000}, {7, 3, 3}} {
		if got := count(c.n, func(fn func(lo, hi int)) { p.ForChunks(c.n, c.chunks, fn) }); got != c.want {
			t.Errorf("ForChunks(%d, %d): %d chunks, want %d", c.n, c.chunks, got, c.want)
		}
	}
	for _, c := range []struct{ n, grain, want int }{{51, 1, 16}, {100, 20, 4}, {100, 34, 2}, {100, 51, 1}, {100, 0, 16}} {
		if got := count(c.n, func(fn func(lo, hi int)) { p.For(c.n, c.grain, fn) }); got != c.want {
			t.Errorf("For(%d, %d) on 2 threads: %d chunks, want %d", c.n, c.grain, got, c.want)
		}
	}
	p3 := NewPool(3)
	defer p3.Close()
	if got := count(100, func(fn func(lo, hi int)) { p3.For(100, 20, fn) }); got != 3 {
		t.Errorf("For(100, 20) on 3 threads: %d chunks, want 3", got)
	}
}

// TestPoolSlotsAndParking: more concurrent callers than the pool has
// slots (the callers left without one run alone), nested For calls, and
// pauses longer than spinFor between calls (workers park and must be
// woken by the next offer): every call still covers its range exactly
// once.
func TestPoolSlotsAndParking(t *testing.T) {
	p := NewPool(16)
	defer p.Close()
	var wg sync.WaitGroup
	for g := 0; g < poolSlots+8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for iter := 0; iter < 20; iter++ {
				if iter%7 == g%7 {
					time.Sleep(spinFor + spinFor/2)
				}
				if !nestedSum(t, p, 64+g+iter, 2) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestPoolWakesParkedWorkers: after the workers have parked, a For's
// first chunk waits for another chunk to start, which only a woken
// worker can run (the caller is busy in the first).
func TestPoolWakesParkedWorkers(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	for round := 0; round < 3; round++ {
		time.Sleep(3 * spinFor)
		started := make(chan struct{})
		var once sync.Once
		p.For(4, 1, func(lo, hi int) {
			if lo == 0 {
				select {
				case <-started:
				case <-time.After(5 * time.Second):
					t.Errorf("round %d: no worker took a chunk while the caller waited", round)
				}
				return
			}
			once.Do(func() { close(started) })
		})
	}
}

// nestedSum sums [0, n) through a For of grain whose chunks each run a
// For of their own (a kernel calling a kernel), and reports whether every
// index was counted exactly once.
func nestedSum(t *testing.T, p *Pool, n, grain int) bool {
	t.Helper()
	var total atomic.Int64
	p.For(n, grain, func(lo, hi int) {
		p.For(hi-lo, 1, func(l2, h2 int) {
			for i := lo + l2; i < lo+h2; i++ {
				total.Add(int64(i))
			}
		})
	})
	if want := int64(n * (n - 1) / 2); total.Load() != want {
		t.Errorf("n %d: sum %d, want %d", n, total.Load(), want)
		return false
	}
	return true
}
