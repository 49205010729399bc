//go:build amd64 && !purego

#include "textflag.h"

// The nine taps of a 3x3 depthwise row at column BX: bias (Y15) plus the
// weights (Y0..Y8) times the tap rows (R8..R15, SI), clamped to [Y11, Y12]
// (NaN passes), stored to DI. TAPS8 does 8 columns, TAPS1 one.
#define TAPS8 \
	VMOVAPS Y15, Y9 \
	VFMADD231PS (R8)(BX*4), Y0, Y9 \
	VFMADD231PS (R9)(BX*4), Y1, Y9 \
	VFMADD231PS (R10)(BX*4), Y2, Y9 \
	VFMADD231PS (R11)(BX*4), Y3, Y9 \
	VFMADD231PS (R12)(BX*4), Y4, Y9 \
	VFMADD231PS (R13)(BX*4), Y5, Y9 \
	VFMADD231PS (R14)(BX*4), Y6, Y9 \
	VFMADD231PS (R15)(BX*4), Y7, Y9 \
	VFMADD231PS (SI)(BX*4), Y8, Y9 \
	VMAXPS  Y9, Y11, Y9 \
	VMINPS  Y9, Y12, Y9 \
	VMOVUPS Y9, (DI)(BX*4)

#define TAP1(SRC, W) \
	VMOVSS (SRC)(BX*4), X10 \
	VFMADD231SS X10, W, X9

#define TAPS1 \
	VMOVAPS X15, X9 \
	TAP1(R8, X0) \
	TAP1(R9, X1) \
	TAP1(R10, X2) \
	TAP1(R11, X3) \
	TAP1(R12, X4) \
	TAP1(R13, X5) \
	TAP1(R14, X6) \
	TAP1(R15, X7) \
	TAP1(SI, X8) \
	VMAXSS  X9, X11, X9 \
	VMINSS  X9, X12, X9 \
	VMOVSS X9, (DI)(BX*4)

// func deinterleave2AVX2(even, odd, src *float32, pairs, rows, dstStep, srcStep int)
// even[r*dstStep+i] = src[r*srcStep+2i], odd[r*dstStep+i] =
// src[r*srcStep+2i+1] for i in [0, pairs), r in [0, rows); steps in floats.
TEXT ·deinterleave2AVX2(SB), NOSPLIT, $0-56
	MOVQ rows+32(FP), R8
	MOVQ dstStep+40(FP), R9
	SHLQ $2, R9
	MOVQ srcStep+48(FP), R10
	SHLQ $2, R10
	MOVQ even+0(FP), R11
	MOVQ odd+8(FP), R12
	MOVQ src+16(FP), R13

row:
	MOVQ R11, DI
	MOVQ R12, SI
	MOVQ R13, AX
	MOVQ pairs+24(FP), CX

loop8:
	CMPQ CX, $8
	JL   tail
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VSHUFPS $0x88, Y1, Y0, Y2 // a0 a2 b0 b2 | a4 a6 b4 b6
	VSHUFPS $0xDD, Y1, Y0, Y3 // a1 a3 b1 b3 | a5 a7 b5 b7
	VPERMPD $0xD8, Y2, Y2     // a0 a2 a4 a6 b0 b2 b4 b6
	VPERMPD $0xD8, Y3, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, (SI)
	ADDQ $64, AX
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  loop8

tail:
	TESTQ CX, CX
	JE    nextrow
	MOVL (AX), BX
	MOVL BX, (DI)
	MOVL 4(AX), BX
	MOVL BX, (SI)
	ADDQ $8, AX
	ADDQ $4, DI
	ADDQ $4, SI
	DECQ CX
	JMP  tail

nextrow:
	ADDQ R9, R11
	ADDQ R9, R12
	ADDQ R10, R13
	DECQ R8
	JNZ  row
	VZEROUPPER
	RET

// func dot9RowsAVX2(dst *float32, dstStep int, src *[9]uintptr, srcStep int, rows int, n int, w *[9]float32, bias, lo, hi float32)
// dot9 over rows consecutive output rows: after each row, dst moves by
// dstStep bytes and every tap pointer by srcStep bytes. n >= 8.
TEXT ·dot9RowsAVX2(SB), NOSPLIT, $0-68
	MOVQ dst+0(FP), DI
	MOVQ src+16(FP), AX
	MOVQ n+40(FP), CX
	MOVQ w+48(FP), DX
	VBROADCASTSS bias+56(FP), Y15
	VBROADCASTSS lo+60(FP), Y11
	VBROADCASTSS hi+64(FP), Y12
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	MOVQ 24(AX), R11
	MOVQ 32(AX), R12
	MOVQ 40(AX), R13
	MOVQ 48(AX), R14
	MOVQ 56(AX), R15
	MOVQ 64(AX), SI
	VBROADCASTSS 0(DX), Y0
	VBROADCASTSS 4(DX), Y1
	VBROADCASTSS 8(DX), Y2
	VBROADCASTSS 12(DX), Y3
	VBROADCASTSS 16(DX), Y4
	VBROADCASTSS 20(DX), Y5
	VBROADCASTSS 24(DX), Y6
	VBROADCASTSS 28(DX), Y7
	VBROADCASTSS 32(DX), Y8
	MOVQ rows+32(FP), AX

row:
	TESTQ AX, AX
	JE    done
	XORQ BX, BX

col8:
	MOVQ CX, DX
	SUBQ BX, DX
	CMPQ DX, $8
	JL   last
	TAPS8
	ADDQ $8, BX
	JMP  col8

last:
	// The last partial vector is redone as an overlapping full one; a row
	// shorter than 8 goes one element at a time.
	CMPQ BX, CX
	JGE  next
	CMPQ CX, $8
	JL   one
	MOVQ CX, BX
	SUBQ $8, BX
	TAPS8

	JMP  next

one:
	CMPQ BX, CX
	JGE  next
	TAPS1
	INCQ BX
	JMP  one

next:
	MOVQ srcStep+24(FP), DX
	ADDQ DX, R8
	ADDQ DX, R9
	ADDQ DX, R10
	ADDQ DX, R11
	ADDQ DX, R12
	ADDQ DX, R13
	ADDQ DX, R14
	ADDQ DX, R15
	ADDQ DX, SI
	ADDQ dstStep+8(FP), DI
	DECQ AX
	JMP  row

done:
	VZEROUPPER
	RET
