package tuning

// Compile-time rules: the CPU backend's capabilities (pkg/targets) read
// these when specialize's decision passes ask whether a convolution runs
// packed or channels last. Measurements: docs/perf/scheduling.md.

// Conv1x1PackedMaxHW is the largest plane (H·W) on which a 1x1
// convolution runs as the transposed product outᵀ = xᵀ·Wᵀ with Wᵀ
// packed at build time (conv1x1_packed). On a small plane the NCHW
// product's columns are the plane's positions, too few to fill the
// micro-kernel's column tiles, while the transposed product tiles over
// the output channels instead. Once the plane alone makes full tiles the
// plain product is the faster one, so the rule stops there: the bound
// takes a 7x7 plane (MobileNet's last stage) and leaves 14x14 out.
const Conv1x1PackedMaxHW = 100

// ChannelsLastMaxPlane is the largest input plane (H·W) of a convolution
// that runs channels last (a stretch of 1x1 and depthwise convolutions
// whose values are stored NHWC). On small planes NCHW rows are too short
// for full vectors in a depthwise convolution and too narrow for full
// column tiles in a 1x1 one; channels last, both run along the channels.
// The bound takes MobileNet's 28x28 stage, where the depthwise layers
// gain far more than the stretch's extra relayout costs, and leaves the
// larger planes, whose NCHW rows are long enough, in NCHW.
const ChannelsLastMaxPlane = 28 * 28
