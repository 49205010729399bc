//go:build !amd64 || purego

package conv

// convS2Asm is whether convS2Pack16 runs here: never.
const convS2Asm = false

// convS2Pack16 is never called here: packS2 needs the AVX2 path.
func convS2Pack16(dst *float32, rows *[convS2MaxRows]uintptr, nrows, off, left int) {
	panic("kernels: convS2Pack16 without AVX2")
}

func keepAlive(a, b []float32) {}
