package kernelgen

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestAttentionNumeric runs attention on the Vulkan device against a
// float64 reference: the tiled kernel at query and key counts its blocks
// do not divide, batched, causal with more keys than queries, with an
// additive mask, with a value width past one column per invocation, and
// a head dim too large for it (the row-at-a-time kernel).
func TestAttentionNumeric(t *testing.T) {
	device(t)
	type at struct {
		batch          []int64
		sq, sk, d, dv  int64
		causal, masked bool
	}
	for _, c := range []at{
		{[]int64{2, 3}, 20, 37, 64, 64, false, false},
		{[]int64{4}, 128, 128, 64, 64, true, false},
		{nil, 5, 70, 32, 48, true, true},
		{[]int64{2}, 33, 33, 16, 100, false, true},
		{nil, 7, 9, 128, 8, true, false},
		// Causal, the first query block's horizon one key into a block.
		{nil, 40, 57, 32, 32, true, false},
		// Enough rows for 16 (then 8) query rows a workgroup; the rest
		// take 4.
		{[]int64{64}, 40, 45, 16, 16, true, false},
		{[]int64{16}, 64, 64, 16, 24, false, true},
	} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			nb := tensor.NumElements(c.batch)
			r := rand.New(rand.NewSource(c.sq*100 + c.sk))
			q, k, v := randF32(r, nb*c.sq*c.d), randF32(r, nb*c.sk*c.d), randF32(r, nb*c.sk*c.dv)
			strides := func(mat int64) []int64 {
				s := make([]int64, len(c.batch))
				for i := len(c.batch) - 1; i >= 0; i-- {
					s[i] = mat
					mat *= c.batch[i]
				}
				return s
			}
			geom := lir.AttnGeom{Batch: c.batch, QStrides: strides(c.sq * c.d), KStrides: strides(c.sk * c.d), VStrides: strides(c.sk * c.dv),
				Sq: c.sq, Sk: c.sk, D: c.d, Dv: c.dv, Scale: 1 / math.Sqrt(float64(c.d)), Causal: c.causal}
			op := &lir.Attention{Q: 0, K: 1, V: 2, Mask: lir.NoBuf, Out: 3, Geom: geom}
			data := [][]float32{q, k, v}
			sizes := []int64{int64(len(q)), int64(len(k)), int64(len(v))}
			var mask []float32
			if c.masked {
				// One mask row per query, shared by the batch; some keys
				// masked out.
				mask = randF32(r, c.sq*c.sk)
				for i := range mask {
					if i%7 == 3 {
						mask[i] = float32(math.Inf(-1))
					}
				}
				op.Mask, op.Out = 3, 4
				op.Geom.MaskStrides = make([]int64, len(c.batch))
				op.Geom.MaskRowStride, op.Geom.MaskColStride = c.sk, 1
				data = append(data, mask)
				sizes = append(sizes, int64(len(mask)))
			}
			nout := nb * c.sq * c.dv
			data = append(data, make([]float32, nout))
			sizes = append(sizes, nout)
			t.Logf("%d query rows a workgroup", attnRows(c.sq, nb))
			got, _ := runF32(t, f32Program(op, sizes...), gemmPlan{planGemm, f32Tiles}, data, op.Out)
			want := make([]float64, nout)
			for b := range nb {
				for i := range c.sq {
					sc := make([]float64, c.sk)
					mx := math.Inf(-1)
					for j := range c.sk {
						sc[j] = math.Inf(-1)
						if c.causal && j > i+c.sk-c.sq {
							continue
						}
						s := 0.0
						for e := range c.d {
							s += float64(q[(b*c.sq+i)*c.d+e]) * float64(k[(b*c.sk+j)*c.d+e])
						}
						s *= geom.Scale
						if mask != nil {
							s += float64(mask[i*c.sk+j])
						}
						sc[j] = s
						mx = max(mx, s)
					}
					sum := 0.0
					for j := range sc {
						if !math.IsInf(sc[j], -1) {
							sc[j] = math.Exp(sc[j] - mx)
						} else {
							sc[j] = 0
						}
						sum += sc[j]
					}
					for e := range c.dv {
						o := 0.0
						for j := range c.sk {
							o += sc[j] * float64(v[(b*c.sk+j)*c.dv+e])
						}
						want[(b*c.sq+i)*c.dv+e] = o / sum
					}
				}
			}
			checkClose(t, got, want)
		})
	}
}

func TestAttnRows(t *testing.T) {
	for _, c := range []struct{ sq, nb, want int64 }{
		{128, 4, 4},   // GPT and the encoder at batch 1: 4 heads
		{128, 16, 16}, // 16 heads
		{64, 16, 8},
		{512, 16, 16}, // a longer sequence
		{2048, 1, 16},
		{5, 1, 4},
	} {
		if got := attnRows(c.sq, c.nb); got != c.want {
			t.Errorf("%d queries in %d batches: %d rows a workgroup, want %d", c.sq, c.nb, got, c.want)
		}
	}
}
