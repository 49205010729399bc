package e2e

import (
	"fmt"
	"math"
	"regexp"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// ctSweepCase is one ConvTranspose of the sweep below: 2-D, or 1-D (index
// 1 of the pairs only).
type ctSweepCase struct {
	oneD     bool
	k, s, op [2]int
	pads     [4]int // top, left, bottom, right (may be negative)
	cog, g   int
	bias     bool
	autoPad  string
	outShape []int64 // spatial sizes
	d        [2]int  // dilations; zero: 1, 1 (over 1: the zero-insertion fallback)
	runtimeW bool    // the weight is a graph input (the fallback)
	hidePads bool    // no pads attribute (auto_pad, output_shape, the default 0s)

	noStrides, noKernelShape bool // leave the attribute to its default
}

// dil is c's dilations, 1 where unset.
func (c ctSweepCase) dil() [2]int {
	if c.d == [2]int{} {
		return [2]int{1, 1}
	}
	return c.d
}

// ctSweepCases are kernels 1 to 5 and strides 1 to 3 on each axis with
// pads from -1 to past the kernel, every output_padding below the stride,
// groups 1, 2 and 4, with and without bias; then auto_pad, output_shape,
// attributes left to their defaults, 1-D, and the fallback's dilations
// and run-time weight.
func ctSweepCases(h, w int) []ctSweepCase {
	var cases []ctSweepCase
	i := 0
	for k := 1; k <= 5; k++ {
		for s := 1; s <= 3; s++ {
			for v := 0; v < 2; v++ {
				i++
				c := ctSweepCase{
					k:    [2]int{k, 1 + (k+i)%5},
					s:    [2]int{s, 1 + (s+i+v)%3},
					cog:  1 + i%3,
					g:    []int{1, 2, 4}[i%3],
					bias: i%2 == 0,
				}
				c.op = [2]int{(i + v) % c.s[0], (i + 1) % c.s[1]}
				c.pads = [4]int{i%(c.k[0]+1) - v, (i*3)%(c.k[1]+2) - 1, (i*5)%(c.k[0]+2) - 1, (i*7+v)%(c.k[1]+1) - v}
				if s*(h-1)+c.op[0]+c.k[0]-c.pads[0]-c.pads[2] < 1 || c.s[1]*(w-1)+c.op[1]+c.k[1]-c.pads[1]-c.pads[3] < 1 {
					continue
				}
				cases = append(cases, c)
			}
		}
	}
	return append(cases, []ctSweepCase{
		{k: [2]int{3, 3}, s: [2]int{2, 2}, op: [2]int{1, 1}, pads: [4]int{1, 1, 1, 1}, cog: 3, g: 1, bias: true},
		{k: [2]int{2, 2}, s: [2]int{2, 2}, cog: 2, g: 1, bias: true},
		{k: [2]int{4, 4}, s: [2]int{2, 2}, pads: [4]int{1, 1, 1, 1}, cog: 2, g: 2},
		{k: [2]int{2, 2}, s: [2]int{2, 2}, op: [2]int{1, 1}, cog: 1, g: 1, bias: true}, // output past y's end
		{k: [2]int{1, 1}, s: [2]int{3, 2}, op: [2]int{2, 1}, cog: 2, g: 1, bias: true},
		{k: [2]int{3, 2}, s: [2]int{2, 3}, pads: [4]int{-2, -3, -1, -4}, cog: 1, g: 2, bias: true},
		{k: [2]int{5, 4}, s: [2]int{3, 3}, pads: [4]int{6, 5, 4, 7}, cog: 2, g: 1},
		{k: [2]int{5, 3}, s: [2]int{3, 2}, cog: 2, g: 2, autoPad: "SAME_UPPER", hidePads: true, bias: true},
		{k: [2]int{4, 5}, s: [2]int{3, 2}, op: [2]int{1, 0}, cog: 1, g: 1, autoPad: "SAME_LOWER", hidePads: true},
		{k: [2]int{1, 2}, s: [2]int{2, 3}, cog: 1, g: 4, autoPad: "SAME_UPPER", hidePads: true},
		{k: [2]int{3, 3}, s: [2]int{2, 2}, cog: 2, g: 1, autoPad: "VALID", pads: [4]int{}, bias: true},
		{k: [2]int{3, 3}, s: [2]int{2, 2}, cog: 2, g: 1, outShape: []int64{2 * int64(h), 2*int64(w) - 1}, hidePads: true, bias: true},
		{k: [2]int{4, 3}, s: [2]int{3, 2}, cog: 1, g: 2, outShape: []int64{3*int64(h) + 2, 2*int64(w) + 1}, hidePads: true},
		{oneD: true, k: [2]int{1, 4}, s: [2]int{1, 2}, op: [2]int{0, 1}, pads: [4]int{0, 1, 0, 1}, cog: 2, g: 2, bias: true},
		{oneD: true, k: [2]int{1, 5}, s: [2]int{1, 3}, op: [2]int{0, 2}, pads: [4]int{0, -1, 0, 2}, cog: 3, g: 1},
		{oneD: true, k: [2]int{1, 3}, s: [2]int{1, 3}, cog: 1, g: 4, autoPad: "SAME_LOWER", hidePads: true, bias: true},
		{oneD: true, k: [2]int{1, 2}, s: [2]int{1, 1}, pads: [4]int{0, 2, 0, 0}, cog: 2, g: 1, outShape: []int64{int64(w) + 1}, hidePads: true},
		{k: [2]int{3, 3}, s: [2]int{2, 2}, cog: 2, g: 2, autoPad: "SAME_UPPER", hidePads: true},
		{k: [2]int{2, 3}, s: [2]int{3, 2}, op: [2]int{1, 0}, cog: 1, g: 1, autoPad: "SAME_LOWER", hidePads: true},
		{k: [2]int{2, 2}, s: [2]int{2, 2}, cog: 1, g: 4, hidePads: true, noKernelShape: true},
		{k: [2]int{3, 2}, s: [2]int{2, 3}, op: [2]int{1, 2}, pads: [4]int{0, 1, 2, 0}, cog: 2, g: 2, d: [2]int{1, 2}},
		{k: [2]int{3, 2}, s: [2]int{2, 3}, op: [2]int{1, 2}, pads: [4]int{0, 1, 2, 0}, cog: 2, g: 2, d: [2]int{2, 1}},
		{k: [2]int{4, 2}, s: [2]int{1, 1}, d: [2]int{1, 2}, pads: [4]int{4, 0, 1, 3}, cog: 1, g: 1, noStrides: true, bias: true},
		{oneD: true, k: [2]int{1, 3}, s: [2]int{1, 3}, d: [2]int{1, 2}, cog: 3, g: 1, autoPad: "SAME_LOWER", hidePads: true},
		{k: [2]int{3, 1}, s: [2]int{2, 1}, pads: [4]int{1, 0, 0, 0}, cog: 3, g: 2, runtimeW: true, bias: true},
	}...)
}

// TestONNXConvTransposeSweep checks ConvTranspose against its definition
// (convTransposeRef) over ctSweepCases, with static and symbolic dims, and
// that every 2-D dilation-1 case with a known weight is one conv2d of the
// input itself (the phase decomposition), not of a zero-inserted copy.
func TestONNXConvTransposeSweep(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	const N, Cin, H, W = 2, 4, 5, 6
	x := seq(N*Cin*H*W, 1)
	cases := ctSweepCases(H, W)
	for _, sym := range []bool{false, true} {
		t.Run(fmt.Sprintf("symbolic=%v", sym), func(t *testing.T) {
			g := &graph{}
			var b specialize.Binding
			if sym {
				g.input("x", "n", Cin, "h", "w")
				g.input("x1", "n", Cin, "w")
				b = specialize.Binding{"n": N, "h": H, "w": W}
			} else {
				g.input("x", N, Cin, H, W)
				g.input("x1", N, Cin, W)
			}
			inputs := map[string]*tensor.Tensor{"x": tensor.FromF32(i64s(N, Cin, H, W), x), "x1": tensor.FromF32(i64s(N, Cin, W), x[:N*Cin*W])}
			var checks []func(t *testing.T, out *tensor.Tensor)
			phases := 0
			for i, c := range cases {
				if sym && c.outShape != nil {
					continue
				}
				name := fmt.Sprintf("ct%d", i)
				in := []string{"x", name + "_w"}
				h := H
				wshape := i64s(Cin, c.cog, c.k[0], c.k[1])
				if c.oneD {
					wshape = i64s(Cin, c.cog, c.k[1])
					in[0], h = "x1", 1
				}
				wt := seq(Cin*c.cog*c.k[0]*c.k[1], 0.7)
				for j := range wt {
					wt[j] += float32(j%3) * 0.2
				}
				if c.runtimeW {
					g.input(name+"_w", int(wshape[0]), int(wshape[1]), int(wshape[2]), int(wshape[3]))
					inputs[name+"_w"] = tensor.FromF32(wshape, wt)
				} else {
					g.init(name+"_w", wshape, wt)
				}
				var bias []float32
				if c.bias {
					bias = seq(c.cog*c.g, 0.5)
					g.init(name+"_b", i64s(c.cog*c.g), bias)
					in = append(in, name+"_b")
				}
				sp := func(v [2]int) []int64 {
					if c.oneD {
						return i64s(v[1])
					}
					return i64s(v[0], v[1])
				}
				d := c.dil()
				attrs := []*onnxpb.Attr{ai("group", int64(c.g)), ais("dilations", sp(d)...)}
				if !c.noKernelShape {
					attrs = append(attrs, ais("kernel_shape", sp(c.k)...))
				}
				if !c.noStrides {
					attrs = append(attrs, ais("strides", sp(c.s)...))
				}
				if c.op != [2]int{} {
					attrs = append(attrs, ais("output_padding", sp(c.op)...))
				}
				pads := c.pads
				if !c.hidePads {
					if c.oneD {
						attrs = append(attrs, ais("pads", int64(pads[1]), int64(pads[3])))
					} else {
						attrs = append(attrs, ais("pads", i64s(pads[:]...)...))
					}
				}
				if c.autoPad != "" {
					attrs = append(attrs, &onnxpb.Attr{Name: "auto_pad", Type: 3, S: []byte(c.autoPad)})
				}
				if c.outShape != nil {
					attrs = append(attrs, ais("output_shape", c.outShape...))
				}
				if (c.autoPad != "" && c.autoPad != "VALID") || c.outShape != nil {
					// The total padding per axis, split as ONNX says (SAME_UPPER
					// puts the odd one at the end, otherwise at the start).
					for a, l := range []int{h, W} {
						want := l * c.s[a]
						if c.outShape != nil {
							want = l
							if o := len(c.outShape) - 2 + a; o >= 0 {
								want = int(c.outShape[o])
							}
						}
						total := c.s[a]*(l-1) + c.op[a] + (c.k[a]-1)*d[a] + 1 - want
						half := int(math.Floor(float64(total) / 2))
						if c.autoPad == "SAME_UPPER" {
							pads[a], pads[a+2] = half, total-half
						} else {
							pads[a], pads[a+2] = total-half, half
						}
					}
				}
				if !c.oneD && d == [2]int{1, 1} && !c.runtimeW {
					// One conv2d of the phases, or one per phase where a
					// kernel is not a multiple of its stride (and at least
					// the stride): each phase with its own taps; or where
					// every phase can give just the outputs kept
					// (exactPhases).
					n := 1
					if s := c.s; s[0]*s[1] > 1 && ((c.k[0]%s[0] != 0 || c.k[1]%s[1] != 0) && c.k[0] >= s[0] && c.k[1] >= s[1] || exactPhases(c.k, s, c.op, pads)) {
						n = s[0] * s[1]
					}
					phases += n
				}
				g.node("ConvTranspose", in, []string{name}, attrs...)
				g.outs = append(g.outs, name)
				want, oh, ow := convTransposeRef(x, N, Cin, h, W, wt, c.cog, c.g, c.k, c.s, d, c.op, pads, bias)
				c := c
				checks = append(checks, func(t *testing.T, out *tensor.Tensor) {
					what := fmt.Sprintf("ConvTranspose %+v", c)
					if c.oneD {
						shapeIs(t, what, out, N, c.cog*c.g, ow)
					} else {
						shapeIs(t, what, out, N, c.cog*c.g, oh, ow)
					}
					near(t, what, out.F32(), want)
				})
			}
			hir := loweredOn(t, gpuRun && !sym, g, 17, b, inputs, func(t *testing.T, out []*tensor.Tensor) {
				for i, c := range checks {
					c(t, out[i])
				}
			})
			if n := len(regexp.MustCompile(`= conv2d\(x, `).FindAllString(hir, -1)); n != phases {
				t.Errorf("%d conv2d of the input x itself, want %d (one per 2-D dilation-1 case with a known weight, or one per phase):\n%s", n, phases, hir)
			}
		})
	}
}

// exactPhases is the importer's rule (pkg/onnx exactPhases) for a
// ConvTranspose whose phases each compute just the outputs kept: more
// than one tap a phase on some axis, and per axis a kernel a multiple of
// the stride, pads that leave the output a
// multiple of the stride long, and no phase's conv2d padding negative
// (the first phase begins at most J-1 steps in, the last ends at or
// after the input's end).
func exactPhases(k, s, op [2]int, pads [4]int) bool {
	if k[0] <= s[0] && k[1] <= s[1] {
		return false // one tap a phase
	}
	for a := 0; a < 2; a++ {
		pb, pe := pads[a], pads[a+2]
		j := k[a] / s[a]
		if k[a]%s[a] != 0 || pb < 0 || pe < op[a] || (op[a]+k[a]-pb-pe)%s[a] != 0 {
			return false
		}
		d := (op[a]+k[a]-pb-pe)/s[a] - 1
		t0max, t0min := (pb+s[a]-1)/s[a], max(0, (pb-s[a]+1+s[a]-1)/s[a])
		if pb-s[a]+1 < 0 {
			t0min = 0
		}
		if t0max > j-1 || d+t0min < 0 {
			return false
		}
	}
	return true
}
