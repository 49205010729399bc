package runtime

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// TestChunkCount checks the split of a native function's range: n/grain
// chunks where that is a multiple of the threads (and on one thread),
// else the next multiple while chunks stay above a
// 1/tuning.NativeGrainFloor of the grain, else the multiple below; one
// chunk a thread where the grain leaves threads without one.
func TestChunkCount(t *testing.T) {
	f := tuning.NativeGrainFloor
	for _, c := range []struct{ n, grain, threads, want int }{
		{1000, 10, 1, 100},  // one thread: the function's grain
		{1000, 10, 20, 100}, // a multiple of the threads
		{1000, 10, 16, 112}, // 100 chunks: 7 a thread
		{50, 9, 2, 6},       // 5 chunks of 10: 6 of 8 or 9
		{35, 5, 2, 8},       // 7 of 5: 8 of 4 or 5
		{9, 4, 2, 2},        // 2 chunks already
		{9, 3, 2, 4},        // 3 chunks: 4 of 2 or 3 (the floor is 1)
		{9 * f, 3 * f, 2, 4},
		{10, 3 * f, 4, 3},           // no chunk at the grain: 3 at the floor's 3 items
		{7, 1, 4, 4},                // 8 chunks would leave some empty: 4
		{32, 21, 1, 1},              // one thread
		{32, 21, 2, 2},              // one chunk at the grain: one a thread
		{13, 8, 2, 2},               // 2 chunks (of 6 and 7 items)
		{32, 21, 16, 32 / (21 / f)}, // not below the floor
		{2, 8, 2, 1},                // two items, under the floor's grain of 2
		{24576, 16384, 2, 2},
		{5, 0, 2, 4}, // no grain: 5 of one item, 6 would leave one empty: 4
	} {
		if got := chunkCount(c.n, c.grain, c.threads); got != c.want {
			t.Errorf("chunkCount(%d, %d, %d) = %d, want %d", c.n, c.grain, c.threads, got, c.want)
		}
	}
}
