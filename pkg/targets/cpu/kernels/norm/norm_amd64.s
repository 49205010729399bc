//go:build amd64 && !purego

#include "textflag.h"

// Layer normalization's three row passes in float64 lanes (norm_row.go has
// the Go twins, which sum in the same order: element i of each 16-block
// into lane i%16 of four accumulators, a last 8-block into lanes 0-7, a
// last 4-block into lanes 0-3, then u_j = l_j + l_{j+8}, t_j = u_j +
// u_{j+4} and (t0+t1)+(t2+t3)). Four accumulators, not two: an add's
// latency, not the loads, bounded the sums. n is a multiple of 4.

// func sum4AVX2(x *float32, n int) float64
TEXT ·sum4AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y4, Y4, Y4
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
sloop:
	CMPQ CX, $16
	JL   s8
	VCVTPS2PD (SI), Y1
	VCVTPS2PD 16(SI), Y2
	VCVTPS2PD 32(SI), Y3
	VCVTPS2PD 48(SI), Y9
	VADDPD Y1, Y0, Y0
	VADDPD Y2, Y4, Y4
	VADDPD Y3, Y7, Y7
	VADDPD Y9, Y8, Y8
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  sloop
s8:
	CMPQ CX, $8
	JL   s4
	VCVTPS2PD (SI), Y1
	VCVTPS2PD 16(SI), Y2
	VADDPD Y1, Y0, Y0
	VADDPD Y2, Y4, Y4
	ADDQ $32, SI
	SUBQ $8, CX
s4:
	CMPQ CX, $4
	JL   sdone
	VCVTPS2PD (SI), Y1
	VADDPD Y1, Y0, Y0
sdone:
	VADDPD Y7, Y0, Y0
	VADDPD Y8, Y4, Y4
	VADDPD Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VHADDPD X0, X0, X2 // t0+t1
	VHADDPD X1, X1, X3 // t2+t3
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
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
qloop:
	CMPQ CX, $16
	JL   q8
	VCVTPS2PD (SI), Y1
	VCVTPS2PD 16(SI), Y2
	VCVTPS2PD 32(SI), Y3
	VCVTPS2PD 48(SI), Y9
	VSUBPD Y5, Y1, Y1
	VSUBPD Y5, Y2, Y2
	VSUBPD Y5, Y3, Y3
	VSUBPD Y5, Y9, Y9
	VMULPD Y1, Y1, Y1
	VMULPD Y2, Y2, Y2
	VMULPD Y3, Y3, Y3
	VMULPD Y9, Y9, Y9
	VADDPD Y1, Y0, Y0
	VADDPD Y2, Y4, Y4
	VADDPD Y3, Y7, Y7
	VADDPD Y9, Y8, Y8
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  qloop
q8:
	CMPQ CX, $8
	JL   q4
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
q4:
	CMPQ CX, $4
	JL   qdone
	VCVTPS2PD (SI), Y1
	VSUBPD Y5, Y1, Y1
	VMULPD Y1, Y1, Y1
	VADDPD Y1, Y0, Y0
qdone:
	VADDPD Y7, Y0, Y0
	VADDPD Y8, Y4, Y4
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
	// Without scale and bias (an instance norm's layernorm, whose affine
	// is per channel, after it): eight at a time and no tests in the loop.
	MOVQ R8, AX
	ORQ  R9, AX
	JNZ  nloop
bare:
	CMPQ CX, $8
	JL   nloop
	VCVTPS2PD (SI), Y1
	VCVTPS2PD 16(SI), Y2
	VSUBPD Y5, Y1, Y1
	VSUBPD Y5, Y2, Y2
	VMULPD Y6, Y1, Y1
	VMULPD Y6, Y2, Y2
	VCVTPD2PSY Y1, X1
	VCVTPD2PSY Y2, X2
	VMOVUPS X1, (DI)
	VMOVUPS X2, 16(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  bare
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
