// The float32-lane exp of softmax32_amd64.s and act_amd64.s, after their
// own range reductions (Cephes-style: n = round(d·log2e), r = d - n·ln2 in
// two parts, about 1 ulp; constants: ·expf32Consts).

// EXPPOLY sets OUT = (1 + r + r²·p(r))·2^n, p the degree-5 polynomial of
// (e^r - 1 - r)/r², for R = r and N = n (float32 lanes; N is clobbered, as
// is T). BIAS holds the bits added to n<<23: 1.0's for 2^n.
#define EXPPOLY(R, N, OUT, T, BIAS) \
	VMULPS  R, R, T \
	VMOVUPS ·expf32Consts+128(SB), OUT \
	VFMADD213PS ·expf32Consts+160(SB), R, OUT \
	VFMADD213PS ·expf32Consts+192(SB), R, OUT \
	VFMADD213PS ·expf32Consts+224(SB), R, OUT \
	VFMADD213PS ·expf32Consts+256(SB), R, OUT \
	VFMADD213PS ·expf32Consts+288(SB), R, OUT \
	VFMADD213PS R, T, OUT \
	VADDPS  ·expf32Consts+320(SB), OUT, OUT \
	VCVTPS2DQ N, N \
	VPSLLD  $23, N, N \
	VPADDD  BIAS, N, N \
	VMULPS  N, OUT, OUT
