//go:build amd64 && !purego

#include "textflag.h"

DATA gelud<>+0(SB)/8, $0x3fe6a09e667f3bcc // inv_sqrt2
DATA gelud<>+8(SB)/8, $0x3fe0000000000000 // half
DATA gelud<>+16(SB)/8, $0x3ff0000000000000 // one
DATA gelud<>+24(SB)/8, $0x4000000000000000 // two
DATA gelud<>+32(SB)/8, $0x3fc5df28af76a5a4 // c9
DATA gelud<>+40(SB)/8, $0xbfea4f123185defd // c8
DATA gelud<>+48(SB)/8, $0x3ff7d0f60453a1be // c7
DATA gelud<>+56(SB)/8, $0xbff229cba6063980 // c6
DATA gelud<>+64(SB)/8, $0x3fd1d8f976231ce6 // c5
DATA gelud<>+72(SB)/8, $0xbfc7d84982aaeaa5 // c4
DATA gelud<>+80(SB)/8, $0x3fb8c6d917dec3f0 // c3
DATA gelud<>+88(SB)/8, $0x3fd7f11f677960ea // c2
DATA gelud<>+96(SB)/8, $0x3ff00018d48d3588 // c1
DATA gelud<>+104(SB)/8, $0xbff43f89c0889bc5 // c0
DATA gelud<>+112(SB)/8, $0xc085e00000000000 // pmin
DATA gelud<>+120(SB)/8, $0x3ff71547652b82fe // log2e
DATA gelud<>+128(SB)/8, $0x3fe62e42fee00000 // ln2hi
DATA gelud<>+136(SB)/8, $0x3dea39ef35793c76 // ln2lo
DATA gelud<>+144(SB)/8, $0x3f2a01a01a01a01a // f7
DATA gelud<>+152(SB)/8, $0x3f56c16c16c16c17 // f6
DATA gelud<>+160(SB)/8, $0x3f81111111111111 // f5
DATA gelud<>+168(SB)/8, $0x3fa5555555555555 // f4
DATA gelud<>+176(SB)/8, $0x3fc5555555555555 // f3
DATA gelud<>+184(SB)/8, $0x7fffffffffffffff // abs mask
DATA gelud<>+192(SB)/8, $1023 // exponent bias
GLOBL gelud<>(SB), RODATA|NOPTR, $200

// func geluAVX2(x *float32, n int)
// x[i] = 0.5*x*erfc(-x/sqrt2) in place for n, a multiple of 4, computed in
// float64 lanes: erfc by t*exp(-z^2 + P(t)), t = 1/(1+|z|/2) (relative
// error < 1.2e-7), exp by range reduction and a degree-7 polynomial.
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSD gelud<>+0(SB), Y15
	VBROADCASTSD gelud<>+8(SB), Y14
	VBROADCASTSD gelud<>+16(SB), Y13
	VBROADCASTSD gelud<>+184(SB), Y12
loop:
	CMPQ CX, $4
	JL   done
	VCVTPS2PD (DI), Y0               // x
	VMULPD  Y15, Y0, Y1              // s = x/sqrt2 (= -z)
	VANDPD  Y12, Y1, Y2              // a = |s|
	VMULPD  Y14, Y2, Y3
	VADDPD  Y13, Y3, Y3
	VDIVPD  Y3, Y13, Y3              // t = 1/(1+a/2)
	VBROADCASTSD gelud<>+32(SB), Y4
	VBROADCASTSD gelud<>+40(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD gelud<>+48(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD gelud<>+56(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD gelud<>+64(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD gelud<>+72(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD gelud<>+80(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD gelud<>+88(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD gelud<>+96(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD gelud<>+104(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VMULPD  Y2, Y2, Y5
	VSUBPD  Y5, Y4, Y4              // p = P(t) - a^2
	VBROADCASTSD gelud<>+112(SB), Y5
	VMAXPD  Y5, Y4, Y4
	VBROADCASTSD gelud<>+120(SB), Y5
	VMULPD  Y5, Y4, Y5
	VROUNDPD $0, Y5, Y5              // n
	VBROADCASTSD gelud<>+128(SB), Y6
	VMOVAPD Y4, Y7
	VFNMADD231PD Y6, Y5, Y7
	VBROADCASTSD gelud<>+136(SB), Y6
	VFNMADD231PD Y6, Y5, Y7          // r
	VBROADCASTSD gelud<>+144(SB), Y8
	VBROADCASTSD gelud<>+152(SB), Y9
	VFMADD213PD Y9, Y7, Y8
	VBROADCASTSD gelud<>+160(SB), Y9
	VFMADD213PD Y9, Y7, Y8
	VBROADCASTSD gelud<>+168(SB), Y9
	VFMADD213PD Y9, Y7, Y8
	VBROADCASTSD gelud<>+176(SB), Y9
	VFMADD213PD Y9, Y7, Y8
	VFMADD213PD Y14, Y7, Y8          // + 1/2
	VFMADD213PD Y13, Y7, Y8          // + 1
	VFMADD213PD Y13, Y7, Y8          // + 1 = e^r
	VCVTPD2DQY Y5, X5               // n as int32
	VPMOVSXDQ X5, Y5                // as int64
	VPBROADCASTQ gelud<>+192(SB), Y9
	VPADDQ  Y9, Y5, Y5
	VPSLLQ  $52, Y5, Y5              // 2^n
	VMULPD  Y5, Y8, Y8               // exp(p)
	VMULPD  Y3, Y8, Y8               // r = erfc(a)
	VBROADCASTSD gelud<>+24(SB), Y9
	VSUBPD  Y8, Y9, Y9               // 2 - r
	VBLENDVPD Y1, Y8, Y9, Y8         // x < 0 (sign of s): erfc(z) = r, else 2 - r
	VMULPD  Y14, Y0, Y0
	VMULPD  Y8, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMOVUPS X0, (DI)
	ADDQ $16, DI
	SUBQ $4, CX
	JMP  loop

done:
	VZEROUPPER
	RET
