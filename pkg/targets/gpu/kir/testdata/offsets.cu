// rlx kernel offsets (CUDA C; generated, do not edit)
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
extern "C" __global__ void offsets(const unsigned char* p0, const long long* p1, unsigned char* p2, long long* p3, int rlx_o0, int rlx_o1, int rlx_o2, int rlx_o3) {
  for (int i = rlx_global_x(); i < 100; i += 256) {
    p2[(rlx_o2 + i)] = ((unsigned char)((((int)(p0[(rlx_o0 + (i * 2))])) & 255)));
    p3[(rlx_o3 + (i + 7))] = p1[(rlx_o1 + i)];
  }
}
