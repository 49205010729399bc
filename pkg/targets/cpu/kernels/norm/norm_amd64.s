//go:build amd64 && !purego

#include "textflag.h"

// Layer normalization's three row passes in float64 lanes (norm_row.go has
// the Go twins, which sum in the same order: element i of each 8-block into
// lane i%8 of two accumulators, a last 4-block into lanes 0-3, then t_j =
// l_j + l_{j+4} and (t0+t1)+(t2+t3)). n is a multiple of 4.

// func sum4AVX2(x *float32, n int) float64
TEXT ·sum4AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y4, Y4, Y4
sloop:
	CMPQ CX, $8
	JL   stail
	VCVTPS2PD (SI), Y1
	VCVTPS2PD 16(SI), Y2
	VADDPD Y1, Y0, Y0
	VADDPD Y2, Y4, Y4
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  sloop
stail:
	CMPQ CX, $4
	JL   sdone
	VCVTPS2PD (SI), Y1
	VADDPD Y1, Y0, Y0
sdone:
	VADDPD Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VHADDPD X0, X0, X2 // l0+l1
	VHADDPD X1, X1, X3 // l2+l3
	VADDSD X3, X2, X2
	VMOVSD X2, ret+16(FP)
	VZEROUPPER
	RET

// func sqDev4AVX2(x *float32, n int, mean float64) float64
TEXT ·sqDev4AVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSD mean+16(FP), Y5
	VXORPD Y0, Y0, Y0
	VXORPD Y4, Y4, Y4
qloop:
	CMPQ CX, $8
	JL   qtail
	VCVTPS2PD (SI), Y1
	VCVTPS2PD 16(SI), Y2
	VSUBPD Y5, Y1, Y1
	VSUBPD Y5, Y2, Y2
	VMULPD Y1, Y1, Y1
	VMULPD Y2, Y2, Y2
	VADDPD Y1, Y0, Y0
	VADDPD Y2, Y4, Y4
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  qloop
qtail:
	CMPQ CX, $4
	JL   qdone
	VCVTPS2PD (SI), Y1
	VSUBPD Y5, Y1, Y1
	VMULPD Y1, Y1, Y1
	VADDPD Y1, Y0, Y0
qdone:
	VADDPD Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VHADDPD X0, X0, X2
	VHADDPD X1, X1, X3
	VADDSD X3, X2, X2
	VMOVSD X2, ret+24(FP)
	VZEROUPPER
	RET

// func normAffine4AVX2(out, x, scale, bias *float32, n int, mean, rstd float64)
// out[i] = float32(((x[i]-mean)·rstd)·scale[i] + bias[i]); a nil scale or
// bias is left out.
TEXT ·normAffine4AVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ scale+16(FP), R8
	MOVQ bias+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSD mean+40(FP), Y5
	VBROADCASTSD rstd+48(FP), Y6
nloop:
	CMPQ CX, $4
	JL   ndone
	VCVTPS2PD (SI), Y1
	VSUBPD Y5, Y1, Y1
	VMULPD Y6, Y1, Y1
	TESTQ R8, R8
	JZ   nobias0
	VCVTPS2PD (R8), Y2
	VMULPD Y2, Y1, Y1
	ADDQ $16, R8
nobias0:
	TESTQ R9, R9
	JZ   nobias1
	VCVTPS2PD (R9), Y3
	VADDPD Y3, Y1, Y1
	ADDQ $16, R9
nobias1:
	VCVTPD2PSY Y1, X1
	VMOVUPS X1, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JMP  nloop
ndone:
	VZEROUPPER
	RET
