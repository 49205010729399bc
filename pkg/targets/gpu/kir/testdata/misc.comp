// rlx kernel misc (GLSL for Vulkan; generated, do not edit)
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;
layout(std430, set = 0, binding = 0) readonly buffer P0 { float v[]; } p0; // x
layout(std430, set = 0, binding = 1) readonly buffer P1 { int v[]; } p1; // n
layout(std430, set = 0, binding = 2) buffer P2 { float v[]; } p2; // out
layout(std430, set = 0, binding = 3) buffer P3 { int v[]; } p3; // outi
layout(std430, set = 0, binding = 4) buffer P4 { uint v[]; } p4; // outu
layout(std430, set = 0, binding = 5) buffer P5 { int64_t v[]; } p5; // outl
shared uint s0[4]; // flags
void main() {
  int g = (((int(gl_WorkGroupID.x) * 64) + (int(gl_LocalInvocationID.z) * 16)) + ((int(gl_LocalInvocationID.y) * 4) + int(gl_LocalInvocationID.x)));
  if ((int(gl_LocalInvocationID.y) == 0) && (int(gl_LocalInvocationID.z) == 0)) {
    s0[int(gl_LocalInvocationID.x)] = (~0u);
  }
  memoryBarrierShared(); barrier();
  if (g >= p1.v[0]) {
  } else {
    float v = p0.v[g];
    uint bits = floatBitsToUint(v);
    float special = ((isnan(v) || isinf(v)) ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7f800000u));
    float consts = (((-0.0) + (-1.5)) + (1e-45 + 3.4028235e+38));
    float nanv = ((v < 0.0) ? uintBitsToFloat(0x7fc00000u) : 1.25e-07);
    p2.v[g] = ((((((((((((((exp(v) + log(v)) + sqrt(v)) + sin(v)) + cos(v)) + floor(v)) + ceil(v)) + trunc(v)) + roundEven(v)) + abs(v)) + exp2(v)) + log2(v)) + fma(v, 2.0, (-0.5))) + special) + (consts + nanv));
    int acc = 0;
    for (int j = 0; j < p1.v[0]; j += 1) {
      if (j > 3) {
        break;
      }
      int h_1 = (j * (-7));
      acc = (acc + (h_1 - ((h_1 / 3) * 3)));
    }
    p3.v[g] = ((acc + (int(v) / (-2147483647 - 1))) + (int((bits >> 3u)) + ((-int((bits >> 1u))) >> 2)));
    p4.v[g] = (((bits & s0[0]) | 4294967295u) ^ (uint(int(v)) + uint(abs(v))));
    int64_t iv = int64_t(g);
    int64_t h_2 = ((iv * (-5l)) - int64_t(v));
    int64_t h_3 = (iv << 3l);
    int64_t h_4 = (~iv);
    int64_t h_5 = ((h_4 < 1099511627776l) ? h_4 : 1099511627776l);
    p5.v[g] = ((iv != (-9223372036854775807l - 1l)) ? (h_2 - ((h_2 / 9223372036854775807l) * 9223372036854775807l)) : ((h_3 > h_5) ? h_3 : h_5));
  }
}
