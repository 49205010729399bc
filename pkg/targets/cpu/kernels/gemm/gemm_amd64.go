//go:build amd64 && !purego

package gemm

import (
	"unsafe"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// The AVX2+FMA micro-kernel (gemm_amd64.s): a 6×16 tile in twelve ymm
// accumulators, two B loads and six A broadcasts per k step.

//go:noescape
func sgemm6x16(kc int, a, b *float32, ldb int, c *float32, ldc int, flags uint, bias, res *float32, ldr int, lo, hi float32, panels, lda int)

//go:noescape
func sgemm4x16(kc int, a *float32, lda int, b *float32, ldb, ps int, c *float32, ldc int, flags uint, bias, res *float32, ldr int, lo, hi float32, nq int)

//go:noescape
func sgemmRows(kc int, a *float32, lda int, b *float32, ldb, ps int, c *float32, ldc int, flags uint, shape int)

//go:noescape
func sgemmChain(dst, b *float32, ldb, n, rows int, a *float32)

//go:noescape
func sgemmChain2(dst0, dst1, b *float32, ldb, n, rows int, a0, a1 *float32)

//go:noescape
func packA6x4(dst, a *float32, lda, n int)

//go:noescape
func packB16(dst, b *float32, ldb, kb, np int)

// packB16s packs np 16-column panels of kb rows of b (ldb apart) into dst.
func packB16s(dst, b []float32, ldb, kb, np int) {
	if np == 0 || kb == 0 {
		return
	}
	if !vec.AVX2FMA {
		packB16Go(dst, b, ldb, kb, np)
		return
	}
	_ = dst[np*16*kb-1]
	_ = b[(kb-1)*ldb+np*16-1]
	packB16(&dst[0], &b[0], ldb, kb, np)
}

// packA6 packs 6 rows of a (lda apart) and kb columns into a 6-row panel
// (the caller has checked that a holds them).
func packA6(dst, a []float32, lda, kb int) {
	n := kb / 4
	if !vec.AVX2FMA || n == 0 {
		packA6Go(dst, a, lda, kb)
		return
	}
	_ = dst[kb*6-1]
	_ = a[5*lda+kb-1]
	packA6x4(&dst[0], &a[0], lda, n)
	if r := n * 4; r < kb {
		packA6Go(dst[r*6:], a[r:], lda, kb-r)
	}
}

// asmKernel returns the assembly kernel this CPU runs best: the AVX-512F
// kernel where it runs and tuning.GemmAVX512Default chooses it, else the
// AVX2+FMA one where the CPU runs that.
func asmKernel() (gemmKernel, bool) {
	switch {
	case vec.AVX512F && tuning.GemmAVX512Default:
		return avx512Kernel(), true
	case vec.AVX2FMA:
		return avx2Kernel(), true
	}
	return gemmKernel{}, false
}

// otherKernels returns the assembly kernels this CPU runs besides
// asmKernel's, for the tests and benchmarks to compare.
func otherKernels() []gemmKernel {
	if !vec.AVX512F {
		return nil
	}
	if tuning.GemmAVX512Default {
		return []gemmKernel{avx2Kernel()}
	}
	return []gemmKernel{avx512Kernel()}
}

// avx2Kernel is the 6×16 AVX2+FMA kernel and its blocking (chosen on Zen 3;
// the reasons are in the tuning table, tuning.GemmAVX2KC).
func avx2Kernel() gemmKernel {
	return gemmKernel{name: "avx2-fma", mr: 6, nr: 16, kc: tuning.GemmAVX2KC, mc: tuning.GemmAVX2MC, nc: tuning.GemmAVX2NC,
		fn: kernel6x16Acc, tile: kernel6x16, tiles: kernel6x16n, tilesA: kernel6x16d, tilesQ: kernel6x16q,
		tiles4: kernel4x16q, rows: kernelRows, chain: kernelChain, chain2: kernelChain2}
}

// kernel6x16 checks the operands' extents and runs sgemm6x16 on one tile.
func kernel6x16(kc int, a, b []float32, ldb int, c []float32, ldc int, e tileEpi) {
	kernel6x16n(kc, a, b, ldb, c, ldc, e, 1)
}

// kernel6x16n runs sgemm6x16 on panels consecutive row panels of A (6·kc
// floats each) against one B panel: the tiles of C 6·ldc floats apart.
func kernel6x16n(kc int, a, b []float32, ldb int, c []float32, ldc int, e tileEpi, panels int) {
	kernel6x16q(kc, a, 0, b, ldb, 0, c, ldc, e, panels, 1)
}

// kernel6x16q runs sgemm6x16 on panels row panels of A (packed, or in
// place lda floats apart when lda > 0) against each of nq B panels ps
// floats apart, checking the operands once for the whole run: a call per
// panel spent a tenth of a short-k tile's time in Go. kernel6x16n and
// kernel6x16d are this for one B panel.
func kernel6x16q(kc int, a []float32, lda int, b []float32, ldb, ps int, c []float32, ldc int, e tileEpi, panels, nq int) {
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
	ap := unsafe.SliceData(a)
	for q := 0; q < nq; q++ {
		var bq, rq *float32
		if bias != nil {
			bq = &bias[0]
			if col {
				bq = &bias[q*16]
			}
		}
		if res != nil {
			rq = &res[q*16]
		}
		sgemm6x16(kc, ap, &b[q*ps], ldb, &c[q*16], ldc, e.flags, bq, rq, e.ldr, e.lo, e.hi, panels, lda)
	}
}

// epiOperands checks that C holds rows rows of nq 16-column panels and
// returns the epilogue's bias (by column, for the panels; by row, for the
// rows) and residual as far as the tiles read them; nil where the flags
// use none.
func epiOperands(c []float32, ldc int, e tileEpi, rows, nq int) (bias, res []float32) {
	_ = c[(rows-1)*ldc+nq*16-1]
	switch {
	case e.flags&epiBiasCol != 0:
		bias = e.bias[:nq*16]
	case e.flags&epiBiasRow != 0:
		bias = e.bias[:rows]
	}
	if e.flags&epiRes != 0 {
		res = e.res[:(rows-1)*e.ldr+nq*16]
	}
	return bias, res
}

// kernel4x16q runs sgemm4x16: the four rows of A at a (the first four of
// a packed 6-row panel, or rows lda floats apart in place when lda > 0)
// against nq B panels ps floats apart, checking the operands once.
func kernel4x16q(kc int, a []float32, lda int, b []float32, ldb, ps int, c []float32, ldc int, e tileEpi, nq int) {
	if nq <= 0 {
		return
	}
	if kc > 0 {
		if lda > 0 {
			_ = a[3*lda+kc-1]
		} else {
			_ = a[6*kc-1]
		}
		_ = b[(nq-1)*ps+(kc-1)*ldb+15]
	}
	bias, res := epiOperands(c, ldc, e, 4, nq)
	sgemm4x16(kc, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, ps, &c[0], ldc, e.flags, unsafe.SliceData(bias), unsafe.SliceData(res), e.ldr, e.lo, e.hi, nq)
}

// kernel6x16d is kernel6x16n with A read in place: 6·panels rows of kc
// floats, lda apart, from a (the same sums as from packed panels).
func kernel6x16d(kc int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, e tileEpi, panels int) {
	kernel6x16q(kc, a, lda, b, ldb, 0, c, ldc, e, panels, 1)
}

// kernel6x16Acc is kernel6x16 on packed panels with no epilogue: the
// gemmKernel.fn form (edge tiles).
func kernel6x16Acc(kc int, a, b, c []float32, ldc int, accumulate bool) {
	e := tileEpi{}
	if accumulate {
		e.flags = epiAcc
	}
	kernel6x16(kc, a, b, 16, c, ldc, e)
}

// kernelRows checks the operands' extents and runs sgemmRows: rows 1 or 2
// rows of A times g panels (4 or 1 for one row, 2 or 1 for two).
func kernelRows(kc int, a []float32, lda int, b []float32, ldb, ps int, c []float32, ldc int, acc bool, rows, g int) {
	var shape int
	switch {
	case rows == 1 && g == 4:
		shape = 0
	case rows == 1 && g == 1:
		shape = 1
	case rows == 2 && g == 2:
		shape = 2
	case rows == 2 && g == 1:
		shape = 3
	default:
		panic("kernels: kernelRows: bad shape")
	}
	if kc > 0 {
		_ = a[(rows-1)*lda+kc-1]
		_ = b[(kc-1)*ldb+(g-1)*ps+15]
	}
	_ = c[(rows-1)*ldc+g*16-1]
	var flags uint
	if acc {
		flags = epiAcc
	}
	sgemmRows(kc, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, ps, &c[0], ldc, flags, shape)
}

// kernelChain2 checks the operands' extents and runs sgemmChain2.
func kernelChain2(dst0, dst1, b []float32, ldb int, a0, a1 []float32) {
	n, rows := len(dst0), len(a0)
	if n%8 != 0 || len(dst1) != n || len(a1) != rows {
		panic("kernels: kernelChain2: widths not equal multiples of 8 or rows differ")
	}
	if n == 0 || rows == 0 {
		return
	}
	_ = b[(rows-1)*ldb+n-1]
	sgemmChain2(&dst0[0], &dst1[0], &b[0], ldb, n, rows, &a0[0], &a1[0])
}

// kernelChain checks the operands' extents and runs sgemmChain.
func kernelChain(dst, b []float32, ldb int, a []float32) {
	n, rows := len(dst), len(a)
	if n%8 != 0 {
		panic("kernels: kernelChain: width not a multiple of 8")
	}
	if n == 0 || rows == 0 {
		return
	}
	_ = b[(rows-1)*ldb+n-1]
	sgemmChain(&dst[0], &b[0], ldb, n, rows, &a[0])
}
