/*
 * rlx_math.h: float32 math for the C that rlxc generates for fused
 * elementwise regions on the CPU.
 *
 * Every function is `static inline`, branch-free (selects, never
 * data-dependent branches or loops) and free of tables, so a loop
 *
 *     for (i = 0; i < n; i++) y[i] = rlx_expf(x[i]);
 *
 * vectorizes at -O3 (x86-64-v3, x86-64-v4, armv8.2-a). The header is
 * freestanding: it includes only <stdint.h> and calls nothing, so a kernel
 * compiled with -ffreestanding -nostdlib links with no libc and no libm
 * (the shared objects rlxc builds depend on nothing), and no call into a
 * math library stops a loop from vectorizing. It needs no -ffast-math
 * (see the end of this comment) but hardware FMA (__builtin_fmaf and
 * __builtin_fma must stay inline), which every CPU level rlx targets has.
 *
 * Speed over the last bit: the transcendental functions compute in float
 * only (no double anywhere in them, so every vector lane is a float lane:
 * the header's first version finished sigmoid, silu, erf, gelu and
 * gelu_tanh in double, within 1.5 ulp, at half the vector width or worse),
 * with minimax polynomials of the least degree that keeps the error within
 * bounds, and at most one division each. The contract is
 *
 *     error <= 4 ulps, and <= 5e-7 relative where the result is normal,
 *
 * with the special values right. The maxima below are over every float32
 * input (every one below 2^22 for sin and cos) against glibc's double
 * functions, and the results are the same at x86-64-v3, x86-64-v4 and
 * armv8.2-a (bit for bit, NaN payloads aside). mathh_test.go (next to this
 * file) holds every function to the contract against Go's float64 math
 * rounded to float32, over dense grids, every 4099th float32 bit pattern
 * (denormals, huge values, Inf and NaN included) and listed special
 * values. Errors are in float32 ulps of the float64 result (denormal
 * results in units of 2^-149); relative errors are at most 2.5e-7 (gelu)
 * and 2.0e-7 (the rest):
 *
 *     rlx_expf          1.01 ulp
 *     rlx_logf          1.12 ulp
 *     rlx_tanhf         2.50 ulp
 *     rlx_sigmoidf      2.40 ulp
 *     rlx_siluf         2.67 ulp
 *     rlx_erff          2.22 ulp
 *     rlx_geluf         3.57 ulp (the negative tail too: x·erfc, not 1 + erf)
 *     rlx_gelu_tanhf    2.68 ulp (likewise: x·sigmoid(2u), not 1 + tanh)
 *     rlx_sinf          2.23 ulp, |x| < 2^22 (see below)
 *     rlx_cosf          2.40 ulp, |x| < 2^22
 *     rlx_softsignf     1.50 ulp
 *     rlx_powf          0.50 ulp (correctly rounded on every input tested)
 *     rlx_modf_floor    exact (bit for bit, signed zeros included)
 *
 * pow and modf_floor are the exceptions to "float only": they finish in
 * double (pow) or build the remainder in double (modf_floor), and are
 * exact or nearly; rlxc turns pow with the common constant exponents into
 * products and square roots, so general pow is rare.
 *
 * Special values follow the float64 formula each op is defined by in
 * pkg/lir/ew.go: NaN in gives NaN out; exp(+Inf) = +Inf, exp(-Inf) = 0;
 * log(0) = -Inf, log(x < 0) = NaN; tanh and erf keep the sign of zero and
 * saturate to ±1; sigmoid(-Inf) = 0; silu(-Inf), gelu(-Inf),
 * gelu_tanh(-Inf) and softsign(±Inf) are NaN (Inf times 0, or Inf/Inf, in
 * the formula); pow follows Go's math.Pow special cases; modf_floor is
 * math.Mod followed by Python's sign fix-up (NaN for b = 0 or a = ±Inf).
 * Results that underflow come out as correctly scaled denormals (rounded
 * once: exp, sigmoid, silu, gelu and gelu_tanh form them by a last product
 * with a power of two).
 *
 * sin and cos reduce the argument in float (k = round(x·2/π), r = x − k·π/2
 * with π/2 in three floats, using FMA, which keeps r accurate to float
 * precision near the zeros of sin and cos): the bounds above hold for
 * |x| < 2^22 ≈ 4.2e6 (the first version reduced in double, good to 2^47).
 * Beyond that the reduction loses its meaning: the result is finite and in
 * [-1, 1], but not sin(x). ±Inf gives NaN.
 *
 * Do not compile it with -ffast-math (or -fassociative-math): the
 * rounding tricks ((x + 1.5·2^23) − 1.5·2^23, the exact sums and products
 * recovered by FMA, and the like) and the special values need IEEE
 * arithmetic as written. Contraction of a·b + c into an FMA (clang's
 * default -ffp-contract=on) is harmless: every such pair the code relies on
 * is written as __builtin_fmaf or kept in separate statements.
 */
#ifndef RLX_MATH_H
#define RLX_MATH_H

#include <stdint.h>

#if !defined(__FMA__) && !defined(__ARM_FEATURE_FMA)
#error "rlx_math.h needs hardware FMA: compile for x86-64-v3 or later, or AArch64"
#endif

/* ---- bits and helpers ------------------------------------------------ */

static inline uint32_t rlx__f2u(float x) {
	uint32_t u;
	__builtin_memcpy(&u, &x, sizeof u);
	return u;
}

static inline float rlx__u2f(uint32_t u) {
	float x;
	__builtin_memcpy(&x, &u, sizeof x);
	return x;
}

static inline uint64_t rlx__d2u(double x) {
	uint64_t u;
	__builtin_memcpy(&u, &x, sizeof u);
	return u;
}

static inline float rlx__absf(float x) { return rlx__u2f(rlx__f2u(x) & 0x7fffffffu); }

/* |m| with the sign of s. */
static inline float rlx__copysignf(float m, float s) {
	return rlx__u2f((rlx__f2u(m) & 0x7fffffffu) | (rlx__f2u(s) & 0x80000000u));
}

static inline float rlx__nanf(void) { return rlx__u2f(0x7fc00000u); }
static inline float rlx__inff(void) { return rlx__u2f(0x7f800000u); }

/* 2^k for k in [-126, 127]. */
static inline float rlx__pow2f(int32_t k) { return rlx__u2f(((uint32_t)k + 127u) << 23); }

/* ---- exp core -------------------------------------------------------- */

/* 1.5·2^23: t = fma(x, 1/ln2, SHIFT) rounds x/ln2 to the integer n, held
 * in t's low mantissa bits (two's complement), so t << 23 is n << 23. */
#define RLX__SHIFT 0x1.8p23f
#define RLX__2M64 0x1p-64f

/* e^r − 1 for |r| <= ln2/2 (fitted on 1.001 times that): r + r²·P(r),
 * P minimax for the relative error of e^r, 3.2e-9. */
static inline float rlx__expm1_poly(float r) {
	float P = 0x1.6ab6bep-10f;
	P = __builtin_fmaf(P, r, 0x1.123d5cp-7f);
	P = __builtin_fmaf(P, r, 0x1.55585ap-5f);
	P = __builtin_fmaf(P, r, 0x1.55548cp-3f);
	P = __builtin_fmaf(P, r, 0x1.fffffcp-2f);
	return __builtin_fmaf(r * r, P, r);
}

/* n = round(w/ln2), in t (see RLX__SHIFT), and r = w − n·ln2 with ln2 in
 * two parts: n·ln2hi and w − n·ln2hi are exact (Cody and Waite). */
typedef struct {
	float t, r;
} rlx__red;

static inline rlx__red rlx__exp_reduce(float w) {
	rlx__red e;
	e.t = __builtin_fmaf(w, 0x1.715476p+0f, RLX__SHIFT);
	float k = e.t - RLX__SHIFT;
	e.r = __builtin_fmaf(k, 0x1.05c610p-29f, __builtin_fmaf(k, -0x1.62e430p-1f, w));
	return e;
}

/* e^w − 1 for w in [-18.3, 0] (callers clamp; NaN gives NaN): 2^n·(1 + q)
 * − 1 as fma(2^n, q, 2^n − 1), where 2^n − 1 is exact (n >= -24; below,
 * the result is −1 in float32 anyway), so it keeps its relative accuracy
 * near 0 (n = 0: it is q). */
static inline float rlx__expm1_neg(float w) {
	rlx__red e = rlx__exp_reduce(w);
	float q = rlx__expm1_poly(e.r);
	float s = rlx__u2f((rlx__f2u(e.t) << 23) + 0x3f800000u);
	return __builtin_fmaf(s, q, s - 1.0f);
}

/* e^w for -120 <= w <= 0 as 2^-64·s·(1 + q), s = 2^(n+64): s·(1 + q) =
 * e^w·2^64 is a normal float for every such w, so a caller multiplies it
 * by x first and scales by 2^-64 last, which rounds a denormal result
 * once; and it rounds (1 + q) together with that product, as
 * fma(y·s, q, y·s). Callers clamp w (NaN gives NaN). */
typedef struct {
	float s, q;
} rlx__e64;

static inline rlx__e64 rlx__exp64_parts(rlx__red e) {
	rlx__e64 p;
	p.q = rlx__expm1_poly(e.r);
	p.s = rlx__u2f((rlx__f2u(e.t) << 23) + ((127u + 64u) << 23));
	return p;
}

static inline rlx__e64 rlx__exp64(float w) { return rlx__exp64_parts(rlx__exp_reduce(w)); }

/* e^(w + wl), the same way, wl a low part of w: it goes in after the exact
 * part of the reduction. */
static inline rlx__e64 rlx__exp64_lo(float w, float wl) {
	rlx__red e;
	e.t = __builtin_fmaf(w, 0x1.715476p+0f, RLX__SHIFT);
	float k = e.t - RLX__SHIFT;
	e.r = __builtin_fmaf(k, -0x1.62e430p-1f, w) + __builtin_fmaf(k, 0x1.05c610p-29f, wl);
	return rlx__exp64_parts(e);
}

/* ---- exp, log -------------------------------------------------------- */

/* e^x = (1 + q)·2^n, the scale split as 2^h·2^(n−h) (h = n >> 1) so that a
 * denormal or overflowing result is rounded once, by the last product.
 * x is clamped to [-120, 89] (beyond, every float32 e^x is 0 or +Inf). */
static inline float rlx_expf(float x) {
	x = x < -120.0f ? -120.0f : x;
	x = x > 89.0f ? 89.0f : x;
	rlx__red e = rlx__exp_reduce(x);
	float q = rlx__expm1_poly(e.r);
	int32_t n = (int32_t)(rlx__f2u(e.t) - rlx__f2u(RLX__SHIFT));
	uint32_t hs = (uint32_t)(n >> 1) << 23;
	float s1 = rlx__u2f(hs + 0x3f800000u);
	float s2 = rlx__u2f((rlx__f2u(e.t) << 23) - hs + 0x3f800000u);
	return __builtin_fmaf(q, s1, s1) * s2;
}

/* x = 2^k·m, m in [2/3, 4/3), r = m − 1: log x = k·ln2 + r + r²·P(r), P
 * minimax (2.6e-8 relative to log(1+r)), ln2 in two parts; no division.
 * Denormals are scaled by 2^23 first. */
static inline float rlx_logf(float x) {
	uint32_t ix = rlx__f2u(x);
	int sub = ix < 0x00800000u; /* +0 or a positive denormal */
	float xs = sub ? x * 0x1p23f : x;
	float kadj = sub ? -23.0f : 0.0f;
	uint32_t u = rlx__f2u(xs) - 0x3f2aaaabu;
	float k = (float)((int32_t)u >> 23) + kadj;
	float r = rlx__u2f((u & 0x007fffffu) + 0x3f2aaaabu) - 1.0f;
	float P = 0x1.1f5456p-3f;
	P = __builtin_fmaf(P, r, -0x1.3b39c8p-3f);
	P = __builtin_fmaf(P, r, 0x1.1e9ef8p-3f);
	P = __builtin_fmaf(P, r, -0x1.503004p-3f);
	P = __builtin_fmaf(P, r, 0x1.99d458p-3f);
	P = __builtin_fmaf(P, r, -0x1.001490p-2f);
	P = __builtin_fmaf(P, r, 0x1.5554fap-2f);
	P = __builtin_fmaf(P, r, -0x1.ffffd4p-2f);
	float l = __builtin_fmaf(k, -0x1.05c610p-29f, __builtin_fmaf(r * r, P, r));
	float y = __builtin_fmaf(k, 0x1.62e430p-1f, l); /* one rounding at y */
	y = x == 0.0f ? -rlx__inff() : y;
	y = x == rlx__inff() ? x : y;
	return !(x >= 0.0f) ? rlx__nanf() : y; /* x < 0 or NaN */
}

/* ---- tanh, sigmoid, silu, softsign ----------------------------------- */

/* tanh|x| = −m/(2 + m), m = e^(−2|x|) − 1 (accurate near 0, so no
 * cancellation there); |x| is clamped at 9.1 (tanh is 1 in float32 from
 * 9.02 on); the sign of x (and of zero) is put back last. */
static inline float rlx_tanhf(float x) {
	float a = rlx__absf(x);
	a = a > 9.1f ? 9.1f : a;
	float m = rlx__expm1_neg(-2.0f * a);
	return rlx__copysignf(m / (2.0f + m), x);
}

/* e = e^-|x|; x >= 0: 1/(1+e); x < 0: e/(1+e). */
static inline float rlx_sigmoidf(float x) {
	float w = -rlx__absf(x);
	w = w < -120.0f ? -120.0f : w;
	rlx__e64 p = rlx__exp64(w);
	float e = __builtin_fmaf(p.q, p.s, p.s) * RLX__2M64;
	float num = x >= 0.0f ? 1.0f : e;
	return num / (1.0f + e);
}

/* x·sigmoid(x), the same way, with x·e^x formed before the last scaling
 * (so a denormal result is rounded once); x is clamped at -120 (below, the
 * result is -0), -Inf gives NaN as the formula does. */
static inline float rlx_siluf(float x) {
	float xc = x < -120.0f ? -120.0f : x;
	float w = -rlx__absf(xc);
	w = w < -120.0f ? -120.0f : w;
	rlx__e64 p = rlx__exp64(w);
	float xs = xc * p.s;
	float num = x >= 0.0f ? x : __builtin_fmaf(xs, p.q, xs) * RLX__2M64;
	float r = num / (1.0f + __builtin_fmaf(p.q, p.s, p.s) * RLX__2M64);
	return x == -rlx__inff() ? rlx__nanf() : r;
}

static inline float rlx_softsignf(float x) { return x / (1.0f + rlx__absf(x)); }

/* ---- erf, gelu ------------------------------------------------------- */

/* erf|x| = −(e^L − 1), L = log(erfc|x|) = a·M(a), a = |x|, with
 * M(a) = −2/sqrt(pi) + D(a), D a minimax polynomial fitted for the error
 * it makes in erf (relative; 3.6e-8), and L = fma(a, −2/sqrt(pi), a·D) so
 * that near 0 D's rounding errors shrink with it. No division, one
 * exponential, one formula from 0 to saturation. a is clamped at 3.93 (erf
 * is 1 in float32 from 3.92 on); the sign of x (and of zero) is put back
 * last. */
static inline float rlx_erff(float x) {
	float a = rlx__absf(x);
	a = a > 3.93f ? 3.93f : a;
	float D = -0x1.553bc4p-15f;
	D = __builtin_fmaf(D, a, 0x1.8f4436p-12f);
	D = __builtin_fmaf(D, a, -0x1.47f570p-10f);
	D = __builtin_fmaf(D, a, -0x1.b17850p-13f);
	D = __builtin_fmaf(D, a, 0x1.3c9418p-6f);
	D = __builtin_fmaf(D, a, -0x1.a520f8p-4f);
	D = __builtin_fmaf(D, a, -0x1.45f298p-1f);
	D = __builtin_fmaf(D, a, 0x1.37ee12p-26f);
	float m = rlx__expm1_neg(__builtin_fmaf(a, -0x1.20dd76p+0f, a * D));
	return rlx__copysignf(m, x);
}

/* 0.5·x·(1 + erf(x/√2)) = x − x·h for x > 0 and x·h for x <= 0, with
 * h = erfc(b/√2)/2, b = |x| (no cancellation in either). h =
 * e^(-b²/2)·F(q)/(b + K), q = (b − K)/(b + K) in [-1, 0.76], K = 2.0089,
 * F(q) = (b + K)·erfcx(b/√2)/2 a minimax polynomial (4e-9 relative; F is
 * flat, 1 down to 0.45, so its rounding errors stay small). 1/(b + K) is
 * refined by a Newton step against b + K exactly; e^(-b²/2) is from b²
 * exact (x·x plus its rounding error, by FMA), and its last rounding is
 * shared with the product by x, formed before the last scaling, so the
 * negative tail keeps its relative accuracy down to the denormals. x is
 * clamped to [-15, 15] for h (below -14.85 the result is -0); -Inf gives
 * NaN as the formula does. */
static inline float rlx_geluf(float x) {
	const float K = 0x1.012300p+1f;
	float xc = x < -15.0f ? -15.0f : x;
	xc = xc > 15.0f ? 15.0f : xc;
	float z = xc * xc;
	float zl = __builtin_fmaf(xc, xc, -z);
	rlx__e64 p = rlx__exp64_lo(-0.5f * z, -0.5f * zl);
	float b = rlx__absf(xc);
	float sb = b + K; /* sb + se = b + K exactly */
	float hi = b > K ? b : K, lo = b > K ? K : b;
	float se = lo - (sb - hi);
	float rs = 1.0f / sb;
	float e = __builtin_fmaf(-rs, se, __builtin_fmaf(-rs, sb, 1.0f));
	rs = __builtin_fmaf(rs, e, rs);
	float q = (b - K) * rs;
	float F = -0x1.0be81cp-14f;
	F = __builtin_fmaf(F, q, -0x1.3ff4e6p-13f);
	F = __builtin_fmaf(F, q, 0x1.e0af74p-14f);
	F = __builtin_fmaf(F, q, 0x1.b1015cp-11f);
	F = __builtin_fmaf(F, q, 0x1.c82772p-11f);
	F = __builtin_fmaf(F, q, -0x1.e5c77ep-10f);
	F = __builtin_fmaf(F, q, -0x1.bb8748p-8f);
	F = __builtin_fmaf(F, q, -0x1.c88dc2p-11f);
	F = __builtin_fmaf(F, q, 0x1.2bce66p-5f);
	F = __builtin_fmaf(F, q, 0x1.f5047ep-6f);
	F = __builtin_fmaf(F, q, -0x1.5580f8p-2f);
	F = __builtin_fmaf(F, q, 0x1.58a8aep-1f);
	float B = (xc * (F * rs)) * p.s;
	float g = __builtin_fmaf(B, p.q, B); /* x·h·2^64 */
	float r = x > 0.0f ? __builtin_fmaf(g, -RLX__2M64, x) : g * RLX__2M64;
	return x == -rlx__inff() ? rlx__nanf() : r;
}

/* 0.5·x·(1 + tanh(u)), u = sqrt(2/pi)·(x + 0.044715·x³), written as
 * x·sigmoid(2u) (the same function, without the cancellation of 1 + tanh
 * for x < 0). 2u = x·(A + B·x²) is carried as a float and its error (x²,
 * each product and the sum with their rounding errors, A and B in two
 * parts), so e^-|2u| keeps its relative accuracy in the tail, and x·e^-|2u|
 * is formed before the last scaling. x is clamped to [-12, 12] (below -11
 * the result is -0); -Inf gives NaN. */
static inline float rlx_gelu_tanhf(float x) {
	const float A = 0x1.988454p+0f, Al = -0x1.857936p-25f; /* 2·sqrt(2/pi) */
	const float B = 0x1.2444f2p-4f, Bl = 0x1.49b16ap-29f;  /* A·0.044715 */
	float xc = x < -12.0f ? -12.0f : x;
	xc = xc > 12.0f ? 12.0f : xc;
	float z = xc * xc;
	float zl = __builtin_fmaf(xc, xc, -z);
	float bz = B * z;
	float bzl = __builtin_fmaf(B, z, -bz);
	float hi = bz > A ? bz : A, lo = bz > A ? A : bz;
	float m = hi + lo; /* m + ml = A + bz exactly (Fast2Sum) */
	float ml = lo - (m - hi);
	ml = __builtin_fmaf(B, zl, ml + bzl);
	ml = __builtin_fmaf(Bl, z, ml + Al);
	float sh = xc * m; /* 2u = sh + sl */
	float sl = __builtin_fmaf(xc, m, -sh);
	sl = __builtin_fmaf(xc, ml, sl);
	/* -|2u| = w + wl */
	float w = rlx__u2f(rlx__f2u(sh) | 0x80000000u);
	float wl = rlx__u2f(rlx__f2u(sl) ^ (rlx__f2u(sh) & 0x80000000u) ^ 0x80000000u);
	w = w < -120.0f ? -120.0f : w;
	rlx__e64 p = rlx__exp64_lo(w, wl);
	float xs = xc * p.s;
	float num = x >= 0.0f ? x : __builtin_fmaf(xs, p.q, xs) * RLX__2M64;
	float r = num / (1.0f + __builtin_fmaf(p.q, p.s, p.s) * RLX__2M64);
	return x == -rlx__inff() ? rlx__nanf() : r;
}

/* ---- sin, cos -------------------------------------------------------- */

/* r = x − k·π/2, k = round(x·2/π), q = k mod 4, with π/2 in three floats
 * (C1 + C2 + C3, 73 bits): x − k·C1 is exact in the FMA (both are
 * multiples of 2^-24 or coarser and the difference is below 2), so r keeps
 * its relative accuracy near the zeros of sin and cos. For |x| < 2^22, k
 * fits the shift trick and |r| stays within the polynomials' range
 * (0.95; x·2/π in float is off by up to 0.1). Beyond, r is clamped to
 * [-1, 1] so the result stays in [-1, 1]. */
typedef struct {
	float r;
	uint32_t q;
} rlx__trig;

static inline rlx__trig rlx__trig_reduce(float x) {
	float t = __builtin_fmaf(x, 0x1.45f306p-1f, RLX__SHIFT);
	float k = t - RLX__SHIFT;
	float r = __builtin_fmaf(k, -0x1.921fb6p+0f, x);
	r = __builtin_fmaf(k, 0x1.777a5cp-25f, r);
	r = __builtin_fmaf(k, 0x1.ee59dap-50f, r);
	r = k == 0.0f ? x : r; /* |x| < π/4 as it is (and -0 stays -0) */
	r = r > 1.0f ? 1.0f : r;
	r = r < -1.0f ? -1.0f : r;
	rlx__trig tr;
	tr.r = r;
	tr.q = rlx__f2u(t) & 3u;
	return tr;
}

/* sin r = r + r³·S(r²), minimax on |r| <= 0.95 (1.8e-8 relative). */
static inline float rlx__sin_poly(float r) {
	float z = r * r;
	float S = -0x1.961b3cp-13f;
	S = __builtin_fmaf(S, z, 0x1.10fbf8p-7f);
	S = __builtin_fmaf(S, z, -0x1.555522p-3f);
	return rlx__copysignf(__builtin_fmaf(r * z, S, r), r);
}

/* cos r = 1 − r²/2 + r⁴·C(r²), minimax on |r| <= 0.95 (8.5e-10
 * relative). */
static inline float rlx__cos_poly(float r) {
	float z = r * r;
	float C = 0x1.9703bap-16f;
	C = __builtin_fmaf(C, z, -0x1.6bffd8p-10f);
	C = __builtin_fmaf(C, z, 0x1.555532p-5f);
	C = __builtin_fmaf(C, z, -0.5f);
	return __builtin_fmaf(C, z, 1.0f);
}

/* The quadrant picks the polynomial and flips the sign bit. */
static inline float rlx_sinf(float x) {
	rlx__trig tr = rlx__trig_reduce(x);
	float s = rlx__sin_poly(tr.r);
	float c = rlx__cos_poly(tr.r);
	float v = (tr.q & 1u) ? c : s;
	return rlx__u2f(rlx__f2u(v) ^ ((tr.q & 2u) << 30));
}

static inline float rlx_cosf(float x) {
	rlx__trig tr = rlx__trig_reduce(x);
	float s = rlx__sin_poly(tr.r);
	float c = rlx__cos_poly(tr.r);
	float v = (tr.q & 1u) ? s : c;
	return rlx__u2f(rlx__f2u(v) ^ (((tr.q + 1u) & 2u) << 30));
}

/* ---- pow ------------------------------------------------------------- */

/* x^y = exp(y·ln|x|), both in double: |x| = 2^k·m (m in [sqrt(2)/2,
 * sqrt(2)), denormals scaled by 2^23 first), ln m = 2·atanh(s) with
 * s = (m−1)/(m+1) (minimax, 3e-14 relative), w = y·(k·ln2 + ln m), and
 * e^w = 2^n·(1 + r + r²·P(r)) (minimax, 1.1e-12), rounded to float once.
 * Then Go's math.Pow special cases, by select. */
static inline float rlx_powf(float x, float y) {
	float ax = rlx__absf(x);
	uint32_t ix = rlx__f2u(ax);
	int sub = ix < 0x00800000u;
	float xs = sub ? ax * 0x1p23f : ax;
	int32_t kadj = sub ? -23 : 0;
	ix = rlx__f2u(xs) + (0x3f800000u - 0x3f3504f3u);
	int32_t k = (int32_t)((ix >> 23) & 0x1ffu) - 0x7f + kadj;
	double m = (double)rlx__u2f((ix & 0x007fffffu) + 0x3f3504f3u);
	double s = (m - 1.0) / (m + 1.0);
	double z = s * s;
	double L = 0x1.91212c22b9ef3p-3;
	L = __builtin_fma(L, z, 0x1.c62a5a0022676p-3);
	L = __builtin_fma(L, z, 0x1.249413e8656a8p-2);
	L = __builtin_fma(L, z, 0x1.999996a52f131p-2);
	L = __builtin_fma(L, z, 0x1.555555561f886p-1);
	double lnm = __builtin_fma(s * z, L, 2.0 * s);
	double dk = (double)k;
	double lnx = __builtin_fma(dk, 0x1.62e42fefa39efp-1, __builtin_fma(dk, 0x1.abc9e3b39803fp-56, lnm));
	double w = (double)y * lnx;
	w = w < -110.0 ? -110.0 : w; /* float32 results are 0 or Inf beyond */
	w = w > 100.0 ? 100.0 : w;
	const double shift = 0x1.8p52;
	double t = __builtin_fma(w, 0x1.71547652b82fep+0, shift);
	double kn = t - shift;
	double r = __builtin_fma(kn, -0x1.62e42fefa39efp-1, w);
	r = __builtin_fma(kn, -0x1.abc9e3b39803fp-56, r);
	double P = 0x1.9e8883a8d513ap-16;
	P = __builtin_fma(P, r, 0x1.a1860706ad3e8p-13);
	P = __builtin_fma(P, r, 0x1.6c18d5133ac56p-10);
	P = __builtin_fma(P, r, 0x1.1110a1f9a68d9p-7);
	P = __builtin_fma(P, r, 0x1.5555541ca5abfp-5);
	P = __builtin_fma(P, r, 0x1.5555557e0b01fp-3);
	P = __builtin_fma(P, r, 0x1.000000005e9aep-1);
	double p = 1.0 + __builtin_fma(r * r, P, r);
	uint64_t scale = (rlx__d2u(t) - rlx__d2u(shift) + 1023u) << 52;
	double sd;
	__builtin_memcpy(&sd, &scale, sizeof sd);
	float mag = (float)(p * sd);

	/* y is an integer (every |y| >= 2^23 is), and odd (only below 2^24). */
	float ay = rlx__absf(y);
	float yr = (ay + 0x1p23f) - 0x1p23f;
	int yint = ay >= 0x1p23f || yr == ay;
	int32_t iy = (int32_t)(ay < 0x1p24f ? ay : 0.0f);
	int yodd = yint && ay < 0x1p24f && (iy & 1);
	int xneg = (rlx__f2u(x) >> 31) != 0;

	float inf = rlx__inff();
	/* |x| = Inf: Inf for y > 0, 0 for y < 0 (Pow(-Inf, y) = Pow(-0, -y)) */
	mag = ax == inf ? (y > 0.0f ? inf : 0.0f) : mag;
	/* x = ±0: Inf for y < 0, 0 for y > 0 */
	mag = ax == 0.0f ? (y < 0.0f ? inf : 0.0f) : mag;
	/* y = ±Inf: 1 for x = -1, else by |x| against 1 */
	mag = (ay == inf && x == -1.0f) ? 1.0f : mag;
	float res = (xneg && yodd) ? -mag : mag;
	/* finite x < 0 with a non-integer y */
	res = (x < 0.0f && ax != inf && !yint) ? rlx__nanf() : res;
	res = (x != x || y != y) ? rlx__nanf() : res;
	res = y == 1.0f ? x : res;
	res = (y == 0.0f || x == 1.0f) ? 1.0f : res;
	return res;
}

/* ---- floor mod ------------------------------------------------------- */

/* Python's a % b: math.Mod(a, b) (exact), then, where the remainder is
 * nonzero and its sign differs from b's, plus b (in double, then rounded,
 * as the float64 definition does). NaN for b = 0, a = ±Inf or a NaN;
 * a (then the fix-up) for b = ±Inf.
 *
 * The remainder is exact: with a = Ma·2^Ea, b = Mb·2^Eb (24-bit integer
 * mantissas, denormals normalized), a mod b = (Ma·2^(Ea−Eb) mod Mb)·2^Eb,
 * and Ma·2^d mod Mb is built 28 bits of d at a time in double, where every
 * product and remainder is an exact integer below 2^53: R <- R·2^s − q·Mb
 * with q = round(R·2^s/Mb), plus Mb when negative. Ea − Eb <= 276, so ten
 * steps cover every pair of floats. */
static inline float rlx_modf_floor(float a, float b) {
	float aa = rlx__absf(a), ab = rlx__absf(b);
	int suba = aa < 0x1p-126f, subb = ab < 0x1p-126f;
	uint32_t ua = rlx__f2u(suba ? aa * 0x1p24f : aa);
	uint32_t ub = rlx__f2u(subb ? ab * 0x1p24f : ab);
	int32_t ea = (int32_t)(ua >> 23) - (suba ? 24 : 0);
	int32_t eb = (int32_t)(ub >> 23) - (subb ? 24 : 0);
	double Ma = (double)(int32_t)((ua & 0x007fffffu) | 0x00800000u);
	double Mb = (double)(int32_t)((ub & 0x007fffffu) | 0x00800000u);
	double invMb = 1.0 / Mb;
	int32_t d = ea - eb;
	const double shift = 0x1.8p52;
	double R = Ma >= Mb ? Ma - Mb : Ma;
	for (int i = 0; i < 10; i++) {
		int32_t sh = d - 28 * i;
		sh = sh < 0 ? 0 : sh;
		sh = sh > 28 ? 28 : sh;
		double P = R * (double)rlx__pow2f(sh);
		double q = (P * invMb + shift) - shift;
		double Rn = __builtin_fma(-q, Mb, P);
		R = Rn < 0.0 ? Rn + Mb : Rn;
	}
	/* b's exponent less 23 (the mantissa is an integer), in [-172, 104] */
	int32_t e = eb - 127 - 23;
	int32_t h = e / 2;
	double rabs = (R * (double)rlx__pow2f(h)) * (double)rlx__pow2f(e - h);
	rabs = aa < ab ? (double)aa : rabs;
	double r = (rlx__f2u(a) >> 31) ? -rabs : rabs;
	r = (r != 0.0 && ((r < 0.0) != (b < 0.0f))) ? r + (double)b : r;
	float res = (float)r;
	res = (b == 0.0f || aa == rlx__inff() || a != a || b != b) ? rlx__nanf() : res;
	return res;
}

#endif /* RLX_MATH_H */
