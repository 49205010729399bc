package conv

import (
	"fmt"
	"sync"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// TapConv2D is Conv2D with the weights stored tap-major in panels of
// panel output channels, each [KH·KW, C, width] (lir.TapMajor; op >= O
// channels in all, zeros past O), and one group. Native code runs
// such convolutions (cgen vectorizes them over output channels); this is
// the portable fallback, which lays the weights back out as [O, C, KH, KW]
// and runs Conv2D, so both compute the same sums.
func TapConv2D(p *parallel.Pool, out, x, w []float32, g ConvGeom, op, panel int, ep gemm.Epilogue) {
	g.normalize()
	taps := g.KH * g.KW
	if g.Groups != 1 || op < g.O || panel < 1 || min(g.C, g.O, taps) < 0 {
		panic(fmt.Sprintf("kernels: TapConv2D: bad geometry %+v (weight rows of %d)", g, op))
	}
	if len(w) < taps*g.C*op {
		panic(fmt.Sprintf("kernels: TapConv2D: weights of %d elements, want %d", len(w), taps*g.C*op))
	}
	buf := tapPool.Get().(*[]float32)
	defer tapPool.Put(buf)
	*buf = grow(*buf, g.O*g.C*taps)
	wt := (*buf)[:g.O*g.C*taps]
	for p0 := 0; p0 < g.O; p0 += panel {
		width := min(panel, op-p0)
		pw := w[p0*taps*g.C:]
		for t := 0; t < taps; t++ {
			for c := 0; c < g.C; c++ {
				row := pw[(t*g.C+c)*width:][:min(width, g.O-p0)]
				for o, v := range row {
					wt[((p0+o)*g.C+c)*taps+t] = v
				}
			}
		}
	}
	Conv2D(p, out, x, wt, g, ep)
}

// tapPool recycles TapConv2D's weight buffers.
var tapPool = sync.Pool{New: func() any { return new([]float32) }}
