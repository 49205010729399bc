package gemm

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// Pre-packed weights. A B operand that is a constant (a weight matrix) can
// be packed once, ahead of time, into the micro-kernel's panel layout; then
// GemmPacked runs without repacking B on every call.
//
// The packed form is a []float32: an 8-element header (uint32 values stored
// as float32 bit patterns: magic "RLXB", format version 1, k, n, nr, kc, 0,
// 0) followed by the panels. For each k block of kc rows (the last may be
// shorter; kb rows), for each panel of nr columns (the last zero-padded),
// the kb×nr panel row-major: B[p][j] of block pc and panel q lies at
//
//	8 + pc·P·nr + q·nr·kb + (p-pc)·nr + (j-q·nr),  P = ceil(n/nr).
//
// The layout depends only on nr and kc; PackedLayout names it
// ("sgemm-b/nr16/kc512" for the AVX2 kernel, "sgemm-b/nr2/kc256" for the
// portable one). The header must be stored bit for bit (its integers are
// float32 denormals). A compiler records that name next to the
// packed data, and a runtime whose PackedLayout differs repacks from the
// original weights (or refuses) instead of calling GemmPacked.

const (
	packedMagic   = 0x42584c52 // "RLXB" little-endian
	packedVersion = 1
	packedHeader  = 8
)

// PackedLayout names the B layout GemmPacked expects on this machine.
func PackedLayout() string { return kernelLayout(defaultKernel()) }

func kernelLayout(kn gemmKernel) string { return fmt.Sprintf("sgemm-b/nr%d/kc%d", kn.nr, kn.kc) }

// PackBLayout packs B for the named layout (one a PackedLayout has
// returned, here or on another machine), e.g. when compiling for a target
// CPU other than the host's.
func PackBLayout(layout string, k, n int, b []float32, ldb int) ([]float32, error) {
	var nr, kc int
	if _, err := fmt.Sscanf(layout, "sgemm-b/nr%d/kc%d", &nr, &kc); err != nil || nr < 1 || kc < 1 ||
		kernelLayout(gemmKernel{nr: nr, kc: kc}) != layout {
		return nil, fmt.Errorf("kernels: unknown packed layout %q", layout)
	}
	return packB(nr, kc, k, n, b, ldb), nil
}

func packB(nr, kc, k, n int, b []float32, ldb int) []float32 {
	checkMatrix("PackB", "b", b, k, n, ldb)
	if uint64(k) > math.MaxUint32 || uint64(n) > math.MaxUint32 {
		panic(fmt.Sprintf("kernels: PackB: %d×%d is too large", k, n))
	}
	nPanels := ceilDiv(n, nr)
	out := make([]float32, packedHeader+nPanels*nr*k)
	for i, v := range []int{packedMagic, packedVersion, k, n, nr, kc} {
		out[i] = math.Float32frombits(uint32(v))
	}
	if n == 0 {
		return out
	}
	src := denseB{b, ldb}
	data := out[packedHeader:]
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		src.Pack(data[pc*nPanels*nr:], nr, pc, kb, 0, n)
	}
	return out
}

// packedB is a pre-packed B, read in place by gemm.
type packedB struct {
	data      []float32 // the panels, after the header
	k, nr, kc int
	nPanels   int
}

// block returns the panels of columns [jc, ...) of the k block at row pc.
func (s *packedB) block(pc, jc int) []float32 {
	kb := min(s.kc, s.k-pc)
	return s.data[pc*s.nPanels*s.nr+jc/s.nr*s.nr*kb:]
}

// pack is never called: gemm reads a packedB in place. It makes packedB a
// BSource so that it travels in gemmArgs.
func (s *packedB) Pack(dst []float32, nr, p0, kb, j0, w int) {
	panic("kernels: packedB.pack called")
}

// unpackHeader validates a packed B against k, n and the kernel's layout.
func unpackHeader(fn string, packed []float32, k, n int, kn *gemmKernel) packedB {
	var h [6]int
	if len(packed) >= packedHeader {
		for i := range h {
			h[i] = int(math.Float32bits(packed[i]))
		}
	}
	if h[0] != packedMagic || h[1] != packedVersion {
		panic(fmt.Sprintf("kernels: %s: packed B has no valid header", fn))
	}
	if h[2] != k || h[3] != n {
		panic(fmt.Sprintf("kernels: %s: packed B is %d×%d, want %d×%d", fn, h[2], h[3], k, n))
	}
	if h[4] != kn.nr || h[5] != kn.kc {
		panic(fmt.Sprintf("kernels: %s: packed B has layout %s, this machine's is %s: repack it",
			fn, kernelLayout(gemmKernel{nr: h[4], kc: h[5]}), kernelLayout(*kn)))
	}
	nPanels := ceilDiv(n, kn.nr)
	if len(packed) < packedHeader+nPanels*kn.nr*k {
		panic(fmt.Sprintf("kernels: %s: packed B has %d elements, want %d", fn, len(packed), packedHeader+nPanels*kn.nr*k))
	}
	return packedB{data: packed[packedHeader : packedHeader+nPanels*kn.nr*k], k: k, nr: kn.nr, kc: kn.kc, nPanels: nPanels}
}

// GemmPacked is the GEMM with B pre-packed by PackBLayout (with
// PackedLayout()): C = A·B for row-major A [m,k] (lda) and C [m,n] (ldc),
// then ep as in Gemm. The result is bit for bit Gemm's (with the portable
// kernel, below its 4 rows, equal within rounding). It panics when
// packedB is not a k×n packing in this machine's layout.
func GemmPacked(p *parallel.Pool, m, n, k int, a []float32, lda int, packedB []float32, c []float32, ldc int, ep Epilogue) {
	kn := defaultKernel()
	hdr := unpackHeader("GemmPacked", packedB, k, n, &kn)
	checkMatrix("GemmPacked", "a", a, m, k, lda)
	checkMatrix("GemmPacked", "c", c, m, n, ldc)
	if ep.Bias != nil && len(ep.Bias) < n {
		panic(fmt.Sprintf("kernels: GemmPacked: bias has %d elements, want %d", len(ep.Bias), n))
	}
	if ep.Residual != nil {
		checkMatrix("GemmPacked", "residual", ep.Residual, m, n, ldc)
	}
	if m > 0 && n > 0 && k > 0 && m < kn.mr && kn.rows != nil && kn.nr == 16 {
		// gemm's few-rows path, taken here so that nothing of the call
		// escapes to the heap (an unrolled recurrence runs thousands).
		if p.Threads() > 1 && m*n*k < gemmSerialWork {
			p = nil
		}
		g := gemmArgs{m: m, n: n, k: k, a: a, lda: lda, c: c, ldc: ldc, ep: colEpi(&ep, ldc)}
		gemmFewRows(p, &kn, &g, &hdr)
		return
	}
	pb := hdr // escapes here alone, as gemm's B source
	g := gemmArgs{m: m, n: n, k: k, a: a, lda: lda, b: &pb, c: c, ldc: ldc, ep: colEpi(&ep, ldc)}
	gemm(p, kn, &g)
}

// Conv1x1Packed is a 1×1, stride-1, unpadded, ungrouped convolution of x [N,
// C, HW] into out [N, O, HW] whose weights were packed at build time as the
// [C, O] matrix Wᵀ (PackBLayout). Each image is computed as outᵀ = xᵀ·Wᵀ:
// the spatial positions are the product's rows, so a small plane (7×7,
// 14×14) gives full tiles over the channels instead of a narrow product
// with one short panel, and the weights need no packing at run time. The
// [HW, O] result is transposed into out, adding the residual there (and
// then an activation that follows it).
func Conv1x1Packed(p *parallel.Pool, out, x []float32, packedW []float32, n, c, hw, o int, ep Epilogue) {
	kn := defaultKernel()
	pb := unpackHeader("Conv1x1Packed", packedW, c, o, &kn)
	if len(x) < n*c*hw || len(out) < n*o*hw {
		panic(fmt.Sprintf("kernels: Conv1x1Packed: x has %d and out %d elements for N %d C %d HW %d O %d", len(x), len(out), n, c, hw, o))
	}
	if ep.Bias != nil && len(ep.Bias) < o {
		panic(fmt.Sprintf("kernels: Conv1x1Packed: bias has %d elements, want %d", len(ep.Bias), o))
	}
	if ep.Residual != nil && len(ep.Residual) < n*o*hw {
		panic(fmt.Sprintf("kernels: Conv1x1Packed: residual has %d elements, want %d", len(ep.Residual), n*o*hw))
	}
	if n == 0 || hw == 0 || o == 0 {
		return
	}
	res := ep.Residual
	ep.Residual = nil
	// An activation after the residual runs in the transpose's pass,
	// after the residual's add.
	var after Epilogue
	if ep.ActLast && res != nil && ep.Act != vec.ActNone {
		after = Epilogue{Act: ep.Act, Alpha: ep.Alpha, Min: ep.Min, Max: ep.Max}
		ep.Act = vec.ActNone
	}
	ep.ActLast = false
	w := gemmWorkPool.Get().(*gemmWork)
	defer gemmWorkPool.Put(w)
	w.bp = grow(w.bp, hw*o) // the transposed result
	t := w.bp[:hw*o]
	for img := 0; img < n; img++ {
		g := gemmArgs{m: hw, n: o, k: c, a: x[img*c*hw : (img+1)*c*hw], lda: hw, aT: true, b: &pb, c: t, ldc: o, ep: colEpi(&ep, o)}
		gemm(p, kn, &g)
		dst := out[img*o*hw : (img+1)*o*hw]
		var r []float32
		if res != nil {
			r = res[img*o*hw : (img+1)*o*hw]
		}
		// Blocks of 8 channels: the transpose goes by 8×8 tiles.
		p.For(ceilDiv(o, 8), max(1, 512/hw), func(lo, hi int) {
			c0, c1 := lo*8, min(hi*8, o)
			vec.Transpose(dst[c0*hw:], hw, t[c0:], o, hw, c1-c0)
			if r != nil {
				rr, row := r[c0*hw:c1*hw], dst[c0*hw:c1*hw]
				for j := range row {
					row[j] += rr[j]
				}
				if after.Act != vec.ActNone {
					vec.Activate(row, after.Act, after.Alpha, after.Min, after.Max)
				}
			}
		})
	}
}
