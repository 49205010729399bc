package e2e

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// activationInput is 64 values over [-120, 120] with the small ones
// dense, where softplus neither overflows nor underflows in f32 as long
// as it is computed in a stable form.
func activationInput() []float32 {
	x := make([]float32, 64)
	for i := range x {
		v := float64(i-32) / 4
		if i%5 == 0 {
			v *= 15
		}
		x[i] = float32(v)
	}
	return x
}

// TestONNXSoftplusHardSigmoid checks Softplus (stable for large |x|),
// HardSigmoid with its defaults and with alpha and beta, and that
// x * Tanh(Softplus(x)), PyTorch's nn.Mish before opset 18, imports as
// mish.
func TestONNXSoftplusHardSigmoid(t *testing.T) {
	x := activationInput()
	g := &graph{outs: []string{"sp", "hs", "hs2", "mish", "mish2"}}
	g.input("x", 4, 16)
	g.node("Softplus", []string{"x"}, []string{"sp"})
	g.node("HardSigmoid", []string{"x"}, []string{"hs"})
	g.node("HardSigmoid", []string{"x"}, []string{"hs2"}, af("alpha", 0.35), af("beta", 0.25))
	g.node("Softplus", []string{"x"}, []string{"sp_m"})
	g.node("Tanh", []string{"sp_m"}, []string{"t_m"})
	g.node("Mul", []string{"x", "t_m"}, []string{"mish"})
	g.node("Mul", []string{"t_m", "x"}, []string{"mish2"})
	softplus := func(v float64) float64 { return math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v))) }
	want := make([][]float64, 5)
	for _, v32 := range x {
		v := float64(v32)
		hs := func(a, b float64) float64 { return math.Min(1, math.Max(0, a*v+b)) }
		m := v * math.Tanh(softplus(v))
		want[0] = append(want[0], softplus(v))
		want[1] = append(want[1], hs(float64(float32(0.2)), float64(float32(0.5))))
		want[2] = append(want[2], hs(float64(float32(0.35)), float64(float32(0.25))))
		want[3] = append(want[3], m)
		want[4] = append(want[4], m)
	}
	hir := lowered(t, g, 17, nil, map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(4, 16), x)}, func(t *testing.T, out []*tensor.Tensor) {
		for i, name := range g.outs {
			shapeIs(t, name, out[i], 4, 16)
			near(t, name, out[i].F32(), want[i])
		}
	})
	if n := strings.Count(hir, "= mish(x)"); n != 2 {
		t.Errorf("%d mish(x), want 2 (x * Tanh(Softplus(x)) both ways):\n%s", n, hir)
	}
}

// TestONNXRangeEmpty checks that a Range whose limit lies on the wrong
// side of its start (for the sign of delta) is empty, as ONNX's count
// max(ceil((limit - start) / delta), 0) says, rather than an error; and
// that the count still rounds up for a non-empty one.
func TestONNXRangeEmpty(t *testing.T) {
	g := &graph{outs: []string{"r1", "r2", "r3", "r4", "y"}}
	g.input("x", 3)
	g.initI64("five", nil, []int64{5})
	g.initI64("two", nil, []int64{2})
	g.initI64("one", nil, []int64{1})
	g.initI64("mthree", nil, []int64{-3})
	g.inits = append(g.inits,
		&onnxpb.Tensor{Name: "f2", DataType: 1, FloatData: []float32{2}},
		&onnxpb.Tensor{Name: "f7", DataType: 1, FloatData: []float32{7}},
		&onnxpb.Tensor{Name: "fm1", DataType: 1, FloatData: []float32{-1}})
	g.node("Range", []string{"five", "two", "one"}, []string{"r1"})   // 5 > 2, delta 1: empty
	g.node("Range", []string{"f2", "f7", "fm1"}, []string{"r2"})      // 2 < 7, delta -1: empty
	g.node("Range", []string{"two", "two", "mthree"}, []string{"r3"}) // zero span: empty
	g.node("Range", []string{"five", "mthree", "mthree"}, []string{"r4"})
	g.node("Relu", []string{"x"}, []string{"y"})
	lowered(t, g, 17, nil, map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(3), []float32{-1, 0, 2})}, func(t *testing.T, out []*tensor.Tensor) {
		for i := 0; i < 3; i++ {
			shapeIs(t, g.outs[i], out[i], 0)
		}
		if got := out[3].I64(); len(got) != 3 || got[0] != 5 || got[1] != 2 || got[2] != -1 {
			t.Errorf("Range(5, -3, -3) = %v, want [5 2 -1]", got)
		}
		near(t, "y", out[4].F32(), []float64{0, 0, 2})
	})
}

// cubicRef1D is ONNX's reference cubic interpolation of one line (onnx's
// reference op_resize.py): the four input pixels nearest to the source
// coordinate in the line padded by 2 with its edge values, the Keys
// coefficients for ratio = xo - floor(xo) (1 when xo is integral), and with
// exclude_outside the weights of pixels outside the line zeroed and the
// rest renormalized.
func cubicRef1D(line []float64, xo, a float64, exclude bool) float64 {
	n := len(line)
	ratio := xo - math.Floor(xo)
	if xo == math.Floor(xo) {
		ratio = 1
	}
	r := ratio
	coeffs := []float64{
		((a*(r+1)-5*a)*(r+1)+8*a)*(r+1) - 4*a,
		((a+2)*r-(a+3))*r*r + 1,
		((a+2)*(1-r)-(a+3))*(1-r)*(1-r) + 1,
		((a*((1-r)+1)-5*a)*((1-r)+1)+8*a)*((1-r)+1) - 4*a,
	}
	// The 4 nearest indices of the padded line (ties to the lower index).
	const pad = 2
	x := xo + pad
	idx := make([]int, 0, n+2*pad)
	for i := 0; i < n+2*pad; i++ {
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(i, j int) bool {
		di, dj := math.Abs(x-float64(idx[i])), math.Abs(x-float64(idx[j]))
		if di != dj {
			return di < dj
		}
		return idx[i] < idx[j]
	})
	near4 := append([]int(nil), idx[:4]...)
	sort.Ints(near4)
	sum, total := 0.0, 0.0
	for k, p := range near4 {
		j := p - pad
		if exclude && (j < 0 || j >= n) {
			coeffs[k] = 0
		}
		total += coeffs[k]
	}
	for k, p := range near4 {
		c := coeffs[k]
		if exclude {
			c /= total
		}
		sum += c * line[min(max(p-pad, 0), n-1)]
	}
	return sum
}

// cubicRef resizes x [nc, h, w] to [nc, oh, ow] along H, then W.
func cubicRef(x []float32, nc, h, w, oh, ow int, scH, scW float64, ctm string, a float64, exclude bool) []float64 {
	coord := func(i int, scale float64, in, out int) float64 {
		fi := float64(i)
		switch ctm {
		case "align_corners":
			if out == 1 {
				return 0
			}
			return fi * float64(in-1) / float64(out-1)
		case "asymmetric":
			return fi / scale
		case "pytorch_half_pixel":
			if out == 1 {
				return 0
			}
		case "tf_half_pixel_for_nn":
			return (fi + 0.5) / scale
		}
		return (fi+0.5)/scale - 0.5
	}
	out := make([]float64, nc*oh*ow)
	for p := 0; p < nc; p++ {
		mid := make([][]float64, oh) // [oh][w]
		for i := range mid {
			mid[i] = make([]float64, w)
			for j := 0; j < w; j++ {
				col := make([]float64, h)
				for y := range col {
					col[y] = float64(x[(p*h+y)*w+j])
				}
				mid[i][j] = cubicRef1D(col, coord(i, scH, h, oh), a, exclude)
			}
		}
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				out[(p*oh+i)*ow+j] = cubicRef1D(mid[i], coord(j, scW, w, ow), a, exclude)
			}
		}
	}
	return out
}

// TestONNXResizeCubic checks Resize mode=cubic against ONNX's reference
// algorithm, with static and symbolic sizes, each coordinate mode,
// cubic_coeff_a and exclude_outside, up and down.
func TestONNXResizeCubic(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	const N, C, H, W = 1, 2, 5, 6
	x := seq(N*C*H*W, 1)
	type cc struct {
		ctm      string
		a        float64 // 0: the default, -0.75
		exclude  bool
		scales   []float32
		symSizes []int64 // sizes as Shape(x) * these
		sizes    []int64
	}
	cases := []cc{
		{ctm: "half_pixel", scales: []float32{1, 1, 2, 2}},
		{ctm: "pytorch_half_pixel", scales: []float32{1, 1, 2, 1.5}},
		{ctm: "align_corners", sizes: []int64{N, C, 9, 4}},
		{ctm: "asymmetric", scales: []float32{1, 1, 0.5, 3}},
		{ctm: "tf_half_pixel_for_nn", scales: []float32{1, 1, 1.5, 2}},
		{ctm: "half_pixel", a: -0.5, exclude: true, scales: []float32{1, 1, 3, 0.5}},
		{ctm: "half_pixel", exclude: true, symSizes: []int64{1, 1, 2, 3}},
		{ctm: "align_corners", a: -0.5, symSizes: []int64{1, 1, 3, 2}},
		{ctm: "pytorch_half_pixel", symSizes: []int64{1, 1, 1, 2}},
		{ctm: "half_pixel", scales: []float32{1, 1, 1, 1}},
	}
	for _, sym := range []bool{false, true} {
		t.Run(fmt.Sprintf("symbolic=%v", sym), func(t *testing.T) {
			g := &graph{}
			var b specialize.Binding
			if sym {
				g.input("x", N, C, "h", "w")
				b = specialize.Binding{"h": H, "w": W}
			} else {
				g.input("x", N, C, H, W)
			}
			g.node("Shape", []string{"x"}, []string{"xshape"})
			var checks []func(t *testing.T, out *tensor.Tensor)
			for i, c := range cases {
				name := fmt.Sprintf("r%d", i)
				attrs := []*onnxpb.Attr{{Name: "mode", Type: 3, S: []byte("cubic")}, {Name: "coordinate_transformation_mode", Type: 3, S: []byte(c.ctm)}}
				a := -0.75
				if c.a != 0 {
					a = c.a
					attrs = append(attrs, af("cubic_coeff_a", float32(c.a)))
				}
				if c.exclude {
					attrs = append(attrs, ai("exclude_outside", 1))
				}
				in, sc, oh, ow := resizeOperands(g, name, H, W, c.scales, c.sizes, c.symSizes)
				in[0] = "x"
				g.node("Resize", in, []string{name}, attrs...)
				g.outs = append(g.outs, name)
				want := cubicRef(x, N*C, H, W, oh, ow, sc[0], sc[1], c.ctm, float64(float32(a)), c.exclude)
				c := c
				checks = append(checks, func(t *testing.T, out *tensor.Tensor) {
					what := fmt.Sprintf("Resize cubic %+v", c)
					shapeIs(t, what, out, N, C, oh, ow)
					near(t, what, out.F32(), want)
				})
			}
			loweredOn(t, gpuRun && !sym, g, 19, b, map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(N, C, H, W), x)}, func(t *testing.T, out []*tensor.Tensor) {
				for i, c := range checks {
					c(t, out[i])
				}
			})
		})
	}
	g := &graph{outs: []string{"y"}}
	g.input("x", N, C, H, W)
	g.init("scales", i64s(4), []float32{1, 1, 2, 2})
	g.node("Resize", []string{"x", "", "scales"}, []string{"y"}, &onnxpb.Attr{Name: "mode", Type: 3, S: []byte("linear")}, ai("exclude_outside", 1))
	if err := importErr(g, 19); !strings.Contains(err, "exclude_outside=1 is supported with mode cubic only") {
		t.Errorf("linear with exclude_outside: got %q", err)
	}
}

// TestONNXGlobalMaxPool checks GlobalMaxPool over a plane (NCHW) and a
// line (NCL, how Conv1d models pool), negative values included, each
// kept as 1s.
func TestONNXGlobalMaxPool(t *testing.T) {
	g := &graph{outs: []string{"p2", "p1"}}
	g.input("x", 2, 3, 4, 5)
	g.input("y", 2, 3, 7)
	g.node("GlobalMaxPool", []string{"x"}, []string{"p2"})
	g.node("GlobalMaxPool", []string{"y"}, []string{"p1"})
	x, y := seq(2*3*4*5, 1), seq(2*3*7, 2)
	for i := range x {
		x[i] = -float32(math.Abs(float64(x[i]))) - 0.5 // all negative: a max seeded with 0 would show
	}
	maxOf := func(v []float32, rows, n int) []float64 {
		out := make([]float64, rows)
		for r := range out {
			m := math.Inf(-1)
			for _, e := range v[r*n : (r+1)*n] {
				m = math.Max(m, float64(e))
			}
			out[r] = m
		}
		return out
	}
	inputs := map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(2, 3, 4, 5), x), "y": tensor.FromF32(i64s(2, 3, 7), y)}
	lowered(t, g, 17, nil, inputs, func(t *testing.T, out []*tensor.Tensor) {
		shapeIs(t, "GlobalMaxPool NCHW", out[0], 2, 3, 1, 1)
		near(t, "GlobalMaxPool NCHW", out[0].F32(), maxOf(x, 6, 20))
		shapeIs(t, "GlobalMaxPool NCL", out[1], 2, 3, 1)
		near(t, "GlobalMaxPool NCL", out[1].F32(), maxOf(y, 6, 7))
	})
}
