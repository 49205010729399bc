package attention

import (
	"fmt"
	"math"
	"sync"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// AttnGeom describes a scaled dot-product attention. Each operand is a
// batch of row-major matrices: q [S_q, D], k [S_k, D], v [S_k, Dv] and the
// optional additive mask [S_q, S_k]; the batch has the output's broadcast
// shape Batch and each operand reaches its matrix for a batch index through
// its own element strides (0 broadcasts that batch dim).
type AttnGeom struct {
	Batch                                     []int // broadcast batch shape of the output, e.g. [B, H]
	QStrides, KStrides, VStrides, MaskStrides []int // per batch dim; MaskStrides may be nil (the mask is one matrix)
	MaskRowStride, MaskColStride              int   // mask element strides along S_q and S_k (0 broadcasts)
	Sq, Sk, D, Dv                             int
	// QRow, KRow and VRow are the element strides between rows of a q, k
	// and v matrix (columns are always contiguous): 0 means D (Dv for v),
	// rows back to back. Larger ones read heads in place out of a wider
	// row, such as a fused QKV projection's [S, 3·H·D] output.
	QRow, KRow, VRow int
	Scale            float32 // e.g. 1/sqrt(D)
	Causal           bool    // query i sees keys j <= i + (Sk - Sq)
}

// Attention blocks. A task is attnBQ query rows of one batch matrix; keys
// go by in blocks of attnBK with a running (online) softmax, so no more
// than attnBQ×attnBK scores exist at once whatever S_k is, or in one block
// of S_k up to tuning.AttnOnePassMaxK. Each task packs
// its key and value blocks, so taller query blocks pack less: 128 rows ran
// 12 heads × 512 tokens faster than 32 did (the sizes are in the tuning
// table).
const (
	attnBQ = tuning.AttnBlockQ
	attnBK = tuning.AttnBlockK
)

// Attention writes out [...Batch, Sq, Dv] (contiguous) =
// softmax(q·kᵀ·Scale + mask)·v, over key blocks with an online softmax
// (running maximum and sum, flash-attention style). Masked scores (causal
// or a -Inf mask) are -Inf. A query row that sees no key at all (every
// score -Inf, or Sk == 0) gives NaN, as PyTorch's scaled_dot_product_attention
// does; a NaN score makes its row NaN.
//
// Scores and probabilities are float32 (the Gemm's), the running maximum and
// sum float64. out must not overlap the operands.
func Attention(p *parallel.Pool, out, q, k, v, mask []float32, g AttnGeom) {
	nd := len(g.Batch)
	if len(g.QStrides) != nd || len(g.KStrides) != nd || len(g.VStrides) != nd ||
		(g.MaskStrides != nil && len(g.MaskStrides) != nd) {
		panic(fmt.Sprintf("kernels: Attention: batch %v with strides q %v k %v v %v mask %v",
			g.Batch, g.QStrides, g.KStrides, g.VStrides, g.MaskStrides))
	}
	if min(g.Sq, g.Sk, g.D, g.Dv) < 0 {
		panic(fmt.Sprintf("kernels: Attention: bad sizes Sq %d Sk %d D %d Dv %d", g.Sq, g.Sk, g.D, g.Dv))
	}
	nb := prod(g.Batch)
	if nb == 0 || g.Sq == 0 || g.Dv == 0 {
		return
	}
	if len(out) < nb*g.Sq*g.Dv {
		panic(fmt.Sprintf("kernels: Attention: out has %d elements, want %d", len(out), nb*g.Sq*g.Dv))
	}
	need := func(name string, s []float32, strides []int, last int) {
		n := last
		for d, st := range strides {
			if st < 0 {
				panic(fmt.Sprintf("kernels: Attention: negative %s stride %v", name, strides))
			}
			n += (g.Batch[d] - 1) * st
		}
		if len(s) < n {
			panic(fmt.Sprintf("kernels: Attention: %s has %d elements, needs %d", name, len(s), n))
		}
	}
	g.QRow, g.KRow, g.VRow = rowStride(g.QRow, g.D), rowStride(g.KRow, g.D), rowStride(g.VRow, g.Dv)
	if g.QRow < g.D || g.KRow < g.D || g.VRow < g.Dv {
		panic(fmt.Sprintf("kernels: Attention: row strides q %d k %d v %d under D %d, Dv %d", g.QRow, g.KRow, g.VRow, g.D, g.Dv))
	}
	need("q", q, g.QStrides, matrixLen(g.Sq, g.QRow, g.D))
	need("k", k, g.KStrides, matrixLen(g.Sk, g.KRow, g.D))
	need("v", v, g.VStrides, matrixLen(g.Sk, g.VRow, g.Dv))
	if mask != nil && g.Sk > 0 {
		if g.MaskRowStride < 0 || g.MaskColStride < 0 {
			panic("kernels: Attention: negative mask stride")
		}
		need("mask", mask, g.MaskStrides, (g.Sq-1)*g.MaskRowStride+(g.Sk-1)*g.MaskColStride+1)
	}
	// Causal query blocks are shorter: a block reads the keys up to its
	// last row, so the scores above the diagonal it skips grow as blocks
	// shrink (tuning.AttnBlockQCausal).
	bq, bk := attnBQ, attnBK
	if g.Causal {
		bq = tuning.AttnBlockQCausal
	}
	if g.Sk <= tuning.AttnOnePassMaxK {
		bk = max(g.Sk, 1)
	}
	qBlocks := ceilDiv(g.Sq, bq)
	p.For(nb*qBlocks, 1, func(lo, hi int) {
		w := attnWorkPool.Get().(*attnWork)
		w.size(min(g.Sq, bq), bk, g.D, g.Dv)
		for t := lo; t < hi; t++ {
			attnBlock(out, q, k, v, mask, &g, t/qBlocks, (t%qBlocks)*bq, bq, bk, w)
		}
		attnWorkPool.Put(w)
	})
}

// rowStride is a row stride with 0 meaning contiguous rows of n.
func rowStride(st, n int) int {
	if st == 0 {
		return n
	}
	return st
}

// matrixLen is the elements a matrix of rows rows of n, ld apart, spans.
func matrixLen(rows, ld, n int) int {
	if rows == 0 || n == 0 {
		return 0
	}
	return (rows-1)*ld + n
}

// attnWorkPool recycles attnWork across calls: allocating a fresh one per
// call cost more than the softmax of a 128-token head (garbage collection).
var attnWorkPool = sync.Pool{New: func() any { return new(attnWork) }}

type attnWork struct {
	s, acc []float32 // scores/probabilities [bq, bk], output accumulator [bq, Dv]
	qs     []float32 // the block's query rows times Scale [bq, D]
	m, l   []float64 // running maximum and sum per row
}

// size makes w's buffers hold bq query rows of d and dv columns and
// their scores for bk keys.
func (w *attnWork) size(bq, bk, d, dv int) {
	w.s, w.acc, w.qs = grow(w.s, bq*bk), grow(w.acc, bq*dv), grow(w.qs, bq*d)
	if cap(w.m) < bq {
		w.m, w.l = make([]float64, bq), make([]float64, bq)
	}
	w.m, w.l = w.m[:bq], w.l[:bq]
}

// attnBlock computes query rows [i0, i0+bq) of batch matrix bi, keys in
// blocks of bk.
func attnBlock(out, q, k, v, mask []float32, g *AttnGeom, bi, i0, bq, bk int, w *attnWork) {
	var qo, ko, vo, mo int
	rem := bi
	for d := len(g.Batch) - 1; d >= 0; d-- {
		i := rem % g.Batch[d]
		rem /= g.Batch[d]
		qo += i * g.QStrides[d]
		ko += i * g.KStrides[d]
		vo += i * g.VStrides[d]
		if g.MaskStrides != nil {
			mo += i * g.MaskStrides[d]
		}
	}
	rows := min(bq, g.Sq-i0)
	D, Dv := g.D, g.Dv
	// Without a mask (and for a positive Scale, which keeps the maximum
	// the maximum) the softmax applies Scale to each score as it takes
	// e^((s-max)·Scale); a mask is added to scaled scores, so there the
	// query rows are scaled once instead. m holds maxima of the scores as
	// they are in s.
	ldq, ldk, ldv := g.QRow, g.KRow, g.VRow
	qm := q[qo+i0*ldq : qo+i0*ldq+matrixLen(rows, ldq, D)]
	escale := g.Scale
	if mask != nil || !(g.Scale > 0) || math.IsInf(float64(g.Scale), 1) {
		escale = 1
		qs := w.qs[:rows*D]
		clear(qs)
		for r := 0; r < rows; r++ {
			// qs = 0 + Scale·q, one rounding: Scale·q's (but a -0 product is +0)
			vec.Axpy(qs[r*D:(r+1)*D], qm[r*ldq:r*ldq+D], g.Scale)
		}
		qm, ldq = qs, D
	}
	km := k[ko : ko+matrixLen(g.Sk, ldk, D)]
	vm := v[vo : vo+matrixLen(g.Sk, ldv, Dv)]
	diag := g.Sk - g.Sq
	kEnd := g.Sk
	if g.Causal {
		kEnd = max(0, min(g.Sk, i0+rows+diag))
	}
	acc := w.acc[:rows*Dv]
	clear(acc)
	m, l := w.m[:rows], w.l[:rows]
	for r := range m {
		m[r] = math.Inf(-1)
		l[r] = 0
	}
	for j0 := 0; j0 < kEnd; j0 += bk {
		cols := min(bk, kEnd-j0)
		s := w.s
		// Scores for this key block.
		if rows < gemm.TileRows() {
			for r := 0; r < rows; r++ {
				vec.Dots(s[r*bk:r*bk+cols], qm[r*ldq:r*ldq+D], km[j0*ldk:], ldk)
			}
		} else {
			ga := gemm.Args{M: rows, N: cols, K: D, A: qm, Lda: ldq, B: gemm.Transposed(km[j0*ldk:], ldk), C: s, Ldc: bk, DirectA: true}
			gemm.Run(nil, &ga)
		}
		// Online softmax update, row by row.
		for r := 0; r < rows; r++ {
			i := i0 + r
			srow := s[r*bk : r*bk+cols]
			lim := cols
			if g.Causal {
				lim = max(0, min(cols, i+diag+1-j0))
			}
			var mx float64
			switch {
			case mask != nil && g.MaskColStride == 1:
				// srow += the mask row: an FMA by 1 rounds each sum once,
				// as float32 addition does.
				mrow := mask[mo+i*g.MaskRowStride+j0:]
				vec.Axpy(srow[:lim], mrow[:lim], 1)
				mx = float64(vec.MaxNaN32(srow[:lim]))
			case mask != nil:
				mx = math.Inf(-1)
				for j := 0; j < lim; j++ {
					sv := float64(srow[j]) + float64(mask[mo+i*g.MaskRowStride+(j0+j)*g.MaskColStride])
					srow[j] = float32(sv)
					if sv > mx || sv != sv {
						mx = sv
					}
				}
			default:
				mx = float64(vec.MaxNaN32(srow[:lim]))
			}
			mNew := m[r]
			if mx > mNew || mx != mx {
				mNew = mx
			}
			if math.IsInf(mNew, -1) {
				// Nothing visible yet: the block contributes nothing.
				clear(srow)
				continue
			}
			alpha := vec.ExpNaN((m[r] - mNew) * float64(escale)) // 0 when m[r] is -Inf
			first := math.IsInf(m[r], -1)
			sum := vec.ExpSub32(srow[:lim], float32(mNew), escale)
			clear(srow[lim:])
			l[r] = l[r]*alpha + sum
			m[r] = mNew
			if alpha != 1 && !first {
				// (Before any visible key the row's accumulator holds
				// only zeros, or NaN from a NaN value, which scaling
				// by 0 leaves as it is.)
				a32 := float32(alpha)
				ar := acc[r*Dv : (r+1)*Dv]
				for d := range ar {
					ar[d] *= a32
				}
			}
		}
		// acc += P·V for this block.
		gv := gemm.Args{M: rows, N: Dv, K: cols, A: s, Lda: bk, B: gemm.Dense(vm[j0*ldv:], ldv), C: acc, Ldc: Dv, Accumulate: true, DirectA: true}
		gemm.Run(nil, &gv)
	}
	for r := 0; r < rows; r++ {
		orow := out[(bi*g.Sq+i0+r)*Dv : (bi*g.Sq+i0+r+1)*Dv]
		ar := acc[r*Dv : (r+1)*Dv]
		if l[r] == 0 { // no visible key
			for d := range orow {
				orow[d] = float32(math.NaN())
			}
			continue
		}
		clear(orow)
		vec.Axpy(orow, ar, float32(1/l[r])) // orow = acc/l, one rounding, in vectors
	}
}

func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}
