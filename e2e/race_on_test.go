//go:build race

package e2e

// raceDetector: under -race the model tests run the portable Go kernels
// only; native code is C, which the detector does not see, and the
// default run already checks it at every level.
const raceDetector = true
