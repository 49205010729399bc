// rlx kernel misc (Metal Shading Language; generated, do not edit)
#include <metal_stdlib>
using namespace metal;
kernel void misc(const device float* p0 [[buffer(0)]],
    const device int* p1 [[buffer(1)]],
    device float* p2 [[buffer(2)]],
    device int* p3 [[buffer(3)]],
    device uint* p4 [[buffer(4)]],
    device long* p5 [[buffer(5)]],
    uint3 rlx_global [[thread_position_in_grid]],
    uint3 rlx_local [[thread_position_in_threadgroup]],
    uint3 rlx_group [[threadgroup_position_in_grid]]) {
  threadgroup uint s0[4]; // flags
  int g = (((int(rlx_group.x) * 64) + (int(rlx_local.z) * 16)) + ((int(rlx_local.y) * 4) + int(rlx_local.x)));
  if ((int(rlx_local.y) == 0) && (int(rlx_local.z) == 0)) {
    s0[int(rlx_local.x)] = (~0u);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (g >= p1[0]) {
  } else {
    float v = p0[g];
    uint bits = as_type<uint>(v);
    float special = ((isnan(v) || isinf(v)) ? as_type<float>(0xff800000u) : as_type<float>(0x7f800000u));
    float consts = (((-0.0f) + (-1.5f)) + (1e-45f + 3.4028235e+38f));
    float nanv = ((v < 0.0f) ? as_type<float>(0x7fc00000u) : 1.25e-07f);
    p2[g] = ((((((((((((((precise::exp(v) + precise::log(v)) + precise::sqrt(v)) + precise::sin(v)) + precise::cos(v)) + floor(v)) + ceil(v)) + trunc(v)) + rint(v)) + fabs(v)) + precise::exp2(v)) + precise::log2(v)) + fma(v, 2.0f, (-0.5f))) + special) + (consts + nanv));
    int acc = 0;
    for (int j = 0; j < p1[0]; j += 1) {
      if (j > 3) {
        break;
      }
      int h_1 = (j * (-7));
      acc = (acc + (h_1 - ((h_1 / 3) * 3)));
    }
    p3[g] = ((acc + (int(v) / (-2147483647 - 1))) + (as_type<int>((bits >> 3u)) + ((-as_type<int>((bits >> 1u))) >> 2)));
    p4[g] = (((bits & s0[0]) | 4294967295u) ^ (as_type<uint>(int(v)) + uint(fabs(v))));
    long iv = long(g);
    long h_2 = ((iv * (-5L)) - long(v));
    long h_3 = (iv << 3L);
    long h_4 = (~iv);
    long h_5 = ((h_4 < 1099511627776L) ? h_4 : 1099511627776L);
    p5[g] = ((iv != (-9223372036854775807L - 1L)) ? (h_2 - ((h_2 / 9223372036854775807L) * 9223372036854775807L)) : ((h_3 > h_5) ? h_3 : h_5));
  }
}
