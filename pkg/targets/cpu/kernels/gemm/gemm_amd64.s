//go:build amd64 && !purego

#include "textflag.h"

// One k step of the 6×16 tile: B row (16 floats at BX) times the six A
// values at off(AX); accumulators Y0..Y11 (row i in Y(2i), Y(2i+1)). The
// same row of the next B panel, R13 bytes on, is prefetched into L2:
// weights packed at build time stream from memory once per product, and
// waiting for them was a visible part of a 64×2048×2048 product.
#define STEP6x16(off) \
	VMOVUPS      (BX), Y12; \
	VMOVUPS      32(BX), Y13; \
	VBROADCASTSS (off+0)(AX), Y14; \
	VBROADCASTSS (off+4)(AX), Y15; \
	VFMADD231PS  Y12, Y14, Y0; \
	VFMADD231PS  Y13, Y14, Y1; \
	VFMADD231PS  Y12, Y15, Y2; \
	VFMADD231PS  Y13, Y15, Y3; \
	VBROADCASTSS (off+8)(AX), Y14; \
	VBROADCASTSS (off+12)(AX), Y15; \
	VFMADD231PS  Y12, Y14, Y4; \
	VFMADD231PS  Y13, Y14, Y5; \
	VFMADD231PS  Y12, Y15, Y6; \
	VFMADD231PS  Y13, Y15, Y7; \
	VBROADCASTSS (off+16)(AX), Y14; \
	VBROADCASTSS (off+20)(AX), Y15; \
	VFMADD231PS  Y12, Y14, Y8; \
	VFMADD231PS  Y13, Y14, Y9; \
	VFMADD231PS  Y12, Y15, Y10; \
	VFMADD231PS  Y13, Y15, Y11; \
	PREFETCHT1   (BX)(R13*1); \
	ADDQ         R8, BX

// STEP6x16 with A read in place: row i's value at off(AX) + i·R14 bytes
// (rows 3-5 from R15 = AX + 3·R14).
#define STEP6x16D(off) \
	VMOVUPS      (BX), Y12; \
	VMOVUPS      32(BX), Y13; \
	VBROADCASTSS off(AX), Y14; \
	VBROADCASTSS off(AX)(R14*1), Y15; \
	VFMADD231PS  Y12, Y14, Y0; \
	VFMADD231PS  Y13, Y14, Y1; \
	VFMADD231PS  Y12, Y15, Y2; \
	VFMADD231PS  Y13, Y15, Y3; \
	VBROADCASTSS off(AX)(R14*2), Y14; \
	VBROADCASTSS off(R15), Y15; \
	VFMADD231PS  Y12, Y14, Y4; \
	VFMADD231PS  Y13, Y14, Y5; \
	VFMADD231PS  Y12, Y15, Y6; \
	VFMADD231PS  Y13, Y15, Y7; \
	VBROADCASTSS off(R15)(R14*1), Y14; \
	VBROADCASTSS off(R15)(R14*2), Y15; \
	VFMADD231PS  Y12, Y14, Y8; \
	VFMADD231PS  Y13, Y14, Y9; \
	VFMADD231PS  Y12, Y15, Y10; \
	VFMADD231PS  Y13, Y15, Y11; \
	PREFETCHT1   (BX)(R13*1); \
	ADDQ         R8, BX

// The epilogue steps on the first four rows of a tile (Y0..Y7, row i in
// Y(2i), Y(2i+1)), shared by the 6×16 tile (which adds rows 4 and 5) and
// the 4×16 one. Rows of C or the residual at r, r+ld, r+2·ld and r3.
#define ZERO4 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

#define ADDROWS4(r, ld, r3) \
	VADDPS (r), Y0, Y0; \
	VADDPS 32(r), Y1, Y1; \
	VADDPS (r)(ld*1), Y2, Y2; \
	VADDPS 32(r)(ld*1), Y3, Y3; \
	VADDPS (r)(ld*2), Y4, Y4; \
	VADDPS 32(r)(ld*2), Y5, Y5; \
	VADDPS (r3), Y6, Y6; \
	VADDPS 32(r3), Y7, Y7

#define STOREROWS4(r, ld, r3) \
	VMOVUPS Y0, (r); \
	VMOVUPS Y1, 32(r); \
	VMOVUPS Y2, (r)(ld*1); \
	VMOVUPS Y3, 32(r)(ld*1); \
	VMOVUPS Y4, (r)(ld*2); \
	VMOVUPS Y5, 32(r)(ld*2); \
	VMOVUPS Y6, (r3); \
	VMOVUPS Y7, 32(r3)

// A bias by column: the 16 values at SI, into Y12 and Y13.
#define BIASCOL4 \
	VMOVUPS (SI), Y12; \
	VMOVUPS 32(SI), Y13; \
	VADDPS  Y12, Y0, Y0; \
	VADDPS  Y13, Y1, Y1; \
	VADDPS  Y12, Y2, Y2; \
	VADDPS  Y13, Y3, Y3; \
	VADDPS  Y12, Y4, Y4; \
	VADDPS  Y13, Y5, Y5; \
	VADDPS  Y12, Y6, Y6; \
	VADDPS  Y13, Y7, Y7

// A bias by row: rows 0-3's at SI.
#define BIASROW4 \
	VBROADCASTSS 0(SI), Y12; \
	VBROADCASTSS 4(SI), Y13; \
	VADDPS       Y12, Y0, Y0; \
	VADDPS       Y12, Y1, Y1; \
	VADDPS       Y13, Y2, Y2; \
	VADDPS       Y13, Y3, Y3; \
	VBROADCASTSS 8(SI), Y12; \
	VBROADCASTSS 12(SI), Y13; \
	VADDPS       Y12, Y4, Y4; \
	VADDPS       Y12, Y5, Y5; \
	VADDPS       Y13, Y6, Y6; \
	VADDPS       Y13, Y7, Y7

// max(lo, x) then min(hi, x), lo in Y12 and hi in Y13, with the bound as
// the first source: a NaN x is passed through, as the Go loop does.
#define CLAMP4 \
	VMAXPS Y0, Y12, Y0; \
	VMAXPS Y1, Y12, Y1; \
	VMAXPS Y2, Y12, Y2; \
	VMAXPS Y3, Y12, Y3; \
	VMAXPS Y4, Y12, Y4; \
	VMAXPS Y5, Y12, Y5; \
	VMAXPS Y6, Y12, Y6; \
	VMAXPS Y7, Y12, Y7; \
	VMINPS Y0, Y13, Y0; \
	VMINPS Y1, Y13, Y1; \
	VMINPS Y2, Y13, Y2; \
	VMINPS Y3, Y13, Y3; \
	VMINPS Y4, Y13, Y4; \
	VMINPS Y5, Y13, Y5; \
	VMINPS Y6, Y13, Y6; \
	VMINPS Y7, Y13, Y7

// The fused epilogue's common cases, one row (two accumulators, y0 and
// y1) at a time: each row's bias, clamp and store follow as soon as its
// sums are done, where the general path below takes each step over every
// row in turn (and tests each flag). Small-k products (1x1 convolutions of
// 16-32 channels) spent a measurable part of their time in the longer chains. Y12 and Y13
// hold the clamp's bounds, Y14 and Y15 a bias by column; a bias by row is
// broadcast from boff(SI). The operations, and their order per element, are
// the general path's: the sums are the same bits.
// The steps, on one row's two accumulators.
#define BIASR2(y0, y1, boff) \
	VBROADCASTSS boff(SI), Y14; \
	VADDPS       Y14, y0, y0; \
	VADDPS       Y14, y1, y1
#define BIASC2(y0, y1) \
	VADDPS Y14, y0, y0; \
	VADDPS Y15, y1, y1
#define CLAMP2(y0, y1) \
	VMAXPS y0, Y12, y0; \
	VMAXPS y1, Y12, y1; \
	VMINPS y0, Y13, y0; \
	VMINPS y1, Y13, y1
#define RES2(y0, y1, r0, r1) \
	VADDPS r0, y0, y0; \
	VADDPS r1, y1, y1
#define STORE2(y0, y1, d0, d1) \
	VMOVUPS y0, d0; \
	VMOVUPS y1, d1
// A row: bias by row (R) or column (C), then a clamp (C) or a residual
// row at r0, r1 (R), or neither, then the store.
#define EPIRC(y0, y1, boff, d0, d1) BIASR2(y0, y1, boff); CLAMP2(y0, y1); STORE2(y0, y1, d0, d1)
#define EPICC(y0, y1, d0, d1) BIASC2(y0, y1); CLAMP2(y0, y1); STORE2(y0, y1, d0, d1)
#define EPIR(y0, y1, boff, d0, d1) BIASR2(y0, y1, boff); STORE2(y0, y1, d0, d1)
#define EPIC(y0, y1, d0, d1) BIASC2(y0, y1); STORE2(y0, y1, d0, d1)
#define EPIRR(y0, y1, boff, r0, r1, d0, d1) BIASR2(y0, y1, boff); RES2(y0, y1, r0, r1); STORE2(y0, y1, d0, d1)
#define EPICR(y0, y1, r0, r1, d0, d1) BIASC2(y0, y1); RES2(y0, y1, r0, r1); STORE2(y0, y1, d0, d1)
// The same on a tile's first four rows (C rows at DI, DI+R9, DI+2·R9,
// R10), shared by the 6×16 tile (which adds rows 4 and 5) and the 4×16
// one; the residual rows at r, r+ld, r+2·ld and r3.
#define EPIRC4 \
	EPIRC(Y0, Y1, 0, (DI), 32(DI)); \
	EPIRC(Y2, Y3, 4, (DI)(R9*1), 32(DI)(R9*1)); \
	EPIRC(Y4, Y5, 8, (DI)(R9*2), 32(DI)(R9*2)); \
	EPIRC(Y6, Y7, 12, (R10), 32(R10))
#define EPICC4 \
	EPICC(Y0, Y1, (DI), 32(DI)); \
	EPICC(Y2, Y3, (DI)(R9*1), 32(DI)(R9*1)); \
	EPICC(Y4, Y5, (DI)(R9*2), 32(DI)(R9*2)); \
	EPICC(Y6, Y7, (R10), 32(R10))
#define EPIR4 \
	EPIR(Y0, Y1, 0, (DI), 32(DI)); \
	EPIR(Y2, Y3, 4, (DI)(R9*1), 32(DI)(R9*1)); \
	EPIR(Y4, Y5, 8, (DI)(R9*2), 32(DI)(R9*2)); \
	EPIR(Y6, Y7, 12, (R10), 32(R10))
#define EPIC4 \
	EPIC(Y0, Y1, (DI), 32(DI)); \
	EPIC(Y2, Y3, (DI)(R9*1), 32(DI)(R9*1)); \
	EPIC(Y4, Y5, (DI)(R9*2), 32(DI)(R9*2)); \
	EPIC(Y6, Y7, (R10), 32(R10))
#define EPIRR4(r, ld, r3) \
	EPIRR(Y0, Y1, 0, (r), 32(r), (DI), 32(DI)); \
	EPIRR(Y2, Y3, 4, (r)(ld*1), 32(r)(ld*1), (DI)(R9*1), 32(DI)(R9*1)); \
	EPIRR(Y4, Y5, 8, (r)(ld*2), 32(r)(ld*2), (DI)(R9*2), 32(DI)(R9*2)); \
	EPIRR(Y6, Y7, 12, (r3), 32(r3), (R10), 32(R10))
#define EPICR4(r, ld, r3) \
	EPICR(Y0, Y1, (r), 32(r), (DI), 32(DI)); \
	EPICR(Y2, Y3, (r)(ld*1), 32(r)(ld*1), (DI)(R9*1), 32(DI)(R9*1)); \
	EPICR(Y4, Y5, (r)(ld*2), 32(r)(ld*2), (DI)(R9*2), 32(DI)(R9*2)); \
	EPICR(Y6, Y7, (r3), 32(r3), (R10), 32(R10))
// The flag sets with a fused path of their own (DX the flags; each
// kernel's labels of the same names), anything else to general.
#define EPIDISPATCH \
	CMPQ DX, $12; \
	JEQ  fastRC; \
	CMPQ DX, $10; \
	JEQ  fastCC; \
	CMPQ DX, $4; \
	JEQ  fastR; \
	CMPQ DX, $2; \
	JEQ  fastC; \
	CMPQ DX, $20; \
	JEQ  fastRR; \
	CMPQ DX, $18; \
	JEQ  fastCR; \
	JMP  general
// func sgemm6x16(kc int, a, b *float32, ldb int, c *float32, ldc int, flags uint, bias, res *float32, ldr int, lo, hi float32, panels, lda int)
//
// The 6×16 tile of C at c (row stride ldc floats) gets
// sum over p < kc of a[p*6+i]·b[p*ldb+j] (a a packed 6-row panel; b 16
// columns of rows ldb floats apart: 16 for a packed panel), then, by flags:
// epiAcc adds the old C, epiBiasCol adds bias[j], epiBiasRow adds bias[i],
// epiClamp clamps to [lo, hi] (NaN kept), epiRes adds res[i*ldr+j].
//
// It does so for panels consecutive row panels: panel r reads the A panel
// at a + r·6·kc (where the previous one's k loop left AX), and writes C,
// the row bias and the residual 6·r rows further down, against the same B.
// One call per column of tiles keeps Go's per-tile work out of small-k
// products (pointwise convolutions with 16 to 32 input channels).
//
// lda > 0 reads A in place instead: rows lda floats apart, a the first
// row's first element, panel r 6·r rows down (no packing: channels-last
// activations are rows already).
TEXT ·sgemm6x16(SB), NOSPLIT, $40-104
	MOVQ a+8(FP), AX
	MOVQ AX, cura-40(SP)
	MOVQ c+32(FP), DI
	MOVQ DI, curc-8(SP)
	MOVQ bias+56(FP), SI
	MOVQ SI, curbias-16(SP)
	MOVQ res+64(FP), SI
	MOVQ SI, curres-24(SP)
	MOVQ panels+88(FP), SI
	MOVQ SI, left-32(SP)

panel:
	MOVQ kc+0(FP), CX
	MOVQ b+16(FP), BX
	MOVQ ldb+24(FP), R8
	SHLQ $2, R8
	// The next B panel: kc rows on when packed (ldb 16), else 16 columns on.
	MOVQ CX, R13
	SHLQ $6, R13
	CMPQ R8, $64
	JEQ  pfdist
	MOVQ $64, R13

pfdist:
	MOVQ curc-8(SP), DI
	MOVQ ldc+40(FP), R9
	SHLQ $2, R9
	LEAQ (DI)(R9*2), R10
	ADDQ R9, R10           // R10 = row 3 of C

	PREFETCHT0 (DI)
	PREFETCHT0 63(DI)
	PREFETCHT0 (DI)(R9*1)
	PREFETCHT0 63(DI)(R9*1)
	PREFETCHT0 (DI)(R9*2)
	PREFETCHT0 63(DI)(R9*2)
	PREFETCHT0 (R10)
	PREFETCHT0 63(R10)
	PREFETCHT0 (R10)(R9*1)
	PREFETCHT0 63(R10)(R9*1)
	PREFETCHT0 (R10)(R9*2)
	PREFETCHT0 63(R10)(R9*2)
	ZERO4
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

	MOVQ lda+96(FP), R14
	TESTQ R14, R14
	JNZ  direct
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   tail

loop4:
	STEP6x16(0)
	STEP6x16(24)
	STEP6x16(48)
	STEP6x16(72)
	ADDQ $96, AX
	DECQ DX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   store

loop1:
	STEP6x16(0)
	ADDQ $24, AX
	DECQ CX
	JNZ  loop1
	JMP  store

direct:
	SHLQ $2, R14
	MOVQ cura-40(SP), AX
	LEAQ (AX)(R14*2), R15
	ADDQ R14, R15          // R15 = row 3 of A
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   dtail

dloop4:
	STEP6x16D(0)
	STEP6x16D(4)
	STEP6x16D(8)
	STEP6x16D(12)
	ADDQ $16, AX
	ADDQ $16, R15
	DECQ DX
	JNZ  dloop4

dtail:
	ANDQ $3, CX
	JZ   dnext

dloop1:
	STEP6x16D(0)
	ADDQ $4, AX
	ADDQ $4, R15
	DECQ CX
	JNZ  dloop1

dnext:
	// The next panel's A: 6 rows down.
	LEAQ (R14)(R14*2), R11
	SHLQ $1, R11
	ADDQ R11, cura-40(SP)

store:
	MOVQ flags+48(FP), DX
	MOVQ curbias-16(SP), SI
	EPIDISPATCH

fastRC:
	VBROADCASTSS lo+80(FP), Y12
	VBROADCASTSS hi+84(FP), Y13
	EPIRC4
	EPIRC(Y8, Y9, 16, (R10)(R9*1), 32(R10)(R9*1))
	EPIRC(Y10, Y11, 20, (R10)(R9*2), 32(R10)(R9*2))
	JMP  advance

fastCC:
	VBROADCASTSS lo+80(FP), Y12
	VBROADCASTSS hi+84(FP), Y13
	VMOVUPS (SI), Y14
	VMOVUPS 32(SI), Y15
	EPICC4
	EPICC(Y8, Y9, (R10)(R9*1), 32(R10)(R9*1))
	EPICC(Y10, Y11, (R10)(R9*2), 32(R10)(R9*2))
	JMP  advance

fastR:
	EPIR4
	EPIR(Y8, Y9, 16, (R10)(R9*1), 32(R10)(R9*1))
	EPIR(Y10, Y11, 20, (R10)(R9*2), 32(R10)(R9*2))
	JMP  advance

fastC:
	VMOVUPS (SI), Y14
	VMOVUPS 32(SI), Y15
	EPIC4
	EPIC(Y8, Y9, (R10)(R9*1), 32(R10)(R9*1))
	EPIC(Y10, Y11, (R10)(R9*2), 32(R10)(R9*2))
	JMP  advance

fastRR:
	MOVQ curres-24(SP), BX
	MOVQ ldr+72(FP), CX
	SHLQ $2, CX
	LEAQ (BX)(CX*2), R12
	ADDQ CX, R12          // R12 = row 3 of the residual
	EPIRR4(BX, CX, R12)
	EPIRR(Y8, Y9, 16, (R12)(CX*1), 32(R12)(CX*1), (R10)(R9*1), 32(R10)(R9*1))
	EPIRR(Y10, Y11, 20, (R12)(CX*2), 32(R12)(CX*2), (R10)(R9*2), 32(R10)(R9*2))
	JMP  advance

fastCR:
	MOVQ curres-24(SP), BX
	MOVQ ldr+72(FP), CX
	SHLQ $2, CX
	LEAQ (BX)(CX*2), R12
	ADDQ CX, R12          // R12 = row 3 of the residual
	VMOVUPS (SI), Y14
	VMOVUPS 32(SI), Y15
	EPICR4(BX, CX, R12)
	EPICR(Y8, Y9, (R12)(CX*1), 32(R12)(CX*1), (R10)(R9*1), 32(R10)(R9*1))
	EPICR(Y10, Y11, (R12)(CX*2), 32(R12)(CX*2), (R10)(R9*2), 32(R10)(R9*2))
	JMP  advance

general:
	TESTQ $1, DX
	JZ    nosum
	ADDROWS4(DI, R9, R10)
	VADDPS (R10)(R9*1), Y8, Y8
	VADDPS 32(R10)(R9*1), Y9, Y9
	VADDPS (R10)(R9*2), Y10, Y10
	VADDPS 32(R10)(R9*2), Y11, Y11

nosum:
	MOVQ curbias-16(SP), SI
	TESTQ $2, DX
	JZ    nobiascol
	BIASCOL4
	VADDPS  Y12, Y8, Y8
	VADDPS  Y13, Y9, Y9
	VADDPS  Y12, Y10, Y10
	VADDPS  Y13, Y11, Y11

nobiascol:
	TESTQ $4, DX
	JZ    nobiasrow
	BIASROW4
	VBROADCASTSS 16(SI), Y12
	VBROADCASTSS 20(SI), Y13
	VADDPS       Y12, Y8, Y8
	VADDPS       Y12, Y9, Y9
	VADDPS       Y13, Y10, Y10
	VADDPS       Y13, Y11, Y11

nobiasrow:
	TESTQ $8, DX
	JZ    noclamp
	VBROADCASTSS lo+80(FP), Y12
	VBROADCASTSS hi+84(FP), Y13
	CLAMP4
	VMAXPS       Y8, Y12, Y8
	VMAXPS       Y9, Y12, Y9
	VMAXPS       Y10, Y12, Y10
	VMAXPS       Y11, Y12, Y11
	VMINPS       Y8, Y13, Y8
	VMINPS       Y9, Y13, Y9
	VMINPS       Y10, Y13, Y10
	VMINPS       Y11, Y13, Y11

noclamp:
	TESTQ $16, DX
	JZ    nores
	MOVQ  curres-24(SP), SI
	MOVQ  ldr+72(FP), R11
	SHLQ  $2, R11
	LEAQ  (SI)(R11*2), R12
	ADDQ  R11, R12
	ADDROWS4(SI, R11, R12)
	VADDPS (R12)(R11*1), Y8, Y8
	VADDPS 32(R12)(R11*1), Y9, Y9
	VADDPS (R12)(R11*2), Y10, Y10
	VADDPS 32(R12)(R11*2), Y11, Y11

nores:
	STOREROWS4(DI, R9, R10)
	VMOVUPS Y8, (R10)(R9*1)
	VMOVUPS Y9, 32(R10)(R9*1)
	VMOVUPS Y10, (R10)(R9*2)
	VMOVUPS Y11, 32(R10)(R9*2)

advance:
	// Next panel: C, row bias and residual 6 rows down.
	LEAQ (R9)(R9*2), R11
	SHLQ $1, R11
	ADDQ R11, curc-8(SP)
	TESTQ $4, DX
	JZ    nextres
	ADDQ  $24, curbias-16(SP)

nextres:
	MOVQ ldr+72(FP), R11
	SHLQ $2, R11
	LEAQ (R11)(R11*2), R11
	SHLQ $1, R11
	ADDQ R11, curres-24(SP)
	DECQ left-32(SP)
	JNZ  panel
	VZEROUPPER
	RET

// func packA6x4(dst, a *float32, lda, n int)
//
// Packs 6 rows of A (lda floats apart) into a 6-row panel, 4 columns per
// iteration: dst[p*6+i] = a[i*lda+p] for p < 4n.
TEXT ·packA6x4(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	MOVQ n+24(FP), CX
	LEAQ (SI)(R8*2), R9
	ADDQ R8, R9            // row 3
	TESTQ CX, CX
	JZ   packdone

packloop:
	VMOVUPS (SI), X0
	VMOVUPS (SI)(R8*1), X1
	VMOVUPS (SI)(R8*2), X2
	VMOVUPS (R9), X3
	VMOVUPS (R9)(R8*1), X4
	VMOVUPS (R9)(R8*2), X5
	VUNPCKLPS X1, X0, X6   // r0p0 r1p0 r0p1 r1p1
	VUNPCKLPS X3, X2, X7   // r2p0 r3p0 r2p1 r3p1
	VUNPCKHPS X1, X0, X8   // r0p2 r1p2 r0p3 r1p3
	VUNPCKHPS X3, X2, X9   // r2p2 r3p2 r2p3 r3p3
	VUNPCKLPS X5, X4, X10  // r4p0 r5p0 r4p1 r5p1
	VUNPCKHPS X5, X4, X11  // r4p2 r5p2 r4p3 r5p3
	VUNPCKLPD X7, X6, X0   // p0 rows 0..3
	VUNPCKHPD X7, X6, X1   // p1
	VUNPCKLPD X9, X8, X2   // p2
	VUNPCKHPD X9, X8, X3   // p3
	VMOVUPS   X0, (DI)
	VMOVQ     X10, 16(DI)
	VMOVUPS   X1, 24(DI)
	VMOVHPS   X10, 40(DI)
	VMOVUPS   X2, 48(DI)
	VMOVQ     X11, 64(DI)
	VMOVUPS   X3, 72(DI)
	VMOVHPS   X11, 88(DI)
	ADDQ $16, SI
	ADDQ $16, R9
	ADDQ $96, DI
	DECQ CX
	JNZ  packloop

packdone:
	RET

// func packB16(dst, b *float32, ldb, kb, np int)
//
// Packs np 16-column panels of kb rows of B (rows ldb floats apart):
// dst[q*16*kb + p*16 + j] = b[p*ldb + q*16 + j]. Panels go four at a
// time, row by row, so each row's 256 bytes are read in one run.
TEXT ·packB16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ ldb+16(FP), R8
	SHLQ $2, R8
	MOVQ kb+24(FP), R9
	MOVQ np+32(FP), R10
	MOVQ R9, R11
	SHLQ $6, R11           // panel size in bytes: kb*64

quad:
	CMPQ R10, $4
	JL   single
	MOVQ SI, AX            // source row
	MOVQ DI, BX            // panel 0 row
	MOVQ R9, CX
	LEAQ (R11)(R11*2), DX  // 3 panels
quadrow:
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS 64(AX), Y2
	VMOVUPS 96(AX), Y3
	VMOVUPS 128(AX), Y4
	VMOVUPS 160(AX), Y5
	VMOVUPS 192(AX), Y6
	VMOVUPS 224(AX), Y7
	VMOVUPS Y0, (BX)
	VMOVUPS Y1, 32(BX)
	VMOVUPS Y2, (BX)(R11*1)
	VMOVUPS Y3, 32(BX)(R11*1)
	VMOVUPS Y4, (BX)(R11*2)
	VMOVUPS Y5, 32(BX)(R11*2)
	VMOVUPS Y6, (BX)(DX*1)
	VMOVUPS Y7, 32(BX)(DX*1)
	ADDQ R8, AX
	ADDQ $64, BX
	DECQ CX
	JNZ  quadrow
	ADDQ $256, SI
	LEAQ (DI)(R11*4), DI
	SUBQ $4, R10
	JMP  quad

single:
	TESTQ R10, R10
	JZ    packbdone
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R9, CX
singlerow:
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS Y0, (BX)
	VMOVUPS Y1, 32(BX)
	ADDQ R8, AX
	ADDQ $64, BX
	DECQ CX
	JNZ  singlerow
	ADDQ $64, SI
	ADDQ R11, DI
	DECQ R10
	JMP  single

packbdone:
	VZEROUPPER
	RET

// Row kernels for products with fewer rows than the 6×16 tile: one or two
// rows of A (read in place, lda floats apart) times G 16-column panels of
// B, each panel's rows ldb floats apart and the panels ps floats apart (16
// for a row-major B read in place; 16·kb for a packed block). Each output
// is one FMA chain over p, exactly as in sgemm6x16, so every kernel here
// gives the same bits for the same element. flags: epiAcc adds the old C.
//
// func sgemmRows(kc int, a *float32, lda int, b *float32, ldb, ps int, c *float32, ldc int, flags uint, shape int)
// shape: 0 = 1 row × 4 panels, 1 = 1 row × 1 panel, 2 = 2 rows × 2 panels,
// 3 = 2 rows × 1 panel.

#define R1x4(off) \
	VBROADCASTSS off(AX), Y15;                  \
	VFMADD231PS  (BX), Y15, Y0;                 \
	VFMADD231PS  32(BX), Y15, Y1;               \
	VFMADD231PS  (BX)(R8*1), Y15, Y2;           \
	VFMADD231PS  32(BX)(R8*1), Y15, Y3;         \
	VFMADD231PS  (BX)(R8*2), Y15, Y4;           \
	VFMADD231PS  32(BX)(R8*2), Y15, Y5;         \
	VFMADD231PS  (R10), Y15, Y6;                \
	VFMADD231PS  32(R10), Y15, Y7;              \
	ADDQ         R9, BX;                        \
	ADDQ         R9, R10

#define R1x1(off) \
	VBROADCASTSS off(AX), Y15;                  \
	VFMADD231PS  (BX), Y15, Y0;                 \
	VFMADD231PS  32(BX), Y15, Y1;               \
	ADDQ         R9, BX

#define R2x2(off) \
	VMOVUPS      (BX), Y8;                      \
	VMOVUPS      32(BX), Y9;                    \
	VMOVUPS      (BX)(R8*1), Y10;               \
	VMOVUPS      32(BX)(R8*1), Y11;             \
	VBROADCASTSS off(AX), Y14;                  \
	VBROADCASTSS off(AX)(R11*1), Y15;           \
	VFMADD231PS  Y8, Y14, Y0;                   \
	VFMADD231PS  Y9, Y14, Y1;                   \
	VFMADD231PS  Y10, Y14, Y2;                  \
	VFMADD231PS  Y11, Y14, Y3;                  \
	VFMADD231PS  Y8, Y15, Y4;                   \
	VFMADD231PS  Y9, Y15, Y5;                   \
	VFMADD231PS  Y10, Y15, Y6;                  \
	VFMADD231PS  Y11, Y15, Y7;                  \
	ADDQ         R9, BX

#define R2x1(off) \
	VMOVUPS      (BX), Y8;                      \
	VMOVUPS      32(BX), Y9;                    \
	VBROADCASTSS off(AX), Y14;                  \
	VBROADCASTSS off(AX)(R11*1), Y15;           \
	VFMADD231PS  Y8, Y14, Y0;                   \
	VFMADD231PS  Y9, Y14, Y1;                   \
	VFMADD231PS  Y8, Y15, Y4;                   \
	VFMADD231PS  Y9, Y15, Y5;                   \
	ADDQ         R9, BX

TEXT ·sgemmRows(SB), NOSPLIT, $0-80
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R11
	SHLQ $2, R11
	MOVQ b+24(FP), BX
	MOVQ ldb+32(FP), R9
	SHLQ $2, R9
	MOVQ ps+40(FP), R8
	SHLQ $2, R8
	MOVQ c+48(FP), DI
	MOVQ ldc+56(FP), R12
	SHLQ $2, R12
	MOVQ flags+64(FP), SI
	LEAQ (BX)(R8*2), R10
	ADDQ R8, R10           // panel 3

	ZERO4

	MOVQ shape+72(FP), R13
	CMPQ R13, $1
	JEQ  shape1x1
	CMPQ R13, $2
	JEQ  shape2x2
	CMPQ R13, $3
	JEQ  shape2x1

	MOVQ CX, DX
	SHRQ $2, DX
	JZ   r1x4tail
r1x4loop4:
	R1x4(0)
	R1x4(4)
	R1x4(8)
	R1x4(12)
	ADDQ $16, AX
	DECQ DX
	JNZ  r1x4loop4
r1x4tail:
	ANDQ $3, CX
	JZ   r1x4done
r1x4loop1:
	R1x4(0)
	ADDQ $4, AX
	DECQ CX
	JNZ  r1x4loop1
r1x4done:
	TESTQ $1, SI
	JZ    r1x4store
	VADDPS (DI), Y0, Y0
	VADDPS 32(DI), Y1, Y1
	VADDPS 64(DI), Y2, Y2
	VADDPS 96(DI), Y3, Y3
	VADDPS 128(DI), Y4, Y4
	VADDPS 160(DI), Y5, Y5
	VADDPS 192(DI), Y6, Y6
	VADDPS 224(DI), Y7, Y7
r1x4store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

shape1x1:
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   r1x1tail
r1x1loop4:
	R1x1(0)
	R1x1(4)
	R1x1(8)
	R1x1(12)
	ADDQ $16, AX
	DECQ DX
	JNZ  r1x1loop4
r1x1tail:
	ANDQ $3, CX
	JZ   r1x1done
r1x1loop1:
	R1x1(0)
	ADDQ $4, AX
	DECQ CX
	JNZ  r1x1loop1
r1x1done:
	TESTQ $1, SI
	JZ    r1x1store
	VADDPS (DI), Y0, Y0
	VADDPS 32(DI), Y1, Y1
r1x1store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET

shape2x2:
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   r2x2tail
r2x2loop4:
	R2x2(0)
	R2x2(4)
	R2x2(8)
	R2x2(12)
	ADDQ $16, AX
	DECQ DX
	JNZ  r2x2loop4
r2x2tail:
	ANDQ $3, CX
	JZ   r2x2done
r2x2loop1:
	R2x2(0)
	ADDQ $4, AX
	DECQ CX
	JNZ  r2x2loop1
r2x2done:
	TESTQ $1, SI
	JZ    r2x2store
	VADDPS (DI), Y0, Y0
	VADDPS 32(DI), Y1, Y1
	VADDPS 64(DI), Y2, Y2
	VADDPS 96(DI), Y3, Y3
	VADDPS (DI)(R12*1), Y4, Y4
	VADDPS 32(DI)(R12*1), Y5, Y5
	VADDPS 64(DI)(R12*1), Y6, Y6
	VADDPS 96(DI)(R12*1), Y7, Y7
r2x2store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, (DI)(R12*1)
	VMOVUPS Y5, 32(DI)(R12*1)
	VMOVUPS Y6, 64(DI)(R12*1)
	VMOVUPS Y7, 96(DI)(R12*1)
	VZEROUPPER
	RET

shape2x1:
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   r2x1tail
r2x1loop4:
	R2x1(0)
	R2x1(4)
	R2x1(8)
	R2x1(12)
	ADDQ $16, AX
	DECQ DX
	JNZ  r2x1loop4
r2x1tail:
	ANDQ $3, CX
	JZ   r2x1done
r2x1loop1:
	R2x1(0)
	ADDQ $4, AX
	DECQ CX
	JNZ  r2x1loop1
r2x1done:
	TESTQ $1, SI
	JZ    r2x1store
	VADDPS (DI), Y0, Y0
	VADDPS 32(DI), Y1, Y1
	VADDPS (DI)(R12*1), Y4, Y4
	VADDPS 32(DI)(R12*1), Y5, Y5
r2x1store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y4, (DI)(R12*1)
	VMOVUPS Y5, 32(DI)(R12*1)
	VZEROUPPER
	RET

// func sgemmChain(dst, b *float32, ldb, n, rows int, a *float32)
//
// dst[j] = fma(a[rows-1], b[(rows-1)*ldb+j], ... fma(a[0], b[j], dst[j]))
// for j < n (a multiple of 8): one row of A against rows of B streamed in
// order, each output's FMA chain in the order of the other kernels, so the
// same bits. Four B rows per pass over dst, 64 columns at a time.
TEXT ·sgemmChain(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ ldb+16(FP), R8
	SHLQ $2, R8
	MOVQ n+24(FP), R9
	MOVQ rows+32(FP), R10
	MOVQ a+40(FP), R11

chain4:
	CMPQ R10, $4
	JL   chain1
	VBROADCASTSS (R11), Y12
	VBROADCASTSS 4(R11), Y13
	VBROADCASTSS 8(R11), Y14
	VBROADCASTSS 12(R11), Y15
	LEAQ (SI)(R8*1), R12    // rows 1, 2, 3
	LEAQ (SI)(R8*2), DX
	LEAQ (DX)(R8*1), R13
	XORQ AX, AX             // byte offset into the rows
	MOVQ R9, CX
chain4x64:
	CMPQ CX, $64
	JL   chain4x8
	VMOVUPS     (DI)(AX*1), Y0
	VMOVUPS     32(DI)(AX*1), Y1
	VMOVUPS     64(DI)(AX*1), Y2
	VMOVUPS     96(DI)(AX*1), Y3
	VMOVUPS     128(DI)(AX*1), Y4
	VMOVUPS     160(DI)(AX*1), Y5
	VMOVUPS     192(DI)(AX*1), Y6
	VMOVUPS     224(DI)(AX*1), Y7
	VFMADD231PS (SI)(AX*1), Y12, Y0
	VFMADD231PS 32(SI)(AX*1), Y12, Y1
	VFMADD231PS 64(SI)(AX*1), Y12, Y2
	VFMADD231PS 96(SI)(AX*1), Y12, Y3
	VFMADD231PS 128(SI)(AX*1), Y12, Y4
	VFMADD231PS 160(SI)(AX*1), Y12, Y5
	VFMADD231PS 192(SI)(AX*1), Y12, Y6
	VFMADD231PS 224(SI)(AX*1), Y12, Y7
	VFMADD231PS (R12)(AX*1), Y13, Y0
	VFMADD231PS 32(R12)(AX*1), Y13, Y1
	VFMADD231PS 64(R12)(AX*1), Y13, Y2
	VFMADD231PS 96(R12)(AX*1), Y13, Y3
	VFMADD231PS 128(R12)(AX*1), Y13, Y4
	VFMADD231PS 160(R12)(AX*1), Y13, Y5
	VFMADD231PS 192(R12)(AX*1), Y13, Y6
	VFMADD231PS 224(R12)(AX*1), Y13, Y7
	VFMADD231PS (DX)(AX*1), Y14, Y0
	VFMADD231PS 32(DX)(AX*1), Y14, Y1
	VFMADD231PS 64(DX)(AX*1), Y14, Y2
	VFMADD231PS 96(DX)(AX*1), Y14, Y3
	VFMADD231PS 128(DX)(AX*1), Y14, Y4
	VFMADD231PS 160(DX)(AX*1), Y14, Y5
	VFMADD231PS 192(DX)(AX*1), Y14, Y6
	VFMADD231PS 224(DX)(AX*1), Y14, Y7
	VFMADD231PS (R13)(AX*1), Y15, Y0
	VFMADD231PS 32(R13)(AX*1), Y15, Y1
	VFMADD231PS 64(R13)(AX*1), Y15, Y2
	VFMADD231PS 96(R13)(AX*1), Y15, Y3
	VFMADD231PS 128(R13)(AX*1), Y15, Y4
	VFMADD231PS 160(R13)(AX*1), Y15, Y5
	VFMADD231PS 192(R13)(AX*1), Y15, Y6
	VFMADD231PS 224(R13)(AX*1), Y15, Y7
	VMOVUPS     Y0, (DI)(AX*1)
	VMOVUPS     Y1, 32(DI)(AX*1)
	VMOVUPS     Y2, 64(DI)(AX*1)
	VMOVUPS     Y3, 96(DI)(AX*1)
	VMOVUPS     Y4, 128(DI)(AX*1)
	VMOVUPS     Y5, 160(DI)(AX*1)
	VMOVUPS     Y6, 192(DI)(AX*1)
	VMOVUPS     Y7, 224(DI)(AX*1)
	ADDQ        $256, AX
	SUBQ        $64, CX
	JMP         chain4x64
chain4x8:
	CMPQ CX, $8
	JL   chain4next
	VMOVUPS     (DI)(AX*1), Y0
	VFMADD231PS (SI)(AX*1), Y12, Y0
	VFMADD231PS (R12)(AX*1), Y13, Y0
	VFMADD231PS (DX)(AX*1), Y14, Y0
	VFMADD231PS (R13)(AX*1), Y15, Y0
	VMOVUPS     Y0, (DI)(AX*1)
	ADDQ        $32, AX
	SUBQ        $8, CX
	JMP         chain4x8
chain4next:
	LEAQ (SI)(R8*4), SI
	ADDQ $16, R11
	SUBQ $4, R10
	JMP  chain4

chain1:
	TESTQ R10, R10
	JZ    chaindone
	VBROADCASTSS (R11), Y12
	XORQ AX, AX
	MOVQ R9, CX
chain1x8:
	CMPQ CX, $8
	JL   chain1next
	VMOVUPS     (DI)(AX*1), Y0
	VFMADD231PS (SI)(AX*1), Y12, Y0
	VMOVUPS     Y0, (DI)(AX*1)
	ADDQ        $32, AX
	SUBQ        $8, CX
	JMP         chain1x8
chain1next:
	ADDQ R8, SI
	ADDQ $4, R11
	DECQ R10
	JMP  chain1

chaindone:
	VZEROUPPER
	RET

// Four B rows (SI, R12, DX, R13, at byte offset AX) into 32 columns of
// both output rows: Y0..Y3 get a0's broadcasts Y8..Y11, Y4..Y7 a1's
// Y12..Y15, each B vector read twice (the second time from L1).
#define CHAIN2ROW(R, A0, A1) \
	VFMADD231PS (R)(AX*1), A0, Y0; \
	VFMADD231PS 32(R)(AX*1), A0, Y1; \
	VFMADD231PS 64(R)(AX*1), A0, Y2; \
	VFMADD231PS 96(R)(AX*1), A0, Y3; \
	VFMADD231PS (R)(AX*1), A1, Y4; \
	VFMADD231PS 32(R)(AX*1), A1, Y5; \
	VFMADD231PS 64(R)(AX*1), A1, Y6; \
	VFMADD231PS 96(R)(AX*1), A1, Y7

// func sgemmChain2(dst0, dst1, b *float32, ldb, n, rows int, a0, a1 *float32)
//
// sgemmChain for two rows of A at once: dst0 gets a0's chains and dst1
// a1's, each output's FMA chain in the same order as sgemmChain's, so the
// same bits, with B streamed once instead of once per row (B rows are
// read whole, not in the row kernels' 64-column strips). Four B rows per
// pass over the outputs, 32 columns at a time.
TEXT ·sgemmChain2(SB), NOSPLIT, $0-64
	MOVQ dst0+0(FP), DI
	MOVQ dst1+8(FP), BX
	MOVQ b+16(FP), SI
	MOVQ ldb+24(FP), R8
	SHLQ $2, R8
	MOVQ n+32(FP), R9
	MOVQ rows+40(FP), R10
	MOVQ a0+48(FP), R11
	MOVQ a1+56(FP), R14

c2quad:
	CMPQ R10, $4
	JL   c2one
	VBROADCASTSS (R11), Y8
	VBROADCASTSS 4(R11), Y9
	VBROADCASTSS 8(R11), Y10
	VBROADCASTSS 12(R11), Y11
	VBROADCASTSS (R14), Y12
	VBROADCASTSS 4(R14), Y13
	VBROADCASTSS 8(R14), Y14
	VBROADCASTSS 12(R14), Y15
	LEAQ (SI)(R8*1), R12    // rows 1, 2, 3
	LEAQ (SI)(R8*2), DX
	LEAQ (DX)(R8*1), R13
	XORQ AX, AX
	MOVQ R9, CX

c2quad32:
	CMPQ CX, $32
	JL   c2quad8
	VMOVUPS (DI)(AX*1), Y0
	VMOVUPS 32(DI)(AX*1), Y1
	VMOVUPS 64(DI)(AX*1), Y2
	VMOVUPS 96(DI)(AX*1), Y3
	VMOVUPS (BX)(AX*1), Y4
	VMOVUPS 32(BX)(AX*1), Y5
	VMOVUPS 64(BX)(AX*1), Y6
	VMOVUPS 96(BX)(AX*1), Y7
	CHAIN2ROW(SI, Y8, Y12)
	CHAIN2ROW(R12, Y9, Y13)
	CHAIN2ROW(DX, Y10, Y14)
	CHAIN2ROW(R13, Y11, Y15)
	VMOVUPS Y0, (DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	VMOVUPS Y2, 64(DI)(AX*1)
	VMOVUPS Y3, 96(DI)(AX*1)
	VMOVUPS Y4, (BX)(AX*1)
	VMOVUPS Y5, 32(BX)(AX*1)
	VMOVUPS Y6, 64(BX)(AX*1)
	VMOVUPS Y7, 96(BX)(AX*1)
	ADDQ $128, AX
	SUBQ $32, CX
	JMP  c2quad32

c2quad8:
	CMPQ CX, $8
	JL   c2quadnext
	VMOVUPS     (DI)(AX*1), Y0
	VMOVUPS     (BX)(AX*1), Y4
	VFMADD231PS (SI)(AX*1), Y8, Y0
	VFMADD231PS (SI)(AX*1), Y12, Y4
	VFMADD231PS (R12)(AX*1), Y9, Y0
	VFMADD231PS (R12)(AX*1), Y13, Y4
	VFMADD231PS (DX)(AX*1), Y10, Y0
	VFMADD231PS (DX)(AX*1), Y14, Y4
	VFMADD231PS (R13)(AX*1), Y11, Y0
	VFMADD231PS (R13)(AX*1), Y15, Y4
	VMOVUPS     Y0, (DI)(AX*1)
	VMOVUPS     Y4, (BX)(AX*1)
	ADDQ        $32, AX
	SUBQ        $8, CX
	JMP         c2quad8

c2quadnext:
	LEAQ (SI)(R8*4), SI
	ADDQ $16, R11
	ADDQ $16, R14
	SUBQ $4, R10
	JMP  c2quad

c2one:
	TESTQ R10, R10
	JZ    c2done
	VBROADCASTSS (R11), Y8
	VBROADCASTSS (R14), Y12
	XORQ AX, AX
	MOVQ R9, CX

c2one8:
	CMPQ CX, $8
	JL   c2onenext
	VMOVUPS     (DI)(AX*1), Y0
	VMOVUPS     (BX)(AX*1), Y4
	VFMADD231PS (SI)(AX*1), Y8, Y0
	VFMADD231PS (SI)(AX*1), Y12, Y4
	VMOVUPS     Y0, (DI)(AX*1)
	VMOVUPS     Y4, (BX)(AX*1)
	ADDQ        $32, AX
	SUBQ        $8, CX
	JMP         c2one8

c2onenext:
	ADDQ R8, SI
	ADDQ $4, R11
	ADDQ $4, R14
	DECQ R10
	JMP  c2one

c2done:
	VZEROUPPER
	RET

// One k step of the 4×16 tile: B row (16 floats at BX) times A rows 0-3 at
// (AX), (AX)+R14, (AX)+2·R14 and (R15); accumulators Y0..Y7 (row i in
// Y(2i), Y(2i+1)). A advances R12 bytes a step (24 packed, 4 in place).
#define STEP4x16 \
	VMOVUPS      (BX), Y8; \
	VMOVUPS      32(BX), Y9; \
	VBROADCASTSS (AX), Y10; \
	VBROADCASTSS (AX)(R14*1), Y11; \
	VFMADD231PS  Y8, Y10, Y0; \
	VFMADD231PS  Y9, Y10, Y1; \
	VFMADD231PS  Y8, Y11, Y2; \
	VFMADD231PS  Y9, Y11, Y3; \
	VBROADCASTSS (AX)(R14*2), Y12; \
	VBROADCASTSS (R15), Y13; \
	VFMADD231PS  Y8, Y12, Y4; \
	VFMADD231PS  Y9, Y12, Y5; \
	VFMADD231PS  Y8, Y13, Y6; \
	VFMADD231PS  Y9, Y13, Y7; \
	ADDQ         R8, BX; \
	ADDQ         R12, AX; \
	ADDQ         R12, R15

// func sgemm4x16(kc int, a *float32, lda int, b *float32, ldb, ps int, c *float32, ldc int, flags uint, bias, res *float32, ldr int, lo, hi float32, nq int)
//
// The 4×16 tiles of the four rows of A at a (a 6-row packed panel, its
// first four rows, when lda is 0; else rows lda floats apart, in place)
// against nq B panels ps floats apart (rows ldb floats apart): C, a bias
// by column and the residual 16 columns further for each panel. Each
// element is summed and finished exactly as sgemm6x16 does it (the FMA
// chain over k from zero, then the flags' steps in the same order), so a
// block of 6·r + 4 rows gets the same bits as any other split of its rows.
// Eight accumulators: two FMAs a cycle of four cycles' latency keep eight
// chains busy (Zen 3).
TEXT ·sgemm4x16(SB), NOSPLIT, $16-112
	MOVQ b+24(FP), BX
	MOVQ BX, curb-8(SP)
	MOVQ nq+104(FP), SI
	MOVQ SI, left-16(SP)
	MOVQ c+48(FP), DI
	MOVQ ldc+56(FP), R9
	SHLQ $2, R9
	MOVQ ldb+32(FP), R8
	SHLQ $2, R8
	MOVQ bias+72(FP), SI
	MOVQ res+80(FP), R11
	MOVQ ldr+88(FP), R13
	SHLQ $2, R13
	MOVQ flags+64(FP), DX
	// A's row stride R14 and k step R12 in bytes.
	MOVQ lda+16(FP), R14
	SHLQ $2, R14
	MOVQ $4, R12
	TESTQ R14, R14
	JNZ  panel4
	MOVQ $4, R14
	MOVQ $24, R12

panel4:
	MOVQ a+8(FP), AX
	LEAQ (AX)(R14*2), R15
	ADDQ R14, R15          // R15 = row 3 of A
	MOVQ curb-8(SP), BX
	LEAQ (DI)(R9*2), R10
	ADDQ R9, R10           // R10 = row 3 of C
	ZERO4
	MOVQ kc+0(FP), CX
	SHRQ $1, CX
	JZ   k4tail

k4loop2:
	STEP4x16
	STEP4x16
	DECQ CX
	JNZ  k4loop2

k4tail:
	MOVQ kc+0(FP), CX
	ANDQ $1, CX
	JZ   k4store
	STEP4x16

k4store:
	EPIDISPATCH

fastRC:
	VBROADCASTSS lo+96(FP), Y12
	VBROADCASTSS hi+100(FP), Y13
	EPIRC4
	JMP  advance

fastCC:
	VBROADCASTSS lo+96(FP), Y12
	VBROADCASTSS hi+100(FP), Y13
	VMOVUPS (SI), Y14
	VMOVUPS 32(SI), Y15
	EPICC4
	JMP  advance

fastR:
	EPIR4
	JMP  advance

fastC:
	VMOVUPS (SI), Y14
	VMOVUPS 32(SI), Y15
	EPIC4
	JMP  advance

fastRR:
	LEAQ (R11)(R13*2), CX
	ADDQ R13, CX          // CX = row 3 of the residual
	EPIRR4(R11, R13, CX)
	JMP  advance

fastCR:
	LEAQ (R11)(R13*2), CX
	ADDQ R13, CX          // CX = row 3 of the residual
	VMOVUPS (SI), Y14
	VMOVUPS 32(SI), Y15
	EPICR4(R11, R13, CX)
	JMP  advance

general:
	TESTQ $1, DX
	JZ    k4nosum
	ADDROWS4(DI, R9, R10)

k4nosum:
	TESTQ $2, DX
	JZ    k4nobiascol
	BIASCOL4

k4nobiascol:
	TESTQ $4, DX
	JZ    k4nobiasrow
	BIASROW4

k4nobiasrow:
	TESTQ $8, DX
	JZ    k4noclamp
	VBROADCASTSS lo+96(FP), Y12
	VBROADCASTSS hi+100(FP), Y13
	CLAMP4

k4noclamp:
	TESTQ $16, DX
	JZ    k4nores
	LEAQ  (R11)(R13*2), CX
	ADDQ  R13, CX          // CX = row 3 of the residual
	ADDROWS4(R11, R13, CX)

k4nores:
	STOREROWS4(DI, R9, R10)

advance:
	// The next B panel: C, a bias by column and the residual 16 columns on.
	MOVQ ps+40(FP), CX
	SHLQ $2, CX
	ADDQ CX, curb-8(SP)
	ADDQ $64, DI
	ADDQ $64, R11
	TESTQ $2, DX
	JZ    k4next
	ADDQ  $64, SI

k4next:
	DECQ left-16(SP)
	JNZ  panel4
	VZEROUPPER
	RET
