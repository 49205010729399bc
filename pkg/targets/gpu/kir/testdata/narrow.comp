// rlx kernel narrow (GLSL for Vulkan; generated, do not edit)
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) readonly buffer P0 { int8_t v[]; } p0; // a
layout(std430, set = 0, binding = 1) readonly buffer P1 { int16_t v[]; } p1; // b
layout(std430, set = 0, binding = 2) readonly buffer P2 { uint16_t v[]; } p2; // h
layout(std430, set = 0, binding = 3) buffer P3 { int8_t v[]; } p3; // ya
layout(std430, set = 0, binding = 4) buffer P4 { int16_t v[]; } p4; // yb
layout(std430, set = 0, binding = 5) buffer P5 { uint16_t v[]; } p5; // yh
void main() {
  if ((int(gl_GlobalInvocationID.x) >= 16) || (int(gl_GlobalInvocationID.y) >= 16)) {
  } else {
    int idx = ((int(gl_GlobalInvocationID.y) * 16) + int(gl_GlobalInvocationID.x));
    int a = int(p0.v[idx]);
    int b = int(p1.v[idx]);
    float h = uintBitsToFloat((uint(p2.v[idx]) << 16u));
    int h_1 = (((b == 0) || (b == (-1))) ? 1 : b);
    int h_2 = (a - ((a / h_1) * h_1));
    p3.v[idx] = int8_t((int((uint(((b == 0) ? 0 : (((h_2 != 0) && ((h_2 < 0) != (b < 0))) ? (h_2 + b) : h_2))) << 24u)) >> 24));
    p4.v[idx] = int16_t((int((uint((((a == 0) ? 0 : ((a == (-1)) ? ((b == (-2147483647 - 1)) ? b : (-b)) : (b / (((a == 0) || (a == (-1))) ? 1 : a)))) - 40000)) << 16u)) >> 16));
    float h_3 = float(a);
    bool h_4 = (floor(h_3) == h_3);
    bool h_5 = ((h_4 && (abs(h_3) < 1.6777216e+07)) && ((h_3 - (2.0 * floor((h_3 * 0.5)))) != 0.0));
    float h_6 = exp2((h_3 * log2(abs(h))));
    float h_7 = abs(h);
    float h_8 = (h * h);
    float h_9 = (1.0 / (1.0 + (0.3275911 * h_7)));
    float h_10 = (1.0 - ((h_9 * (0.2548296 + (h_9 * ((-0.28449672) + (h_9 * (1.4214138 + (h_9 * ((-1.4531521) + (h_9 * 1.0614054))))))))) * exp((-(h_7 * h_7)))));
    uint h_11 = floatBitsToUint((((h_3 == 0.0) ? 1.0 : (((h == 1.0) || ((h == (-1.0)) && isinf(h_3))) ? 1.0 : ((isnan(h) || isnan(h_3)) ? uintBitsToFloat(0x7fc00000u) : ((h == 0.0) ? ((h_3 < 0.0) ? (h_5 ? (1.0 / h) : uintBitsToFloat(0x7f800000u)) : ((h_3 > 0.0) ? (h_5 ? h : 0.0) : h_3)) : ((h < 0.0) ? ((h_4 || isinf(h)) ? (h_5 ? (-h_6) : h_6) : uintBitsToFloat(0x7fc00000u)) : h_6))))) + ((h_7 < 1.0) ? (h * (1.1283792 + (h_8 * ((-0.37612638) + (h_8 * (0.11283792 + (h_8 * ((-0.026866172) + (h_8 * (0.005223978 + (h_8 * ((-0.0008548327) + (h_8 * (0.000120553326 + (h_8 * ((-1.492565e-05) + (h_8 * (1.6462114e-06 + (h_8 * ((-1.6365844e-07) + (h_8 * 1.4807193e-08))))))))))))))))))))) : ((h < 0.0) ? (-h_10) : h_10))));
    p5.v[idx] = uint16_t((((h_11 & 2147483647u) > 2139095040u) ? ((h_11 >> 16u) | 64u) : (((h_11 + 32767u) + ((h_11 >> 16u) & 1u)) >> 16u)));
  }
}
