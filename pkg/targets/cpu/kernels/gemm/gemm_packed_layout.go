package gemm

import "math"

// PackedHeaderLayout names the layout a packed B's header records ("" when
// it has no valid header), for a runtime to check before GemmPacked.
func PackedHeaderLayout(packed []float32) string {
	if len(packed) < packedHeader {
		return ""
	}
	var h [6]int
	for i := range h {
		h[i] = int(math.Float32bits(packed[i]))
	}
	if h[0] != packedMagic || h[1] != packedVersion {
		return ""
	}
	return kernelLayout(gemmKernel{nr: h[4], kc: h[5]})
}
