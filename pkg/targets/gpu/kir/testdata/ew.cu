// rlx kernel ew (CUDA C; generated, do not edit)
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
extern "C" __global__ void ew(const float* p0, const unsigned short* p1, const unsigned char* p2, const unsigned char* p3, const long long* p4, float* p5, unsigned short* p6, unsigned char* p7, unsigned char* p8, long long* p9) {
  for (int i = rlx_global_x(); i < 1000; i += 1024) {
    float xv = p0[i];
    float hv = ((((((unsigned int)(p1[i])) >> 10u) & 31u) == 31u) ? rlx_u2f(((((((unsigned int)(p1[i])) & 32768u) << 16u) | 2139095040u) | ((((unsigned int)(p1[i])) & 1023u) << 13u))) : ((((((unsigned int)(p1[i])) >> 10u) & 31u) == 0u) ? ((((((unsigned int)(p1[i])) & 32768u) << 16u) != 0u) ? (-(((float)((((unsigned int)(p1[i])) & 1023u))) * 5.9604645e-08f)) : (((float)((((unsigned int)(p1[i])) & 1023u))) * 5.9604645e-08f)) : rlx_u2f(((((((unsigned int)(p1[i])) & 32768u) << 16u) | ((((((unsigned int)(p1[i])) >> 10u) & 31u) + 112u) << 23u)) | ((((unsigned int)(p1[i])) & 1023u) << 13u)))));
    bool mv = (p2[i] != ((unsigned char)(0)));
    int qv = ((int)(p3[i]));
    long long lv = p4[i];
    p5[i] = (mv ? (xv * hv) : (-xv));
    unsigned int h_1 = rlx_f2u((xv + hv));
    unsigned int h_2 = ((h_1 >> 23u) & 255u);
    unsigned int h_3 = (h_1 & 8388607u);
    unsigned int h_4 = ((h_1 >> 16u) & 32768u);
    int h_5 = (((int)(h_2)) - 112);
    unsigned int h_6 = (h_3 | 8388608u);
    int h_7 = (14 - h_5);
    int h_8 = ((h_7 > 1) ? h_7 : 1);
    unsigned int h_9 = ((unsigned int)(((h_8 < 31) ? h_8 : 31)));
    unsigned int h_10 = (h_6 >> h_9);
    unsigned int h_11 = (h_6 & ((1u << h_9) - 1u));
    unsigned int h_12 = (1u << (h_9 - 1u));
    unsigned int h_13 = ((((unsigned int)(((h_5 > 0) ? h_5 : 0))) << 10u) | (h_3 >> 13u));
    unsigned int h_14 = (h_3 & 8191u);
    p6[i] = ((unsigned short)(((h_2 == 255u) ? ((h_3 != 0u) ? (h_4 | 32256u) : (h_4 | 31744u)) : ((h_5 >= 31) ? (h_4 | 31744u) : ((h_5 <= 0) ? ((h_5 < (-10)) ? h_4 : (h_4 | (h_10 + (((h_11 > h_12) || ((h_11 == h_12) && ((h_10 & 1u) == 1u))) ? 1u : 0u)))) : (h_4 | (h_13 + (((h_14 > 4096u) || ((h_14 == 4096u) && ((h_13 & 1u) == 1u))) ? 1u : 0u))))))));
    p7[i] = ((unsigned char)((((!mv) || (xv > 0.0f))) ? 1 : 0));
    p8[i] = ((unsigned char)(((qv + 1) & 255)));
    p9[i] = (((lv * 2LL) + ((long long)(qv))) + (-3LL));
  }
}
