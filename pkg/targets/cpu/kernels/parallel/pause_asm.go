//go:build (amd64 || arm64) && !purego

package parallel

// pause tells the core that the thread is spinning (x86 PAUSE, arm64
// YIELD): a polling thread then leaves the core's execution units to the
// thread on its sibling hardware thread, where the two share one core,
// and stops flooding the memory pipeline with loads of one line.
//
//go:noescape
func pause()
