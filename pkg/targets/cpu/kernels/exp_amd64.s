//go:build amd64 && !purego

#include "textflag.h"

DATA expd<>+0(SB)/8, $0x3ff71547652b82fe // log2e
DATA expd<>+8(SB)/8, $0x3fe62e42fee00000 // ln2hi
DATA expd<>+16(SB)/8, $0x3dea39ef35793c76 // ln2lo
DATA expd<>+24(SB)/8, $0x3f2a01a01a01a01a // f7
DATA expd<>+32(SB)/8, $0x3f56c16c16c16c17 // f6
DATA expd<>+40(SB)/8, $0x3f81111111111111 // f5
DATA expd<>+48(SB)/8, $0x3fa5555555555555 // f4
DATA expd<>+56(SB)/8, $0x3fc5555555555555 // f3
DATA expd<>+64(SB)/8, $0x3fe0000000000000 // half
DATA expd<>+72(SB)/8, $0x3ff0000000000000 // one
DATA expd<>+80(SB)/8, $0xc085e00000000000 // dmin
DATA expd<>+88(SB)/8, $1023 // exponent bias
GLOBL expd<>(SB), RODATA|NOPTR, $96

// func expSubAVX2(x *float32, n int, m float64, sum *float64)
// x[i] = exp(x[i] - m) in place for n, a multiple of 4, in float64 lanes
// (range reduction and a degree-7 polynomial, about 1e-8 relative), and
// *sum = the sum of the results. Arguments below -700 give 0; NaN stays NaN.
TEXT ·expSubAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSD m+16(FP), Y15
	VXORPD Y14, Y14, Y14            // running sum
	VBROADCASTSD expd<>+72(SB), Y13
	VBROADCASTSD expd<>+64(SB), Y12
	VBROADCASTSD expd<>+80(SB), Y11
loop:
	CMPQ CX, $4
	JL   done
	VCVTPS2PD (DI), Y0
	VSUBPD  Y15, Y0, Y0              // d = x - m
	VMAXPD  Y11, Y0, Y4              // clamped (NaN in Y0 gives -700 here; restored below)
	VBROADCASTSD expd<>+0(SB), Y5
	VMULPD  Y5, Y4, Y5
	VROUNDPD $0, Y5, Y5              // n
	VBROADCASTSD expd<>+8(SB), Y6
	VMOVAPD Y4, Y7
	VFNMADD231PD Y6, Y5, Y7
	VBROADCASTSD expd<>+16(SB), Y6
	VFNMADD231PD Y6, Y5, Y7          // r
	VBROADCASTSD expd<>+24(SB), Y8
	VBROADCASTSD expd<>+32(SB), Y9
	VFMADD213PD Y9, Y7, Y8
	VBROADCASTSD expd<>+40(SB), Y9
	VFMADD213PD Y9, Y7, Y8
	VBROADCASTSD expd<>+48(SB), Y9
	VFMADD213PD Y9, Y7, Y8
	VBROADCASTSD expd<>+56(SB), Y9
	VFMADD213PD Y9, Y7, Y8
	VFMADD213PD Y12, Y7, Y8
	VFMADD213PD Y13, Y7, Y8
	VFMADD213PD Y13, Y7, Y8          // e^r
	VCVTPD2DQY Y5, X5
	VPMOVSXDQ X5, Y5
	VPBROADCASTQ expd<>+88(SB), Y9
	VPADDQ  Y9, Y5, Y5
	VPSLLQ  $52, Y5, Y5
	VMULPD  Y5, Y8, Y8               // exp(d)
	VCMPPD  $3, Y0, Y0, Y10          // unordered: d is NaN
	VBLENDVPD Y10, Y0, Y8, Y8        // NaN stays NaN
	VADDPD  Y8, Y14, Y14
	VCVTPD2PSY Y8, X8
	VMOVUPS X8, (DI)
	ADDQ $16, DI
	SUBQ $4, CX
	JMP  loop

done:
	VEXTRACTF128 $1, Y14, X1
	VADDPD X1, X14, X14
	VHADDPD X14, X14, X14
	MOVQ sum+24(FP), AX
	VMOVSD X14, (AX)
	VZEROUPPER
	RET
