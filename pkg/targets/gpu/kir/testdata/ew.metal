// rlx kernel ew (Metal Shading Language; generated, do not edit)
#include <metal_stdlib>
using namespace metal;
kernel void ew(const device float* p0 [[buffer(0)]],
    const device ushort* p1 [[buffer(1)]],
    const device uchar* p2 [[buffer(2)]],
    const device uchar* p3 [[buffer(3)]],
    const device long* p4 [[buffer(4)]],
    device float* p5 [[buffer(5)]],
    device ushort* p6 [[buffer(6)]],
    device uchar* p7 [[buffer(7)]],
    device uchar* p8 [[buffer(8)]],
    device long* p9 [[buffer(9)]],
    uint3 rlx_global [[thread_position_in_grid]],
    uint3 rlx_local [[thread_position_in_threadgroup]],
    uint3 rlx_group [[threadgroup_position_in_grid]]) {
  for (int i = int(rlx_global.x); i < 1000; i += 1024) {
    float xv = p0[i];
    float hv = ((((uint(p1[i]) >> 10u) & 31u) == 31u) ? as_type<float>(((((uint(p1[i]) & 32768u) << 16u) | 2139095040u) | ((uint(p1[i]) & 1023u) << 13u))) : ((((uint(p1[i]) >> 10u) & 31u) == 0u) ? ((((uint(p1[i]) & 32768u) << 16u) != 0u) ? (-(float((uint(p1[i]) & 1023u)) * 5.9604645e-08f)) : (float((uint(p1[i]) & 1023u)) * 5.9604645e-08f)) : as_type<float>(((((uint(p1[i]) & 32768u) << 16u) | ((((uint(p1[i]) >> 10u) & 31u) + 112u) << 23u)) | ((uint(p1[i]) & 1023u) << 13u)))));
    bool mv = (p2[i] != uchar(0));
    int qv = int(p3[i]);
    long lv = p4[i];
    p5[i] = (mv ? (xv * hv) : (-xv));
    uint h_1 = as_type<uint>((xv + hv));
    uint h_2 = ((h_1 >> 23u) & 255u);
    uint h_3 = (h_1 & 8388607u);
    uint h_4 = ((h_1 >> 16u) & 32768u);
    int h_5 = (as_type<int>(h_2) - 112);
    uint h_6 = (h_3 | 8388608u);
    int h_7 = (14 - h_5);
    int h_8 = ((h_7 > 1) ? h_7 : 1);
    uint h_9 = as_type<uint>(((h_8 < 31) ? h_8 : 31));
    uint h_10 = (h_6 >> h_9);
    uint h_11 = (h_6 & ((1u << h_9) - 1u));
    uint h_12 = (1u << (h_9 - 1u));
    uint h_13 = ((as_type<uint>(((h_5 > 0) ? h_5 : 0)) << 10u) | (h_3 >> 13u));
    uint h_14 = (h_3 & 8191u);
    p6[i] = ushort(((h_2 == 255u) ? ((h_3 != 0u) ? (h_4 | 32256u) : (h_4 | 31744u)) : ((h_5 >= 31) ? (h_4 | 31744u) : ((h_5 <= 0) ? ((h_5 < (-10)) ? h_4 : (h_4 | (h_10 + (((h_11 > h_12) || ((h_11 == h_12) && ((h_10 & 1u) == 1u))) ? 1u : 0u)))) : (h_4 | (h_13 + (((h_14 > 4096u) || ((h_14 == 4096u) && ((h_13 & 1u) == 1u))) ? 1u : 0u)))))));
    p7[i] = uchar((((!mv) || (xv > 0.0f))) ? 1 : 0);
    p8[i] = uchar(((qv + 1) & 255));
    p9[i] = (((lv * 2L) + long(qv)) + (-3L));
  }
}
