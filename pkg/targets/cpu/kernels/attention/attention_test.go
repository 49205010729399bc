package attention

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// refAttention materializes every score matrix in float64. scale is the
// magnitude Σ p·|v| each output was built from.
func refAttention(q, k, v, mask []float32, g *AttnGeom) (want, scale []float64) {
	nb := prod(g.Batch)
	want = make([]float64, nb*g.Sq*g.Dv)
	scale = make([]float64, len(want))
	for bi := 0; bi < nb; bi++ {
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
		for i := 0; i < g.Sq; i++ {
			s := make([]float64, g.Sk)
			m := math.Inf(-1)
			for j := range s {
				if g.Causal && j > i+g.Sk-g.Sq {
					s[j] = math.Inf(-1)
					continue
				}
				var d float64
				for c := 0; c < g.D; c++ {
					d += float64(q[qo+i*g.D+c]) * float64(k[ko+j*g.D+c])
				}
				s[j] = d * float64(g.Scale)
				if mask != nil {
					s[j] += float64(mask[mo+i*g.MaskRowStride+j*g.MaskColStride])
				}
				m = math.Max(m, s[j])
			}
			var sum float64
			for j := range s {
				if !math.IsInf(s[j], -1) {
					s[j] = math.Exp(s[j] - m)
				} else {
					s[j] = 0
				}
				sum += s[j]
			}
			for c := 0; c < g.Dv; c++ {
				var o, mag float64
				for j := range s {
					o += s[j] * float64(v[vo+j*g.Dv+c])
					mag += s[j] * math.Abs(float64(v[vo+j*g.Dv+c]))
				}
				idx := (bi*g.Sq+i)*g.Dv + c
				want[idx] = o / sum // 0/0 = NaN when nothing is visible
				scale[idx] = mag / sum
			}
		}
	}
	return want, scale
}

type attnCase struct {
	name                   string
	batch                  []int
	sq, sk, d, dv          int
	causal                 bool
	kvShared               bool // k and v broadcast over the last batch dim (multi-query)
	mask                   string
	maskAllOffRow, maskNaN bool
}

func runAttnCase(t *testing.T, ps []*parallel.Pool, c attnCase, seed uint64) {
	t.Helper()
	r := newRand(seed)
	nd := len(c.batch)
	contiguous := func(mat int, shape []int) []int {
		st := make([]int, len(shape))
		for d, acc := len(shape)-1, mat; d >= 0; d-- {
			st[d] = acc
			acc *= shape[d]
		}
		return st
	}
	g := AttnGeom{Batch: c.batch, Sq: c.sq, Sk: c.sk, D: c.d, Dv: c.dv, Scale: float32(1 / math.Sqrt(float64(max(c.d, 1)))), Causal: c.causal}
	g.QStrides = contiguous(c.sq*c.d, c.batch)
	kvBatch := append([]int(nil), c.batch...)
	if c.kvShared && nd > 0 {
		kvBatch[nd-1] = 1
	}
	g.KStrides = contiguous(c.sk*c.d, kvBatch)
	g.VStrides = contiguous(c.sk*c.dv, kvBatch)
	if c.kvShared && nd > 0 {
		g.KStrides[nd-1], g.VStrides[nd-1] = 0, 0
	}
	nb := prod(c.batch)
	q := randSlice(r, nb*c.sq*c.d)
	k := randSlice(r, prod(kvBatch)*c.sk*c.d)
	v := randSlice(r, prod(kvBatch)*c.sk*c.dv)
	for i := range q {
		q[i] *= 3 // peakier softmax
	}
	var mask []float32
	ninf := float32(math.Inf(-1))
	switch c.mask {
	case "shared": // one [Sq, Sk] matrix for the whole batch
		mask = randSlice(r, c.sq*c.sk)
		for i := range mask {
			if r.IntN(5) == 0 {
				mask[i] = ninf
			}
		}
		g.MaskRowStride, g.MaskColStride = c.sk, 1
	case "padding": // [B, 1, 1, Sk] key padding, broadcast over heads and rows
		mask = make([]float32, c.batch[0]*c.sk)
		for b := 0; b < c.batch[0]; b++ {
			for j := c.sk - b - 1; j < c.sk; j++ { // batch b pads its last b+1 keys
				mask[b*c.sk+j] = ninf
			}
		}
		g.MaskStrides = make([]int, nd)
		g.MaskStrides[0] = c.sk
		g.MaskColStride = 1
	case "row": // [Sq, 1], broadcast over keys (the scalar path: column stride 0)
		mask = randSlice(r, c.sq)
		mask[c.sq-1] = ninf
		g.MaskRowStride, g.MaskColStride = 1, 0
	case "full": // [...Batch, Sq, Sk]
		mask = randSlice(r, nb*c.sq*c.sk)
		g.MaskStrides = contiguous(c.sq*c.sk, c.batch)
		g.MaskRowStride, g.MaskColStride = c.sk, 1
	}
	if c.maskAllOffRow {
		for j := 0; j < c.sk; j++ {
			mask[1*c.sk+j] = ninf // row 1 of the shared mask
		}
	}
	if c.maskNaN {
		mask[2*c.sk+3] = float32(math.NaN())
	}
	want, scale := refAttention(q, k, v, mask, &g)
	var first []float32
	for _, p := range ps {
		out := poison(nb * c.sq * c.dv)
		Attention(p, out, q, k, v, mask, g)
		tag := fmt.Sprintf("Attention %s threads=%d", c.name, p.Threads())
		// Scores are float32 Gemm outputs (error ~1e-6 relative to Σ|q·k|);
		// the output is a convex combination of v, so errors stay ~1e-6 of
		// Σ p·|v| even over 1000 keys.
		checkClose(t, tag, out, want, scale, 1e-5, 1e-6)
		if first == nil {
			first = out
		} else {
			checkEqual(t, tag+" vs 1 thread", out, first)
		}
	}
}

func TestAttention(t *testing.T) {
	ps := pools(t)
	cases := []attnCase{
		{name: "basic", batch: []int{2, 3}, sq: 5, sk: 7, d: 8, dv: 6},
		{name: "single", batch: []int{1}, sq: 1, sk: 1, d: 1, dv: 1},
		{name: "no batch dims", batch: nil, sq: 4, sk: 9, d: 5, dv: 3},
		{name: "causal square crossing a query block", batch: []int{2}, sq: 37, sk: 37, d: 16, dv: 16, causal: true},
		{name: "causal, one key pass", batch: []int{1}, sq: 70, sk: 150, d: 8, dv: 8, causal: true},
		{name: "causal, query blocks ending either side of a key block's end", batch: []int{1}, sq: 70, sk: 600, d: 8, dv: 8, causal: true},
		{name: "causal decode step", batch: []int{2, 2}, sq: 1, sk: 10, d: 8, dv: 8, causal: true},
		{name: "causal chunked prefill", batch: []int{3}, sq: 3, sk: 10, d: 4, dv: 5, causal: true},
		{name: "causal Sq > Sk (early rows see nothing: NaN)", batch: []int{1}, sq: 10, sk: 4, d: 4, dv: 4, causal: true},
		{name: "shared mask", batch: []int{2, 2}, sq: 6, sk: 9, d: 8, dv: 8, mask: "shared"},
		{name: "shared mask causal", batch: []int{2}, sq: 9, sk: 9, d: 8, dv: 4, mask: "shared", causal: true},
		{name: "padding mask", batch: []int{3, 2}, sq: 5, sk: 8, d: 8, dv: 8, mask: "padding"},
		{name: "full mask", batch: []int{2, 2}, sq: 7, sk: 130, d: 8, dv: 8, mask: "full"},
		{name: "row mask", batch: []int{2}, sq: 5, sk: 150, d: 8, dv: 8, mask: "row"},
		{name: "fully masked row gives NaN", batch: []int{2}, sq: 4, sk: 6, d: 4, dv: 4, mask: "shared", maskAllOffRow: true},
		{name: "NaN in mask", batch: []int{1}, sq: 5, sk: 6, d: 4, dv: 4, mask: "shared", maskNaN: true},
		{name: "multi-query kv broadcast", batch: []int{2, 4}, sq: 6, sk: 11, d: 8, dv: 8, kvShared: true, causal: true},
		{name: "long", batch: []int{1, 2}, sq: 40, sk: 1000, d: 64, dv: 64},
		{name: "long causal masked", batch: []int{2}, sq: 33, sk: 1000, d: 32, dv: 48, causal: true, mask: "shared"},
		{name: "long decode", batch: []int{2}, sq: 1, sk: 1000, d: 64, dv: 64, causal: true},
		{name: "rows below mr", batch: []int{2}, sq: 3, sk: 300, d: 7, dv: 9},
		{name: "D 0", batch: []int{1}, sq: 3, sk: 4, d: 0, dv: 2},
		{name: "Sk 0 gives NaN", batch: []int{2}, sq: 3, sk: 0, d: 4, dv: 2},
		{name: "Sq 0", batch: []int{2}, sq: 0, sk: 5, d: 4, dv: 2},
		{name: "empty batch", batch: []int{0, 3}, sq: 2, sk: 5, d: 4, dv: 2},
	}
	for i, c := range cases {
		runAttnCase(t, ps, c, uint64(900+i))
	}
}

func BenchmarkAttention(b *testing.B) {
	// BERT-base-like: 12 heads, 512 tokens, head dim 64; a decode step;
	// a Conformer-S layer's (4 heads of 36, a key padding mask of zeros
	// added to every row); an LLM's grouped-query decode step (32 query
	// heads of 128 over 8 key/value heads).
	for _, c := range []struct {
		name      string
		sq, sk    int
		causal    bool
		heads, d  int
		maskAdded bool
		kvHeads   int // 0: heads
	}{{"encoder_4x128x128", 128, 128, false, 4, 64, false, 0}, {"prefill_12x512x512", 512, 512, false, 12, 64, false, 0},
		{"causal_12x512x512", 512, 512, true, 12, 64, false, 0}, {"decode_12x1x2048", 1, 2048, true, 12, 64, false, 0},
		{"masked_4x200x200_d36", 200, 200, false, 4, 36, true, 0}, {"masked_4x200x200_d64", 200, 200, false, 4, 64, true, 0},
		{"decode_gqa_32over8x1x512_d128", 1, 512, false, 32, 128, false, 8}} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				p := parallel.NewPool(threads)
				defer p.Close()
				h, d := c.heads, c.d
				kvh := h
				if c.kvHeads > 0 {
					kvh = c.kvHeads
				}
				r := newRand(3)
				q, k, v := randSlice(r, h*c.sq*d), randSlice(r, kvh*c.sk*d), randSlice(r, kvh*c.sk*d)
				out := make([]float32, h*c.sq*d)
				// Query heads [kv heads, group], keys and values broadcast
				// over the group, as the importer lays out grouped queries.
				rep := h / kvh
				g := AttnGeom{Batch: []int{kvh, rep}, QStrides: []int{rep * c.sq * d, c.sq * d},
					KStrides: []int{c.sk * d, 0}, VStrides: []int{c.sk * d, 0},
					Sq: c.sq, Sk: c.sk, D: d, Dv: d, Scale: float32(1 / math.Sqrt(float64(d))), Causal: c.causal}
				var mask []float32
				if c.maskAdded {
					mask = make([]float32, c.sk)
					g.MaskStrides, g.MaskColStride = []int{0, 0}, 1
				}
				for b.Loop() {
					Attention(p, out, q, k, v, mask, g)
				}
				flops := 4 * float64(h*c.sq*c.sk*d)
				if c.causal && c.sq == c.sk {
					flops /= 2
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func TestMaxNaN32(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		x    []float32
		want float32
	}{
		{nil, -inf}, {[]float32{3}, 3}, {[]float32{1, 5, 2, 4, -7}, 5}, {[]float32{-1, -2, -3, -4, -5, -6, -0.5}, -0.5},
		{[]float32{1, 2, 3, 4, 5, 6, 7, inf}, inf}, {[]float32{1, nan, 3}, nan}, {[]float32{1, 2, 3, 4, 5, 6, nan}, nan},
	} {
		got := vec.MaxNaN32(c.x)
		if got != c.want && !(got != got && c.want != c.want) {
			t.Errorf("maxNaN32(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// TestAttentionRowStrides reads q, k and v as heads of one fused
// projection's rows ([S, 3·H·D], the encoder's QKV output) through row
// strides, and checks the result against the same heads copied out
// contiguous: bit for bit, and against the reference; with and without a
// mask (which takes the scaled copy of the query rows), and rows below the
// tile.
func TestAttentionRowStrides(t *testing.T) {
	ps := pools(t)
	for ci, c := range []struct {
		h, s, d int
		mask    bool
	}{{4, 128, 64, false}, {3, 37, 16, true}, {2, 5, 8, false}, {2, 140, 8, false}} {
		r := newRand(uint64(70 + ci))
		row := 3 * c.h * c.d
		qkv := randSlice(r, c.s*row)
		var mask []float32
		if c.mask {
			mask = randSlice(r, c.s*c.s)
		}
		// Contiguous copies: [H, S, D] each.
		q, k, v := make([]float32, c.h*c.s*c.d), make([]float32, c.h*c.s*c.d), make([]float32, c.h*c.s*c.d)
		for hh := 0; hh < c.h; hh++ {
			for i := 0; i < c.s; i++ {
				for j := 0; j < c.d; j++ {
					q[(hh*c.s+i)*c.d+j] = qkv[i*row+hh*c.d+j]
					k[(hh*c.s+i)*c.d+j] = qkv[i*row+c.h*c.d+hh*c.d+j]
					v[(hh*c.s+i)*c.d+j] = qkv[i*row+2*c.h*c.d+hh*c.d+j]
				}
			}
		}
		hs := []int{c.s * c.d}
		dense := AttnGeom{Batch: []int{c.h}, QStrides: hs, KStrides: hs, VStrides: hs, Sq: c.s, Sk: c.s, D: c.d, Dv: c.d, Scale: 0.125}
		strided := dense
		strided.QStrides, strided.KStrides, strided.VStrides = []int{c.d}, []int{c.d}, []int{c.d}
		strided.QRow, strided.KRow, strided.VRow = row, row, row
		if c.mask {
			dense.MaskRowStride, dense.MaskColStride = c.s, 1
			strided.MaskRowStride, strided.MaskColStride = c.s, 1
		}
		want, scale := refAttention(q, k, v, mask, &dense)
		for _, p := range ps {
			a, b := poison(c.h*c.s*c.d), poison(c.h*c.s*c.d)
			Attention(p, a, q, k, v, mask, dense)
			Attention(p, b, qkv, qkv[c.h*c.d:], qkv[2*c.h*c.d:], mask, strided)
			tag := fmt.Sprintf("case %d threads=%d", ci, p.Threads())
			checkEqual(t, tag+" strided vs contiguous", b, a)
			checkClose(t, tag, b, want, scale, 1e-5, 1e-6)
		}
	}
}
