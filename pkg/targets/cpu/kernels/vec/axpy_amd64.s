//go:build amd64 && !purego

#include "textflag.h"

// func axpyAVX2(dst, src *float32, n int, a float32)
// dst[i] += a * src[i] for i in [0, n), 32 then 8 lanes at a time, then one.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS a+24(FP), Y0

loop32:
	CMPQ CX, $32
	JL   loop8
	VMOVUPS (SI), Y1
	VMOVUPS 32(SI), Y2
	VMOVUPS 64(SI), Y3
	VMOVUPS 96(SI), Y4
	VFMADD213PS (DI), Y0, Y1
	VFMADD213PS 32(DI), Y0, Y2
	VFMADD213PS 64(DI), Y0, Y3
	VFMADD213PS 96(DI), Y0, Y4
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32

loop8:
	CMPQ CX, $8
	JL   tail
	VMOVUPS (SI), Y1
	VFMADD213PS (DI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

tail:
	TESTQ CX, CX
	JE    done
	VMOVSS (SI), X1
	VFMADD213SS (DI), X0, X1
	VMOVSS X1, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	RET

// func axpy4AVX2(dst *float32, s0, s1, s2, s3 *float32, n int, a *[4]float32)
// dst[i] += a[0]*s0[i] + a[1]*s1[i] + a[2]*s2[i] + a[3]*s3[i]: four rows of a
// matrix per pass, so dst is read and written a quarter as often.
TEXT ·axpy4AVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ s0+8(FP), R8
	MOVQ s1+16(FP), R9
	MOVQ s2+24(FP), R10
	MOVQ s3+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ a+48(FP), AX
	VBROADCASTSS 0(AX), Y0
	VBROADCASTSS 4(AX), Y1
	VBROADCASTSS 8(AX), Y2
	VBROADCASTSS 12(AX), Y3
	XORQ BX, BX

loop16:
	MOVQ CX, DX
	SUBQ BX, DX
	CMPQ DX, $16
	JL   loop8
	VMOVUPS (DI)(BX*4), Y4
	VMOVUPS 32(DI)(BX*4), Y5
	VFMADD231PS (R8)(BX*4), Y0, Y4
	VFMADD231PS 32(R8)(BX*4), Y0, Y5
	VFMADD231PS (R9)(BX*4), Y1, Y4
	VFMADD231PS 32(R9)(BX*4), Y1, Y5
	VFMADD231PS (R10)(BX*4), Y2, Y4
	VFMADD231PS 32(R10)(BX*4), Y2, Y5
	VFMADD231PS (R11)(BX*4), Y3, Y4
	VFMADD231PS 32(R11)(BX*4), Y3, Y5
	VMOVUPS Y4, (DI)(BX*4)
	VMOVUPS Y5, 32(DI)(BX*4)
	ADDQ $16, BX
	JMP  loop16

loop8:
	CMPQ DX, $8
	JL   tail
	VMOVUPS (DI)(BX*4), Y4
	VFMADD231PS (R8)(BX*4), Y0, Y4
	VFMADD231PS (R9)(BX*4), Y1, Y4
	VFMADD231PS (R10)(BX*4), Y2, Y4
	VFMADD231PS (R11)(BX*4), Y3, Y4
	VMOVUPS Y4, (DI)(BX*4)
	ADDQ $8, BX
	MOVQ CX, DX
	SUBQ BX, DX

tail:
	CMPQ BX, CX
	JGE  done
	VMOVSS (DI)(BX*4), X4
	VFMADD231SS (R8)(BX*4), X0, X4
	VFMADD231SS (R9)(BX*4), X1, X4
	VFMADD231SS (R10)(BX*4), X2, X4
	VFMADD231SS (R11)(BX*4), X3, X4
	VMOVSS X4, (DI)(BX*4)
	INCQ BX
	JMP  tail

done:
	VZEROUPPER
	RET
