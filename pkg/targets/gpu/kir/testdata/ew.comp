// rlx kernel ew (GLSL for Vulkan; generated, do not edit)
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) readonly buffer P0 { float v[]; } p0; // x
layout(std430, set = 0, binding = 1) readonly buffer P1 { uint16_t v[]; } p1; // h
layout(std430, set = 0, binding = 2) readonly buffer P2 { uint8_t v[]; } p2; // m
layout(std430, set = 0, binding = 3) readonly buffer P3 { uint8_t v[]; } p3; // q
layout(std430, set = 0, binding = 4) readonly buffer P4 { int64_t v[]; } p4; // l
layout(std430, set = 0, binding = 5) buffer P5 { float v[]; } p5; // y
layout(std430, set = 0, binding = 6) buffer P6 { uint16_t v[]; } p6; // yh
layout(std430, set = 0, binding = 7) buffer P7 { uint8_t v[]; } p7; // ym
layout(std430, set = 0, binding = 8) buffer P8 { uint8_t v[]; } p8; // yq
layout(std430, set = 0, binding = 9) buffer P9 { int64_t v[]; } p9; // yl
void main() {
  for (int i = int(gl_GlobalInvocationID.x); i < 1000; i += 1024) {
    float xv = p0.v[i];
    float hv = ((((uint(p1.v[i]) >> 10u) & 31u) == 31u) ? uintBitsToFloat(((((uint(p1.v[i]) & 32768u) << 16u) | 2139095040u) | ((uint(p1.v[i]) & 1023u) << 13u))) : ((((uint(p1.v[i]) >> 10u) & 31u) == 0u) ? ((((uint(p1.v[i]) & 32768u) << 16u) != 0u) ? (-(float((uint(p1.v[i]) & 1023u)) * 5.9604645e-08)) : (float((uint(p1.v[i]) & 1023u)) * 5.9604645e-08)) : uintBitsToFloat(((((uint(p1.v[i]) & 32768u) << 16u) | ((((uint(p1.v[i]) >> 10u) & 31u) + 112u) << 23u)) | ((uint(p1.v[i]) & 1023u) << 13u)))));
    bool mv = (p2.v[i] != uint8_t(0));
    int qv = int(p3.v[i]);
    int64_t lv = p4.v[i];
    p5.v[i] = (mv ? (xv * hv) : (-xv));
    uint h_1 = floatBitsToUint((xv + hv));
    uint h_2 = ((h_1 >> 23u) & 255u);
    uint h_3 = (h_1 & 8388607u);
    uint h_4 = ((h_1 >> 16u) & 32768u);
    int h_5 = (int(h_2) - 112);
    uint h_6 = (h_3 | 8388608u);
    int h_7 = (14 - h_5);
    int h_8 = ((h_7 > 1) ? h_7 : 1);
    uint h_9 = uint(((h_8 < 31) ? h_8 : 31));
    uint h_10 = (h_6 >> h_9);
    uint h_11 = (h_6 & ((1u << h_9) - 1u));
    uint h_12 = (1u << (h_9 - 1u));
    uint h_13 = ((uint(((h_5 > 0) ? h_5 : 0)) << 10u) | (h_3 >> 13u));
    uint h_14 = (h_3 & 8191u);
    p6.v[i] = uint16_t(((h_2 == 255u) ? ((h_3 != 0u) ? (h_4 | 32256u) : (h_4 | 31744u)) : ((h_5 >= 31) ? (h_4 | 31744u) : ((h_5 <= 0) ? ((h_5 < (-10)) ? h_4 : (h_4 | (h_10 + (((h_11 > h_12) || ((h_11 == h_12) && ((h_10 & 1u) == 1u))) ? 1u : 0u)))) : (h_4 | (h_13 + (((h_14 > 4096u) || ((h_14 == 4096u) && ((h_13 & 1u) == 1u))) ? 1u : 0u)))))));
    p7.v[i] = uint8_t((((!mv) || (xv > 0.0))) ? 1 : 0);
    p8.v[i] = uint8_t(((qv + 1) & 255));
    p9.v[i] = (((lv * 2l) + int64_t(qv)) + (-3l));
  }
}
