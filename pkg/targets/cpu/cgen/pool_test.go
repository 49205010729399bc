package cgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// poolCase is one pool step.
type poolCase struct {
	name string
	op   lir.Pool2D // X and Out are set by poolProgram
}

// poolOut is an output size as the front end computes it: floor, or
// with ceil the ceiling less a last window that would start in the
// bottom/right padding; 0 when no window fits.
func poolOut(in, k, stride, dil, padA, padB int64, ceil bool) int64 {
	span := in + padA + padB - dil*(k-1) - 1
	if span < 0 {
		return 0
	}
	if !ceil {
		return span/stride + 1
	}
	o := (span+stride-1)/stride + 1
	if (o-1)*stride >= in+padA {
		o--
	}
	return o
}

// poolGeomOf is a geometry with its output size; pads are top, left,
// bottom, right.
func poolGeomOf(n, c, h, w, kh, kw, sh, sw int64, pad [4]int64, dh, dw int64, ceil bool) lir.PoolGeom {
	return lir.PoolGeom{N: n, C: c, H: h, W: w, KH: kh, KW: kw, StrideH: sh, StrideW: sw,
		PadT: pad[0], PadL: pad[1], PadB: pad[2], PadR: pad[3], DilH: dh, DilW: dw,
		OH: poolOut(h, kh, sh, dh, pad[0], pad[2], ceil), OW: poolOut(w, kw, sw, dw, pad[1], pad[3], ceil)}
}

// poolProgram is a program of one pool step per case: case i reads
// input i and writes output i.
func poolProgram(cases []poolCase) *lir.Program {
	p := &lir.Program{}
	for i, c := range cases {
		g := c.op.Geom
		op := c.op
		op.X = addInput(p, fmt.Sprintf("x%d", i), tensor.F32, g.N, g.C, g.H, g.W)
		op.Out = addOutput(p, fmt.Sprintf("y%d", i), tensor.F32, g.N, g.C, g.OH, g.OW)
		p.Steps = append(p.Steps, lir.Step{Op: &op, Src: "t.hir:1:1 " + c.name})
	}
	return p
}

// The inputs a pool is tested on.
const (
	poolNormal  = iota // normal values
	poolSpecial        // NaNs of several payloads and both signs, ±Inf and ±0 among them
	poolTies           // +0, -0 and a few small values, and a NaN in one float of a thousand
)

// poolInput fills n floats of a kind. Special values show which NaN a
// max keeps, and that -Inf from the input and padding are the same; ties
// that max keeps the first of equal values (-0 or +0) where it takes the
// vectorized path (rows without NaN) and the exact one (rows with).
func poolInput(r *rand.Rand, n int64, kind int) *tensor.Tensor {
	t := tensor.New(tensor.F32, n)
	xs := t.F32()
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
		switch kind {
		case poolSpecial:
			switch k := r.IntN(100); {
			case k < 4:
				xs[i] = math.Float32frombits(0x7fc00000 | uint32(r.IntN(1<<20)) | uint32(r.IntN(2))<<31)
			case k < 12:
				xs[i] = float32(math.Inf(-1))
			case k < 14:
				xs[i] = float32(math.Inf(1))
			case k < 30:
				xs[i] = 0
			case k < 46:
				xs[i] = float32(math.Copysign(0, -1))
			case k < 50:
				for j := i; j < min(len(xs), i+5); j++ {
					xs[j] = float32(math.Inf(-1))
				}
			}
		case poolTies:
			switch k := r.IntN(1000); {
			case k < 1:
				xs[i] = math.Float32frombits(0x7fc00000 | uint32(r.IntN(1<<20)))
			case k < 400:
				xs[i] = 0
			case k < 800:
				xs[i] = float32(math.Copysign(0, -1))
			default:
				xs[i] = float32(r.IntN(5) - 4)
			}
		}
	}
	return t
}

// poolGrid is a grid of geometries over one input shape.
type poolGrid struct {
	n, c, h, w int64
	kernels    [][2]int64
	strides    []int64
	pads       []string // names in poolPads
	dils       []int64
}

// poolPads are the paddings a grid may use: top, left, bottom, right, and
// whether the output size is ceil mode's.
var poolPads = map[string]struct {
	pad  [4]int64
	ceil bool
}{
	"pad0":   {[4]int64{0, 0, 0, 0}, false},
	"pad1":   {[4]int64{1, 1, 1, 1}, false},
	"asym":   {[4]int64{2, 0, 1, 2}, false},
	"extra":  {[4]int64{0, 1, 2, 3}, false}, // ceil mode as extra bottom/right padding
	"ceil":   {[4]int64{1, 1, 1, 1}, true},  // ceil mode: the last windows run past the padding
	"allpad": {[4]int64{3, 3, 3, 3}, false}, // windows wholly in padding
	"pad2":   {[4]int64{2, 2, 2, 2}, false},
}

// cases are the grid's geometries that give an output, each as a max
// pool and as an average pool, which counts the padding in every other
// padded geometry.
func (p poolGrid) cases() []poolCase {
	var cs []poolCase
	padded := 0
	for _, k := range p.kernels {
		for _, s := range p.strides {
			for _, pn := range p.pads {
				for _, d := range p.dils {
					pad := poolPads[pn]
					g := poolGeomOf(p.n, p.c, p.h, p.w, k[0], k[1], s, s, pad.pad, d, d, pad.ceil)
					if g.OH <= 0 || g.OW <= 0 {
						continue
					}
					name := fmt.Sprintf("%dx%d %dx%d/%d %s dil%d", p.h, p.w, k[0], k[1], s, pn, d)
					avg := poolCase{"avg " + name, lir.Pool2D{Geom: g}}
					if pn != "pad0" {
						if padded%2 == 1 {
							avg = poolCase{"avg incl " + name, lir.Pool2D{Geom: g, CountIncludePad: true}}
						}
						padded++
					}
					cs = append(cs, poolCase{"max " + name, lir.Pool2D{Max: true, Geom: g}}, avg)
				}
			}
		}
	}
	return cs
}

// TestNativePool2D compiles pools over a grid of geometries for every
// level this CPU runs and checks them against the runtime's kernel on
// the same program, bit for bit: native code folds each window in the
// kernel's order (NaN results of an average need only both be NaN).
func TestNativePool2D(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	pool := parallel.NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(3, 4))
	all5 := [][2]int64{{1, 1}, {2, 2}, {3, 3}, {5, 5}, {3, 1}}
	groups := []struct {
		name  string
		cases []poolCase
	}{
		{"tiny", slices.Concat(
			poolGrid{2, 3, 1, 1, [][2]int64{{1, 1}, {2, 2}, {3, 3}}, []int64{1, 2}, []string{"pad0", "pad1", "allpad"}, []int64{1}}.cases(),
			poolGrid{1, 2, 2, 3, [][2]int64{{2, 2}, {3, 3}, {3, 1}}, []int64{1, 2}, []string{"pad0", "asym", "ceil"}, []int64{1}}.cases())},
		{"9x11", poolGrid{2, 2, 9, 11, all5, []int64{1, 2, 3}, []string{"pad0", "pad1", "asym", "extra", "ceil"}, []int64{1}}.cases()},
		{"9x11 dilated", poolGrid{2, 2, 9, 11, [][2]int64{{3, 3}, {3, 1}}, []int64{1, 2}, []string{"pad1", "asym"}, []int64{2}}.cases()},
		// rows whose interior is narrower than a full vector (8 and 4
		// lanes): inception pools over 14x14 and 7x7 planes
		{"14x14 and 7x7", slices.Concat(
			poolGrid{1, 3, 14, 14, [][2]int64{{3, 3}, {2, 2}}, []int64{1, 2}, []string{"pad0", "pad1", "ceil"}, []int64{1}}.cases(),
			poolGrid{1, 3, 7, 7, [][2]int64{{3, 3}}, []int64{1, 2}, []string{"pad1", "ceil"}, []int64{1}}.cases())},
		// stride 1 by planes (maxPoolPlanes): YOLOv5's SPPF over 10x10 and
		// 20x20, a window wider than the plane, a padded plane at the
		// bound and one row past it (tuning.PoolPlaneMaxCells is 1024)
		{"planes", slices.Concat(
			poolGrid{2, 3, 10, 10, [][2]int64{{5, 5}, {13, 13}, {1, 7}}, []int64{1}, []string{"pad2", "allpad", "asym"}, []int64{1}}.cases(),
			poolGrid{1, 2, 20, 20, [][2]int64{{5, 5}}, []int64{1}, []string{"pad2"}, []int64{1}}.cases(),
			poolGrid{1, 1, 30, 30, [][2]int64{{3, 3}}, []int64{1}, []string{"pad1"}, []int64{1}}.cases(),
			poolGrid{1, 1, 31, 30, [][2]int64{{3, 3}}, []int64{1}, []string{"pad1"}, []int64{1}}.cases())},
		{"56x56", poolGrid{1, 3, 56, 56, [][2]int64{{2, 2}, {3, 3}, {5, 5}}, []int64{1, 2}, []string{"pad0", "pad1"}, []int64{1}}.cases()},
		{"112x112", []poolCase{
			{"resnet max 3x3/2 pad1", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 4, 112, 112, 3, 3, 2, 2, [4]int64{1, 1, 1, 1}, 1, 1, false)}},
			{"avg 2x2/2", lir.Pool2D{Geom: poolGeomOf(1, 4, 112, 112, 2, 2, 2, 2, [4]int64{}, 1, 1, false)}},
			{"avg 3x3/1 pad1 incl", lir.Pool2D{Geom: poolGeomOf(1, 4, 112, 112, 3, 3, 1, 1, [4]int64{1, 1, 1, 1}, 1, 1, false), CountIncludePad: true}},
			{"max 3x3/1 pad1", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 4, 112, 112, 3, 3, 1, 1, [4]int64{1, 1, 1, 1}, 1, 1, false)}},
			{"max 5x5/1 pad2", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 4, 112, 112, 5, 5, 1, 1, [4]int64{2, 2, 2, 2}, 1, 1, false)}},
			{"max 3x3/2 dil2 pad2", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 4, 112, 112, 3, 3, 2, 2, [4]int64{2, 2, 2, 2}, 2, 2, false)}},
			{"max 7x7/3 ceil", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 4, 112, 112, 7, 7, 3, 3, [4]int64{2, 2, 2, 2}, 1, 1, true)}},
			{"avg 7x7/1 dil2", lir.Pool2D{Geom: poolGeomOf(1, 4, 112, 112, 7, 7, 1, 1, [4]int64{}, 2, 2, false)}},
			{"max 13x13/1 pad6", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 4, 112, 112, 13, 13, 1, 1, [4]int64{6, 6, 6, 6}, 1, 1, false)}},
			{"avg 112x112 global", lir.Pool2D{Geom: poolGeomOf(1, 4, 112, 112, 112, 112, 1, 1, [4]int64{}, 1, 1, false)}},
			{"max 3x40/2x5 rect", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 4, 112, 112, 3, 40, 2, 5, [4]int64{1, 0, 1, 7}, 1, 1, false)}},
		}},
	}
	// Every group's code for every level, compiled at once.
	progs := make([]*lir.Program, len(groups))
	elfs := make([][][]byte, len(groups))
	errs := make([][]error, len(groups))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, grp := range groups {
		prog, err := Generate(poolProgram(grp.cases), Options{EwGrain: 16})
		if err != nil {
			t.Fatal(err)
		}
		for j, s := range prog.Steps {
			if _, ok := s.Op.(*lir.NativeCall); !ok {
				t.Fatalf("%s: step is %s", grp.cases[j].name, s.Kind())
			}
		}
		progs[i], elfs[i], errs[i] = prog, make([][]byte, len(levels)), make([]error, len(levels))
		for j, l := range levels {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				elfs[i][j], errs[i][j] = toolchain.CToELF("kernels", Source(prog.Native), l.Clang)
				if errs[i][j] == nil {
					errs[i][j] = native.Validate(elfs[i][j], l.GOARCH)
				}
			}()
		}
	}
	wg.Wait()
	for i, grp := range groups {
		t.Run(grp.name, func(t *testing.T) {
			interp, prog := poolProgram(grp.cases), progs[i]
			var inputs, wants [][]*tensor.Tensor
			for _, kind := range []int{poolNormal, poolSpecial, poolTies} {
				ins := make([]*tensor.Tensor, len(interp.Inputs))
				for i, in := range interp.Inputs {
					ins[i] = poolInput(r, in.Shape[0]*in.Shape[1]*in.Shape[2]*in.Shape[3], kind)
				}
				inputs = append(inputs, ins)
				wants = append(wants, run(t, pool, interp, ins))
			}
			for j, l := range levels {
				if errs[i][j] != nil {
					t.Fatalf("%s: %v", l.Name, errs[i][j])
				}
				prog.Native.Objects = []lir.NativeObject{{Level: l.Name, ELF: elfs[i][j]}}
				for k, ins := range inputs {
					got := run(t, pool, prog, ins)
					for i, c := range grp.cases {
						comparePool(t, fmt.Sprintf("%s: %s (input %d)", l.Name, c.name, k), got[i].F32(), wants[k][i].F32(), c.op.Max)
					}
				}
			}
		})
	}
}

// comparePool checks got against want bit for bit; for an average two
// NaNs are equal whatever their bits.
func comparePool(t *testing.T, what string, got, want []float32, isMax bool) {
	t.Helper()
	bad := 0
	for i := range want {
		g, w := got[i], want[i]
		ok := math.Float32bits(g) == math.Float32bits(w) || !isMax && g != g && w != w
		if !ok {
			if bad < 3 {
				t.Errorf("%s: element %d: native %v (%#x), kernel %v (%#x)", what, i, g, math.Float32bits(g), w, math.Float32bits(w))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want))
	}
}

// TestPool2DFunc: the function's range, grain and byte counts, and the
// pools native code leaves to the runtime.
func TestPool2DFunc(t *testing.T) {
	// 3x3/2 over 9x9 without padding: outputs 4x4 read rows and columns
	// 0..8; 2x2/2 over 5x5: outputs 2x2 never read row or column 4.
	// Stride 1 over a padded plane of up to tuning.PoolPlaneMaxCells runs
	// by planes (its range is N·C), larger ones by output rows.
	for _, c := range []struct {
		g          lir.PoolGeom
		n, in, out int64
	}{
		{poolGeomOf(2, 3, 9, 9, 3, 3, 2, 2, [4]int64{}, 1, 1, false), 2 * 3 * 4, 2 * 3 * 81 * 4, 2 * 3 * 16 * 4},
		{poolGeomOf(1, 2, 5, 5, 2, 2, 2, 2, [4]int64{}, 1, 1, false), 2 * 2, (25 + 3*5 + 3 + 1) * 4, 2 * 4 * 4},
		{poolGeomOf(1, 1, 2, 2, 2, 2, 1, 1, [4]int64{3, 3, 3, 3}, 1, 1, false), 1, 4 * 4, 7 * 7 * 4},
		{poolGeomOf(2, 3, 10, 10, 5, 5, 1, 1, [4]int64{2, 2, 2, 2}, 1, 1, false), 2 * 3, 2 * 3 * 100 * 4, 2 * 3 * 100 * 4},
		{poolGeomOf(1, 2, 30, 30, 3, 3, 1, 1, [4]int64{1, 1, 1, 1}, 1, 1, false), 2, 2 * 30 * 30 * 4, 2 * 30 * 30 * 4},
		{poolGeomOf(1, 2, 31, 30, 3, 3, 1, 1, [4]int64{1, 1, 1, 1}, 1, 1, false), 2 * 31, 2 * 31 * 30 * 4, 2 * 31 * 30 * 4},
	} {
		p := poolProgram([]poolCase{{"p", lir.Pool2D{Max: true, Geom: c.g}}})
		out, err := Generate(p, Options{EwGrain: 1})
		if err != nil {
			t.Fatal(err)
		}
		if out.Native == nil {
			t.Fatalf("%+v: not compiled", c.g)
		}
		f := out.Native.Funcs[0]
		if f.N != c.n || f.In[0] != c.in || f.Out[0] != c.out || f.Grain < 1 || !strings.HasPrefix(f.Name, "rlx_maxpool2d_") {
			t.Errorf("%+v: function %s N %d grain %d in %v out %v; want N %d in %d out %d", c.g, f.Name, f.N, f.Grain, f.In, f.Out, c.n, c.in, c.out)
		}
	}
	// Nothing to compute, or no window.
	for _, g := range []lir.PoolGeom{
		poolGeomOf(0, 3, 9, 9, 3, 3, 2, 2, [4]int64{}, 1, 1, false),
		{N: 1, C: 1, H: 4, W: 4, KH: 0, KW: 2, OH: 4, OW: 3},
	} {
		p := poolProgram([]poolCase{{"p", lir.Pool2D{Geom: g}}})
		out, err := Generate(p, Options{EwGrain: 1})
		if err != nil {
			t.Fatal(err)
		}
		if out.Native != nil {
			t.Errorf("%+v: compiled", g)
		}
	}
}

// BenchmarkPool2D runs ResNet-18's first max pool (3x3/2, pad 1, over
// [1, 64, 112, 112]) and a 2x2/2 average pool over the same input on one
// thread: the runtime's kernel and the native code of each level this
// CPU runs, in the same run.
func BenchmarkPool2D(b *testing.B) {
	pool := parallel.NewPool(1)
	defer pool.Close()
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []poolCase{
		{"resnet18-max3x3s2", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 64, 112, 112, 3, 3, 2, 2, [4]int64{1, 1, 1, 1}, 1, 1, false)}},
		{"avg2x2s2", lir.Pool2D{Geom: poolGeomOf(1, 64, 112, 112, 2, 2, 2, 2, [4]int64{}, 1, 1, false)}},
		{"sppf-max5x5s1-10x10", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 256, 10, 10, 5, 5, 1, 1, [4]int64{2, 2, 2, 2}, 1, 1, false)}},
		{"sppf-max5x5s1-20x20", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 256, 20, 20, 5, 5, 1, 1, [4]int64{2, 2, 2, 2}, 1, 1, false)}},
		{"max3x3s1-28x28", lir.Pool2D{Max: true, Geom: poolGeomOf(1, 256, 28, 28, 3, 3, 1, 1, [4]int64{1, 1, 1, 1}, 1, 1, false)}},
	} {
		interp := poolProgram([]poolCase{c})
		g := c.op.Geom
		ins := []*tensor.Tensor{poolInput(r, g.N*g.C*g.H*g.W, poolNormal)}
		runProg := func(b *testing.B, p *lir.Program) {
			b.SetBytes(4 * (g.N*g.C*g.H*g.W + g.N*g.C*g.OH*g.OW))
			benchRuns(b, pool, p, ins)
		}
		b.Run(c.name+"/kernel", func(b *testing.B) { runProg(b, interp) })
		if toolchain.NativeTools() != nil {
			continue
		}
		p, err := Generate(interp, Options{EwGrain: 16384})
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range native.Levels() {
			if l.Runs() == nil {
				b.Run(c.name+"/native-"+l.Name, func(b *testing.B) { runProg(b, withObject(b, p, l)) })
			}
		}
	}
}
