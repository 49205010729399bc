package vk

import (
	"os"
	"testing"
)

// TestRunAllocs: a run of recorded commands makes no Vulkan objects, and
// its only Go allocations are purego's call frames, one per driver call
// (submit, wait, reset): the submit info and fence live in the Commands,
// pinned once when recorded.
func TestRunAllocs(t *testing.T) {
	d := openDevice(t)
	a, b, c := newBuffer(t, d, 256), newBuffer(t, d, 256), newBuffer(t, d, 256)
	defer a.Free()
	defer b.Free()
	defer c.Free()
	p := newPipeline(t, d, vecAddSrc, 3)
	defer p.Free()
	cmds := record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{a, b, c}, Groups: [3]uint32{1, 1, 1}})
	defer cmds.Free()
	run(t, cmds)
	// The count is the process's: a driver call slow enough for the Go
	// scheduler to hand its thread's P to another thread can allocate
	// in the runtime, rarely on llvmpipe, often under the validation
	// layer's checks (TestValidation reruns this test under it), so the
	// bound is an average over many runs and not checked there.
	n := testing.AllocsPerRun(200, func() { run(t, cmds) })
	if os.Getenv("RLX_VK_UNDER_VALIDATION") != "" {
		t.Logf("Run allocates %v times under the validation layer", n)
		return
	}
	if n > 3 {
		t.Errorf("Run allocates %v times, want at most 3", n)
	}
}
