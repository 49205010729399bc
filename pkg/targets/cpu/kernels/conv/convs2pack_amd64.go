//go:build amd64 && !purego

package conv

import (
	"runtime"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// convS2Asm is whether convS2Pack16 runs here.
var convS2Asm = vec.AVX2FMA

//go:noescape
func convS2Pack16(dst *float32, rows *[convS2MaxRows]uintptr, nrows, off, left int)

func keepAlive(a, b []float32) {
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}
