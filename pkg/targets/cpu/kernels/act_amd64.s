//go:build amd64 && !purego

#include "textflag.h"
#include "exp_amd64.h"

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
DATA gelud<>+120(SB)/8, $0x7fffffffffffffff // abs mask
GLOBL gelud<>(SB), RODATA|NOPTR, $128

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
	VBROADCASTSD gelud<>+120(SB), Y12
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
	EXPPD(Y4, Y8, Y14, Y13)          // exp(p)
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
