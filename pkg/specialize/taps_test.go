package specialize_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// liveWindow is the live taps of one kernel axis by brute force: the
// first and one past the last tap that some output index reads inside
// the input.
func liveWindow(in, out, k, stride, pad, dil int64) (lo, hi int64) {
	lo, hi = -1, -1
	for t := range k {
		for o := range out {
			if i := o*stride + t*dil - pad; i >= 0 && i < in {
				if lo < 0 {
					lo = t
				}
				hi = t + 1
				break
			}
		}
	}
	return lo, hi
}

// outDim is the HIR dim of a convolution's output along an input dim
// named in: (in + add) / stride + 1.
func outDim(in string, add, stride int64) string {
	e := in
	switch {
	case add > 0:
		e = fmt.Sprintf("%s + %d", in, add)
	case add < 0:
		e = fmt.Sprintf("%s - %d", in, -add)
	}
	if stride == 1 {
		return e + " + 1"
	}
	return fmt.Sprintf("(%s) / %d + 1", e, stride)
}

// runPlan evaluates g and the graph its plan under b runs on the same
// inputs, and fails where they differ by more than tol relative to the
// output's largest magnitude.
func runPlan(t *testing.T, name string, g *mir.Graph, b specialize.Binding, tol float64) *specialize.Plan {
	t.Helper()
	return runPlanWith(t, name, g, b, specialize.Caps{}, tol)
}

// runPlanWith is runPlan for a backend with caps c.
func runPlanWith(t *testing.T, name string, g *mir.Graph, b specialize.Binding, c specialize.Caps, tol float64) *specialize.Plan {
	t.Helper()
	var ins []*tensor.Tensor
	for k, v := range g.Inputs {
		s, err := specialize.Concrete(v.Type.Shape, b)
		if err != nil {
			t.Fatal(err)
		}
		x := tensor.New(v.Type.DType, s...)
		if v.Type.DType == tensor.F32 {
			for i := range x.F32() {
				x.F32()[i] = float32(math.Sin(float64(3*i+k)*0.7)) + 0.25
			}
		}
		ins = append(ins, x)
	}
	want, err := eval.Run(g, b, ins)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p, err := specialize.SpecializeWith(g, b, c)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got, err := eval.Run(p.Graph, b, ins)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range want {
		w, o := want[i].F32(), got[i].F32()
		peak := 1.0
		for _, v := range w {
			peak = max(peak, math.Abs(float64(v)))
		}
		for k := range w {
			if d := math.Abs(float64(w[k] - o[k])); d > tol*peak || math.IsNaN(float64(o[k])) {
				t.Fatalf("%s: output %d element %d: %g, want %g", name, i, k, o[k], w[k])
			}
		}
	}
	return p
}

// TestCropDeadTaps: a convolution whose kernel reaches past its plane
// runs over its live taps alone (the brute-force window), computes what
// the uncropped one does, and leaves the template as it was; a plane the
// whole kernel reaches keeps it whole. Random geometries, one group and
// depthwise, with and without bias.
func TestCropDeadTaps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	cropped := 0
	for i := range 60 {
		kh, kw := 1+r.Int64N(5), 1+r.Int64N(5)
		if kh*kw == 1 {
			kw = 3
		}
		sh, sw := 1+r.Int64N(2), 1+r.Int64N(2)
		dh, dw := 1+r.Int64N(12), 1+r.Int64N(12)
		pads := [4]int64{r.Int64N(dh*(kh-1) + 1), r.Int64N(dw*(kw-1) + 1), r.Int64N(dh*(kh-1) + 1), r.Int64N(dw*(kw-1) + 1)}
		c, o, groups := int64(3), int64(4), int64(1)
		if i%3 == 0 {
			c, o, groups = 4, 4, 4
		}
		bias, biasArg := "", ""
		if i%2 == 0 {
			bias, biasArg = fmt.Sprintf("param b : f32[%d]\n", o), ", b"
		}
		src := fmt.Sprintf(`hir 1
module m
dim h
dim w
param k : f32[%d, %d, %d, %d]
%sfunc main(x: f32[2, %d, h, w]) -> (y: f32[2, %d, %s, %s]) {
  y = conv2d(x, k%s, stride=[%d, %d], pad=[%d, %d, %d, %d], dilation=[%d, %d], groups=%d)
  return y
}
`, o, c/groups, kh, kw, bias, c, o, outDim("h", pads[0]+pads[2]-dh*(kh-1)-1, sh), outDim("w", pads[1]+pads[3]-dw*(kw-1)-1, sw),
			biasArg, sh, sw, pads[0], pads[1], pads[2], pads[3], dh, dw, groups)
		_, g := lowerSource(t, "m.hir", []byte(src), true)
		before := g.String()
		for _, hw := range [][2]int64{{1 + r.Int64N(6), 1 + r.Int64N(6)}, {20, 24}} {
			h, w := hw[0], hw[1]
			oh := (h+pads[0]+pads[2]-dh*(kh-1)-1)/sh + 1
			ow := (w+pads[1]+pads[3]-dw*(kw-1)-1)/sw + 1
			if oh < 1 || ow < 1 {
				continue
			}
			name := fmt.Sprintf("case %d at %dx%d", i, h, w)
			p := runPlan(t, name, g, specialize.Binding{"h": h, "w": w}, 1e-6)
			h0, h1 := liveWindow(h, oh, kh, sh, pads[0], dh)
			w0, w1 := liveWindow(w, ow, kw, sw, pads[1], dw)
			var conv *mir.Node
			for _, n := range p.Graph.Nodes {
				if n.Op == mir.OpConv2D {
					conv = n
				}
			}
			got := conv.Args[1].Const.Shape
			want := []int64{o, c / groups, h1 - h0, w1 - w0}
			newPads := []int64{pads[0] - h0*dh, pads[1] - w0*dw, pads[2] - (kh-h1)*dh, pads[3] - (kw-w1)*dw}
			keep := h0 < 0 || w0 < 0 // no live tap: left whole
			for _, q := range newPads {
				keep = keep || q < 0
			}
			if keep {
				want = []int64{o, c / groups, kh, kw}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: weight %v, want %v (live rows [%d, %d), columns [%d, %d))", name, got, want, h0, h1, w0, w1)
			}
			if fmt.Sprint(want) != fmt.Sprint([]int64{o, c / groups, kh, kw}) {
				cropped++
			}
		}
		if g.String() != before {
			t.Fatalf("case %d: specialization changed the template", i)
		}
	}
	if cropped < 10 {
		t.Errorf("only %d of the cases cropped a kernel: the test no longer exercises the pass", cropped)
	}
}

// TestCropDeadTapsASPP: DeepLabV3's atrous 3x3 at dilation 24 over a
// 14x14 plane is its centre tap alone, and whole over 56x56.
func TestCropDeadTapsASPP(t *testing.T) {
	const src = `hir 1
module m
dim h
param k : f32[8, 16, 3, 3]
func main(x: f32[1, 16, h, h]) -> (y: f32[1, 8, h, h]) {
  y = conv2d(x, k, pad=[24, 24, 24, 24], dilation=[24, 24])
  return y
}
`
	_, g := lowerSource(t, "aspp.hir", []byte(src), true)
	for _, tc := range []struct {
		h      int64
		kernel string
	}{{14, "[8 16 1 1]"}, {56, "[8 16 3 3]"}} {
		p := runPlan(t, fmt.Sprint("h=", tc.h), g, specialize.Binding{"h": tc.h}, 1e-6)
		for _, n := range p.Graph.Nodes {
			if n.Op == mir.OpConv2D {
				if got := fmt.Sprint(n.Args[1].Const.Shape); got != tc.kernel {
					t.Errorf("h=%d: kernel %s, want %s", tc.h, got, tc.kernel)
				}
				if tc.h == 14 && fmt.Sprint(n.Attrs.Ints("pad")) != "[0 0 0 0]" {
					t.Errorf("h=14: pad %v, want none", n.Attrs.Ints("pad"))
				}
			}
		}
	}
}

// TestFoldBound: under a binding, what depends on the dims alone (gpt's
// position indices, an iota over seq) is computed at build time: the
// plan keeps no iota, and computes what the template does.
func TestFoldBound(t *testing.T) {
	g := bundled(t, "gpt")
	iotas := func(g *mir.Graph) int {
		n := 0
		for _, x := range g.Nodes {
			if x.Op == mir.OpIota {
				n++
			}
		}
		return n
	}
	if iotas(g) == 0 {
		t.Fatal("gpt's template has no iota: the test no longer exercises the pass")
	}
	before := g.String()
	b := specialize.Binding{"batch": 2, "seq": 5}
	var ins []*tensor.Tensor
	for _, v := range g.Inputs {
		s, _ := specialize.Concrete(v.Type.Shape, b)
		x := tensor.New(v.Type.DType, s...)
		for i := range x.I64() {
			x.I64()[i] = int64(7*i+3) % 100
		}
		ins = append(ins, x)
	}
	want, err := eval.Run(g, b, ins)
	if err != nil {
		t.Fatal(err)
	}
	p, err := specialize.Specialize(g, b)
	if err != nil {
		t.Fatal(err)
	}
	if n := iotas(p.Graph); n != 0 {
		t.Errorf("the plan keeps %d iota node(s)", n)
	}
	got, err := eval.Run(p.Graph, b, ins)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if fmt.Sprint(want[i].F32()) != fmt.Sprint(got[i].F32()) {
			t.Errorf("output %d differs from the template's", i)
		}
	}
	if g.String() != before {
		t.Error("specialization changed the template")
	}
}

// TestSplitSparseTaps: a convolution split into rectangles of the same
// live taps (every one the backend allows here) computes what it did,
// for random dilated, strided and padded geometries with bias and
// activation; DeepLabV3's ASPP at dilation 12 over 14x14 becomes its 9
// rectangles, and a convolution no output of which reads through fewer
// taps than another stays whole.
func TestSplitSparseTaps(t *testing.T) {
	always := specialize.Caps{SparseTaps: func(live, total int64) bool { return true }}
	convs := func(p *specialize.Plan) int {
		n := 0
		for _, x := range p.Graph.Nodes {
			if x.Op == mir.OpConv2D {
				n++
			}
		}
		return n
	}
	r := rand.New(rand.NewPCG(3, 11))
	split := 0
	for i := range 40 {
		kh, kw := 1+r.Int64N(4), 1+r.Int64N(4)
		sh, sw := 1+r.Int64N(2), 1+r.Int64N(2)
		dh, dw := 1+r.Int64N(6), 1+r.Int64N(6)
		pads := [4]int64{r.Int64N(dh*(kh-1) + 1), r.Int64N(dw*(kw-1) + 1), r.Int64N(dh*(kh-1) + 1), r.Int64N(dw*(kw-1) + 1)}
		src := fmt.Sprintf(`hir 1
module m
dim h
param k : f32[5, 3, %d, %d]
param b : f32[5]
func main(x: f32[2, 3, h, h]) -> (y: f32[2, 5, %s, %s]) {
  c = conv2d(x, k, b, stride=[%d, %d], pad=[%d, %d, %d, %d], dilation=[%d, %d])
  y = relu(c)
  return y
}
`, kh, kw, outDim("h", pads[0]+pads[2]-dh*(kh-1)-1, sh), outDim("h", pads[1]+pads[3]-dw*(kw-1)-1, sw),
			sh, sw, pads[0], pads[1], pads[2], pads[3], dh, dw)
		_, g := lowerSource(t, "m.hir", []byte(src), true)
		for _, h := range []int64{3 + r.Int64N(8), 16} {
			if (h+pads[0]+pads[2]-dh*(kh-1)-1) < 0 || (h+pads[1]+pads[3]-dw*(kw-1)-1) < 0 {
				continue
			}
			p := runPlanWith(t, fmt.Sprintf("case %d at h=%d", i, h), g, specialize.Binding{"h": h}, always, 1e-5)
			if convs(p) > 1 {
				split++
			}
		}
	}
	if split < 10 {
		t.Errorf("only %d cases split: the test no longer exercises the pass", split)
	}
	const aspp = `hir 1
module m
param k : f32[8, 16, 3, 3]
func main(x: f32[1, 16, 14, 14]) -> (y: f32[1, 8, 14, 14]) {
  y = conv2d(x, k, pad=[12, 12, 12, 12], dilation=[12, 12])
  return y
}
`
	_, g := lowerSource(t, "aspp.hir", []byte(aspp), true)
	if n := convs(runPlanWith(t, "aspp", g, specialize.Binding{}, always, 1e-5)); n != 9 {
		t.Errorf("the ASPP convolution split into %d, want 9", n)
	}
	const same = `hir 1
module m
param k : f32[8, 16, 3, 3]
func main(x: f32[1, 16, 14, 14]) -> (y: f32[1, 8, 14, 14]) {
  y = conv2d(x, k, pad=[1, 1, 1, 1])
  return y
}
`
	_, g = lowerSource(t, "same.hir", []byte(same), true)
	never := specialize.Caps{SparseTaps: func(live, total int64) bool { return 2*live <= total }}
	if n := convs(runPlanWith(t, "same", g, specialize.Binding{}, never, 1e-5)); n != 1 {
		t.Errorf("a same-padded 3x3 split into %d under the half rule", n)
	}
}

// TestLiveTapPairs counts live (tap, position) pairs pair by pair over
// random geometries: padding that covers whole rows and columns,
// strides, dilations.
func TestLiveTapPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 13))
	for range 200 {
		g := lir.ConvGeom{N: 1, C: 1, O: 1, H: 1 + r.Int64N(16), W: 1 + r.Int64N(16), KH: 1 + r.Int64N(5), KW: 1 + r.Int64N(5),
			StrideH: 1 + r.Int64N(3), StrideW: 1 + r.Int64N(3), DilH: 1 + r.Int64N(8), DilW: 1 + r.Int64N(8), Groups: 1}
		g.PadT, g.PadB = r.Int64N(g.DilH*(g.KH-1)+2), r.Int64N(g.DilH*(g.KH-1)+2)
		g.PadL, g.PadR = r.Int64N(g.DilW*(g.KW-1)+2), r.Int64N(g.DilW*(g.KW-1)+2)
		g.OH = (g.H+g.PadT+g.PadB-g.DilH*(g.KH-1)-1)/g.StrideH + 1
		g.OW = (g.W+g.PadL+g.PadR-g.DilW*(g.KW-1)-1)/g.StrideW + 1
		if g.OH < 1 || g.OW < 1 {
			continue
		}
		want := int64(0)
		for oh := range g.OH {
			for ow := range g.OW {
				for kh := range g.KH {
					for kw := range g.KW {
						ih, iw := oh*g.StrideH+kh*g.DilH-g.PadT, ow*g.StrideW+kw*g.DilW-g.PadL
						if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
							want++
						}
					}
				}
			}
		}
		live, total := specialize.LiveTapPairs(g)
		if live != want || total != g.OH*g.OW*g.KH*g.KW {
			t.Fatalf("%+v: %d of %d live, want %d of %d", g, live, total, want, g.OH*g.OW*g.KH*g.KW)
		}
	}
}

// TestTapMajorPass: where the backend takes a convolution tap-major
// (Caps.TapConv) it is scheduled as conv2d_taps over its weights laid
// out tap-major, and its values stay the reference's; a grouped one
// stays conv2d whatever the backend says.
func TestTapMajorPass(t *testing.T) {
	const src = `hir 1
module m
param k : f32[20, 16, 3, 3]
param b : f32[20]
param kg : f32[8, 4, 3, 3]
func main(x: f32[1, 16, 14, 14]) -> (y: f32[1, 20, 14, 14], z: f32[1, 8, 14, 14]) {
  c = conv2d(x, k, b, pad=[12, 12, 12, 12], dilation=[12, 12])
  y = relu(c)
  z = conv2d(x, kg, pad=[1, 1, 1, 1], groups=4)
  return y, z
}
`
	_, g := lowerSource(t, "aspp.hir", []byte(src), true)
	var seen []lir.ConvGeom
	caps := specialize.Caps{TapConv: func(g lir.ConvGeom) bool { seen = append(seen, g); return true }}
	p := runPlanWith(t, "aspp", g, specialize.Binding{}, caps, 1e-5)
	if len(seen) != 1 || seen[0].Groups != 1 || seen[0].DilH != 12 {
		t.Fatalf("the rule was asked about %+v, want the dilated convolution alone", seen)
	}
	w := specialize.NewWeights("test", nil)
	prog, err := specialize.Schedule(p, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Verify(); err != nil {
		t.Fatal(err)
	}
	var tc *lir.TapConv2D
	convs := 0
	for _, s := range prog.Steps {
		switch op := s.Op.(type) {
		case *lir.TapConv2D:
			tc = op
		case *lir.Conv2D:
			convs++
		}
	}
	if tc == nil || convs != 1 {
		t.Fatalf("%d conv2d steps and conv2d_taps %v, want one of each", convs, tc)
	}
	if tc.Epilogue.Act != lir.ActRelu || tc.Epilogue.Bias == lir.NoBuf {
		t.Errorf("conv2d_taps epilogue %+v, want the bias and the ReLU", tc.Epilogue)
	}
	buf := prog.Buffers[tc.W]
	if buf.Kind != lir.BufWeight {
		t.Fatalf("conv2d_taps reads its weights from a %v buffer", buf.Kind)
	}
	var k *mir.Value
	for _, n := range p.Graph.Nodes {
		if n.Op == mir.OpConv2D && n.Args[1].Param == "k" {
			k = n.Args[1]
		}
	}
	if k == nil {
		t.Fatal("no convolution by k")
	}
	got, want := w.Data[buf.Index].F32(), lir.TapMajor(k.Const.F32(), 20, 16, 9)
	if len(got) != 9*16*32 || len(got) != len(want) {
		t.Fatalf("tap-major weights of %d floats, want %d", len(got), 9*16*32)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("tap-major weight %d: %g, want %g", i, got[i], want[i])
		}
	}
}
