package tuning

// NativePoolGrain is the fewest window cells (outputs times kernel
// cells) a worker takes as one call of a pool's native function, which
// splits its range by output rows. A cell costs a fraction of an
// elementwise element (a load and a compare or add, 8 or 16 lanes at a
// time), so a chunk needs more of them than NativeEwGrain's elements to
// keep the purego call near 1%; 64K cells is still 27 chunks of
// ResNet-18's first max pool, enough to split it among 8 workers.
const NativePoolGrain = 1 << 16

// PoolPlaneMaxCells is the largest padded plane ((H + pads)·(W + pads)
// cells) a stride-1 max pool runs plane by plane through scratch on the
// native call's stack (four plane-sized float arrays, 16 KB at this
// bound), folding rows and then columns in full vectors (cgen's
// maxPoolPlanes). The row-by-row code folds every window cell and, on a
// narrow plane, runs short vectors and scalar borders: YOLOv5's SPPF
// pool (5x5/1 over 256x10x10) ran at a quarter of ONNX Runtime's speed
// there, twice its speed by planes. Wide planes (56x56) keep the row
// code, whose vectors are full there. Measurements: docs/perf/ops.md.
const PoolPlaneMaxCells = 1024
