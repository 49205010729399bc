// Shared by the float64-lane exp in exp_amd64.s and act_amd64.s.

// EXPPD sets OUT = exp(IN) in four float64 lanes, for IN >= -700 (the
// caller clamps): n = round(IN*log2e), r = IN - n*ln2 (split in two), a
// degree-7 polynomial for e^r (|r| <= ln2/2: error below 1e-8 relative),
// times 2^n built in the exponent bits. HALF and ONE hold 0.5 and 1.0;
// Y5, Y6, Y7 and Y9 are clobbered.
#define EXPPD(IN, OUT, HALF, ONE) \
	VBROADCASTSD ·expConsts+0(SB), Y5 \
	VMULPD  Y5, IN, Y5 \
	VROUNDPD $0, Y5, Y5 \
	VBROADCASTSD ·expConsts+8(SB), Y6 \
	VMOVAPD IN, Y7 \
	VFNMADD231PD Y6, Y5, Y7 \
	VBROADCASTSD ·expConsts+16(SB), Y6 \
	VFNMADD231PD Y6, Y5, Y7 \
	VBROADCASTSD ·expConsts+24(SB), OUT \
	VBROADCASTSD ·expConsts+32(SB), Y9 \
	VFMADD213PD Y9, Y7, OUT \
	VBROADCASTSD ·expConsts+40(SB), Y9 \
	VFMADD213PD Y9, Y7, OUT \
	VBROADCASTSD ·expConsts+48(SB), Y9 \
	VFMADD213PD Y9, Y7, OUT \
	VBROADCASTSD ·expConsts+56(SB), Y9 \
	VFMADD213PD Y9, Y7, OUT \
	VFMADD213PD HALF, Y7, OUT \
	VFMADD213PD ONE, Y7, OUT \
	VFMADD213PD ONE, Y7, OUT \
	VCVTPD2DQY Y5, X5 \
	VPMOVSXDQ X5, Y5 \
	VPBROADCASTQ ·expConsts+64(SB), Y9 \
	VPADDQ  Y9, Y5, Y5 \
	VPSLLQ  $52, Y5, Y5 \
	VMULPD  Y5, OUT, OUT
