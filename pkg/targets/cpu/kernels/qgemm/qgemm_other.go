//go:build !amd64 || purego

package qgemm

// kernel is the pure-Go twin: no integer dot-product instructions are
// built in for this architecture.
func kernel() microKernel { return microKernel{run: tileGo} }

// kernels lists the kernels this CPU runs, for the tests.
func kernels() map[string]microKernel {
	return map[string]microKernel{"go": {run: tileGo}, "go-wide": {run: tileGo, wide: true}}
}

func transposeBytes(dst []byte, ldd int, src []byte, lds, rows, cols int) {
	transposeBytesGo(dst, ldd, src, lds, rows, cols)
}

// Int8Kernel names the integer kernel this CPU runs: the Go twin.
func Int8Kernel() string { return "go" }

func widenBytes(dst []uint16, src []byte, flip byte) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = uint16(v ^ flip)
	}
}

// transposers lists the byte transposes this CPU runs, for the tests.
func transposers() map[string]func(dst []byte, ldd int, src []byte, lds, rows, cols int) {
	return map[string]func(dst []byte, ldd int, src []byte, lds, rows, cols int){"go": transposeBytesGo}
}
