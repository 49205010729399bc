package conv

import (
	"fmt"
	"math"
	"testing"
)

// TestDwPlan checks which geometries read in place and that the span's
// blocks stay inside the row and cover it without gaps: a block at j0
// reads input columns st·j0-1 .. st·j0+8·st-st+1, of which only -1 (and,
// for the last block at stride 1, W) may lie outside, as padding.
func TestDwPlan(t *testing.T) {
	for _, st := range []int{1, 2} {
		for w := 1; w <= 80; w++ {
			for _, ceil := range []bool{false, true} {
				g := convGeom(1, 1, 9, w, 1, 3, 3, st, st, 1, 1, 1, 1, 1, 1, 1, ceil)
				sp, ok := dwPlan(&g)
				if !ok {
					if w >= 16 && g.OW >= 8 {
						t.Errorf("stride %d W=%d OW=%d: no span", st, w, g.OW)
					}
					continue
				}
				starts := []int{}
				for b := 0; b <= sp.blocks; b++ {
					starts = append(starts, 8*b)
				}
				if sp.last > 0 {
					starts = append(starts, sp.last)
				}
				covered := 0
				for i, j0 := range starts {
					hi := st*(j0+7) + 1 // the last block's right tap
					if st == 1 && i == len(starts)-1 {
						hi-- // made in registers
					}
					if hi >= w || j0+8 > g.OW || j0 > covered {
						t.Fatalf("stride %d W=%d OW=%d: block at %d outside the row or leaving a gap (span %+v)", st, w, g.OW, j0, sp)
					}
					covered = max(covered, j0+8)
				}
				if covered != sp.end || (st == 1 && sp.end != g.OW) {
					t.Errorf("stride %d W=%d: blocks cover [0, %d), span says end %d, OW %d", st, w, covered, sp.end, g.OW)
				}
			}
		}
	}
	for _, g := range []ConvGeom{
		convGeom(1, 1, 20, 40, 1, 3, 3, 2, 2, 1, 0, 1, 1, 1, 1, 1, false), // left padding 0
		convGeom(1, 1, 20, 40, 1, 3, 3, 1, 1, 1, 1, 1, 0, 1, 1, 1, false), // stride 1, no right padding
		convGeom(1, 1, 20, 40, 1, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, false), // strides differ
		convGeom(1, 1, 20, 40, 1, 3, 3, 2, 2, 2, 1, 2, 1, 2, 2, 1, false), // dilated
		convGeom(1, 1, 20, 15, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false), // rows under 16
	} {
		if _, ok := dwPlan(&g); ok {
			t.Errorf("%+v: in-place path taken", g)
		}
	}
}

// TestDwRows checks the assembly row kernels against their Go twin over
// several rows and row widths (NaN and the clamp included).
func TestDwRows(t *testing.T) {
	for _, st := range []int{1, 2} {
		for _, w := range []int{16, 17, 18, 19, 24, 25, 33, 34, 56, 112, 113} {
			g := convGeom(1, 1, 11, w, 1, 3, 3, st, st, 1, 1, 1, 1, 1, 1, 1, false)
			sp, ok := dwPlan(&g)
			if !ok {
				t.Fatalf("stride %d W=%d: no span", st, w)
			}
			r := newRand(uint64(w))
			x := randSlice(r, 11*w)
			x[3*w+9] = float32(math.NaN())
			var wt dwWeights
			copy(wt[:], randSlice(r, 12))
			wt[9], wt[10], wt[11] = 0.125, -1.5, 2
			rows := [3][]float32{x[1*w:], x[2*w:], x[3*w:]}
			n := 3
			got, want := poison(n*g.OW), poison(n*g.OW)
			dwRowsVec(got, g.OW, &rows, st*w, n, sp, &wt)
			dwRowsGo(want, g.OW, &rows, st*w, n, sp, &wt, w)
			for i := 0; i < n*g.OW; i++ {
				if i%g.OW >= sp.end {
					continue // computed one by one outside the row kernels
				}
				a, b := got[i], want[i]
				if math.IsNaN(float64(a)) != math.IsNaN(float64(b)) || math.Abs(float64(a-b)) > 1e-5 {
					t.Fatalf("stride %d W=%d: output %d (row %d col %d) = %g, twin %g", st, w, i, i/g.OW, i%g.OW, a, b)
				}
			}
		}
	}
}

// BenchmarkDwInPlace times MobileNetV2's depthwise planes at 112x112 and
// 56x56 on the in-place path against the flat path over a zero-bordered
// copy (phase planes at stride 2) that they replaced.
func BenchmarkDwInPlace(b *testing.B) {
	for _, c := range []struct{ C, H, S int }{{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2}} {
		g := convGeom(1, c.C, c.H, c.H, c.C, 3, 3, c.S, c.S, 1, 1, 1, 1, 1, 1, c.C, false)
		r := newRand(1)
		x, w, bias := randSlice(r, c.C*c.H*c.H), randSlice(r, c.C*9), randSlice(r, c.C)
		out := make([]float32, c.C*g.OH*g.OW)
		sp, _ := dwPlan(&g)
		zero := make([]float32, c.H)
		hw, s := c.H*c.H, g.OH*g.OW
		b.Run(fmt.Sprintf("C%d_H%d_s%d/inplace", c.C, c.H, c.S), func(b *testing.B) {
			for b.Loop() {
				for o := 0; o < c.C; o++ {
					dwPlane(out[o*s:(o+1)*s], x[o*hw:(o+1)*hw], &g, sp, w[o*9:], bias[o], 0, 6, zero)
				}
			}
		})
		b.Run(fmt.Sprintf("C%d_H%d_s%d/bordered", c.C, c.H, c.S), func(b *testing.B) {
			var d dwSmall
			for b.Loop() {
				for o := 0; o < c.C; o++ {
					d.plane(out[o*s:(o+1)*s], x[o*hw:(o+1)*hw], &g, w[o*9:], bias[o], 0, 6)
				}
			}
		})
	}
}
