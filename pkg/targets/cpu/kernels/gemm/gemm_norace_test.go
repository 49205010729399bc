//go:build !race

package gemm

const gemmRace = false
