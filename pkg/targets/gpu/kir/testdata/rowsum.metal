// rlx kernel rowsum (Metal Shading Language; generated, do not edit)
#include <metal_stdlib>
using namespace metal;
kernel void rowsum(const device float* p0 [[buffer(0)]],
    device float* p1 [[buffer(1)]],
    uint3 rlx_global [[thread_position_in_grid]],
    uint3 rlx_local [[thread_position_in_threadgroup]],
    uint3 rlx_group [[threadgroup_position_in_grid]]) {
  threadgroup float s0[256]; // partial
  int tid = int(rlx_local.x);
  int row = int(rlx_group.x);
  float acc = 0.0f;
  for (int j = tid; j < 1000; j += 256) {
    acc = (acc + p0[((row * 1000) + j)]);
  }
  s0[tid] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (int k = 0; k < 8; k += 1) {
    int s = (128 >> k);
    if (tid < s) {
      s0[tid] = (s0[tid] + s0[(tid + s)]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (tid == 0) {
    p1[row] = s0[0];
  }
}
