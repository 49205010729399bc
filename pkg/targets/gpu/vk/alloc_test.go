package vk

import "testing"

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
	if n := testing.AllocsPerRun(20, func() { run(t, cmds) }); n > 3 {
		t.Errorf("Run allocates %v times, want at most 3", n)
	}
}
