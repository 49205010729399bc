package tuning

// NativePoolGrain is the fewest window cells (outputs times kernel
// cells) a worker takes as one call of a pool's native function, which
// splits its range by output rows. A cell costs a fraction of an
// elementwise element (a load and a compare or add, 8 or 16 lanes at a
// time), so a chunk needs more of them than NativeEwGrain's elements to
// keep the purego call near 1%; 64K cells is still 27 chunks of
// ResNet-18's first max pool, enough to split it among 8 workers.
const NativePoolGrain = 1 << 16
