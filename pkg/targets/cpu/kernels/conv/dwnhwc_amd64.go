//go:build amd64 && !purego

package conv

import (
	"runtime"
	"unsafe"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

//go:noescape
func dwNHWCAVX(out *float32, outStep int, bases *[9]uintptr, inStep int, w, bias *float32, c, npix int, lo, hi float32)

// dwNHWC runs the nine channels-last taps over npix pixels (see dwNHWCGo),
// eight channels a vector, where the CPU has AVX2 and FMA.
func dwNHWC(out []float32, outStride int, in *[9][]float32, inStride int, w, bias []float32, c, npix int, lo, hi float32) {
	if !vec.AVX2FMA || c%8 != 0 {
		dwNHWCGo(out, outStride, in, inStride, w, bias, c, npix, lo, hi)
		return
	}
	if npix <= 0 || c <= 0 {
		return
	}
	_, _, _ = out[(npix-1)*outStride+c-1], w[9*c-1], bias[c-1]
	var bases [9]uintptr
	for t := range in {
		_ = in[t][(npix-1)*inStride+c-1]
		bases[t] = uintptr(unsafe.Pointer(&in[t][0]))
	}
	dwNHWCAVX(&out[0], outStride*4, &bases, inStride*4, &w[0], &bias[0], c, npix, lo, hi)
	runtime.KeepAlive(in)
}
