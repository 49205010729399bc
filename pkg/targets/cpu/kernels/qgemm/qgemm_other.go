//go:build !amd64 || purego

package qgemm

// kernel is the pure-Go twin: no integer dot-product instructions are
// built in for this architecture.
func kernel() func(*tile) { return tileGo }

// kernels lists the kernels this CPU runs, for the tests.
func kernels() map[string]func(*tile) { return map[string]func(*tile){"go": tileGo} }

// VNNI reports that no VNNI kernel is built in.
func VNNI() bool { return false }

func transposeBytes(dst []byte, ldd int, src []byte, lds, rows, cols int) {
	transposeBytesGo(dst, ldd, src, lds, rows, cols)
}
