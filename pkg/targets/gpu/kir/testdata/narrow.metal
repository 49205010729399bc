// rlx kernel narrow (Metal Shading Language; generated, do not edit)
#include <metal_stdlib>
using namespace metal;
kernel void narrow(const device char* p0 [[buffer(0)]],
    const device short* p1 [[buffer(1)]],
    const device ushort* p2 [[buffer(2)]],
    device char* p3 [[buffer(3)]],
    device short* p4 [[buffer(4)]],
    device ushort* p5 [[buffer(5)]],
    uint3 rlx_global [[thread_position_in_grid]],
    uint3 rlx_local [[thread_position_in_threadgroup]],
    uint3 rlx_group [[threadgroup_position_in_grid]]) {
  if ((int(rlx_global.x) >= 16) || (int(rlx_global.y) >= 16)) {
  } else {
    int idx = ((int(rlx_global.y) * 16) + int(rlx_global.x));
    int a = int(p0[idx]);
    int b = int(p1[idx]);
    float h = as_type<float>((uint(p2[idx]) << 16u));
    int h_1 = (((b == 0) || (b == (-1))) ? 1 : b);
    int h_2 = (a - ((a / h_1) * h_1));
    p3[idx] = char((as_type<int>((as_type<uint>(((b == 0) ? 0 : (((h_2 != 0) && ((h_2 < 0) != (b < 0))) ? (h_2 + b) : h_2))) << 24u)) >> 24));
    p4[idx] = short((as_type<int>((as_type<uint>((((a == 0) ? 0 : ((a == (-1)) ? ((b == (-2147483647 - 1)) ? b : (-b)) : (b / (((a == 0) || (a == (-1))) ? 1 : a)))) - 40000)) << 16u)) >> 16));
    float h_3 = float(a);
    bool h_4 = (floor(h_3) == h_3);
    bool h_5 = ((h_4 && (fabs(h_3) < 1.6777216e+07f)) && ((h_3 - (2.0f * floor((h_3 * 0.5f)))) != 0.0f));
    float h_6 = precise::exp2((h_3 * precise::log2(fabs(h))));
    float h_7 = fabs(h);
    float h_8 = (h * h);
    float h_9 = (1.0f / (1.0f + (0.3275911f * h_7)));
    float h_10 = (1.0f - ((h_9 * (0.2548296f + (h_9 * ((-0.28449672f) + (h_9 * (1.4214138f + (h_9 * ((-1.4531521f) + (h_9 * 1.0614054f))))))))) * precise::exp((-(h_7 * h_7)))));
    uint h_11 = as_type<uint>((((h_3 == 0.0f) ? 1.0f : (((h == 1.0f) || ((h == (-1.0f)) && isinf(h_3))) ? 1.0f : ((isnan(h) || isnan(h_3)) ? as_type<float>(0x7fc00000u) : ((h == 0.0f) ? ((h_3 < 0.0f) ? (h_5 ? (1.0f / h) : as_type<float>(0x7f800000u)) : ((h_3 > 0.0f) ? (h_5 ? h : 0.0f) : h_3)) : ((h < 0.0f) ? ((h_4 || isinf(h)) ? (h_5 ? (-h_6) : h_6) : as_type<float>(0x7fc00000u)) : h_6))))) + ((h_7 < 1.0f) ? (h * (1.1283792f + (h_8 * ((-0.37612638f) + (h_8 * (0.11283792f + (h_8 * ((-0.026866172f) + (h_8 * (0.005223978f + (h_8 * ((-0.0008548327f) + (h_8 * (0.000120553326f + (h_8 * ((-1.492565e-05f) + (h_8 * (1.6462114e-06f + (h_8 * ((-1.6365844e-07f) + (h_8 * 1.4807193e-08f))))))))))))))))))))) : ((h < 0.0f) ? (-h_10) : h_10))));
    p5[idx] = ushort((((h_11 & 2147483647u) > 2139095040u) ? ((h_11 >> 16u) | 64u) : (((h_11 + 32767u) + ((h_11 >> 16u) & 1u)) >> 16u)));
  }
}
