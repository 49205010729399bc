// rlx kernel narrow (CUDA C; generated, do not edit)
#ifdef __CUDACC_RTC__
#define RLX_DEV static __device__ __forceinline__
RLX_DEV int rlx_global_x() { return (int)(blockIdx.x * blockDim.x + threadIdx.x); }
RLX_DEV int rlx_global_y() { return (int)(blockIdx.y * blockDim.y + threadIdx.y); }
RLX_DEV int rlx_global_z() { return (int)(blockIdx.z * blockDim.z + threadIdx.z); }
RLX_DEV int rlx_local_x() { return (int)threadIdx.x; }
RLX_DEV int rlx_local_y() { return (int)threadIdx.y; }
RLX_DEV int rlx_local_z() { return (int)threadIdx.z; }
RLX_DEV int rlx_group_x() { return (int)blockIdx.x; }
RLX_DEV int rlx_group_y() { return (int)blockIdx.y; }
RLX_DEV int rlx_group_z() { return (int)blockIdx.z; }
RLX_DEV float rlx_exp(float x) { return expf(x); }
RLX_DEV float rlx_log(float x) { return logf(x); }
RLX_DEV float rlx_exp2(float x) { return exp2f(x); }
RLX_DEV float rlx_log2(float x) { return log2f(x); }
RLX_DEV float rlx_sin(float x) { return sinf(x); }
RLX_DEV float rlx_cos(float x) { return cosf(x); }
RLX_DEV float rlx_sqrt(float x) { return sqrtf(x); }
RLX_DEV float rlx_floor(float x) { return floorf(x); }
RLX_DEV float rlx_ceil(float x) { return ceilf(x); }
RLX_DEV float rlx_trunc(float x) { return truncf(x); }
RLX_DEV float rlx_rint(float x) { return rintf(x); }
RLX_DEV float rlx_abs(float x) { return fabsf(x); }
RLX_DEV float rlx_fma(float a, float b, float c) { return fmaf(a, b, c); }
RLX_DEV float rlx_u2f(unsigned int u) { return __uint_as_float(u); }
RLX_DEV float rlx_i2f(int i) { return __int_as_float(i); }
RLX_DEV unsigned int rlx_f2u(float f) { return __float_as_uint(f); }
RLX_DEV int rlx_f2i(float f) { return __float_as_int(f); }
#define rlx_barrier() __syncthreads()
#else
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define RLX_DEV static __device__ __attribute__((always_inline))
RLX_DEV int rlx_global_x() { return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x(); }
RLX_DEV int rlx_global_y() { return __nvvm_read_ptx_sreg_ctaid_y() * __nvvm_read_ptx_sreg_ntid_y() + __nvvm_read_ptx_sreg_tid_y(); }
RLX_DEV int rlx_global_z() { return __nvvm_read_ptx_sreg_ctaid_z() * __nvvm_read_ptx_sreg_ntid_z() + __nvvm_read_ptx_sreg_tid_z(); }
RLX_DEV int rlx_local_x() { return __nvvm_read_ptx_sreg_tid_x(); }
RLX_DEV int rlx_local_y() { return __nvvm_read_ptx_sreg_tid_y(); }
RLX_DEV int rlx_local_z() { return __nvvm_read_ptx_sreg_tid_z(); }
RLX_DEV int rlx_group_x() { return __nvvm_read_ptx_sreg_ctaid_x(); }
RLX_DEV int rlx_group_y() { return __nvvm_read_ptx_sreg_ctaid_y(); }
RLX_DEV int rlx_group_z() { return __nvvm_read_ptx_sreg_ctaid_z(); }
RLX_DEV float rlx_exp2(float x) { return __nvvm_ex2_approx_f(x); }
RLX_DEV float rlx_log2(float x) { return __nvvm_lg2_approx_f(x); }
RLX_DEV float rlx_exp(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
RLX_DEV float rlx_log(float x) { return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; }
RLX_DEV float rlx_sin(float x) { return __nvvm_sin_approx_f(x); }
RLX_DEV float rlx_cos(float x) { return __nvvm_cos_approx_f(x); }
RLX_DEV float rlx_sqrt(float x) { return __nvvm_sqrt_rn_f(x); }
RLX_DEV float rlx_floor(float x) { return __builtin_floorf(x); }
RLX_DEV float rlx_ceil(float x) { return __builtin_ceilf(x); }
RLX_DEV float rlx_trunc(float x) { return __builtin_truncf(x); }
RLX_DEV float rlx_rint(float x) { return __builtin_rintf(x); }
RLX_DEV float rlx_abs(float x) { return __builtin_fabsf(x); }
RLX_DEV float rlx_fma(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
RLX_DEV float rlx_u2f(unsigned int u) { return __nvvm_bitcast_i2f((int)u); }
RLX_DEV float rlx_i2f(int i) { return __nvvm_bitcast_i2f(i); }
RLX_DEV unsigned int rlx_f2u(float f) { return (unsigned int)__nvvm_bitcast_f2i(f); }
RLX_DEV int rlx_f2i(float f) { return __nvvm_bitcast_f2i(f); }
#define rlx_barrier() __syncthreads()
#endif
RLX_DEV bool rlx_isnan(float x) { return x != x; }
RLX_DEV bool rlx_isinf(float x) { return rlx_abs(x) == rlx_u2f(0x7f800000u); }
extern "C" __global__ void narrow(const signed char* p0, const short* p1, const unsigned short* p2, signed char* p3, short* p4, unsigned short* p5) {
  if ((rlx_global_x() >= 16) || (rlx_global_y() >= 16)) {
  } else {
    int idx = ((rlx_global_y() * 16) + rlx_global_x());
    int a = ((int)(p0[idx]));
    int b = ((int)(p1[idx]));
    float h = rlx_u2f((((unsigned int)(p2[idx])) << 16u));
    int h_1 = (((b == 0) || (b == (-1))) ? 1 : b);
    int h_2 = (a - ((a / h_1) * h_1));
    p3[idx] = ((signed char)((((int)((((unsigned int)(((b == 0) ? 0 : (((h_2 != 0) && ((h_2 < 0) != (b < 0))) ? (h_2 + b) : h_2)))) << 24u))) >> 24)));
    p4[idx] = ((short)((((int)((((unsigned int)((((a == 0) ? 0 : ((a == (-1)) ? ((b == (-2147483647 - 1)) ? b : (-b)) : (b / (((a == 0) || (a == (-1))) ? 1 : a)))) - 40000))) << 16u))) >> 16)));
    float h_3 = ((float)(a));
    bool h_4 = (rlx_floor(h_3) == h_3);
    bool h_5 = ((h_4 && (rlx_abs(h_3) < 1.6777216e+07f)) && ((h_3 - (2.0f * rlx_floor((h_3 * 0.5f)))) != 0.0f));
    float h_6 = rlx_exp2((h_3 * rlx_log2(rlx_abs(h))));
    float h_7 = rlx_abs(h);
    float h_8 = (h * h);
    float h_9 = (1.0f / (1.0f + (0.3275911f * h_7)));
    float h_10 = (1.0f - ((h_9 * (0.2548296f + (h_9 * ((-0.28449672f) + (h_9 * (1.4214138f + (h_9 * ((-1.4531521f) + (h_9 * 1.0614054f))))))))) * rlx_exp((-(h_7 * h_7)))));
    unsigned int h_11 = rlx_f2u((((h_3 == 0.0f) ? 1.0f : (((h == 1.0f) || ((h == (-1.0f)) && rlx_isinf(h_3))) ? 1.0f : ((rlx_isnan(h) || rlx_isnan(h_3)) ? rlx_u2f(0x7fc00000u) : ((h == 0.0f) ? ((h_3 < 0.0f) ? (h_5 ? (1.0f / h) : rlx_u2f(0x7f800000u)) : ((h_3 > 0.0f) ? (h_5 ? h : 0.0f) : h_3)) : ((h < 0.0f) ? ((h_4 || rlx_isinf(h)) ? (h_5 ? (-h_6) : h_6) : rlx_u2f(0x7fc00000u)) : h_6))))) + ((h_7 < 1.0f) ? (h * (1.1283792f + (h_8 * ((-0.37612638f) + (h_8 * (0.11283792f + (h_8 * ((-0.026866172f) + (h_8 * (0.005223978f + (h_8 * ((-0.0008548327f) + (h_8 * (0.000120553326f + (h_8 * ((-1.492565e-05f) + (h_8 * (1.6462114e-06f + (h_8 * ((-1.6365844e-07f) + (h_8 * 1.4807193e-08f))))))))))))))))))))) : ((h < 0.0f) ? (-h_10) : h_10))));
    p5[idx] = ((unsigned short)((((h_11 & 2147483647u) > 2139095040u) ? ((h_11 >> 16u) | 64u) : (((h_11 + 32767u) + ((h_11 >> 16u) & 1u)) >> 16u))));
  }
}
