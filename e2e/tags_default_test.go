//go:build !purego

package e2e

// buildTags are the tags this test binary was built with (none); see
// tags_purego_test.go.
const buildTags = ""

// nativeLevels: the default build runs the model tests at every CPU
// level this machine runs.
const nativeLevels = true
