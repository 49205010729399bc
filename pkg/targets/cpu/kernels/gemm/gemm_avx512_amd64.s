//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512F micro-kernel: a 12×16 tile of C in twelve zmm accumulators
// (row i in Z(i), one zmm per row of a 16-column B panel), B's row in Z31,
// and each A value an embedded-broadcast memory operand of its FMA. The
// twelve rows are two consecutive 6-row panels of the AVX2 kernel's packed
// A (or twelve rows read in place), so A's packing, the B layout
// (sgemm-b/nr16/kc512) and every sum are the AVX2 kernel's: each element
// is one FMA chain over p from zero, then the epilogue in the same order.

// The six A values of a packed panel at off(p), into z0..z5.
#define FMA6P(off, p, z0, z1, z2, z3, z4, z5) \
	VFMADD231PS.BCST (off+0)(p), Z31, z0; \
	VFMADD231PS.BCST (off+4)(p), Z31, z1; \
	VFMADD231PS.BCST (off+8)(p), Z31, z2; \
	VFMADD231PS.BCST (off+12)(p), Z31, z3; \
	VFMADD231PS.BCST (off+16)(p), Z31, z4; \
	VFMADD231PS.BCST (off+20)(p), Z31, z5

// One k step with A packed: rows 0-5 from AX, rows 6-11 from R11 (the next
// panel). The same row of the next B panel, R13 bytes on, is prefetched
// into L2, as the AVX2 kernel does.
#define STEPZP(off) \
	VMOVUPS    (BX), Z31; \
	FMA6P(off, AX, Z0, Z1, Z2, Z3, Z4, Z5); \
	FMA6P(off, R11, Z6, Z7, Z8, Z9, Z10, Z11); \
	PREFETCHT1 (BX)(R13*1); \
	ADDQ       R8, BX

// Three rows read in place, R14 bytes apart from p.
#define FMA3D(off, p, z0, z1, z2) \
	VFMADD231PS.BCST off(p), Z31, z0; \
	VFMADD231PS.BCST off(p)(R14*1), Z31, z1; \
	VFMADD231PS.BCST off(p)(R14*2), Z31, z2

// One k step with A read in place: rows 0, 3, 6 and 9 at AX, R15, R11, R12.
#define STEPZD(off) \
	VMOVUPS    (BX), Z31; \
	FMA3D(off, AX, Z0, Z1, Z2); \
	FMA3D(off, R15, Z3, Z4, Z5); \
	FMA3D(off, R11, Z6, Z7, Z8); \
	FMA3D(off, R12, Z9, Z10, Z11); \
	PREFETCHT1 (BX)(R13*1); \
	ADDQ       R8, BX

// Twelve rows of memory, three from each of r0, r3, r6 and r9 (ld bytes
// apart): op m, Z(i), Z(i).
#define ROWS12(op, r0, r3, r6, r9, ld) \
	op (r0), Z0, Z0; \
	op (r0)(ld*1), Z1, Z1; \
	op (r0)(ld*2), Z2, Z2; \
	op (r3), Z3, Z3; \
	op (r3)(ld*1), Z4, Z4; \
	op (r3)(ld*2), Z5, Z5; \
	op (r6), Z6, Z6; \
	op (r6)(ld*1), Z7, Z7; \
	op (r6)(ld*2), Z8, Z8; \
	op (r9), Z9, Z9; \
	op (r9)(ld*1), Z10, Z10; \
	op (r9)(ld*2), Z11, Z11

// op z, Z(i), Z(i) on every row.
#define ALL12(op, z) \
	op z, Z0, Z0; \
	op z, Z1, Z1; \
	op z, Z2, Z2; \
	op z, Z3, Z3; \
	op z, Z4, Z4; \
	op z, Z5, Z5; \
	op z, Z6, Z6; \
	op z, Z7, Z7; \
	op z, Z8, Z8; \
	op z, Z9, Z9; \
	op z, Z10, Z10; \
	op z, Z11, Z11

// Both cache lines of three rows of C, ld bytes apart from r.
// op Z(i), z, Z(i) on every row: z the first source, so that max and min
// return a NaN Z(i) (their second source) as it is.
#define BOUND12(op, z) \
	op Z0, z, Z0; \
	op Z1, z, Z1; \
	op Z2, z, Z2; \
	op Z3, z, Z3; \
	op Z4, z, Z4; \
	op Z5, z, Z5; \
	op Z6, z, Z6; \
	op Z7, z, Z7; \
	op Z8, z, Z8; \
	op Z9, z, Z9; \
	op Z10, z, Z10; \
	op Z11, z, Z11

#define PF3(r, ld) \
	PREFETCHT0 (r); \
	PREFETCHT0 63(r); \
	PREFETCHT0 (r)(ld*1); \
	PREFETCHT0 63(r)(ld*1); \
	PREFETCHT0 (r)(ld*2); \
	PREFETCHT0 63(r)(ld*2)

// func sgemm12x16z(kc int, a, b *float32, ldb int, c *float32, ldc int, flags uint, bias, res *float32, ldr int, lo, hi float32, groups, lda int)
//
// sgemm6x16's contract with tiles of 12 rows: the 12×16 tile of C at c
// (row stride ldc floats) gets sum over p < kc of A(i, p)·b[p*ldb+j], then,
// by flags, the old C (epiAcc), a bias by column or by row, the clamp to
// [lo, hi] (NaN kept) and the residual (rows ldr apart), in that order.
// A(i, p) is a[p*6+i] for i < 6 and a[6*kc+p*6+i-6] for the rest (two
// packed 6-row panels), or a[i*lda+p] when lda > 0 (in place).
//
// It does so for groups consecutive groups of 12 rows: group r reads A 12
// rows further on (two panels, or 12 rows in place), and writes C, the row
// bias and the residual 12·r rows further down, against the same B.
TEXT ·sgemm12x16z(SB), NOSPLIT, $40-104
	MOVQ a+8(FP), AX
	MOVQ AX, cura-40(SP)
	MOVQ c+32(FP), DI
	MOVQ DI, curc-8(SP)
	MOVQ bias+56(FP), SI
	MOVQ SI, curbias-16(SP)
	MOVQ res+64(FP), SI
	MOVQ SI, curres-24(SP)
	MOVQ groups+88(FP), SI
	MOVQ SI, left-32(SP)

group:
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
	ADDQ R9, R10           // row 3 of C
	LEAQ (R10)(R9*2), R11
	ADDQ R9, R11           // row 6
	LEAQ (R11)(R9*2), R12
	ADDQ R9, R12           // row 9
	PF3(DI, R9)
	PF3(R10, R9)
	PF3(R11, R9)
	PF3(R12, R9)
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11

	MOVQ lda+96(FP), R14
	TESTQ R14, R14
	JNZ  direct
	// Packed: the second panel 6·kc floats after the first.
	MOVQ cura-40(SP), AX
	LEAQ (CX)(CX*2), R11
	SHLQ $3, R11
	ADDQ AX, R11
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   tail

loop4:
	STEPZP(0)
	STEPZP(24)
	STEPZP(48)
	STEPZP(72)
	ADDQ $96, AX
	ADDQ $96, R11
	DECQ DX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   pnext

loop1:
	STEPZP(0)
	ADDQ $24, AX
	ADDQ $24, R11
	DECQ CX
	JNZ  loop1

pnext:
	// The next group's A: the panel after R11's, where R11 stopped.
	MOVQ R11, cura-40(SP)
	JMP  store

direct:
	SHLQ $2, R14
	MOVQ cura-40(SP), AX
	LEAQ (AX)(R14*2), R15
	ADDQ R14, R15          // row 3 of A
	LEAQ (R15)(R14*2), R11
	ADDQ R14, R11          // row 6
	LEAQ (R11)(R14*2), R12
	ADDQ R14, R12          // row 9
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   dtail

dloop4:
	STEPZD(0)
	STEPZD(4)
	STEPZD(8)
	STEPZD(12)
	ADDQ $16, AX
	ADDQ $16, R15
	ADDQ $16, R11
	ADDQ $16, R12
	DECQ DX
	JNZ  dloop4

dtail:
	ANDQ $3, CX
	JZ   dnext

dloop1:
	STEPZD(0)
	ADDQ $4, AX
	ADDQ $4, R15
	ADDQ $4, R11
	ADDQ $4, R12
	DECQ CX
	JNZ  dloop1

dnext:
	// The next group's A: 12 rows down.
	LEAQ (R14)(R14*2), R11
	SHLQ $2, R11
	ADDQ R11, cura-40(SP)

store:
	// C's rows 0, 3, 6 and 9 again (the loop used R11 and R12).
	LEAQ (R10)(R9*2), R11
	ADDQ R9, R11
	LEAQ (R11)(R9*2), R12
	ADDQ R9, R12
	MOVQ flags+48(FP), DX
	MOVQ curbias-16(SP), SI
	TESTQ $1, DX
	JZ    nosum
	ROWS12(VADDPS, DI, R10, R11, R12, R9)

nosum:
	TESTQ $2, DX
	JZ    nobiascol
	VMOVUPS (SI), Z28
	ALL12(VADDPS, Z28)

nobiascol:
	TESTQ $4, DX
	JZ    nobiasrow
	VADDPS.BCST 0(SI), Z0, Z0
	VADDPS.BCST 4(SI), Z1, Z1
	VADDPS.BCST 8(SI), Z2, Z2
	VADDPS.BCST 12(SI), Z3, Z3
	VADDPS.BCST 16(SI), Z4, Z4
	VADDPS.BCST 20(SI), Z5, Z5
	VADDPS.BCST 24(SI), Z6, Z6
	VADDPS.BCST 28(SI), Z7, Z7
	VADDPS.BCST 32(SI), Z8, Z8
	VADDPS.BCST 36(SI), Z9, Z9
	VADDPS.BCST 40(SI), Z10, Z10
	VADDPS.BCST 44(SI), Z11, Z11
	ADDQ $48, curbias-16(SP)

nobiasrow:
	TESTQ $8, DX
	JZ    noclamp
	// max(lo, x) then min(hi, x) with the bound as the first source: a
	// NaN x is passed through, as the Go loop does.
	VBROADCASTSS lo+80(FP), Z29
	VBROADCASTSS hi+84(FP), Z30
	BOUND12(VMAXPS, Z29)
	BOUND12(VMINPS, Z30)

noclamp:
	TESTQ $16, DX
	JZ    nores
	MOVQ  curres-24(SP), BX
	MOVQ  ldr+72(FP), CX
	SHLQ  $2, CX
	LEAQ  (BX)(CX*2), R8
	ADDQ  CX, R8           // row 3 of the residual
	LEAQ  (R8)(CX*2), R13
	ADDQ  CX, R13          // row 6
	LEAQ  (R13)(CX*2), R15
	ADDQ  CX, R15          // row 9
	ROWS12(VADDPS, BX, R8, R13, R15, CX)
	LEAQ  (R15)(CX*2), R15
	ADDQ  CX, R15
	MOVQ  R15, curres-24(SP) // 12 rows down

nores:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, (DI)(R9*1)
	VMOVUPS Z2, (DI)(R9*2)
	VMOVUPS Z3, (R10)
	VMOVUPS Z4, (R10)(R9*1)
	VMOVUPS Z5, (R10)(R9*2)
	VMOVUPS Z6, (R11)
	VMOVUPS Z7, (R11)(R9*1)
	VMOVUPS Z8, (R11)(R9*2)
	VMOVUPS Z9, (R12)
	VMOVUPS Z10, (R12)(R9*1)
	VMOVUPS Z11, (R12)(R9*2)
	// The next group's C: 12 rows down.
	LEAQ (R12)(R9*2), R12
	ADDQ R9, R12
	MOVQ R12, curc-8(SP)
	DECQ left-32(SP)
	JNZ  group
	VZEROUPPER
	RET
