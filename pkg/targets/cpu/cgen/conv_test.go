package cgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// convEpi is an epilogue of a test convolution.
type convEpi struct {
	name      string
	bias, res bool
	act       lir.Activation
	alpha     float64
	lo, hi    float64
	last      bool // the activation after the residual
}

var (
	epiNone        = convEpi{name: "none"}
	epiBias        = convEpi{name: "bias", bias: true}
	epiBiasRelu    = convEpi{name: "bias+relu", bias: true, act: lir.ActRelu}
	epiBiasResRelu = convEpi{name: "bias+res+relu", bias: true, res: true, act: lir.ActRelu}
	epiBiasRes     = convEpi{name: "bias+res", bias: true, res: true}
	epiClamp       = convEpi{name: "clamp", bias: true, act: lir.ActClamp, lo: 0, hi: 0.5}
	epiLeaky       = convEpi{name: "leaky", res: true, act: lir.ActLeakyRelu, alpha: 0.1}
	// The activation after the residual (a ResNet block's last relu).
	epiReluLast  = convEpi{name: "relu(bias+res)", bias: true, res: true, act: lir.ActRelu, last: true}
	epiClampLast = convEpi{name: "clamp(res)", res: true, act: lir.ActClamp, lo: 0, hi: 0.5, last: true}
	epiLeakyLast = convEpi{name: "leaky(bias+res)", bias: true, res: true, act: lir.ActLeakyRelu, alpha: 0.1, last: true}
)

// geom is a convolution's geometry with its output size computed.
func geom(n, c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw int64) lir.ConvGeom {
	g := lir.ConvGeom{N: n, C: c, H: h, W: w, O: o, KH: kh, KW: kw, StrideH: sh, StrideW: sw,
		PadT: pt, PadL: pl, PadB: pb, PadR: pr, DilH: dh, DilW: dw, Groups: 1}
	g.OH = (h+pt+pb-dh*(kh-1)-1)/sh + 1
	g.OW = (w+pl+pr-dw*(kw-1)-1)/sw + 1
	return g
}

// sq is a square convolution: k x k, stride s, pad p on every side.
func sq(n, c, hw, o, k, s, p int64) lir.ConvGeom {
	return geom(n, c, hw, hw, o, k, k, s, s, p, p, p, p, 1, 1)
}

// convProgram is a program of one convolution: x, the weights, then the
// bias and the residual where the epilogue has them are inputs, the
// result the output.
func convProgram(g lir.ConvGeom, e convEpi) *lir.Program {
	p := &lir.Program{}
	input := func(name string, shape ...int64) lir.Buf { return addInput(p, name, tensor.F32, shape...) }
	op := &lir.Conv2D{Geom: g, Epilogue: lir.NoEpilogue()}
	op.X = input("x", g.N, g.C, g.H, g.W)
	op.W = input("w", g.O, g.C/max(g.Groups, 1), g.KH, g.KW)
	if e.bias {
		op.Epilogue.Bias = input("bias", g.O)
	}
	if e.res {
		op.Epilogue.Residual = input("res", g.N, g.O, g.OH, g.OW)
	}
	op.Epilogue.Act, op.Epilogue.Alpha, op.Epilogue.ActLast = e.act, e.alpha, e.last
	op.Epilogue.Min, op.Epilogue.Max = math.Inf(-1), math.Inf(1)
	if e.act == lir.ActClamp {
		op.Epilogue.Min, op.Epilogue.Max = e.lo, e.hi
	}
	op.Out = addOutput(p, "y", tensor.F32, g.N, g.O, g.OH, g.OW)
	p.Steps = []lir.Step{{Op: op, Src: "t.hir:1:1 conv2d"}}
	return p
}

// nativeConv is p (one convolution) with its step generated whatever the
// tuning rule says, false where the generator does not handle it.
func nativeConv(p *lir.Program) (*lir.Program, bool) {
	defer func(rule func(tuning.ConvShape) bool) { convRule = rule }(convRule)
	convRule = func(tuning.ConvShape) bool { return true }
	out, err := Generate(p, Options{EwGrain: tuning.NativeEwGrain})
	if err != nil || out.Native == nil {
		return nil, false
	}
	return out, true
}

// convInputs are uniform values in [-1, 1) for every input of p, the
// weights scaled by 1/sqrt(C·KH·KW) as a trained layer's are, so sums
// stay near 1 whatever the layer's size.
func convInputs(r *rand.Rand, p *lir.Program) []*tensor.Tensor {
	var ins []*tensor.Tensor
	for _, s := range p.Inputs {
		n := int64(1)
		for _, d := range s.Shape {
			n *= d
		}
		scale := 1.0
		if s.Name == "w" {
			scale = 1 / math.Sqrt(float64(n/s.Shape[0]))
		}
		t := tensor.New(tensor.F32, n)
		for i := range t.F32() {
			t.F32()[i] = float32((2*r.Float64() - 1) * scale)
		}
		ins = append(ins, t)
	}
	return ins
}

// compareConv checks got against the runtime kernel's want within 1e-5
// relative to max(1, |want|): the sums are the same, added in another
// order.
func compareConv(t *testing.T, what string, got, want *tensor.Tensor) {
	t.Helper()
	gs, ws := got.F32(), want.F32()
	bad := 0
	for i := range ws {
		g, w := float64(gs[i]), float64(ws[i])
		if !(math.Abs(g-w) <= 1e-5*max(1, math.Abs(w))) && !(math.IsNaN(g) && math.IsNaN(w)) {
			if bad < 5 {
				t.Errorf("%s: element %d: native %v, runtime kernel %v", what, i, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(ws))
	}
}

// convCase is one convolution of a test: its geometry and epilogue.
type convCase struct {
	g lir.ConvGeom
	e convEpi
}

// convSweep is the geometries the tests compile: every kernel size,
// stride, padding and dilation the generator handles (stride 2 from the
// input in place and from a split copy), channels 3 to 128,
// planes 1x1 to 56x56, batch 1 and 2, each with an epilogue.
func convSweep() []convCase {
	type c = convCase
	return []c{
		{sq(1, 16, 8, 16, 1, 1, 0), epiNone},
		{sq(2, 24, 14, 40, 1, 1, 0), epiBiasRelu},
		{sq(1, 64, 56, 64, 3, 1, 1), epiBiasRelu},
		{sq(1, 64, 56, 64, 3, 1, 1), epiBiasRes},
		{sq(1, 128, 28, 128, 3, 1, 1), epiBiasResRelu},
		{sq(2, 32, 14, 48, 3, 1, 1), epiClamp},
		{sq(1, 128, 7, 128, 3, 1, 1), epiBiasRelu},
		{sq(2, 40, 7, 24, 3, 1, 1), epiLeaky},
		{sq(1, 16, 1, 20, 3, 1, 1), epiBias},
		{sq(1, 8, 2, 9, 3, 1, 1), epiBiasResRelu},
		{sq(1, 3, 31, 10, 3, 1, 1), epiNone},
		{sq(1, 64, 56, 128, 3, 2, 1), epiBiasRelu},
		{sq(2, 64, 28, 72, 3, 2, 1), epiBiasRes},
		{sq(1, 96, 14, 100, 3, 2, 1), epiClamp},
		{sq(1, 64, 7, 64, 3, 2, 1), epiBiasRelu},
		{sq(1, 64, 14, 40, 3, 2, 1), epiBiasResRelu},
		{sq(2, 48, 14, 30, 1, 2, 0), epiClamp},
		{sq(1, 512, 4, 40, 3, 1, 1), epiBiasRes},
		{sq(1, 1024, 3, 13, 1, 1, 0), epiBias},
		{sq(1, 64, 15, 33, 3, 2, 1), epiLeaky},
		{sq(1, 64, 56, 128, 1, 2, 0), epiBias},
		{sq(2, 32, 13, 16, 1, 2, 0), epiNone},
		{sq(1, 3, 56, 64, 7, 2, 3), epiBiasRelu},
		{sq(2, 3, 33, 16, 7, 2, 3), epiBiasRelu},
		// 3x3 over few channels on small planes (NativeConvFewChannelsPlane).
		{sq(2, 3, 29, 16, 3, 2, 1), epiBiasRelu},
		{sq(1, 4, 30, 12, 3, 2, 0), epiClamp},
		{sq(1, 3, 24, 8, 3, 1, 1), epiBiasRes},
		{sq(1, 8, 20, 12, 7, 1, 3), epiBiasResRelu},
		{sq(1, 16, 18, 24, 5, 1, 2), epiBias},
		{sq(2, 10, 11, 7, 5, 2, 2), epiClamp},
		{sq(1, 12, 10, 16, 5, 1, 0), epiBiasRelu},
		{sq(1, 32, 12, 32, 3, 1, 0), epiBiasRes},
		{geom(1, 16, 20, 17, 24, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1), epiBiasRelu},
		{geom(2, 8, 9, 23, 12, 3, 1, 2, 1, 1, 0, 1, 0, 1, 1), epiBias},
		{geom(1, 16, 13, 19, 8, 3, 3, 1, 1, 0, 1, 2, 1, 1, 1), epiBiasRes},
		{geom(1, 16, 13, 19, 8, 3, 3, 2, 2, 2, 0, 1, 3, 1, 1), epiBiasRelu},
		{geom(1, 12, 20, 20, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2), epiBiasRelu},
		{geom(2, 12, 21, 19, 16, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2), epiBias},
		{geom(1, 8, 15, 15, 8, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1), epiNone},
		// Stride 2 from a split copy of the rows (few channels): a stem
		// whose rows take two blocks, dilated, odd planes with uneven
		// padding, 1x1, 8 channels.
		{sq(1, 3, 115, 8, 7, 2, 3), epiBiasRelu},
		{geom(1, 4, 17, 23, 8, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2), epiLeaky},
		{geom(2, 5, 15, 29, 12, 5, 5, 2, 2, 1, 2, 2, 1, 1, 1), epiBiasRes},
		{sq(1, 16, 31, 24, 1, 2, 0), epiBiasResRelu},
		// 1x1 with padding (ConvTranspose k3 s2's 1x1 phase), and all round.
		{geom(1, 16, 13, 11, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1), epiBias},
		{sq(1, 8, 9, 10, 1, 1, 2), epiBiasRelu},
		{sq(1, 8, 30, 26, 3, 2, 1), epiClamp},
		// Groups (not depthwise): ResNeXt's 4 and 8 channels a group,
		// output groups that leave partial tiles, a split stride-2 copy
		// per group, 1x1, dilated 5x5.
		{grouped(sq(1, 64, 28, 64, 3, 1, 1), 16), epiBiasRelu},
		{grouped(sq(1, 128, 14, 128, 3, 2, 1), 16), epiBiasRes},
		{grouped(sq(2, 12, 14, 18, 3, 1, 1), 3), epiLeaky},
		{grouped(sq(1, 16, 13, 32, 3, 2, 1), 2), epiClamp},
		{grouped(sq(1, 64, 9, 64, 1, 1, 0), 4), epiNone},
		{grouped(geom(1, 24, 17, 15, 60, 5, 5, 1, 1, 4, 4, 4, 4, 2, 2), 2), epiBiasResRelu},
		{grouped(sq(2, 6, 23, 9, 7, 2, 3), 3), epiBias},
		// The activation after the residual: register tiles, pairs of
		// rows (2x2 and 7x7 planes), stride 2 in place and from a split
		// copy, groups.
		{sq(1, 128, 7, 128, 3, 1, 1), epiReluLast},
		{sq(1, 8, 2, 9, 3, 1, 1), epiClampLast},
		{sq(2, 40, 7, 24, 3, 1, 1), epiLeakyLast},
		{sq(1, 64, 28, 64, 3, 1, 1), epiReluLast},
		{sq(1, 64, 14, 40, 3, 2, 1), epiClampLast},
		{sq(1, 3, 115, 8, 7, 2, 3), epiReluLast},
		{grouped(sq(1, 64, 28, 64, 3, 1, 1), 16), epiReluLast},
	}
}

// grouped is g with the given groups.
func grouped(g lir.ConvGeom, groups int64) lir.ConvGeom {
	g.Groups = groups
	return g
}

// TestNativeConv compiles every geometry of the sweep (whether the rule
// takes it or not) for every level this CPU runs and compares with the
// runtime's kernel on the same program. On x86-64 it also runs the code
// NEON builds (the fallback without AVX2 or AVX-512: 4-lane vectors,
// masks applied with an and, lane by lane at the buffer's ends),
// compiled for x86-64-v2 with FMA (the math header needs it) and run in
// x86-64-v3's place; the arm64 build itself runs under qemu in e2e
// (TestArm64UnderQemu).
func TestNativeConv(t *testing.T) { checkNativeConvs(t, convSweep()) }

// checkNativeConvs is TestNativeConv over the given sweep.
func checkNativeConvs(t *testing.T, sweep []convCase) {
	needToolchain(t)
	interps := make([]*lir.Program, len(sweep))
	progs := make([]*lir.Program, len(sweep))
	for i, c := range sweep {
		interps[i] = convProgram(c.g, c.e)
		prog, ok := nativeConv(interps[i])
		if !ok {
			t.Fatalf("%+v: the generator does not handle it", c.g)
		}
		progs[i] = prog
	}
	u := newConvUnit(t, progs)
	pool := parallel.NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(3, 4))
	for i, c := range sweep {
		g := c.g
		name := fmt.Sprintf("n%d_c%d_%dx%d_o%d_k%dx%d_s%dx%d_p%d%d%d%d_d%d_g%d_%s", g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, g.StrideH, g.StrideW,
			g.PadT, g.PadL, g.PadB, g.PadR, g.DilH, g.Groups, c.e.name)
		t.Run(name, func(t *testing.T) {
			ins := convInputs(r, interps[i])
			u.check(t, pool, progs[i], ins, run(t, pool, interps[i], ins)[0])
		})
	}
}

// convUnit is the one-convolution programs of a test with their
// functions in one unit, compiled once for each level this CPU runs and
// for the fallback's code (withFallback).
type convUnit struct {
	funcs   []lir.NativeFunc
	levels  []native.Level
	objects []lir.NativeObject
}

// newConvUnit renumbers each program's one native call into the unit
// and compiles it.
func newConvUnit(t *testing.T, progs []*lir.Program) *convUnit {
	t.Helper()
	u := &convUnit{levels: withFallback(runnableLevels(t))}
	for _, prog := range progs {
		call := *prog.Steps[0].Op.(*lir.NativeCall)
		call.Func = len(u.funcs)
		prog.Steps = []lir.Step{{Op: &call, Src: prog.Steps[0].Src}}
		u.funcs = append(u.funcs, prog.Native.Funcs[0])
	}
	u.objects = compileUnit(t, &lir.Native{Funcs: u.funcs}, u.levels)
	return u
}

// check runs prog (one of the unit's) at every level on ins and compares
// its output with want (compareConv).
func (u *convUnit) check(t *testing.T, pool *parallel.Pool, prog *lir.Program, ins []*tensor.Tensor, want *tensor.Tensor) {
	t.Helper()
	for li, l := range u.levels {
		p := *prog
		p.Native = &lir.Native{Funcs: u.funcs, Objects: []lir.NativeObject{u.objects[li]}}
		if err := p.Verify(); err != nil {
			t.Fatal(err)
		}
		compareConv(t, l.Name+" "+strings.Join(l.Clang, " "), run(t, pool, &p, ins)[0], want)
	}
}

// TestNativeConvRule: Generate compiles what the rule takes and leaves
// the rest (1x1 stride-1 kernels, 3 input channels at stride 1, groups;
// strides of 2 unless every level the program is built for has AVX-512)
// as Conv2D steps.
func TestNativeConvRule(t *testing.T) {
	level := func(name string) native.Level {
		l, err := native.LookupLevel(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	v3, v4 := level("x86-64-v3"), level("x86-64-v4")
	for _, levels := range [][]native.Level{nil, {v3}, {v4}, {v3, v4}} {
		var names []string
		for _, l := range levels {
			names = append(names, l.Name)
		}
		t.Run(strings.Join(append([]string{"levels"}, names...), "_"), func(t *testing.T) {
			checkNativeConvRule(t, Options{EwGrain: 1, Levels: levels})
		})
	}
}

// checkNativeConvRule is TestNativeConvRule for the given options.
func checkNativeConvRule(t *testing.T, opts Options) {
	avx512 := opts.AllHave("avx512f")
	took, left, strided := 0, 0, 0
	for _, c := range append(append(convSweep(), dwSweep()...),
		convCase{func() lir.ConvGeom { g := sq(1, 32, 14, 32, 3, 1, 1); g.Groups = 4; return g }(), epiBias}) {
		g := c.g
		p := convProgram(g, c.e)
		out, err := Generate(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		takes := tuning.NativeConv(tuning.ConvShape{KH: g.KH, KW: g.KW, StrideH: g.StrideH, StrideW: g.StrideW, DilH: g.DilH, DilW: g.DilW,
			Groups: g.Groups, C: g.C, O: g.O, OH: g.OH, OW: g.OW, Padded: max(g.PadT, g.PadL, g.PadB, g.PadR) > 0, AVX512: avx512})
		_, handles := planConv(p, p.Steps[0].Op.(*lir.Conv2D))
		if isDepthwise(normConv(g)) {
			_, handles = planDw(p, p.Steps[0].Op.(*lir.Conv2D))
		}
		want := lir.Kind("conv2d")
		if takes && handles {
			want = "native"
		}
		if got := out.Steps[0].Op.Kind(); got != want {
			t.Errorf("%+v: step is %s, want %s", g, got, want)
		}
		if want == "native" {
			took++
			// Few channels on a small plane take generated code at any
			// level (tuning.NativeConvFewChannelsPlane).
			few := g.C < tuning.NativeConvMinChannels && g.OH*g.OW <= tuning.NativeConvFewChannelsPlane
			if g.Groups == 1 && g.StrideW > 1 && !few {
				strided++
			}
		} else {
			left++
		}
	}
	if took == 0 || left == 0 {
		t.Errorf("the rule took %d geometries of the sweep and left %d: the test tests nothing", took, left)
	}
	if (strided > 0) != avx512 {
		t.Errorf("the rule took %d dense stride-2 geometries, with AVX-512 on every level %v", strided, avx512)
	}
}

// BenchmarkConv2D runs ResNet-18's convolutions on one thread: the
// runtime's kernel, then the generated code of each level this CPU runs,
// in the same run, reporting GFLOP/s. The generated code is measured
// for every layer, also those tuning.NativeConv leaves to the runtime
// (strides of 2 at x86-64-v3). Compare with
// benchstat -col /code.
func BenchmarkConv2D(b *testing.B) { benchConvs(b, resnetConvs) }

// BenchmarkConv2DSweep is the sweep behind tuning.NativeConv: kernels of
// 1x1 to 7x7 (and 3x1, 1x3, dilated), strides 1 and 2, 3 to 1024
// channels, planes of 2x2 to 112x112.
func BenchmarkConv2DSweep(b *testing.B) {
	var cs []benchConv
	add := func(name string, g lir.ConvGeom) { cs = append(cs, benchConv{name, g, epiBiasRelu}) }
	for _, c := range []struct{ ch, hw int64 }{{16, 56}, {32, 112}, {32, 56}, {32, 28}, {64, 14}, {128, 56}, {128, 14}, {256, 28}, {256, 7}, {256, 4}, {256, 2}, {512, 14}, {1024, 7}} {
		add(fmt.Sprintf("3x3s1_c%d_%d", c.ch, c.hw), sq(1, c.ch, c.hw, c.ch, 3, 1, 1))
	}
	add("3x3s1_c3o32_112", sq(1, 3, 112, 32, 3, 1, 1))
	add("3x3s1_c3o16_32", sq(1, 3, 32, 16, 3, 1, 1))
	add("3x3s1_c3o64_56", sq(1, 3, 56, 64, 3, 1, 1))
	add("3x3s1_c8o16_56", sq(1, 8, 56, 16, 3, 1, 1))
	add("3x3s1_c64o16_28", sq(1, 64, 28, 16, 3, 1, 1))
	add("3x3s1_c16o64_28", sq(1, 16, 28, 64, 3, 1, 1))
	add("3x3s1p0_c64_30", sq(1, 64, 30, 64, 3, 1, 0))
	add("3x3s1p0_c32_147", sq(1, 32, 147, 32, 3, 1, 0))  // Inception-v3's Conv2d_2a
	add("3x3s1_c32o64_147", sq(1, 32, 147, 64, 3, 1, 1)) // and Conv2d_2b
	add("3x3s1d2_c64_28", geom(1, 64, 28, 28, 64, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2))
	// Row (1xK) and column (Kx1) kernels, "same" padded, c channels in
	// and out over hw x hw: Inception-v3's factorized layers (its 17x17
	// stage's 1x7 and 7x1, its 8x8 stage's 3x1) and the shapes behind
	// tuning.TapConvColumnMinTaps.
	row := func(c, hw, k int64) lir.ConvGeom { return geom(1, c, hw, hw, c, 1, k, 1, 1, 0, k/2, 0, k/2, 1, 1) }
	col := func(c, hw, k int64) lir.ConvGeom { return geom(1, c, hw, hw, c, k, 1, 1, 1, k/2, 0, k/2, 0, 1, 1) }
	for _, c := range []struct{ c, hw, k int64 }{{64, 28, 3}, {160, 17, 7}, {192, 17, 7}, {64, 28, 7}, {96, 14, 5}} {
		add(fmt.Sprintf("1x%ds1_c%d_%d", c.k, c.c, c.hw), row(c.c, c.hw, c.k))
	}
	for _, c := range []struct{ c, hw, k int64 }{{64, 28, 3}, {160, 17, 7}, {192, 17, 7}, {384, 8, 3}, {64, 28, 7}, {96, 14, 5}, {128, 56, 3}} {
		add(fmt.Sprintf("%dx1s1_c%d_%d", c.k, c.c, c.hw), col(c.c, c.hw, c.k))
	}
	add("1x1s1_c768o192_17", sq(1, 768, 17, 192, 1, 1, 0)) // Inception-v3's 1x1 branches out of 768
	add("5x5s1_c32_28", sq(1, 32, 28, 32, 5, 1, 2))
	add("5x5s1_c64_14", sq(1, 64, 14, 64, 5, 1, 2))
	add("7x7s1_c32_28", sq(1, 32, 28, 32, 7, 1, 3))
	add("7x7s1_c64_28", sq(1, 64, 28, 64, 7, 1, 3))
	add("7x7s1_c128_14", sq(1, 128, 14, 128, 7, 1, 3))
	add("5x5s1_c32_56", sq(1, 32, 56, 32, 5, 1, 2))
	add("7x7s1_c3o64_56", sq(1, 3, 56, 64, 7, 1, 3))
	for _, c := range []struct{ c, o, hw int64 }{{64, 64, 56}, {64, 256, 56}, {256, 64, 56}, {128, 128, 28}, {32, 192, 28}, {256, 256, 14}, {512, 512, 7}, {16, 96, 112}} {
		add(fmt.Sprintf("1x1s1_c%do%d_%d", c.c, c.o, c.hw), sq(1, c.c, c.hw, c.o, 1, 1, 0))
	}
	// 1x1 with padding: ConvTranspose k3 s2's 1x1 phase (output padding
	// on the bottom and right), and a padded 1x1 all round.
	add("1x1s1pbr_c128o64_28", geom(1, 128, 28, 28, 64, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1))
	add("1x1s1p1_c64o64_56", sq(1, 64, 56, 64, 1, 1, 1))
	add("3x3s2_c32_112", sq(1, 32, 112, 64, 3, 2, 1))
	add("3x3s2_c3o32_224", sq(1, 3, 224, 32, 3, 2, 1))
	add("3x3s2_c3o32_112", sq(1, 3, 112, 32, 3, 2, 1))
	add("3x3s2_c3o16_56", sq(1, 3, 56, 16, 3, 2, 1))
	add("3x3s2_c3o16_28", sq(1, 3, 28, 16, 3, 2, 1))
	add("3x3s2_c512_14", sq(1, 512, 14, 512, 3, 2, 1))
	// ResNet-50 v1.5's stride-2 3x3s: 128 over 56x56 (a 1.6 MB input), 256
	// over 28x28, 512 over 14x14 (a 1.2 MB panel).
	add("3x3s2_c128_56", sq(1, 128, 56, 128, 3, 2, 1))
	add("3x3s2_c256_28", sq(1, 256, 28, 256, 3, 2, 1))
	add("3x3s2_c512o512_14", sq(1, 512, 14, 512, 3, 2, 1))
	add("3x3s2p0_c288o384_35", sq(1, 288, 35, 384, 3, 2, 0)) // Inception-v3's Mixed_6a
	add("3x3s2p0_c192o320_17", sq(1, 192, 17, 320, 3, 2, 0)) // and Mixed_7a
	add("3x3s2_c768_14", sq(1, 768, 14, 768, 3, 2, 1))       // a tap-major panel of 1.8 MB
	add("3x3s2_c1024_14", sq(1, 1024, 14, 1024, 3, 2, 1))    // Wide ResNet-50-2's; 2.4 MB
	add("5x5s2_c64_28", sq(1, 64, 28, 64, 5, 2, 2))
	add("1x1s2_c256_28", sq(1, 256, 28, 512, 1, 2, 0))
	add("1x1s2_c512_14", sq(1, 512, 14, 1024, 1, 2, 0))
	add("3x3s1_g32_c128_56", grouped(sq(1, 128, 56, 128, 3, 1, 1), 32))
	add("3x3s2_g32_c256_28", grouped(sq(1, 256, 28, 256, 3, 2, 1), 32))
	add("3x3s1_g32_c512_14", grouped(sq(1, 512, 14, 512, 3, 1, 1), 32))
	add("3x3s1_g8_c64_28", grouped(sq(1, 64, 28, 64, 3, 1, 1), 8))
	add("3x3s1_g2_c64_28", grouped(sq(1, 64, 28, 64, 3, 1, 1), 2))
	add("3x3s2_g64_c128_56", grouped(sq(1, 128, 56, 128, 3, 2, 1), 64))
	add("1x1s1_g4_c256_28", grouped(sq(1, 256, 28, 256, 1, 1, 0), 4))
	add("3x3s1d12_c960o256_14", geom(1, 960, 14, 14, 256, 3, 3, 1, 1, 12, 12, 12, 12, 12, 12)) // DeepLabV3's ASPP
	// Stride 1 with output rows of a different width than the input's
	// (not "same" padded) and narrow: ConvTranspose k4 s2 p1's 2x2 phase
	// convolution (padded by 1: 8 -> 9), and unpadded 3x3s.
	add("2x2s1p1_c512o1024_8", sq(1, 512, 8, 1024, 2, 1, 1))
	add("2x2s1p1_c256o512_16", sq(1, 256, 16, 512, 2, 1, 1))
	add("2x2s1p1_c128o256_32", sq(1, 128, 32, 256, 2, 1, 1))
	add("3x3s1p0_c256_9", sq(1, 256, 9, 256, 3, 1, 0))
	add("3x3s1p0_c128_19", sq(1, 128, 19, 128, 3, 1, 0))
	benchConvs(b, cs)
}

// benchConv is one layer of a benchmark.
type benchConv struct {
	name string
	g    lir.ConvGeom
	e    convEpi
}

// resnetConvs are ResNet-18's convolutions: the 3x3 ones of each stage
// (stride 1, and stride 2 into the stage), the 1x1 stride-2 shortcuts
// and the 7x7 stem.
var resnetConvs = []benchConv{
	{"stem7x7s2_3x224", sq(1, 3, 224, 64, 7, 2, 3), epiBiasRelu},
	{"3x3s1_64x56", sq(1, 64, 56, 64, 3, 1, 1), epiBiasRelu},
	{"3x3s2_64x56", sq(1, 64, 56, 128, 3, 2, 1), epiBiasRelu},
	{"3x3s1_128x28", sq(1, 128, 28, 128, 3, 1, 1), epiBiasRes},
	{"3x3s2_128x28", sq(1, 128, 28, 256, 3, 2, 1), epiBiasRelu},
	{"3x3s1_256x14", sq(1, 256, 14, 256, 3, 1, 1), epiBiasRes},
	{"3x3s2_256x14", sq(1, 256, 14, 512, 3, 2, 1), epiBiasRelu},
	{"3x3s1_512x7", sq(1, 512, 7, 512, 3, 1, 1), epiBiasRes},
	{"1x1s2_64x56", sq(1, 64, 56, 128, 1, 2, 0), epiBias},
	{"1x1s2_256x14", sq(1, 256, 14, 512, 1, 2, 0), epiBias},
}

// benchConvs runs each layer on one thread with the runtime's kernel
// (code=go) and the generated code of each level this CPU runs.
func benchConvs(b *testing.B, cs []benchConv) {
	pool := parallel.NewPool(1)
	defer pool.Close()
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range cs {
		g := c.g
		flops := 2 * g.N * g.O * g.OH * g.OW * g.C / max(g.Groups, 1) * g.KH * g.KW
		interp := convProgram(g, c.e)
		ins := convInputs(r, interp)
		runProg := func(b *testing.B, p *lir.Program) {
			benchRuns(b, pool, p, ins)
			b.ReportMetric(float64(flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run("layer="+c.name+"/code=go", func(b *testing.B) { runProg(b, interp) })
		if toolchain.NativeTools() != nil {
			continue
		}
		prog, ok := nativeConv(interp)
		if ok {
			for _, l := range native.Levels() {
				if l.Runs() == nil {
					b.Run("layer="+c.name+"/code="+l.Name, func(b *testing.B) { runProg(b, withObject(b, prog, l)) })
				}
			}
		}
		if max(g.Groups, 1) != 1 {
			continue
		}
		// The same layer tap-major (tapconv.go), its weights laid out so.
		taps, err := Generate(tapProgram(g, c.e), Options{})
		if err != nil || taps.Native == nil {
			b.Fatalf("%s: conv2d_taps not generated (%v)", c.name, err)
		}
		tapIns := tapInputs(g, ins)
		for _, l := range native.Levels() {
			if l.Runs() == nil {
				b.Run("layer="+c.name+"/code=taps-"+l.Name, func(b *testing.B) {
					benchRuns(b, pool, withObject(b, taps, l), tapIns)
					b.ReportMetric(float64(flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// compileUnit compiles a unit of functions for each level, in parallel,
// and validates each object as the loader does.
func compileUnit(t *testing.T, unit *lir.Native, levels []native.Level) []lir.NativeObject {
	t.Helper()
	objects := make([]lir.NativeObject, len(levels))
	errs := make([]error, len(levels))
	var wg sync.WaitGroup
	for li, l := range levels {
		wg.Go(func() {
			elf, err := toolchain.CToELF("kernels", Source(unit), l.Clang)
			if err == nil {
				err = native.Validate(elf, l.GOARCH)
			}
			objects[li], errs[li] = lir.NativeObject{Level: l.Name, ELF: elf}, err
		})
	}
	wg.Wait()
	for li, err := range errs {
		if err != nil {
			t.Fatalf("%s %v: %v", levels[li].Name, levels[li].Clang, err)
		}
	}
	return objects
}
