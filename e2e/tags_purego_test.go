//go:build purego

package e2e

// buildTags are the tags this test binary was built with, for the tools
// it builds: an artifact the tests make in-process (portable kernels'
// packed layout) must be what the rlxrun they run reads.
const buildTags = "purego"
