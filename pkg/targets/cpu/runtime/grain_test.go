package runtime

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// TestChunkGrain checks the split of a native function's range: its own
// grain where that gives every thread a chunk (and on one thread), else
// one chunk a thread, never below a 1/tuning.NativeGrainFloor of the
// grain.
func TestChunkGrain(t *testing.T) {
	f := tuning.NativeGrainFloor
	for _, c := range []struct{ n, grain, threads, want int }{
		{1000, 10, 1, 10},    // one thread: the function's grain
		{1000, 10, 16, 10},   // 100 chunks for 16 threads
		{32, 21, 1, 21},      // one thread
		{32, 21, 2, 16},      // one chunk at the grain: one a thread
		{13, 8, 2, 6},        // 13/6 = 2 chunks (of 6 and 7 items)
		{32, 21, 16, 21 / f}, // not below the floor
		{2, 8, 2, 8 / f},     // two items: the floor's grain
		{24576, 16384, 2, 12288},
		{5, 0, 2, 0}, // no grain: as it is
	} {
		if got := chunkGrain(c.n, c.grain, c.threads); got != c.want {
			t.Errorf("chunkGrain(%d, %d, %d) = %d, want %d", c.n, c.grain, c.threads, got, c.want)
		}
	}
}
