// The float32-lane exp of softmax32_amd64.s and act_amd64.s.

// EXPPS sets OUT = e^IN in eight float32 lanes (about 1 ulp; Cephes-style:
// n = round(IN·log2e), r = IN - n·ln2 in two parts, a degree-5 polynomial
// for (e^r - 1 - r)/r², times 2^n in the exponent bits); IN below
// -87.33654 (where e^IN leaves the normal range, -Inf included) gives 0.
// IN is kept; T1..T4 are clobbered. Constants: ·expf32Consts.
#define EXPPS(IN, OUT, T1, T2, T3, T4) \
	VMAXPS  ·expf32Consts+0(SB), IN, T1 \
	VMULPS  ·expf32Consts+32(SB), T1, T2 \
	VROUNDPS $0, T2, T2 \
	VFNMADD231PS ·expf32Consts+64(SB), T2, T1 \
	VFNMADD231PS ·expf32Consts+96(SB), T2, T1 \
	VMULPS  T1, T1, T3 \
	VMOVUPS ·expf32Consts+128(SB), OUT \
	VFMADD213PS ·expf32Consts+160(SB), T1, OUT \
	VFMADD213PS ·expf32Consts+192(SB), T1, OUT \
	VFMADD213PS ·expf32Consts+224(SB), T1, OUT \
	VFMADD213PS ·expf32Consts+256(SB), T1, OUT \
	VFMADD213PS ·expf32Consts+288(SB), T1, OUT \
	VFMADD213PS T1, T3, OUT \
	VADDPS  ·expf32Consts+320(SB), OUT, OUT \
	VCVTPS2DQ T2, T2 \
	VPSLLD  $23, T2, T2 \
	VPADDD  ·expf32Consts+320(SB), T2, T2 \
	VMULPS  T2, OUT, OUT \
	VMOVUPS ·expf32Consts+0(SB), T4 \
	VCMPPS  $1, T4, IN, T4 \
	VANDNPS OUT, T4, OUT
