package tuning

import "time"

// The CPU kernels' tuning table: every shape threshold, block size and
// grain in pkg/targets/cpu/kernels that is a choice (another value would
// compute the same result, only faster or slower), each with its reason.
// The measurements behind them are records in docs/perf/kernels.md; the
// values were chosen on the development VM (AMD EPYC, described then as
// Zen 3: 32 KiB L1d, 512 KiB L2 per core) with the AVX2+FMA kernels; the
// AVX-512 GEMM kernel's choice was measured on the same VM reporting a
// Zen 4 EPYC (docs/perf/kernels.md). Constants fixed by the code
// itself (tile shapes of the assembly, register counts, header layouts)
// stay next to that code.
//
// All values are untyped constants, so a kernel compiles to the same
// machine code as with the literal in place.

// GEMM blocking (the BLIS loop nest: kc·nr floats of a B panel stay in L1,
// an mc×kc A block in L2 and the kc×nc B block in L3), per micro-kernel.
const (
	// The portable 4×2 kernel's blocking (also the purego build's).
	// GemmPortableMC is rounded down to a multiple of the kernel's mr.
	GemmPortableKC = 256
	GemmPortableMC = 64
	GemmPortableNC = 2048

	// The AVX2+FMA 6×16 kernel's: a 512×16 B panel (32 KiB) is read from
	// L1/L2 by every A panel, the 96×512 A block (192 KiB) stays in L2 and
	// the 512×4096 B block (8 MiB) in L3. kc = 512 beat 256 at large n
	// (half the round trips of C); mc and nc were flat over a wide range,
	// so these sit in the middle of it.
	GemmAVX2KC = 512
	GemmAVX2MC = 96
	GemmAVX2NC = 4096

	// The AVX-512F kernel's (12×16 tiles over pairs of the AVX2 kernel's
	// 6-row A panels; a 24-row tile took 0.3-8% more time on Zen 4,
	// docs/perf/kernels.md): kc is the AVX2 kernel's, because the packed B
	// layout (sgemm-b/nr16/kc512) must stay the same for artifacts to run
	// on either kernel; mc is a multiple of 12, so A blocks are whole
	// pairs of panels.
	GemmAVX512KC = GemmAVX2KC
	GemmAVX512MC = 96
	GemmAVX512NC = 4096

	// GemmDirectBAliasFloats: a B whose rows lie a multiple of this many
	// floats (32 KiB) apart, over a reduction of at least
	// GemmDirectBAliasMinK, is packed even where the caller asks to read
	// it in place (a 1x1 convolution over a 128x128 or 64x128 plane):
	// the rows of a k block map to a handful of L1 and L2 sets and evict
	// each other, and the product ran at half the speed, where 16 KiB
	// strides ran as fast either way; over short reductions (a head of
	// 2 output channels from 32) in place stayed faster
	// (docs/perf/kernels.md, "B in place over power-of-two planes").
	GemmDirectBAliasFloats = 8192
	GemmDirectBAliasMinK   = 128

	// GemmDirectAColumns is the most columns N of a product whose A
	// the GEMM reads in place (rows lda apart) even with B packed per
	// call: packing A is a read and a write of all of it, which the
	// products of each packed block repay only over many panels of B: a
	// GCN's adjacency products (2708x2708 times 2708x64 and x7, A 29 MB)
	// and 512x512 times 16 or 64 columns ran faster in place, shapes
	// past 64 columns no slower packed (docs/perf/models.md, "Three
	// more").
	GemmDirectAColumns = 64

	// The arm64 NEON 8×8 kernel's: the portable kernel's values (no
	// arm64 measurements are recorded; the tests run it under qemu).
	GemmNEONKC = 256
	GemmNEONMC = 64
	GemmNEONNC = 2048
)

// GemmAVX512Default chooses the AVX-512F GEMM kernel over the AVX2+FMA
// one on every CPU that runs both, whatever the shape: timed call by call
// in turn on one thread (BenchmarkGemmAVX512vsAVX2, AMD EPYC Zen 4, which
// runs a 512-bit FMA as two 256-bit halves, so both kernels have the same
// peak there), it took 1-7% less time on the encoder's, the MLP's and
// MobileNetV2's products and 1-2% less on squares of 256 and 512 (fewer
// instructions and B loads per FMA); squares of 1024 and 2048 were within
// the noise (±5-25%) either way, and no shape was measurably slower. On
// Intel cores with two 512-bit FMA units the gain should be larger but is
// unmeasured here.
const GemmAVX512Default = true

// GEMM scheduling.
const (
	// GemmSerialWork is the multiply-adds below which a product runs on
	// the calling goroutine: waking a worker costs more than the work.
	GemmSerialWork = 1 << 15

	// GemmPackGrain is the floats of B packed per parallel chunk when a
	// B block is packed in one pass before the tasks run (128 KiB: four
	// panels of 16 columns over a k block of 512). It was 32 panels
	// whatever their length: a 3x3 stride-2 convolution's 49 panels over
	// k = 512 were one chunk, packed on one thread while the others
	// waited, a serial seventh of the product at 2 threads.
	GemmPackGrain = 1 << 15

	// GemmJitPanels is the B panels a task packs and runs at a time when
	// tasks pack their own (one A block on several threads): packed just
	// before use, into the core's cache that reads them.
	GemmJitPanels = 32

	// GemmWideBWork bounds m·kc for the one-A-block split over packed
	// weights: far more weights than activations (small planes against
	// many channels), so the threads split B's columns and each reads only
	// its share of B from memory, instead of all of B for a share of A.
	GemmWideBWork = 1 << 16

	// GemmSmallAWork bounds m·kc for putting a small A (convolution
	// weights) in one block, for the per-task B packing. 256 KiB of A:
	// with its B panels it stays in the L2 of every x86 core we target
	// (512 KiB and up). At 1<<15 a 3x3 stride-2 convolution of 64 -> 128
	// channels (m·kc = 1<<16) ran as two A blocks of 96 and 32 rows with
	// all of B packed in one pass beforehand, and scaled 1.5x on 2
	// threads where one block scales 1.7x (docs/perf/scheduling.md).
	GemmSmallAWork = 1 << 16

	// GemmDirectSplitRatio: with B read in place (a 1x1 convolution's
	// input, DirectB), A is split into a block per thread, as for packed
	// B, where B has fewer columns than this many times A's rows (a small
	// plane against many channels). With one A block every thread packs
	// all of A, a cost against its share of the product that grows as
	// the plane shrinks; split, every thread reads all of B, a cost that
	// grows as the channels shrink, and packing an element costs about
	// twice reading one. On 2 threads (lowest of 10 interleaved runs,
	// docs/perf/kernels.md, "Small planes read in place"): split, 64 ->
	// 256 at 13x13 and 160 -> 160 at 14x14 ran 8-12% faster, 128 -> 512
	// at 28x28 the same, and 64 -> 256 at 56x56 (columns 12 times the
	// rows) 8% slower.
	GemmDirectSplitRatio = 2

	// GemmRowsTailMax is the most rows of a partial row panel the row
	// kernels take instead of a full tile: two rows against two panels
	// keep eight accumulators busy for a third of a tile's cost per panel.
	GemmRowsTailMax = 4

	// GemmShortK is the longest k block for which a block of 6r+2 rows
	// ends in two four-row tiles (its last eight rows, read in place)
	// rather than a two-row tail: at short k the row kernels' two-row
	// passes and separate epilogue cost nearly as much as six rows of
	// tiles; at longer k the two-row tail costs what the tiles save.
	GemmShortK = 64

	// GemmFourGroupBytes is the size of a run of B panels past which a
	// block's four-row tile follows the six-row tiles group by group
	// instead of in a second pass over the whole run: half of the L2. A
	// run larger than that streamed the weights from L3 or memory twice
	// per k block; runs that fit keep one call per pass.
	GemmFourGroupBytes = 256 << 10

	// GemmFourGroupL1Bytes: four-row tiles also follow each group when
	// two B panels fit in this much (half of the L1d); longer panels gained
	// nothing from it and lost to the extra calls.
	GemmFourGroupL1Bytes = 16 << 10

	// GemmTailGroupBytes, GemmTailGroupMin and GemmTailGroupMax size the
	// groups of B panels a block's tail rows follow (tailGroup): about
	// this many bytes of four panels, an even count in [min, max]. Groups
	// of 4-8 panels at long k ran faster than one pass; short panels in
	// small groups spent more on the calls than on the rows.
	GemmTailGroupBytes = 128 << 10
	GemmTailGroupMin   = 4
	GemmTailGroupMax   = 16

	// GemmFewRowsGrainBytes is the B bytes (k·4·16 per group of four
	// panels) a parallel chunk of the few-rows path covers at least.
	GemmFewRowsGrainBytes = 1 << 16

	// GemmChainWidth is the most columns one chain kernel call covers:
	// whole rows of B stream best, and 16 KiB of sums stay in L1.
	GemmChainWidth = 4096

	// BatchMatMulSplitWork: below this many multiply-adds per matrix (and
	// with at least a matrix per thread), the batch is split across the
	// threads, each product on one thread, rather than each product split.
	BatchMatMulSplitWork = 1 << 21
)

// Convolution.
const (
	// ConvSplitWork: below this many multiply-adds per (image, group)
	// product (and with at least one per thread), the products are split
	// across the threads rather than each one.
	ConvSplitWork = 1 << 22

	// ConvPointwiseDirectRows is the most output channels (per group) for
	// which a 1×1 convolution reads its input in place instead of packing
	// it: with few output channels packing cost as much as the few tiles
	// each panel feeds; with more, packing paid for itself.
	ConvPointwiseDirectRows = 64

	// ConvPointwiseDirectK is the fewest input channels (per group) from
	// which a 1×1 convolution reads its input in place whatever its
	// output channels: a long reduction's strided rows cost the tiles
	// less than packing them did. conv.Conv2D alone (Zen 4, best of 3,
	// docs/perf/kernels.md): from 64 input channels on, in place ran
	// 1.0-1.1x packed at 1 thread and 1.06-1.31x at 2 (512 -> 256 at
	// 28x28: 1.3x); 16 and 24 input channels ran 0.9x in place, so they
	// keep packing.
	ConvPointwiseDirectK = 64

	// ConvOneChannelGemmRows is the fewest output channels from which a
	// one-group convolution of a single input channel (raw audio,
	// grayscale images) runs as the implicit GEMM, weights [O, KH·KW]
	// times the im2col matrix, instead of the depthwise loop (one
	// strided row of axpys per output channel and tap): the GEMM writes
	// each output once from registers. conv.Conv2D through rlxrun (one
	// thread, Zen 4, median of 3, 2026-11-29), ms depthwise loop /
	// GEMM: 1-D k10 s5 over 16000 samples (wav2vec 2.0's first layer)
	// onto 512 channels 2.5 / 0.45, onto 64 0.20 / 0.08, 16 0.09 / 0.04,
	// 8 0.04-0.05 / 0.04; 1-D k16 s8 over 32000 onto 512 (Conv-TasNet's
	// encoder) 3.4-4.6 / 1.0-1.1; 2-D 5x5 over 64x64 onto 16 0.32 / 0.07,
	// onto 32 0.63 / 0.10.
	ConvOneChannelGemmRows = 8

	// DwSmallPlane is the largest input plane (H·W) the padded-copy
	// depthwise kernel (dwSmall) takes; larger planes go row by row, so
	// that the padded copy does not double their memory traffic.
	DwSmallPlane = 16384

	// DwNHWCMaxPlane and DwNHWCMaxPlaneS2 are the largest input planes
	// (H·W) a depthwise 3×3 runs channels last, at stride 1 and stride 2:
	// per-plane work dominates small NCHW planes; at stride 1 the NCHW
	// kernels were as fast from 28×28 on, while at stride 2 (where the
	// NCHW path splits phases first) channels last still won at 28×28.
	DwNHWCMaxPlane   = 14 * 14
	DwNHWCMaxPlaneS2 = 28 * 28
)

// Attention.
const (
	// AttnBlockQ is the query rows of one attention task: each task packs
	// its key and value blocks, so taller query blocks pack less.
	AttnBlockQ = 128

	// AttnBlockK is the keys per online-softmax step: at most
	// AttnBlockQ×AttnBlockK scores exist at once, whatever S_k is (128 KB
	// at 256). Longer blocks mean fewer products, fewer rescales of the
	// running sums and accumulators; with AttnOnePassMaxK, 256 ran 4-14%
	// faster than 128 on BenchmarkAttention (docs/perf/kernels.md).
	AttnBlockK = 256

	// AttnOnePassMaxK is the longest key sequence one softmax pass covers:
	// up to it a task computes all its scores at once, one product each
	// for q·kᵀ and p·v, with no running maximum to rescale by (a block of
	// 200 or 512 keys rather than two).
	AttnOnePassMaxK = 512

	// AttnBlockQCausal is AttnBlockQ for causal attention, whose query
	// block reads keys only up to its last row: over 128 queries one block
	// computes every score, the masked half too; blocks of 32 compute
	// five eighths of them. Measurements: docs/perf/kernels.md.
	AttnBlockQCausal = 32
)

// Reductions.
const (
	// ReduceBlock is the elements of each partial sum of a full reduction
	// (every axis reduced): fixed blocks whose partials are combined in
	// order, so the result does not depend on the thread count. Changing
	// it changes the summation order, and so the last bits of a sum.
	ReduceBlock = 1 << 14
)

// Parallel work.
const (
	// GrainWork is the work (elements, or multiply-adds where a kernel
	// weighs them) a parallel chunk of a memory-bound kernel covers at
	// least (norms, pools, reductions, gather, depthwise rows): enough
	// that claiming a chunk is noise beside it.
	GrainWork = 1 << 14

	// PoolSpinFor is how long an idle worker polls for the next job
	// before it parks. A model runs kernels back to back, microseconds
	// apart: a worker that parked between them costs a wake-up per kernel,
	// more than a small kernel's work, and between two parallel kernels
	// the caller may run serial ones for a while. The cost is up to this
	// much of one core's time after a model's last kernel, as ONNX
	// Runtime's spinning pool spends too.
	PoolSpinFor = time.Millisecond

	// PoolSpinYield times a pool's thread count is how many polls each
	// of its spinning threads makes between yields to the Go scheduler
	// (each poll ends in a spin hint, PAUSE on x86, which is slow by
	// design). Yielding on every poll made every parallel kernel queue on
	// the scheduler's run-queue lock; the interval that ran models
	// fastest on 16 threads made them slower on 2, and the one best on 2
	// made them slower on 16 (their spinning threads queued on that lock
	// again). Scaled by the thread count, a pool's spinning threads
	// together yield about as often whatever their number. The
	// measurements on both machines are in docs/perf/scheduling.md and
	// the table in docs/perf/kernels.md.
	PoolSpinYield = 256
)

// NativeGrainFloor is how far below its own grain the runtime splits a
// native function's range where the grain leaves threads without a
// chunk: to a quarter, where a call through purego costs about 4% of a
// chunk instead of 1%, paid only by kernels that would otherwise run on
// fewer threads than the pool has. DenseNet-121's growth convolutions
// over 14x14 and 7x7 planes (their Winograd steps' ranges were 1-2 of
// their grains) ran on one of 2 threads.
const NativeGrainFloor = 4

// NativeEwGrain is the fewest elements of a fused elementwise region that
// a worker takes as one call of its native function: one call through
// purego costs about as much as computing a few hundred elements, so a
// chunk of 16K keeps the overhead near 1% and still splits a 128x1024
// activation among 8 workers.
const NativeEwGrain = 16384
