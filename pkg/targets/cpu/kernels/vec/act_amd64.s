//go:build amd64 && !purego

#include "textflag.h"
#include "exp32_amd64.h"

// Eight-lane constants of geluAVX2: 1/sqrt2, 0.5, 1, 2, the erfc polynomial
// c9..c0 (Numerical Recipes' erfcc, as erfc64), -0.5, and the abs mask.
#define G_INV_SQRT2 0
DATA gelu32<>+0(SB)/4, $0x3f3504f3
DATA gelu32<>+4(SB)/4, $0x3f3504f3
DATA gelu32<>+8(SB)/4, $0x3f3504f3
DATA gelu32<>+12(SB)/4, $0x3f3504f3
DATA gelu32<>+16(SB)/4, $0x3f3504f3
DATA gelu32<>+20(SB)/4, $0x3f3504f3
DATA gelu32<>+24(SB)/4, $0x3f3504f3
DATA gelu32<>+28(SB)/4, $0x3f3504f3
#define G_HALF 32
DATA gelu32<>+32(SB)/4, $0x3f000000
DATA gelu32<>+36(SB)/4, $0x3f000000
DATA gelu32<>+40(SB)/4, $0x3f000000
DATA gelu32<>+44(SB)/4, $0x3f000000
DATA gelu32<>+48(SB)/4, $0x3f000000
DATA gelu32<>+52(SB)/4, $0x3f000000
DATA gelu32<>+56(SB)/4, $0x3f000000
DATA gelu32<>+60(SB)/4, $0x3f000000
#define G_ONE 64
DATA gelu32<>+64(SB)/4, $0x3f800000
DATA gelu32<>+68(SB)/4, $0x3f800000
DATA gelu32<>+72(SB)/4, $0x3f800000
DATA gelu32<>+76(SB)/4, $0x3f800000
DATA gelu32<>+80(SB)/4, $0x3f800000
DATA gelu32<>+84(SB)/4, $0x3f800000
DATA gelu32<>+88(SB)/4, $0x3f800000
DATA gelu32<>+92(SB)/4, $0x3f800000
#define G_TWO 96
DATA gelu32<>+96(SB)/4, $0x40000000
DATA gelu32<>+100(SB)/4, $0x40000000
DATA gelu32<>+104(SB)/4, $0x40000000
DATA gelu32<>+108(SB)/4, $0x40000000
DATA gelu32<>+112(SB)/4, $0x40000000
DATA gelu32<>+116(SB)/4, $0x40000000
DATA gelu32<>+120(SB)/4, $0x40000000
DATA gelu32<>+124(SB)/4, $0x40000000
#define G_C9 128
DATA gelu32<>+128(SB)/4, $0x3e2ef945
DATA gelu32<>+132(SB)/4, $0x3e2ef945
DATA gelu32<>+136(SB)/4, $0x3e2ef945
DATA gelu32<>+140(SB)/4, $0x3e2ef945
DATA gelu32<>+144(SB)/4, $0x3e2ef945
DATA gelu32<>+148(SB)/4, $0x3e2ef945
DATA gelu32<>+152(SB)/4, $0x3e2ef945
DATA gelu32<>+156(SB)/4, $0x3e2ef945
#define G_C8 160
DATA gelu32<>+160(SB)/4, $0xbf527892
DATA gelu32<>+164(SB)/4, $0xbf527892
DATA gelu32<>+168(SB)/4, $0xbf527892
DATA gelu32<>+172(SB)/4, $0xbf527892
DATA gelu32<>+176(SB)/4, $0xbf527892
DATA gelu32<>+180(SB)/4, $0xbf527892
DATA gelu32<>+184(SB)/4, $0xbf527892
DATA gelu32<>+188(SB)/4, $0xbf527892
#define G_C7 192
DATA gelu32<>+192(SB)/4, $0x3fbe87b0
DATA gelu32<>+196(SB)/4, $0x3fbe87b0
DATA gelu32<>+200(SB)/4, $0x3fbe87b0
DATA gelu32<>+204(SB)/4, $0x3fbe87b0
DATA gelu32<>+208(SB)/4, $0x3fbe87b0
DATA gelu32<>+212(SB)/4, $0x3fbe87b0
DATA gelu32<>+216(SB)/4, $0x3fbe87b0
DATA gelu32<>+220(SB)/4, $0x3fbe87b0
#define G_C6 224
DATA gelu32<>+224(SB)/4, $0xbf914e5d
DATA gelu32<>+228(SB)/4, $0xbf914e5d
DATA gelu32<>+232(SB)/4, $0xbf914e5d
DATA gelu32<>+236(SB)/4, $0xbf914e5d
DATA gelu32<>+240(SB)/4, $0xbf914e5d
DATA gelu32<>+244(SB)/4, $0xbf914e5d
DATA gelu32<>+248(SB)/4, $0xbf914e5d
DATA gelu32<>+252(SB)/4, $0xbf914e5d
#define G_C5 256
DATA gelu32<>+256(SB)/4, $0x3e8ec7cc
DATA gelu32<>+260(SB)/4, $0x3e8ec7cc
DATA gelu32<>+264(SB)/4, $0x3e8ec7cc
DATA gelu32<>+268(SB)/4, $0x3e8ec7cc
DATA gelu32<>+272(SB)/4, $0x3e8ec7cc
DATA gelu32<>+276(SB)/4, $0x3e8ec7cc
DATA gelu32<>+280(SB)/4, $0x3e8ec7cc
DATA gelu32<>+284(SB)/4, $0x3e8ec7cc
#define G_C4 288
DATA gelu32<>+288(SB)/4, $0xbe3ec24c
DATA gelu32<>+292(SB)/4, $0xbe3ec24c
DATA gelu32<>+296(SB)/4, $0xbe3ec24c
DATA gelu32<>+300(SB)/4, $0xbe3ec24c
DATA gelu32<>+304(SB)/4, $0xbe3ec24c
DATA gelu32<>+308(SB)/4, $0xbe3ec24c
DATA gelu32<>+312(SB)/4, $0xbe3ec24c
DATA gelu32<>+316(SB)/4, $0xbe3ec24c
#define G_C3 320
DATA gelu32<>+320(SB)/4, $0x3dc636c9
DATA gelu32<>+324(SB)/4, $0x3dc636c9
DATA gelu32<>+328(SB)/4, $0x3dc636c9
DATA gelu32<>+332(SB)/4, $0x3dc636c9
DATA gelu32<>+336(SB)/4, $0x3dc636c9
DATA gelu32<>+340(SB)/4, $0x3dc636c9
DATA gelu32<>+344(SB)/4, $0x3dc636c9
DATA gelu32<>+348(SB)/4, $0x3dc636c9
#define G_C2 352
DATA gelu32<>+352(SB)/4, $0x3ebf88fb
DATA gelu32<>+356(SB)/4, $0x3ebf88fb
DATA gelu32<>+360(SB)/4, $0x3ebf88fb
DATA gelu32<>+364(SB)/4, $0x3ebf88fb
DATA gelu32<>+368(SB)/4, $0x3ebf88fb
DATA gelu32<>+372(SB)/4, $0x3ebf88fb
DATA gelu32<>+376(SB)/4, $0x3ebf88fb
DATA gelu32<>+380(SB)/4, $0x3ebf88fb
#define G_C1 384
DATA gelu32<>+384(SB)/4, $0x3f8000c7
DATA gelu32<>+388(SB)/4, $0x3f8000c7
DATA gelu32<>+392(SB)/4, $0x3f8000c7
DATA gelu32<>+396(SB)/4, $0x3f8000c7
DATA gelu32<>+400(SB)/4, $0x3f8000c7
DATA gelu32<>+404(SB)/4, $0x3f8000c7
DATA gelu32<>+408(SB)/4, $0x3f8000c7
DATA gelu32<>+412(SB)/4, $0x3f8000c7
#define G_C0 416
DATA gelu32<>+416(SB)/4, $0xbfa1fc4e
DATA gelu32<>+420(SB)/4, $0xbfa1fc4e
DATA gelu32<>+424(SB)/4, $0xbfa1fc4e
DATA gelu32<>+428(SB)/4, $0xbfa1fc4e
DATA gelu32<>+432(SB)/4, $0xbfa1fc4e
DATA gelu32<>+436(SB)/4, $0xbfa1fc4e
DATA gelu32<>+440(SB)/4, $0xbfa1fc4e
DATA gelu32<>+444(SB)/4, $0xbfa1fc4e
#define G_MINUS_HALF 448
DATA gelu32<>+448(SB)/4, $0xbf000000
DATA gelu32<>+452(SB)/4, $0xbf000000
DATA gelu32<>+456(SB)/4, $0xbf000000
DATA gelu32<>+460(SB)/4, $0xbf000000
DATA gelu32<>+464(SB)/4, $0xbf000000
DATA gelu32<>+468(SB)/4, $0xbf000000
DATA gelu32<>+472(SB)/4, $0xbf000000
DATA gelu32<>+476(SB)/4, $0xbf000000
#define G_ABS 480
DATA gelu32<>+480(SB)/4, $0x7fffffff
DATA gelu32<>+484(SB)/4, $0x7fffffff
DATA gelu32<>+488(SB)/4, $0x7fffffff
DATA gelu32<>+492(SB)/4, $0x7fffffff
DATA gelu32<>+496(SB)/4, $0x7fffffff
DATA gelu32<>+500(SB)/4, $0x7fffffff
DATA gelu32<>+504(SB)/4, $0x7fffffff
DATA gelu32<>+508(SB)/4, $0x7fffffff
#define G_EXPLO 512
DATA gelu32<>+512(SB)/4, $0xc2c4da92
DATA gelu32<>+516(SB)/4, $0xc2c4da92
DATA gelu32<>+520(SB)/4, $0xc2c4da92
DATA gelu32<>+524(SB)/4, $0xc2c4da92
DATA gelu32<>+528(SB)/4, $0xc2c4da92
DATA gelu32<>+532(SB)/4, $0xc2c4da92
DATA gelu32<>+536(SB)/4, $0xc2c4da92
DATA gelu32<>+540(SB)/4, $0xc2c4da92
#define G_TWO16 544
DATA gelu32<>+544(SB)/4, $0x47800000
DATA gelu32<>+548(SB)/4, $0x47800000
DATA gelu32<>+552(SB)/4, $0x47800000
DATA gelu32<>+556(SB)/4, $0x47800000
DATA gelu32<>+560(SB)/4, $0x47800000
DATA gelu32<>+564(SB)/4, $0x47800000
DATA gelu32<>+568(SB)/4, $0x47800000
DATA gelu32<>+572(SB)/4, $0x47800000
#define G_TWOM16 576
DATA gelu32<>+576(SB)/4, $0x37800000
DATA gelu32<>+580(SB)/4, $0x37800000
DATA gelu32<>+584(SB)/4, $0x37800000
DATA gelu32<>+588(SB)/4, $0x37800000
DATA gelu32<>+592(SB)/4, $0x37800000
DATA gelu32<>+596(SB)/4, $0x37800000
DATA gelu32<>+600(SB)/4, $0x37800000
DATA gelu32<>+604(SB)/4, $0x37800000
GLOBL gelu32<>(SB), RODATA|NOPTR, $608

// The steps of geluAVX2's lane computation as macros over the registers
// of one chain (X the input, H hi then -hi/2 then r, L lo then scratch, T
// 1+a/2 then t then erfc, Q the polynomial then e^r, S the exponent sum,
// N n), so that the loop can interleave two independent chains of eight
// lanes: one chain is a single dependency chain of ~120 cycles, and one
// at a time left the FMA units mostly idle.
#define GELU1(X, H, L, T, OFF) \
	VMOVUPS     OFF(DI), X; \
	VMULPS      X, X, H; \
	VMOVAPS     H, L; \
	VFMSUB231PS X, X, L; \
	VANDPS      gelu32<>+G_ABS(SB), X, T; \
	VMULPS      gelu32<>+G_INV_SQRT2(SB), T, T; \
	VMULPS      gelu32<>+G_HALF(SB), T, T; \
	VADDPS      gelu32<>+G_ONE(SB), T, T

#define GELU2(T, Q) \
	VMOVUPS gelu32<>+G_ONE(SB), Q; \
	VDIVPS  T, Q, T

#define GELU3(T, Q) \
	VMOVUPS     gelu32<>+G_C9(SB), Q; \
	VFMADD213PS gelu32<>+G_C8(SB), T, Q; \
	VFMADD213PS gelu32<>+G_C7(SB), T, Q; \
	VFMADD213PS gelu32<>+G_C6(SB), T, Q; \
	VFMADD213PS gelu32<>+G_C5(SB), T, Q; \
	VFMADD213PS gelu32<>+G_C4(SB), T, Q; \
	VFMADD213PS gelu32<>+G_C3(SB), T, Q; \
	VFMADD213PS gelu32<>+G_C2(SB), T, Q; \
	VFMADD213PS gelu32<>+G_C1(SB), T, Q; \
	VFMADD213PS gelu32<>+G_C0(SB), T, Q

#define GELU4(H, L, Q, S) \
	VFNMADD231PS gelu32<>+G_HALF(SB), L, Q; \
	VMULPS       gelu32<>+G_MINUS_HALF(SB), H, H; \
	VADDPS       Q, H, S

#define GELU5(H, Q, S, N) \
	VMAXPS       gelu32<>+G_EXPLO(SB), S, N; \
	VMULPS       ·expf32Consts+32(SB), N, N; \
	VROUNDPS     $0, N, N; \
	VFNMADD231PS ·expf32Consts+64(SB), N, H; \
	VFNMADD231PS ·expf32Consts+96(SB), N, H; \
	VADDPS       Q, H, H

#define GELU7(S, L, Q, T) \
	VMOVUPS gelu32<>+G_EXPLO(SB), L; \
	VCMPPS  $9, L, S, L; \
	VANDNPS Q, L, Q; \
	VMULPS  Q, T, T; \
	VMULPS  gelu32<>+G_TWOM16(SB), T, T

#define GELU8(X, T, L, OFF) \
	VMOVUPS   gelu32<>+G_TWO(SB), L; \
	VSUBPS    T, L, L; \
	VBLENDVPS X, T, L, L; \
	VMULPS    gelu32<>+G_HALF(SB), X, X; \
	VMULPS    L, X, X; \
	VMOVUPS   X, OFF(DI)

// func geluAVX2(x *float32, n int)
// x[i] = 0.5*x*erfc(-x/sqrt2) in place for n, a multiple of 8, in float32
// lanes: with a = |x|/sqrt2 and t = 1/(1+a/2), erfc(a) = t*exp(-a^2+P(t))
// (Numerical Recipes' erfcc, 1.2e-7 relative), where -a^2 = -x^2/2 is
// split exactly into -hi/2 - lo/2 (hi = x*x rounded, lo its error by FMA)
// and the exponential's range reduction starts from the exact -hi/2, the
// small rest added after it, so no rounding of the large exponent leaks
// into the result: within a few ulp of the float64 definition. Results
// below the normal range flush to 0.
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
loop2:
	// Sixteen lanes a pass as two interleaved chains (Y0-Y6, Y8-Y14),
	// each the same operations as the eight-lane loop below.
	CMPQ CX, $16
	JLT  single
	GELU1(Y0, Y1, Y2, Y3, 0)
	GELU1(Y8, Y9, Y10, Y11, 32)
	GELU2(Y3, Y4)
	GELU2(Y11, Y12)
	GELU3(Y3, Y4)
	GELU3(Y11, Y12)
	GELU4(Y1, Y2, Y4, Y5)
	GELU4(Y9, Y10, Y12, Y13)
	GELU5(Y1, Y4, Y5, Y6)
	GELU5(Y9, Y12, Y13, Y14)
	EXPPOLY(Y1, Y6, Y4, Y2, gelu32<>+G_TWO16(SB))
	EXPPOLY(Y9, Y14, Y12, Y10, gelu32<>+G_TWO16(SB))
	GELU7(Y5, Y2, Y4, Y3)
	GELU7(Y13, Y10, Y12, Y11)
	GELU8(Y0, Y3, Y2, 0)
	GELU8(Y8, Y11, Y10, 32)
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop2
single:
	TESTQ CX, CX
	JE    done
loop:
	GELU1(Y0, Y1, Y2, Y3, 0)
	GELU2(Y3, Y4)
	GELU3(Y3, Y4)
	GELU4(Y1, Y2, Y4, Y5)
	GELU5(Y1, Y4, Y5, Y6)
	EXPPOLY(Y1, Y6, Y4, Y2, gelu32<>+G_TWO16(SB))
	GELU7(Y5, Y2, Y4, Y3)
	GELU8(Y0, Y3, Y2, 0)
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  loop
done:
	VZEROUPPER
	RET
