//go:build !race

package e2e

// raceDetector is whether this test binary was built with -race; see
// race_on_test.go.
const raceDetector = false
