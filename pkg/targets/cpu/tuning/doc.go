// Package tuning holds the CPU target's thresholds: every number that
// decides which kernel or data layout runs, in one place, each with the
// rule it expresses and why. rules.go has the compiler's (shape-dependent
// choices made at build time, read by the CPU backend's capabilities);
// the kernels keep their run-time ones here too.
//
// Comments give reasons, not measurements: the measurements behind a
// value are records in docs/perf/ (scheduling.md for the compiler's).
// The package imports nothing from rlx, so both the compiler and the
// kernels may read it.
package tuning
