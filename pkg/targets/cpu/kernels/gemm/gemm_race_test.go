//go:build race

package gemm

// gemmRace is set under the race detector, which the portable-kernel
// rerun of the GEMM suite skips (the parallel code is the same for every
// kernel; `go test -tags purego` runs that suite on the portable kernel).
const gemmRace = true
