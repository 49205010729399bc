package gemm

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
)

// refBatchMatMul broadcasts by unravelling each output batch index and
// clamping it per operand (a size-1 or missing dim reads index 0).
func refBatchMatMul(a []float32, aShape []int, b []float32, bShape []int, batch []int, ep *Epilogue) (want, scale []float64) {
	ra, rb := len(aShape), len(bShape)
	m, k, n := aShape[ra-2], aShape[ra-1], bShape[rb-1]
	nb := prod(batch)
	want = make([]float64, nb*m*n)
	scale = make([]float64, nb*m*n)
	offset := func(idx []int, shape []int, mat int) int {
		// shape is the operand's batch shape, right-aligned with idx.
		off, stride := 0, mat
		for d := len(shape) - 1; d >= 0; d-- {
			i := idx[len(idx)-len(shape)+d]
			if shape[d] == 1 {
				i = 0
			}
			off += i * stride
			stride *= shape[d]
		}
		return off
	}
	idx := make([]int, len(batch))
	for bi := 0; bi < nb; bi++ {
		rem := bi
		for d := len(batch) - 1; d >= 0; d-- {
			idx[d] = rem % batch[d]
			rem /= batch[d]
		}
		ao := offset(idx, aShape[:ra-2], m*k)
		bo := offset(idx, bShape[:rb-2], k*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s, mag float64
				for p := 0; p < k; p++ {
					v := float64(a[ao+i*k+p]) * float64(b[bo+p*n+j])
					s += v
					mag += math.Abs(v)
				}
				o := bi*m*n + i*n + j
				var bias, res float64
				if ep.Bias != nil {
					bias = float64(ep.Bias[j])
				}
				if ep.Residual != nil {
					res = float64(ep.Residual[o])
				}
				want[o] = refEpilogue(ep, s, bias, res)
				scale[o] = mag + math.Abs(bias) + math.Abs(res)
			}
		}
	}
	return want, scale
}

func TestBatchMatMul(t *testing.T) {
	ps := pools(t)
	cases := []struct{ aBatch, bBatch, outBatch []int }{
		{nil, nil, nil},
		{[]int{2, 3}, nil, []int{2, 3}},               // b shared: folds into one Gemm
		{[]int{3}, []int{1}, []int{3}},                // b batch of 1s: folds too
		{nil, []int{4}, []int{4}},                     // a broadcast
		{[]int{2, 1}, []int{1, 3}, []int{2, 3}},       // both broadcast
		{[]int{5}, []int{5}, []int{5}},                // plain batch
		{[]int{1, 1}, []int{2}, []int{1, 2}},          // rank extension
		{[]int{2, 1, 3}, []int{4, 1}, []int{2, 4, 3}}, // mixed
		{[]int{0}, nil, []int{0}},                     // empty batch
		{[]int{2}, []int{0, 1}, []int{0, 2}},          // empty broadcast batch
	}
	seed := uint64(0)
	for _, c := range cases {
		for _, mkn := range [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {4, 0, 3}, {0, 3, 2}, {65, 17, 3}} {
			for _, epi := range []int{0, 1, 2} {
				seed++
				m, k, n := mkn[0], mkn[1], mkn[2]
				r := newRand(seed)
				aShape := append(append([]int{}, c.aBatch...), m, k)
				bShape := append(append([]int{}, c.bBatch...), k, n)
				a, b := randSlice(r, prod(aShape)), randSlice(r, prod(bShape))
				nOut := prod(c.outBatch) * m * n
				ep := Epilogue{}
				switch epi {
				case 1:
					ep = Epilogue{Bias: randSlice(r, n), Act: vec.ActGelu, Residual: randSlice(r, nOut)}
				case 2:
					ep = Epilogue{Bias: randSlice(r, n), Act: vec.ActRelu, Residual: randSlice(r, nOut), ActLast: true}
				}
				want, scale := refBatchMatMul(a, aShape, b, bShape, c.outBatch, &ep)
				var first []float32
				for _, p := range ps {
					out := poison(nOut)
					BatchMatMul(p, out, a, aShape, b, bShape, ep)
					tag := fmt.Sprintf("BatchMatMul %v·%v ep=%d threads=%d", aShape, bShape, epi, p.Threads())
					checkClose(t, tag, out, want, scale, 1e-5, 1e-6)
					if first == nil {
						first = out
					} else {
						checkEqual(t, tag+" vs 1 thread", out, first)
					}
				}
			}
		}
	}
}

func TestBatchMatMulManySmall(t *testing.T) {
	// Enough small matrices that the batch, not the Gemm, is split.
	ps := pools(t)
	r := newRand(99)
	aShape, bShape := []int{8, 4, 6, 5}, []int{8, 4, 5, 7}
	a, b := randSlice(r, prod(aShape)), randSlice(r, prod(bShape))
	ep := Epilogue{Bias: randSlice(r, 7), Act: vec.ActRelu}
	want, scale := refBatchMatMul(a, aShape, b, bShape, []int{8, 4}, &ep)
	for _, p := range ps {
		out := poison(8 * 4 * 6 * 7)
		BatchMatMul(p, out, a, aShape, b, bShape, ep)
		checkClose(t, fmt.Sprint("threads=", p.Threads()), out, want, scale, 1e-5, 1e-6)
	}
}

// TestBatchMatMulFewRowsBlocks covers few-row products over several k
// blocks of gemv (partial sums per block, added in order): against the
// reference, and bit for bit across thread counts.
func TestBatchMatMulFewRowsBlocks(t *testing.T) {
	ps := pools(t)
	for i, mkn := range [][3]int{{2, 1100, 300}, {1, 1536, 4100}, {4, 513, 64}} {
		m, k, n := mkn[0], mkn[1], mkn[2]
		r := newRand(uint64(700 + i))
		a, b := randSlice(r, m*k), randSlice(r, k*n)
		ep := Epilogue{Bias: randSlice(r, n), Act: vec.ActGelu, Residual: randSlice(r, m*n)}
		want, scale := refBatchMatMul(a, []int{m, k}, b, []int{k, n}, nil, &ep)
		var first []float32
		for _, p := range ps {
			out := poison(m * n)
			BatchMatMul(p, out, a, []int{m, k}, b, []int{k, n}, ep)
			tag := fmt.Sprintf("BatchMatMul %v threads=%d", mkn, p.Threads())
			checkClose(t, tag, out, want, scale, 1e-5, 1e-6)
			if first == nil {
				first = out
			} else {
				checkEqual(t, tag+" vs 1 thread", out, first)
			}
		}
	}
}
