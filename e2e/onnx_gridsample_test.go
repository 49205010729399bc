package e2e

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// gridSampleRef is ONNX's GridSample of x [N, C, H, W] at grid [N, Ho,
// Wo, 2], in float64: bilinear or nearest (half to even), zeros or
// border padding.
func gridSampleRef(x []float32, n, c, h, w int, grid []float32, ho, wo int, nearest, border, align bool) []float64 {
	// The coordinates in float32, as PyTorch and ONNX Runtime compute
	// them: a point like -0.2 lands on a rounding tie (1.5) in float32
	// but not in float64.
	unnorm := func(g float32, size int) float64 {
		var p float32
		if align {
			p = (g + 1) * 0.5 * float32(size-1)
		} else {
			p = ((g+1)*float32(size) - 1) * 0.5
		}
		if border {
			p = min(max(p, 0), float32(size-1))
		}
		return float64(p)
	}
	at := func(b, ch, yy, xx int) float64 {
		if xx < 0 || xx >= w || yy < 0 || yy >= h {
			return 0
		}
		return float64(x[((b*c+ch)*h+yy)*w+xx])
	}
	out := make([]float64, n*c*ho*wo)
	for b := range n {
		for i := range ho {
			for j := range wo {
				g := grid[((b*ho+i)*wo+j)*2:]
				px, py := unnorm(g[0], w), unnorm(g[1], h)
				for ch := range c {
					var v float64
					if nearest {
						v = at(b, ch, int(math.RoundToEven(py)), int(math.RoundToEven(px)))
					} else {
						x0, y0 := math.Floor(px), math.Floor(py)
						fx, fy := px-x0, py-y0
						xi, yi := int(x0), int(y0)
						v = at(b, ch, yi, xi)*(1-fx)*(1-fy) + at(b, ch, yi, xi+1)*fx*(1-fy) +
							at(b, ch, yi+1, xi)*(1-fx)*fy + at(b, ch, yi+1, xi+1)*fx*fy
					}
					out[((b*c+ch)*ho+i)*wo+j] = v
				}
			}
		}
	}
	return out
}

// TestONNXGridSample: every mode, padding and align_corners against the
// definition, with grid points inside, on and past the input's edges,
// over a symbolic input height at two sizes; with 3 channels (gathered
// from X's planes; one image, where the transposes are views, and two)
// and 12 (gathered as rows of channels).
func TestONNXGridSample(t *testing.T) {
	const w, ho, wo = 5, 4, 6
	for _, nc := range [][2]int{{2, 3}, {1, 3}, {2, 12}} {
		n, c := nc[0], nc[1]
		grid := make([]float32, n*ho*wo*2)
		for i := range grid {
			// from -1.3 to 1.3: points past both edges, and the edges and
			// centres exactly at i = 13, 26, 39 (steps of 0.1 on a 27-cycle)
			grid[i] = float32(i%27-13) / 10
		}
		for _, mode := range []string{"bilinear", "nearest"} {
			for _, pad := range []string{"zeros", "border"} {
				for _, align := range []int64{0, 1} {
					g := &graph{outs: []string{"y"}}
					g.input("x", n, c, "h", w)
					g.input("grid", n, ho, wo, 2)
					g.node("GridSample", []string{"x", "grid"}, []string{"y"}, as("mode", mode), as("padding_mode", pad), ai("align_corners", align))
					for _, h := range []int{4, 7} {
						x := seq(n*c*h*w, 2)
						out := runONNXAt(t, g, 16, specialize.Binding{"h": int64(h)}, map[string]*tensor.Tensor{
							"x": tensor.FromF32([]int64{int64(n), int64(c), int64(h), w}, x), "grid": tensor.FromF32([]int64{int64(n), ho, wo, 2}, grid)})
						want := gridSampleRef(x, n, c, h, w, grid, ho, wo, mode == "nearest", pad == "border", align == 1)
						shapeIs(t, "GridSample", out[0], n, c, ho, wo)
						nearTol(t, fmt.Sprintf("GridSample n=%d c=%d %s %s align_corners=%d h=%d", n, c, mode, pad, align, h), out[0].F32(), want, 2e-6)
					}
				}
			}
		}
	}
}

// TestONNXGridSampleTargets: bilinear GridSample from planes (3 channels)
// and from rows (12) on the cpu target and, where this machine has one,
// vulkan, against the definition.
func TestONNXGridSampleTargets(t *testing.T) {
	const n, h, w, ho, wo = 2, 6, 5, 4, 3
	grid := make([]float32, n*ho*wo*2)
	for i := range grid {
		grid[i] = float32(i%23-11) / 9
	}
	for _, c := range []int{3, 12} {
		g := &graph{outs: []string{"y"}}
		g.input("x", n, c, h, w)
		g.input("grid", n, ho, wo, 2)
		g.node("GridSample", []string{"x", "grid"}, []string{"y"})
		x := seq(n*c*h*w, 3)
		want := gridSampleRef(x, n, c, h, w, grid, ho, wo, false, false, false)
		lowered(t, g, 16, specialize.Binding{}, map[string]*tensor.Tensor{
			"x": tensor.FromF32([]int64{n, int64(c), h, w}, x), "grid": tensor.FromF32([]int64{n, ho, wo, 2}, grid)},
			func(t *testing.T, out []*tensor.Tensor) {
				shapeIs(t, "GridSample", out[0], n, c, ho, wo)
				nearTol(t, fmt.Sprintf("GridSample c=%d", c), out[0].F32(), want, 2e-6)
			})
	}
}
