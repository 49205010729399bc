// rlx kernel offsets (Metal Shading Language; generated, do not edit)
#include <metal_stdlib>
using namespace metal;
kernel void offsets(const device uchar* p0 [[buffer(0)]],
    const device long* p1 [[buffer(1)]],
    device uchar* p2 [[buffer(2)]],
    device long* p3 [[buffer(3)]],
    constant int* rlx_off [[buffer(4)]],
    uint3 rlx_global [[thread_position_in_grid]],
    uint3 rlx_local [[thread_position_in_threadgroup]],
    uint3 rlx_group [[threadgroup_position_in_grid]]) {
  for (int i = int(rlx_global.x); i < 100; i += 256) {
    p2[(rlx_off[2] + i)] = uchar((int(p0[(rlx_off[0] + (i * 2))]) & 255));
    p3[(rlx_off[3] + (i + 7))] = p1[(rlx_off[1] + i)];
  }
}
