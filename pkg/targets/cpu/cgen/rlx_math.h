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
 * Accuracy, as measured by pkg/targets/cpu/cgen/mathh_test.go against Go's
 * float64 math rounded to float32, over dense grids, every 4099th float32
 * bit pattern (denormals, huge values, Inf and NaN included) and listed
 * special values. Errors are in float32 ulps of the float64 result
 * (denormal results in units of 2^-149):
 *
 *     rlx_expf          1.01 ulp
 *     rlx_logf          0.77 ulp
 *     rlx_tanhf         1.35 ulp
 *     rlx_sigmoidf      0.98 ulp
 *     rlx_siluf         1.07 ulp
 *     rlx_erff          1.00 ulp
 *     rlx_geluf         1.03 ulp (the negative tail too: x·erfc, not 1 + erf)
 *     rlx_gelu_tanhf    1.02 ulp (likewise: x·sigmoid(2u), not 1 + tanh)
 *     rlx_sinf          1.42 ulp, |x| < 2^47 (see below)
 *     rlx_cosf          1.42 ulp, |x| < 2^47
 *     rlx_softsignf     1.50 ulp
 *     rlx_powf          0.50 ulp (correctly rounded on every input tested)
 *     rlx_modf_floor    exact (bit for bit, signed zeros included)
 *
 * exp, log, tanh, softsign, sin and cos compute in float (sin and cos
 * reduce the argument in double); sigmoid, silu, erf, gelu, gelu_tanh, pow
 * and modf_floor finish in double and round once, so parts of their
 * loops run at half the vector width.
 *
 * Special values follow the float64 formula each op is defined by in
 * pkg/lir/ew.go: NaN in gives NaN out; exp(+Inf) = +Inf, exp(-Inf) = 0;
 * log(0) = -Inf, log(x < 0) = NaN; tanh and erf keep the sign of zero and
 * saturate to ±1; sigmoid(-Inf) = 0; silu(-Inf), gelu(-Inf),
 * gelu_tanh(-Inf) and softsign(±Inf) are NaN (Inf times 0, or Inf/Inf, in
 * the formula); pow follows Go's math.Pow special cases; modf_floor is
 * math.Mod followed by Python's sign fix-up (NaN for b = 0 or a = ±Inf).
 * Results that underflow come out as correctly scaled denormals.
 *
 * sin and cos reduce the argument in double precision (k = round(x·2/π),
 * r = x − k·π/2 with π/2 in three parts, using FMA): the bounds above hold
 * for |x| < 2^47 ≈ 1.4e14, zeros of sin and cos included. Beyond that the
 * reduction loses its meaning: the result is finite and in [-1, 1], but not
 * sin(x). ±Inf gives NaN.
 *
 * Do not compile it with -ffast-math (or -fassociative-math): the
 * rounding tricks ((x + 1.5·2^23) − 1.5·2^23 and the like) and the
 * special values need IEEE arithmetic as written.
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

/* v·2^n with a single rounding, for n in [-252, 254] and v·2^(n/2) normal:
 * the first product is exact, the second rounds once (to a denormal, or to
 * Inf, where the result is one). */
static inline float rlx__ldexpf(float v, int32_t n) {
	int32_t h = n / 2;
	return (v * rlx__pow2f(h)) * rlx__pow2f(n - h);
}

/* ---- exp core -------------------------------------------------------- */

/* e^x = (1 + q)·2^n, q in [-0.30, 0.42]. */
typedef struct {
	float q;
	int32_t n;
} rlx__expparts;

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

/* Clamps x to [-120, 89] (beyond, every float32 e^x is 0 or +Inf; callers
 * that multiply the result by something large handle their own tails).
 * k = round(x/ln2) by the 1.5·2^23 trick; r = x − k·ln2 with ln2 in two
 * parts, the first product exact in the FMA. NaN gives q = NaN. */
static inline rlx__expparts rlx__exp_parts(float x) {
	x = x < -120.0f ? -120.0f : x;
	x = x > 89.0f ? 89.0f : x;
	const float shift = 0x1.8p23f;
	float t = __builtin_fmaf(x, 0x1.715476p+0f, shift);
	float k = t - shift;
	float r = __builtin_fmaf(k, -0x1.62e430p-1f, x);
	r = __builtin_fmaf(k, 0x1.05c610p-29f, r);
	rlx__expparts e;
	e.q = rlx__expm1_poly(r);
	e.n = (int32_t)(rlx__f2u(t) - rlx__f2u(shift));
	return e;
}

/* The same for a double argument: the reduction is done in double (so w
 * may carry more than float precision, e.g. -x² exactly), the polynomial
 * in float. w is clamped to [-120, 89]. */
static inline rlx__expparts rlx__exp_parts_d(double w) {
	w = w < -120.0 ? -120.0 : w;
	w = w > 89.0 ? 89.0 : w;
	const double shift = 0x1.8p52;
	double t = __builtin_fma(w, 0x1.71547652b82fep+0, shift);
	double k = t - shift;
	double r = __builtin_fma(k, -0x1.62e42fefa39efp-1, w);
	r = __builtin_fma(k, -0x1.abc9e3b39803fp-56, r);
	rlx__expparts e;
	e.q = rlx__expm1_poly((float)r);
	e.n = (int32_t)(uint32_t)rlx__d2u(t); /* k, from the low mantissa bits */
	return e;
}

/* (1 + q)·2^n as a double, exactly (n >= -1022): the functions below
 * finish in double and round to float once, which also rounds a denormal
 * result correctly. */
static inline double rlx__exp_dbl(rlx__expparts e) {
	uint64_t b = ((uint64_t)(int64_t)e.n + 1023u) << 52;
	double s;
	__builtin_memcpy(&s, &b, sizeof s);
	return (1.0 + (double)e.q) * s;
}

/* ---- exp, log -------------------------------------------------------- */

static inline float rlx_expf(float x) {
	rlx__expparts e = rlx__exp_parts(x);
	return rlx__ldexpf(1.0f + e.q, e.n);
}

/* x = 2^k·m, m in [sqrt(2)/2, sqrt(2)), f = m − 1, s = f/(2+f):
 * log(1+f) = f − f²/2 + s·(f²/2 + R(s²)) (the fdlibm scheme; R minimax,
 * 6.6e-11 relative to log(1+f)). Denormals are scaled by 2^23 first. */
static inline float rlx_logf(float x) {
	uint32_t ix = rlx__f2u(x);
	int sub = ix < 0x00800000u; /* +0 or a positive denormal */
	float xs = sub ? x * 0x1p23f : x;
	int32_t kadj = sub ? -23 : 0;
	ix = rlx__f2u(xs) + (0x3f800000u - 0x3f3504f3u);
	int32_t k = (int32_t)((ix >> 23) & 0x1ffu) - 0x7f + kadj;
	ix = (ix & 0x007fffffu) + 0x3f3504f3u;
	float f = rlx__u2f(ix) - 1.0f;
	float s = f / (2.0f + f);
	float z = s * s;
	float w = z * z;
	float t1 = w * __builtin_fmaf(w, 0x1.fd62fcp-3f, 0x1.999cf0p-2f);
	float t2 = z * __builtin_fmaf(w, 0x1.238c14p-2f, 0x1.555554p-1f);
	float R = t2 + t1;
	float hfsq = 0.5f * f * f;
	float dk = (float)k;
	float lo = __builtin_fmaf(dk, -0x1.05c610p-29f, s * (hfsq + R));
	float r = __builtin_fmaf(dk, 0x1.62e430p-1f, (lo - hfsq) + f);
	r = x == 0.0f ? -rlx__inff() : r;
	r = x < 0.0f ? rlx__nanf() : r;
	r = x == rlx__inff() ? x : r;
	return x != x ? x : r;
}

/* ---- tanh, sigmoid, silu, softsign ----------------------------------- */

/* |x| < atanh(1/2): x + x³·P(x²), minimax (1.2e-10 relative);
 * beyond: 1 − 2/(e^{2|x|} + 1), with the sign of x. */
static inline float rlx_tanhf(float x) {
	float a = rlx__absf(x);
	float z = x * x;
	float P = 0x1.19292ep-9f;
	P = __builtin_fmaf(P, z, -0x1.0c81a4p-7f);
	P = __builtin_fmaf(P, z, 0x1.63b820p-6f);
	P = __builtin_fmaf(P, z, -0x1.b9f392p-5f);
	P = __builtin_fmaf(P, z, 0x1.111082p-3f);
	P = __builtin_fmaf(P, z, -0x1.555554p-2f);
	float small = rlx__copysignf(__builtin_fmaf(x * z, P, x), x);
	float ac = a > 9.1f ? 9.1f : a; /* tanh is 1 in float32 from 9.02 on */
	float e = rlx_expf(2.0f * ac);
	float big = rlx__copysignf(1.0f - 2.0f / (e + 1.0f), x);
	return a < 0x1.193ea8p-1f ? small : big; /* 0.5493062 = atanh(1/2) */
}

/* e = e^-|x| in double; x >= 0: 1/(1+e); x < 0: e/(1+e); rounded to
 * float once. */
static inline float rlx_sigmoidf(float x) {
	double e = rlx__exp_dbl(rlx__exp_parts(-rlx__absf(x)));
	double num = x >= 0.0f ? 1.0 : e;
	return (float)(num / (1.0 + e));
}

/* x·sigmoid(x), the same way; below -120 it is -0 (x/(1+e^-x) in float64
 * underflows there too), and -Inf gives NaN as the formula does. */
static inline float rlx_siluf(float x) {
	double xd = x;
	double e = rlx__exp_dbl(rlx__exp_parts(-rlx__absf(x)));
	double num = x >= 0.0f ? xd : xd * e;
	float r = (float)(num / (1.0 + e));
	r = x < -120.0f ? -0.0f : r;
	return x == -rlx__inff() ? rlx__nanf() : r;
}

static inline float rlx_softsignf(float x) { return x / (1.0f + rlx__absf(x)); }

/* ---- erf, gelu ------------------------------------------------------- */

/* erfc(a) for a in [0, 10.5], in double: with t = 3/(3+a),
 * erfc(a) = t·exp(Q(t) − a²), Q a degree-11 minimax polynomial in double
 * (4.9e-10 absolute). a2 = a², exactly (the caller has it in double). */
static inline double rlx__erfc(double a, double a2) {
	double t = 3.0 / (3.0 + a);
	/* Estrin's scheme: a shorter dependency chain than Horner's */
	double t2 = t * t, t4 = t2 * t2;
	double c01 = __builtin_fma(0x1.00a092018a4dap+0, t, -0x1.abcb47b2e909bp+0);
	double c23 = __builtin_fma(0x1.ad9d9bf42c67cp-2, t, 0x1.a9c23b929a4f8p-2);
	double c45 = __builtin_fma(0x1.608a4a66a082ep+1, t, -0x1.9830d328e438bp-1);
	double c67 = __builtin_fma(0x1.1d91d1834d07bp+3, t, -0x1.7e7c1e066229ep+2);
	double c89 = __builtin_fma(0x1.811ae17a3579dp+2, t, -0x1.28062df014e8ap+3);
	double cab = __builtin_fma(0x1.51af5488510bcp-2, t, -0x1.1576b57b2ed55p+1);
	double c03 = __builtin_fma(c23, t2, c01);
	double c47 = __builtin_fma(c67, t2, c45);
	double c8b = __builtin_fma(cab, t2, c89);
	double Q = __builtin_fma(__builtin_fma(c8b, t4, c47), t4, c03);
	return t * rlx__exp_dbl(rlx__exp_parts_d(Q - a2));
}

/* |x| < 0.875: x·P(x²) (minimax, 3.7e-10 relative; 2/sqrt(pi) in two
 * parts); beyond: 1 − erfc(|x|) with the sign of x (erfc from above, |x|
 * clamped at 4, where erf is 1 in float32). */
static inline float rlx_erff(float x) {
	float a = rlx__absf(x);
	float z = x * x;
	float P = 0x1.6214a0p-14f;
	P = __builtin_fmaf(P, z, -0x1.abd6f6p-11f);
	P = __builtin_fmaf(P, z, 0x1.54f65ep-8f);
	P = __builtin_fmaf(P, z, -0x1.b81376p-6f);
	P = __builtin_fmaf(P, z, 0x1.ce2e46p-4f);
	P = __builtin_fmaf(P, z, -0x1.812744p-2f);
	P = __builtin_fmaf(P, z, -0x1.f9a49ep-25f);
	float small = rlx__copysignf(__builtin_fmaf(x, 0x1.20dd76p+0f, x * P), x);
	double ad = a > 4.0f ? 4.0f : a;
	float big = rlx__copysignf((float)(1.0 - rlx__erfc(ad, ad * ad)), x);
	return a < 0.875f ? small : big;
}

/* 0.5·x·(1 + erf(x/sqrt2)), written as x·(1 − erfc(a)/2) for x >= 0 and
 * x·erfc(a)/2 for x < 0 (a = |x|/sqrt2), so the negative tail keeps its
 * relative accuracy down to the denormals; in double, rounded once.
 * a² = x²/2 is exact in double. Below x = -14.85 the result is -0 (the
 * formula underflows), -Inf gives NaN as the formula does. */
static inline float rlx_geluf(float x) {
	double xd = x;
	double a = __builtin_fabs(xd) * 0x1.6a09e667f3bcdp-1;
	double a2 = 0.5 * xd * xd;
	a = a > 10.5 ? 10.5 : a;
	a2 = a2 > 110.25 ? 110.25 : a2;
	double h = 0.5 * rlx__erfc(a, a2);
	float r = (float)(xd * (x >= 0.0f ? 1.0 - h : h));
	r = x < -14.85f ? -0.0f : r;
	return x == -rlx__inff() ? rlx__nanf() : r;
}

/* 0.5·x·(1 + tanh(u)), u = sqrt(2/pi)·(x + 0.044715·x³), written as
 * x·sigmoid(2u) (the same function, without the cancellation of 1 + tanh
 * for x < 0); 2u and the reduction of e^{-|2u|} in double, so the tail
 * keeps its relative accuracy. Where |2u| > 120 and x < 0 the result is
 * -0; -Inf gives NaN. */
static inline float rlx_gelu_tanhf(float x) {
	double xd = x;
	double u2 = 0x1.9884533d43651p+0 * __builtin_fma(0x1.6e4e26d4801f7p-5 * xd, xd * xd, xd);
	double au = __builtin_fabs(u2);
	double e = rlx__exp_dbl(rlx__exp_parts_d(-au));
	double num = x >= 0.0f ? xd : xd * e;
	float r = (float)(num / (1.0 + e));
	r = (x < 0.0f && au > 120.0) ? -0.0f : r;
	return x == -rlx__inff() ? rlx__nanf() : r;
}

/* ---- sin, cos -------------------------------------------------------- */

/* r = x − k·π/2 in double, q = k mod 4. k·C1 is exact inside the FMA
 * and C1 + C2 + C3 carry π/2 to 163 bits, so r is exact to about
 * 2^-53·|r| (near the zeros too). k = round(x·2/π) has an error of up to
 * |x|·2^-53 in x·2/π; below |x| = 2^47 that keeps |r| within the
 * polynomials' range (1.02·π/4). Beyond, r may leave it (and from 2^51·π/2
 * on, k is no longer the nearest integer at all): r is clamped to [-1, 1]
 * so the result stays in [-1, 1]. */
typedef struct {
	float r;
	uint32_t q;
} rlx__trig;

static inline rlx__trig rlx__trig_reduce(float x) {
	double xd = x;
	const double shift = 0x1.8p52;
	double t = __builtin_fma(xd, 0x1.45f306dc9c883p-1, shift);
	double k = t - shift;
	double r = __builtin_fma(k, -0x1.921fb54442d18p+0, xd);
	r = __builtin_fma(k, -0x1.1a62633145c07p-54, r);
	r = __builtin_fma(k, 0x1.f1976b8p-110, r);
	r = k == 0.0 ? xd : r; /* |x| < π/4 as it is (and -0 stays -0) */
	r = r > 1.0 ? 1.0 : r;
	r = r < -1.0 ? -1.0 : r;
	rlx__trig tr;
	tr.r = (float)r;
	tr.q = (uint32_t)rlx__d2u(t) & 3u;
	return tr;
}

/* sin r = r + r³·S(r²), minimax on |r| <= 1.02·π/4 (1.7e-10 relative). */
static inline float rlx__sin_poly(float r) {
	float z = r * r;
	float S = 0x1.7a86b2p-19f;
	S = __builtin_fmaf(S, z, -0x1.a053f2p-13f);
	S = __builtin_fmaf(S, z, 0x1.111170p-7f);
	S = __builtin_fmaf(S, z, -0x1.555556p-3f);
	return rlx__copysignf(__builtin_fmaf(r * z, S, r), r);
}

/* cos r = 1 − r²/2 + r⁴·C(r²), minimax (7.8e-12 relative); 1 − r²/2 with
 * its rounding error recovered. */
static inline float rlx__cos_poly(float r) {
	float z = r * r;
	float C = -0x1.33b0b4p-22f;
	C = __builtin_fmaf(C, z, 0x1.a068c8p-16f);
	C = __builtin_fmaf(C, z, -0x1.6c1756p-10f);
	C = __builtin_fmaf(C, z, 0x1.555556p-5f);
	float h = 0.5f * z;
	float w = 1.0f - h;
	return w + (((1.0f - w) - h) + (z * z) * C);
}

static inline float rlx_sinf(float x) {
	rlx__trig tr = rlx__trig_reduce(x);
	float s = rlx__sin_poly(tr.r);
	float c = rlx__cos_poly(tr.r);
	float v = (tr.q & 1u) ? c : s;
	return (tr.q & 2u) ? -v : v;
}

static inline float rlx_cosf(float x) {
	rlx__trig tr = rlx__trig_reduce(x);
	float s = rlx__sin_poly(tr.r);
	float c = rlx__cos_poly(tr.r);
	float v = (tr.q & 1u) ? -s : c;
	return (tr.q & 2u) ? -v : v;
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
