// rlx kernel offsets (GLSL for Vulkan; generated, do not edit)
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) readonly buffer P0 { uint8_t v[]; } p0; // src
layout(std430, set = 0, binding = 1) readonly buffer P1 { int64_t v[]; } p1; // srcl
layout(std430, set = 0, binding = 2) buffer P2 { uint8_t v[]; } p2; // dst
layout(std430, set = 0, binding = 3) buffer P3 { int64_t v[]; } p3; // dstl
layout(push_constant) uniform Offsets { int o0; int o1; int o2; int o3; } rlx_off; // element offset of each parameter
void main() {
  for (int i = int(gl_GlobalInvocationID.x); i < 100; i += 256) {
    p2.v[(rlx_off.o2 + i)] = uint8_t((int(p0.v[(rlx_off.o0 + (i * 2))]) & 255));
    p3.v[(rlx_off.o3 + (i + 7))] = p1.v[(rlx_off.o1 + i)];
  }
}
