// rlx kernel rowsum (GLSL for Vulkan; generated, do not edit)
#version 450
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) readonly buffer P0 { float v[]; } p0; // x
layout(std430, set = 0, binding = 1) buffer P1 { float v[]; } p1; // out
shared float s0[256]; // partial
void main() {
  int tid = int(gl_LocalInvocationID.x);
  int row = int(gl_WorkGroupID.x);
  float acc = 0.0;
  for (int j = tid; j < 1000; j += 256) {
    acc = (acc + p0.v[((row * 1000) + j)]);
  }
  s0[tid] = acc;
  memoryBarrierShared(); barrier();
  for (int k = 0; k < 8; k += 1) {
    int s = (128 >> k);
    if (tid < s) {
      s0[tid] = (s0[tid] + s0[(tid + s)]);
    }
    memoryBarrierShared(); barrier();
  }
  if (tid == 0) {
    p1.v[row] = s0[0];
  }
}
