//go:build amd64 && !purego

#include "textflag.h"
#include "exp_amd64.h"

// Constants of EXPPD (exp_amd64.h), shared with act_amd64.s.
DATA ·expConsts+0(SB)/8, $0x3ff71547652b82fe  // log2e
DATA ·expConsts+8(SB)/8, $0x3fe62e42fee00000  // ln2 high bits
DATA ·expConsts+16(SB)/8, $0x3dea39ef35793c76 // ln2 low bits
DATA ·expConsts+24(SB)/8, $0x3f2a01a01a01a01a // 1/5040
DATA ·expConsts+32(SB)/8, $0x3f56c16c16c16c17 // 1/720
DATA ·expConsts+40(SB)/8, $0x3f81111111111111 // 1/120
DATA ·expConsts+48(SB)/8, $0x3fa5555555555555 // 1/24
DATA ·expConsts+56(SB)/8, $0x3fc5555555555555 // 1/6
DATA ·expConsts+64(SB)/8, $1023               // exponent bias
GLOBL ·expConsts(SB), RODATA|NOPTR, $72

DATA expd<>+0(SB)/8, $0x3fe0000000000000 // 0.5
DATA expd<>+8(SB)/8, $0x3ff0000000000000 // 1.0
DATA expd<>+16(SB)/8, $0xc085e00000000000 // -700
GLOBL expd<>(SB), RODATA|NOPTR, $24

// func expSubAVX2(x *float32, n int, m float64, sum *float64)
// x[i] = exp(x[i] - m) in place for n, a multiple of 4, in float64 lanes
// (range reduction and a degree-7 polynomial, about 1e-8 relative), and
// *sum = the sum of the results. Arguments below -700 give 0; NaN stays NaN.
TEXT ·expSubAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSD m+16(FP), Y15
	VXORPD Y14, Y14, Y14            // running sum
	VBROADCASTSD expd<>+8(SB), Y13
	VBROADCASTSD expd<>+0(SB), Y12
	VBROADCASTSD expd<>+16(SB), Y11
loop:
	CMPQ CX, $4
	JL   done
	VCVTPS2PD (DI), Y0
	VSUBPD  Y15, Y0, Y0              // d = x - m
	VMAXPD  Y11, Y0, Y4              // clamped (NaN in Y0 gives -700 here; restored below)
	EXPPD(Y4, Y8, Y12, Y13)          // exp(d)
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
