package tuning

// Native gathers: which Gather steps the cpu target compiles to C
// (pkg/targets/cpu/cgen, gather.go) instead of running the runtime's
// Go loop (pkg/targets/cpu/kernels/data).

// NativeGatherMaxIndices is the most indices a native gather embeds in
// its code. Only gathers whose indices are a constant are compiled (a
// resize's source rows and columns, a fixed selection of channels):
// their indices are checked and made non-negative at build time and
// written into the function as a table, so the code needs no checks.
// The table is source text clang compiles and an object the artifact
// carries; past this many indices (an embedding's token ids are never
// constant) the runtime's kernel, which costs nothing to build, is left
// to it.
const NativeGatherMaxIndices = 1 << 16

// NativeGatherGrain is the fewest elements of a native gather a worker
// takes as one call of its function. Moving an element costs about what
// a transpose's does (a load, often a vector gather, and a store), so
// the grain is NativeCopyGrain's, for the same reason: one call through
// purego stays near 1% of the work.
const NativeGatherGrain = NativeCopyGrain

// NativeGatherPeriod is the fewest elements the inner loop of a
// last-axis gather (rows of one element) runs over: a row of the output
// is often shorter than what clang's vector loop takes per iteration (a
// resize to 56 columns, 64 elements per iteration at x86-64-v4), which
// would leave every row to the scalar remainder. The generated code
// walks periods of whole rows of at least this many elements instead,
// with a table of source offsets for the period.
const NativeGatherPeriod = 256
