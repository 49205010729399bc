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
