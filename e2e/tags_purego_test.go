//go:build purego

package e2e

// buildTags are the tags this test binary was built with, for the tools
// it builds: an artifact the tests make in-process (portable kernels'
// packed layout) must be what the rlxrun they run reads.
const buildTags = "purego"

// nativeLevels is whether the model tests run native code at each CPU
// level too: not with the portable kernels, whose run checks the Go
// twins (native code is C, the same whatever the tag; the default run
// covers it).
const nativeLevels = false
