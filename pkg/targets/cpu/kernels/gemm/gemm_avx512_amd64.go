//go:build amd64 && !purego

package gemm

import (
	"unsafe"

	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// The AVX-512F micro-kernel (gemm_avx512_amd64.s): 12×16 tiles in twelve
// zmm accumulators over pairs of the AVX2 kernel's packed 6-row A panels,
// so that it shares that kernel's packing, B layout, driver paths and sums
// bit for bit (mr stays 6 for the driver; the kernel takes the row panels
// two at a time). A run of an odd number of panels ends in one 6×16 AVX2
// tile; four-row tiles, row kernels and chains are the AVX2 kernel's.

//go:noescape
func sgemm12x16z(kc int, a, b *float32, ldb int, c *float32, ldc int, flags uint, bias, res *float32, ldr int, lo, hi float32, groups, lda int)

// avx512Kernel is the AVX-512F kernel and its blocking (the reasons are in
// the tuning table, tuning.GemmAVX512KC).
func avx512Kernel() gemmKernel {
	kn := avx2Kernel()
	kn.name = "avx512f"
	kn.kc, kn.mc, kn.nc = tuning.GemmAVX512KC, tuning.GemmAVX512MC, tuning.GemmAVX512NC
	kn.fn, kn.tile, kn.tiles, kn.tilesA, kn.tilesQ = kernelZAcc, kernelZ, kernelZn, kernelZd, kernelZq
	return kn
}

// kernelZ is kernel6x16 on the AVX-512 kernel's run of tiles.
func kernelZ(kc int, a, b []float32, ldb int, c []float32, ldc int, e tileEpi) {
	kernelZq(kc, a, 0, b, ldb, 0, c, ldc, e, 1, 1)
}

// kernelZn is kernel6x16n on the AVX-512 kernel.
func kernelZn(kc int, a, b []float32, ldb int, c []float32, ldc int, e tileEpi, panels int) {
	kernelZq(kc, a, 0, b, ldb, 0, c, ldc, e, panels, 1)
}

// kernelZd is kernel6x16d on the AVX-512 kernel.
func kernelZd(kc int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, e tileEpi, panels int) {
	kernelZq(kc, a, lda, b, ldb, 0, c, ldc, e, panels, 1)
}

// kernelZAcc is kernel6x16Acc on the AVX-512 kernel.
func kernelZAcc(kc int, a, b, c []float32, ldc int, accumulate bool) {
	e := tileEpi{}
	if accumulate {
		e.flags = epiAcc
	}
	kernelZ(kc, a, b, 16, c, ldc, e)
}

// kernelZq is kernel6x16q on the AVX-512 kernel: panels row panels of A
// (packed 6-row panels, or rows lda apart in place when lda > 0) against
// each of nq B panels ps floats apart, the panels two at a time through
// sgemm12x16z and an odd last one through sgemm6x16, checking the operands
// once for the whole run.
func kernelZq(kc int, a []float32, lda int, b []float32, ldb, ps int, c []float32, ldc int, e tileEpi, panels, nq int) {
	if panels <= 0 || nq <= 0 {
		return
	}
	rows := 6 * panels
	if kc > 0 {
		if lda > 0 {
			_ = a[(rows-1)*lda+kc-1]
		} else {
			_ = a[kc*rows-1]
		}
		_ = b[(nq-1)*ps+(kc-1)*ldb+15]
	}
	bias, res := epiOperands(c, ldc, e, rows, nq)
	col := e.flags&epiBiasCol != 0
	groups, odd := panels/2, panels%2 != 0
	// The odd panel: 12·groups rows on.
	r0 := 12 * groups
	ap, ap1 := unsafe.SliceData(a), unsafe.SliceData(a)
	if odd && kc > 0 {
		if lda > 0 {
			ap1 = &a[r0*lda]
		} else {
			ap1 = &a[r0*kc]
		}
	}
	for q := 0; q < nq; q++ {
		var bq, rq, bq1, rq1 *float32
		if bias != nil {
			bq = &bias[0]
			if col {
				bq = &bias[q*16]
			}
			bq1 = bq
			if !col && odd {
				bq1 = &bias[r0]
			}
		}
		if res != nil {
			rq = &res[q*16]
			if odd {
				rq1 = &res[r0*e.ldr+q*16]
			}
		}
		if groups > 0 {
			sgemm12x16z(kc, ap, &b[q*ps], ldb, &c[q*16], ldc, e.flags, bq, rq, e.ldr, e.lo, e.hi, groups, lda)
		}
		if odd {
			sgemm6x16(kc, ap1, &b[q*ps], ldb, &c[r0*ldc+q*16], ldc, e.flags, bq1, rq1, e.ldr, e.lo, e.hi, 1, lda)
		}
	}
}
