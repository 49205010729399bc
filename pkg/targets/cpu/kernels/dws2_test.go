package kernels

import (
	"fmt"
	"math"
	"testing"
)

// TestDwS2Plan checks which stride-2 geometries read in place and that the
// span's blocks stay inside the row: every block's input columns
// 2j0-1 .. 2j0+15 inside [-1, W), its outputs inside [0, OW).
func TestDwS2Plan(t *testing.T) {
	for w := 1; w <= 80; w++ {
		for _, ceil := range []bool{false, true} {
			g := convGeom(1, 1, 9, w, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, ceil)
			sp, ok := dwS2Plan(&g)
			if !ok {
				if w >= 16 && g.OW >= 8 {
					t.Errorf("W=%d OW=%d: no span", w, g.OW)
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
			for _, j0 := range starts {
				if 2*j0+15 >= w || j0+8 > g.OW || j0 > covered {
					t.Fatalf("W=%d OW=%d: block at %d outside the row or leaving a gap (span %+v)", w, g.OW, j0, sp)
				}
				covered = max(covered, j0+8)
			}
			if covered != sp.end {
				t.Errorf("W=%d: blocks cover [0, %d), span says end %d", w, covered, sp.end)
			}
		}
	}
	for _, g := range []ConvGeom{
		convGeom(1, 1, 20, 40, 1, 3, 3, 2, 2, 1, 0, 1, 1, 1, 1, 1, false), // left padding 0
		convGeom(1, 1, 20, 40, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false), // stride 1
		convGeom(1, 1, 20, 40, 1, 3, 3, 2, 2, 2, 1, 2, 1, 2, 2, 1, false), // dilated
	} {
		if _, ok := dwS2Plan(&g); ok {
			t.Errorf("%+v: in-place stride-2 path taken", g)
		}
	}
}

// TestDwS2Rows checks the assembly row kernel against its Go twin over
// several rows and row widths (NaN and the clamp included).
func TestDwS2Rows(t *testing.T) {
	for _, w := range []int{16, 17, 18, 19, 33, 34, 56, 112, 113} {
		g := convGeom(1, 1, 11, w, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, false)
		sp, ok := dwS2Plan(&g)
		if !ok {
			t.Fatalf("W=%d: no span", w)
		}
		r := newRand(uint64(w))
		x := randSlice(r, 11*w)
		x[3*w+9] = float32(math.NaN())
		var wt dwS2Weights
		copy(wt[:], randSlice(r, 12))
		wt[9], wt[10], wt[11] = 0.125, -1.5, 2
		rows := [3][]float32{x[1*w:], x[2*w:], x[3*w:]}
		n := 4
		got, want := poison(n*g.OW), poison(n*g.OW)
		dwS2Rows(got, g.OW, &rows, 2*w, n, sp, &wt)
		dwS2RowsGo(want, g.OW, &rows, 2*w, n, sp, &wt)
		for i := range got {
			a, b := got[i], want[i]
			if math.IsNaN(float64(a)) != math.IsNaN(float64(b)) || math.Abs(float64(a-b)) > 1e-5 {
				t.Fatalf("W=%d: output %d (row %d col %d) = %g, twin %g", w, i, i/g.OW, i%g.OW, a, b)
			}
		}
	}
}

// BenchmarkDwS2 times the stride-2 planes of MobileNetV2 on the in-place
// path against the phase-split flat path it replaced.
func BenchmarkDwS2(b *testing.B) {
	for _, c := range []struct{ C, H int }{{96, 112}, {144, 56}} {
		g := convGeom(1, c.C, c.H, c.H, c.C, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, c.C, false)
		r := newRand(1)
		x, w, bias := randSlice(r, c.C*c.H*c.H), randSlice(r, c.C*9), randSlice(r, c.C)
		out := make([]float32, c.C*g.OH*g.OW)
		sp, _ := dwS2Plan(&g)
		zero := make([]float32, c.H)
		hw, s := c.H*c.H, g.OH*g.OW
		b.Run(fmt.Sprintf("C%d_H%d/inplace", c.C, c.H), func(b *testing.B) {
			for b.Loop() {
				for o := 0; o < c.C; o++ {
					dwS2Plane(out[o*s:(o+1)*s], x[o*hw:(o+1)*hw], &g, sp, w[o*9:], bias[o], 0, 6, zero)
				}
			}
		})
		b.Run(fmt.Sprintf("C%d_H%d/phases", c.C, c.H), func(b *testing.B) {
			var d dwSmall
			for b.Loop() {
				for o := 0; o < c.C; o++ {
					d.plane(out[o*s:(o+1)*s], x[o*hw:(o+1)*hw], &g, w[o*9:], bias[o], 0, 6)
				}
			}
		})
	}
}
