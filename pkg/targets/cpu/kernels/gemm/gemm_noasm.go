//go:build !(amd64 || arm64) || purego

package gemm

// asmKernel reports that no assembly kernel is built in (another
// architecture, or the purego build tag): Gemm runs the portable kernel.
func asmKernel() (gemmKernel, bool) { return gemmKernel{}, false }

func packA6(dst, a []float32, lda, kb int) { packA6Go(dst, a, lda, kb) }

func packB16s(dst, b []float32, ldb, kb, np int) { packB16Go(dst, b, ldb, kb, np) }

// otherKernels: no assembly kernel besides asmKernel's.
func otherKernels() []gemmKernel { return nil }
