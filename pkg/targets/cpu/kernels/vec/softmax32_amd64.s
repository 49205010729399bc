//go:build amd64 && !purego

#include "textflag.h"
#include "exp32_amd64.h"

// Float32 pieces of attention's online softmax (softmax32.go has the Go
// twins).

// Eight-lane constants: the exp clamp, log2(e), ln2 in two parts (high
// part exact in 9 bits, so n·ln2hi is exact), the degree-5 polynomial of
// e^r - 1 - r over r² for |r| <= ln2/2 (Cephes' expf coefficients: error
// about 1 ulp), 1.0, -Inf.
#define SPLAT(off, bits) \
	DATA ·expf32Consts+(off+0)(SB)/4, bits \
	DATA ·expf32Consts+(off+4)(SB)/4, bits \
	DATA ·expf32Consts+(off+8)(SB)/4, bits \
	DATA ·expf32Consts+(off+12)(SB)/4, bits \
	DATA ·expf32Consts+(off+16)(SB)/4, bits \
	DATA ·expf32Consts+(off+20)(SB)/4, bits \
	DATA ·expf32Consts+(off+24)(SB)/4, bits \
	DATA ·expf32Consts+(off+28)(SB)/4, bits

SPLAT(0, $0xc2aeac4f)   // -87.33654: e^x is normal above it
SPLAT(32, $0x3fb8aa3b)  // log2(e)
SPLAT(64, $0x3f318000)  // ln2 high: 0.693359375
SPLAT(96, $0xb95e8083)  // ln2 low: -2.12194440e-4
SPLAT(128, $0x39506967) // 1.9875691500e-4
SPLAT(160, $0x3ab743ce) // 1.3981999507e-3
SPLAT(192, $0x3c088908) // 8.3334519073e-3
SPLAT(224, $0x3d2aa9c1) // 4.1665795894e-2
SPLAT(256, $0x3e2aaaaa) // 1.6666665459e-1
SPLAT(288, $0x3f000000) // 5.0000001201e-1 (rounds to 0.5)
SPLAT(320, $0x3f800000) // 1.0
SPLAT(352, $0xff800000) // -Inf
GLOBL ·expf32Consts(SB), RODATA|NOPTR, $384

// EXPSUB8 is one 8-lane step of expSub32AVX2 at DI: x = e^((x-m)·scale)
// with Y15 = m, Y10 = scale, Y12 the clamp, Y11 log2(e), Y9 ln2 low, Y8
// 1.0; the results' lanes 0-3 added (as float64) to Y14, lanes 4-7 to
// Y13. In order: d = (x - m)·scale; d's NaN lanes (Y6); d clamped (NaN
// gives the clamp, restored at the end); n = round(d·log2e); r = d -
// n·ln2hi - n·ln2lo; e^r·2^n; 0 where d is below the clamp (-Inf
// included); NaN stays NaN.
#define EXPSUB8 \
	VMOVUPS (DI), Y0 \
	VSUBPS  Y15, Y0, Y0 \
	VMULPS  Y10, Y0, Y0 \
	VCMPPS  $3, Y0, Y0, Y6 \
	VMAXPS  Y12, Y0, Y1 \
	VMULPS  Y11, Y1, Y2 \
	VROUNDPS $0, Y2, Y2 \
	VMOVAPS Y1, Y3 \
	VFNMADD231PS ·expf32Consts+64(SB), Y2, Y3 \
	VFNMADD231PS Y9, Y2, Y3 \
	EXPPOLY(Y3, Y2, Y5, Y4, Y8) \
	VCMPPS  $1, Y12, Y0, Y4 \
	VANDNPS Y5, Y4, Y5 \
	VBLENDVPS Y6, Y0, Y5, Y5 \
	VMOVUPS Y5, (DI) \
	VCVTPS2PD X5, Y0 \
	VADDPD  Y0, Y14, Y14 \
	VEXTRACTF128 $1, Y5, X1 \
	VCVTPS2PD X1, Y1 \
	VADDPD  Y1, Y13, Y13

// FOLD8 sets X2 to Y14's and Y13's eight float64 lanes added as fold8
// does: t_j = l_j + l_{j+4}, then (t0+t1) + (t2+t3).
#define FOLD8 \
	VADDPD Y13, Y14, Y14 \
	VEXTRACTF128 $1, Y14, X1 \
	VHADDPD X14, X14, X2 \
	VHADDPD X1, X1, X3 \
	VADDSD X3, X2, X2

// func expSub32AVX2(x *float32, n int, m, scale float32) float64
// x[i] = e^((x[i]-m)·scale) in place for n > 0, a multiple of 8, and returns the
// sum of the results in float64 (lane i%8, lanes 0-3 and 4-7 in two
// accumulators, then folded as fold8). Differences below the clamp give 0;
// NaN stays NaN.
TEXT ·expSub32AVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Y15
	VXORPD Y14, Y14, Y14
	VXORPD Y13, Y13, Y13
	VMOVUPS ·expf32Consts+0(SB), Y12
	VMOVUPS ·expf32Consts+32(SB), Y11
	VBROADCASTSS scale+20(FP), Y10
	VMOVUPS ·expf32Consts+96(SB), Y9
	VMOVUPS ·expf32Consts+320(SB), Y8
eloop:
	EXPSUB8
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  eloop
	FOLD8
	VMOVSD X2, ret+24(FP)
	VZEROUPPER
	RET

// func max32AVX2(x *float32, n int, lanes *[8]float32) bool
// lanes[j] = the largest x[i] with i%8 == j, for n > 0 a multiple of 8;
// reports whether any x[i] is NaN.
TEXT ·max32AVX2(SB), NOSPLIT, $0-25
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ lanes+16(FP), DI
	VMOVUPS ·expf32Consts+352(SB), Y0
	VXORPS Y2, Y2, Y2
mloop:
	VMOVUPS (SI), Y3
	VMAXPS  Y3, Y0, Y0
	VCMPPS  $3, Y3, Y3, Y4
	VORPS   Y4, Y2, Y2
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  mloop
	VMOVUPS Y0, (DI)
	VMOVMSKPS Y2, AX
	TESTL AX, AX
	SETNE ret+24(FP)
	VZEROUPPER
	RET

// func expSub32AVX512(x *float32, n int, m, scale float32) float64
// expSub32AVX2 in 16 lanes (zmm): the same operations on every element,
// so the same results, and the same sum: the zmm accumulator's low four
// doubles are expSub32AVX2's lanes 0-3 and its high four lanes 4-7, each
// adding its elements in the same order; an n not a multiple of 16 ends
// with one 8-lane step on the two halves. n > 0, a multiple of 8.
TEXT ·expSub32AVX512(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Z15
	VBROADCASTSS scale+20(FP), Z10
	VXORPD Z14, Z14, Z14
	VBROADCASTSS ·expf32Consts+0(SB), Z12   // clamp
	VBROADCASTSS ·expf32Consts+32(SB), Z11  // log2(e)
	VBROADCASTSS ·expf32Consts+64(SB), Z16  // ln2 high
	VBROADCASTSS ·expf32Consts+96(SB), Z9   // ln2 low
	VBROADCASTSS ·expf32Consts+128(SB), Z17 // the polynomial
	VBROADCASTSS ·expf32Consts+160(SB), Z18
	VBROADCASTSS ·expf32Consts+192(SB), Z19
	VBROADCASTSS ·expf32Consts+224(SB), Z20
	VBROADCASTSS ·expf32Consts+256(SB), Z21
	VBROADCASTSS ·expf32Consts+288(SB), Z22
	VBROADCASTSS ·expf32Consts+320(SB), Z8  // 1.0
	CMPQ CX, $16
	JLT  ztail
zloop:
	VMOVUPS (DI), Z0
	VSUBPS  Z15, Z0, Z0
	VMULPS  Z10, Z0, Z0          // d = (x - m)·scale
	VCMPPS  $3, Z0, Z0, K1       // d is NaN
	VMAXPS  Z12, Z0, Z1          // clamped (NaN gives the clamp; restored below)
	VMULPS  Z11, Z1, Z2
	VRNDSCALEPS $0, Z2, Z2       // n = round(d·log2e)
	VMOVAPS Z1, Z3
	VFNMADD231PS Z16, Z2, Z3     // r = d - n·ln2hi
	VFNMADD231PS Z9, Z2, Z3      //     - n·ln2lo
	VMULPS  Z3, Z3, Z4           // EXPPOLY in zmm
	VMOVAPS Z17, Z5
	VFMADD213PS Z18, Z3, Z5
	VFMADD213PS Z19, Z3, Z5
	VFMADD213PS Z20, Z3, Z5
	VFMADD213PS Z21, Z3, Z5
	VFMADD213PS Z22, Z3, Z5
	VFMADD213PS Z3, Z4, Z5
	VADDPS  Z8, Z5, Z5
	VCVTPS2DQ Z2, Z2
	VPSLLD  $23, Z2, Z2
	VPADDD  Z8, Z2, Z2
	VMULPS  Z2, Z5, Z5           // e^r · 2^n
	VCMPPS  $1, Z12, Z0, K2      // d below the clamp (-Inf included): 0
	VXORPS  Z5, Z5, K2, Z5
	VMOVAPS Z0, K1, Z5           // NaN stays NaN
	VMOVUPS Z5, (DI)
	VCVTPS2PD Y5, Z6             // elements 0-7: lanes 0-7
	VADDPD  Z6, Z14, Z14
	VEXTRACTF32X8 $1, Z5, Y7     // elements 8-15: lanes 0-7 again
	VCVTPS2PD Y7, Z7
	VADDPD  Z7, Z14, Z14
	ADDQ $64, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE  zloop
ztail:
	VEXTRACTF64X4 $1, Z14, Y13   // lanes 4-7 (expSub32AVX2's Y13)
	TESTQ CX, CX
	JZ   zfold
	EXPSUB8                      // the last 8, as expSub32AVX2
zfold:
	FOLD8
	VMOVSD X2, ret+24(FP)
	VZEROUPPER
	RET
