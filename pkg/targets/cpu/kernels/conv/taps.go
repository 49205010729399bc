package conv

import (
	"fmt"
	"sync"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// TapConv2D is Conv2D with the weights stored tap-major, [KH·KW, C, op]
// (lir.TapConv2D; op >= O, zeros past O), and one group. Native code runs
// such convolutions (cgen vectorizes them over output channels); this is
// the portable fallback, which lays the weights back out as [O, C, KH, KW]
// and runs Conv2D, so both compute the same sums.
func TapConv2D(p *parallel.Pool, out, x, w []float32, g ConvGeom, op int, ep gemm.Epilogue) {
	g.normalize()
	taps := g.KH * g.KW
	if g.Groups != 1 || op < g.O || min(g.C, g.O, taps) < 0 {
		panic(fmt.Sprintf("kernels: TapConv2D: bad geometry %+v (weight rows of %d)", g, op))
	}
	if len(w) < taps*g.C*op {
		panic(fmt.Sprintf("kernels: TapConv2D: weights of %d elements, want %d", len(w), taps*g.C*op))
	}
	buf := tapPool.Get().(*[]float32)
	defer tapPool.Put(buf)
	*buf = grow(*buf, g.O*g.C*taps)
	wt := (*buf)[:g.O*g.C*taps]
	for t := 0; t < taps; t++ {
		for c := 0; c < g.C; c++ {
			row := w[(t*g.C+c)*op:][:g.O]
			for o, v := range row {
				wt[(o*g.C+c)*taps+t] = v
			}
		}
	}
	Conv2D(p, out, x, wt, g, ep)
}

// tapPool recycles TapConv2D's weight buffers.
var tapPool = sync.Pool{New: func() any { return new([]float32) }}
