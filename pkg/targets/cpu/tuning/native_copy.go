package tuning

// Native transposes: which strided copies of 4-byte elements the cpu
// target compiles to C (pkg/targets/cpu/cgen, copy.go) instead of
// running the runtime's tiled Go loop (pkg/targets/cpu/kernels/data).

// NativeTranspose reports whether generated code runs a transposing copy
// (one dim contiguous in the source, another in the destination) whose
// two tile dims have lengths la (along the source's contiguous dim) and
// lb (the destination's): every one whose dims reach a 4x4 tile.
//
// The runtime moves one element at a time through 8x8 tiles, a bounds
// check and an index update each; the generated code loads whole tile
// rows as vectors, transposes them in registers with shuffles (16x16 at
// x86-64-v4, 8x8 at x86-64-v3, 4x4 on NEON) and stores whole rows. On
// BenchmarkTranspose (cgen, one thread, Zen 4) it ran 8-10x the runtime
// at x86-64-v4 (the sweep's 8x12x128x64 swap of the last two axes, NCHW
// to NHWC of 64x112x112, 96x12x77), about as fast as copy() of the same
// bytes, and a 1024x1024 transpose 5x (v3 3x, the 4x4 fallback 1.7x);
// even a 192-element copy ran 2x faster with the call through purego.
// docs/perf/native.md has the times. Shorter dims stay on the runtime,
// which leaves them untiled too.
func NativeTranspose(la, lb int64) bool {
	return la >= 4 && lb >= 4
}

// NativeInterleave reports whether generated code runs a copy that
// weaves two source rows of la elements into one destination row (the
// destination's contiguous dim of length 2, which the transposing tiles
// need 4 of): rows of 8 or more, where the vectorized loop has whole
// vectors to shuffle. ConvTranspose of stride 2 puts its phases in
// place so; the runtime's kernel moves them one element at a time.
func NativeInterleave(la int64) bool { return la >= 8 }

// NativeDeinterleave reports whether generated code runs a copy that
// takes every step-th element of source rows into destination rows of lb
// elements (no dim contiguous in the source, which the transposing tiles
// need): a step of 2 (a stride-2 1x1 convolution's subsample,
// SubsampleStrided1x1) and rows of 8 or more, where clang's loop loads
// whole source vectors and shuffles their even lanes; the runtime's loop
// moves one element at a time.
func NativeDeinterleave(step, lb int64) bool { return step == 2 && lb >= 8 }

// NativeCopyGrain is the fewest elements of a native transpose that a
// worker takes as one call of its function: a copy moves an element in a
// fraction of what an elementwise region computes one in, so one call
// through purego needs more of them than NativeEwGrain to stay near 1%.
const NativeCopyGrain = 1 << 16
