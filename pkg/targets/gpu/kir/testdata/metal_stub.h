// A stand-in for <metal_stdlib>, for compiling kir's MSL prints as C++
// (print_test.go and host_test.go). It defines exactly what the MSL
// printer uses, with Metal's names and types, so that a misspelled
// function, a missing cast or a C++ syntax error fails to compile, and a
// print can run on the host as plain C++ (one invocation after another).
// It models none of Metal's semantics: address spaces are erased,
// attributes are ignored, barriers do nothing, and the math functions are
// the host's. Only the Metal compiler on macOS checks Metal itself.
#pragma once

// Address-space and function qualifiers: erased.
#define kernel
#define device
#define threadgroup
#define constant

namespace metal {
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
static_assert(sizeof(long) == 8, "Metal's long is 64 bits");
static_assert(static_cast<char>(-1) < 0, "Metal's char is signed (compile with -fsigned-char)");

struct uint3 {
  uint x, y, z;
};

// as_type reinterprets the bits of a value of the same size.
template <typename T, typename U>
inline T as_type(U u) {
  static_assert(sizeof(T) == sizeof(U), "as_type between types of different sizes");
  return __builtin_bit_cast(T, u);
}

inline float floor(float x) { return __builtin_floorf(x); }
inline float ceil(float x) { return __builtin_ceilf(x); }
inline float trunc(float x) { return __builtin_truncf(x); }
inline float rint(float x) { return __builtin_rintf(x); }
inline float fabs(float x) { return __builtin_fabsf(x); }
inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline bool isnan(float x) { return __builtin_isnan(x); }
inline bool isinf(float x) { return __builtin_isinf(x); }

namespace precise {
inline float exp(float x) { return __builtin_expf(x); }
inline float exp2(float x) { return __builtin_exp2f(x); }
inline float log(float x) { return __builtin_logf(x); }
inline float log2(float x) { return __builtin_log2f(x); }
inline float sqrt(float x) { return __builtin_sqrtf(x); }
inline float sin(float x) { return __builtin_sinf(x); }
inline float cos(float x) { return __builtin_cosf(x); }
}  // namespace precise

enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
inline void threadgroup_barrier(mem_flags) {}
}  // namespace metal
