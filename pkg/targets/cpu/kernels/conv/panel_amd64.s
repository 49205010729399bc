//go:build amd64 && !purego

#include "textflag.h"

// func copyRows16AVX(dst *float32, dstStride int, src *float32, n int)
// Copies n runs of 16 floats: src[i*16:] to dst[i*dstStride:].
TEXT ·copyRows16AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, SI
	ADDQ R8, DI
	DECQ CX
	JNZ  loop
	VZEROUPPER
	RET

// func copyRowsAVX(dst *float32, dstStride int, src *float32, srcStride, rows, n int)
// Copies rows rows of n floats (n > 0): src[r*srcStride:] to dst[r*dstStride:].
TEXT ·copyRowsAVX(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), R11
	MOVQ dstStride+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), R12
	MOVQ srcStride+24(FP), R9
	SHLQ $2, R9
	MOVQ rows+32(FP), R10
crow:
	MOVQ R11, DI
	MOVQ R12, SI
	MOVQ n+40(FP), CX
c8:
	CMPQ CX, $8
	JL   c1
	VMOVUPS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  c8
c1:
	TESTQ CX, CX
	JE    cnext
	MOVL (SI), AX
	MOVL AX, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  c1
cnext:
	ADDQ R8, R11
	ADDQ R9, R12
	DECQ R10
	JNZ  crow
	VZEROUPPER
	RET
