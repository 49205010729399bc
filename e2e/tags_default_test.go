//go:build !purego

package e2e

// buildTags are the tags this test binary was built with (none); see
// tags_purego_test.go.
const buildTags = ""
