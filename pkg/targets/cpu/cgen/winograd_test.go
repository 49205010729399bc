package cgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/winograd"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// winogradProgram is a program of one convolution as F(m×m, 3×3): x, the
// transformed weights u, then the bias and the residual where the
// epilogue has them are inputs, V and M arena scratch, the result the
// output. inPlace makes the residual the output's own buffer: an input
// of the program copied into the output first. With ld > 0 it runs in
// parts of ld tiles, V and M of one part's size.
func winogradProgram(g lir.ConvGeom, m int64, e convEpi, ld int64) *lir.Program {
	p := &lir.Program{}
	input := func(name string, shape ...int64) lir.Buf { return addInput(p, name, tensor.F32, shape...) }
	_, _, _, tp := g.WinogradTiles(m)
	parts := lir.TileParts(tp, ld)
	if !parts[0].Whole() {
		tp = ld // the scratch holds one part
	}
	pts := (m + 2) * (m + 2)
	x := input("x", g.N, g.C, g.H, g.W)
	u := input("u", int64(winograd.ULen(int(pts), int(g.O), int(g.C))))
	ep := lir.NoEpilogue()
	if e.bias {
		ep.Bias = input("bias", g.O)
	}
	if e.res {
		ep.Residual = input("res", g.N, g.O, g.OH, g.OW)
	}
	ep.Act, ep.Alpha, ep.ActLast = e.act, e.alpha, e.last
	ep.Min, ep.Max = math.Inf(-1), math.Inf(1)
	if e.act == lir.ActClamp {
		ep.Min, ep.Max = e.lo, e.hi
	}
	vb, mb := lir.Buf(len(p.Buffers)), lir.Buf(len(p.Buffers)+1)
	vBytes := pts * g.C * tp * 4
	p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufArena, Offset: 0, Bytes: vBytes},
		lir.Buffer{Kind: lir.BufArena, Offset: (vBytes + 63) / 64 * 64, Bytes: pts * g.O * tp * 4})
	p.ArenaBytes = (vBytes+63)/64*64 + pts*g.O*tp*4
	out := addOutput(p, "y", tensor.F32, g.N, g.O, g.OH, g.OW)
	for _, r := range parts {
		prod := &lir.WinogradProduct{V: vb, U: u, M: mb, P: pts, C: g.C, O: g.O, TP: tp}
		if !r.Whole() {
			prod.TP, prod.LD = r.T1-r.T0, ld
		}
		p.Steps = append(p.Steps,
			lir.Step{Op: &lir.WinogradInput{X: x, V: vb, Geom: g, Tile: m, Part: r}, Src: "t.hir:1:1 conv2d"},
			lir.Step{Op: prod, Src: "t.hir:1:1 conv2d"},
			lir.Step{Op: &lir.WinogradOutput{M: mb, Out: out, Geom: g, Tile: m, Epilogue: ep, Part: r}, Src: "t.hir:1:1 conv2d"})
	}
	return p
}

// winogradWeights is u for winogradProgram: the transform of random
// weights, as the build makes it.
func winogradWeights(t *testing.T, r *rand.Rand, g lir.ConvGeom, m int64) *tensor.Tensor {
	t.Helper()
	wt := make([]float32, g.O*g.C*9)
	for i := range wt {
		wt[i] = float32((2*r.Float64() - 1) / math.Sqrt(float64(9*g.C)))
	}
	u, err := winograd.Weights(wt, int(g.O), int(g.C), int(m))
	if err != nil {
		t.Fatal(err)
	}
	return tensor.FromF32([]int64{int64(len(u))}, u)
}

// winogradCases are the geometries and epilogues the test compiles:
// whole and partial tiles, tile counts that fill vectors and blocks or
// not, batches, planes smaller than a tile, uneven and no padding, output
// channels that leave partial register tiles, every piecewise-linear
// activation, with and without a bias and a residual.
func winogradCases() []convCase {
	type c = convCase
	return []c{
		{sq(1, 16, 56, 16, 3, 1, 1), epiBiasRelu},
		{sq(1, 32, 28, 40, 3, 1, 1), epiBiasResRelu},
		{sq(2, 24, 14, 24, 3, 1, 1), epiBiasRes},
		{sq(1, 64, 14, 72, 3, 1, 1), epiClamp},
		{sq(3, 8, 7, 9, 3, 1, 1), epiLeaky},
		{sq(1, 5, 3, 3, 3, 1, 1), epiNone},
		{sq(1, 12, 13, 20, 3, 1, 0), epiBias},
		{geom(2, 7, 11, 17, 13, 3, 3, 1, 1, 2, 0, 1, 2, 1, 1), epiBiasRelu},
		{geom(1, 16, 30, 9, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1), epiBiasResRelu},
		{geom(1, 3, 1, 1, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1), epiBias},
		{geom(2, 5, 2, 9, 3, 3, 3, 1, 1, 2, 1, 0, 2, 1, 1), epiBiasRes},
		{sq(1, 32, 28, 40, 3, 1, 1), epiReluLast},
		{sq(3, 8, 7, 9, 3, 1, 1), epiLeakyLast},
		{geom(1, 16, 30, 9, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1), epiClampLast},
	}
}

// TestNativeWinograd compiles each case's three steps, at tiles 2 and 4,
// for every level this CPU runs (and, on x86-64, the fallback's 4-lane
// code, as TestNativeConv does), and compares them with the runtime's
// kernels (pkg/targets/cpu/kernels/winograd) on the same program: the
// same transforms summed in another order, within 1e-5 of max(1, |y|).
// Every other case runs in parts of 32 tiles as well (where it has more),
// the last part short where the tiles are not a multiple of 32. The
// runtime's kernels are checked against the direct convolution in their
// package.
func TestNativeWinograd(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	labels := make([]string, len(levels))
	for i, l := range levels {
		labels[i] = l.Name
		if l.Name == "x86-64-v3" {
			levels = append(levels, fallbackLevel(l))
			labels = append(labels, "fallback")
		}
	}
	type prog struct {
		name           string
		interp, native *lir.Program
		m              int64
		g              lir.ConvGeom
	}
	var progs []prog
	unit := &lir.Native{}
	byName := map[string]int{}
	for i, c := range winogradCases() {
		for _, part := range []int64{0, 32} {
			for _, m := range []int64{2, 4} {
				if _, _, _, tp := c.g.WinogradTiles(m); part > 0 && (i%2 == 1 || tp <= part) {
					continue
				}
				interp := winogradProgram(c.g, m, c.e, part)
				out, err := Generate(interp, Options{EwGrain: 1})
				if err != nil {
					t.Fatal(err)
				}
				for _, st := range out.Steps {
					if _, ok := st.Op.(*lir.NativeCall); !ok {
						t.Fatalf("case %d F%d parts of %d: the generator did not take %s", i, m, part, st.Op.Kind())
					}
				}
				// Every case's functions in one unit, compiled once per level
				// (equal steps of two cases share a function, as in a build).
				for si := range out.Steps {
					call := *out.Steps[si].Op.(*lir.NativeCall)
					fn := out.Native.Funcs[call.Func]
					fi, ok := byName[fn.Name]
					if !ok {
						fi = len(unit.Funcs)
						byName[fn.Name] = fi
						unit.Funcs = append(unit.Funcs, fn)
					}
					call.Func = fi
					out.Steps[si].Op = &call
				}
				progs = append(progs, prog{fmt.Sprintf("case %d %+v %s F%d parts of %d", i, c.g, c.e.name, m, part), interp, out, m, c.g})
			}
		}
	}
	objects := compileUnit(t, unit, levels)
	pool := parallel.NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range progs {
		ins := convInputs(r, p.interp)
		ins[1] = winogradWeights(t, r, p.g, p.m)
		want := run(t, pool, p.interp, ins)[0]
		for li := range levels {
			p.native.Native = &lir.Native{Funcs: unit.Funcs, Objects: []lir.NativeObject{objects[li]}}
			got := run(t, pool, p.native, ins)[0]
			compareConv(t, labels[li]+" "+p.name, got, want)
		}
	}
}

// benchPart is the tiles of a part in BenchmarkWinograd: every tile at
// once, or as many as hold RLX_WINOGRAD_PART_BYTES of scratch.
func benchPart(g lir.ConvGeom, m int64) int64 {
	n, _ := strconv.ParseInt(os.Getenv("RLX_WINOGRAD_PART_BYTES"), 10, 64)
	if n <= 0 {
		return 0
	}
	return max(16, n/(4*(m+2)*(m+2)*(g.C+g.O))/16*16)
}

// benchThreads is the threads of BenchmarkWinograd: 1, or
// RLX_BENCH_THREADS.
func benchThreads() int {
	if n, err := strconv.Atoi(os.Getenv("RLX_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// BenchmarkWinograd runs 3x3 stride-1 layers (ResNet-18's and the conv
// sweep's) as F(2×2) and F(4×4) with the generated code of each level
// this CPU runs, on one thread (RLX_BENCH_THREADS for more), in GFLOP/s of the direct convolution's
// multiply-adds (comparable with BenchmarkConv2D's), and each of the
// three steps alone (step=input, product, output).
func BenchmarkWinograd(b *testing.B) {
	if toolchain.NativeTools() != nil {
		b.Skip(toolchain.NativeTools())
	}
	pool := parallel.NewPool(benchThreads())
	defer pool.Close()
	r := rand.New(rand.NewPCG(1, 1))
	var cs []benchConv
	for _, c := range resnetConvs {
		if c.g.KH == 3 && c.g.StrideH == 1 {
			cs = append(cs, c)
		}
	}
	for _, c := range []struct{ ch, hw int64 }{{16, 56}, {32, 112}, {32, 56}, {32, 28}, {64, 14}, {128, 56}, {128, 14}, {256, 28}, {256, 7}, {512, 14}, {1024, 7}} {
		cs = append(cs, benchConv{fmt.Sprintf("3x3s1_c%d_%d", c.ch, c.hw), sq(1, c.ch, c.hw, c.ch, 3, 1, 1), epiBiasRelu})
	}
	cs = append(cs, benchConv{"3x3s1_b8_64x14", sq(8, 64, 14, 64, 3, 1, 1), epiBiasRelu})
	// Inception-v3's stem layers over 147x147: 32 -> 32 unpadded, 32 -> 64.
	cs = append(cs, benchConv{"3x3s1p0_c32_147", sq(1, 32, 147, 32, 3, 1, 0), epiBiasRelu},
		benchConv{"3x3s1_c32o64_147", sq(1, 32, 147, 64, 3, 1, 1), epiBiasRelu})
	// Large planes: VGG's and a U-Net's first stage, ESPCN's middle layer.
	cs = append(cs, benchConv{"3x3s1_c64_224", sq(1, 64, 224, 64, 3, 1, 1), epiBiasRelu},
		benchConv{"3x3s1_c32_256", sq(1, 32, 256, 32, 3, 1, 1), epiBiasRelu},
		benchConv{"3x3s1_c64o32_224", sq(1, 64, 224, 32, 3, 1, 1), epiBias})
	steps := []string{"input", "product", "output"}
	for _, c := range cs {
		g := c.g
		flops := 2 * g.N * g.O * g.OH * g.OW * g.C * 9
		for _, m := range []int64{2, 4} {
			interp := winogradProgram(g, m, c.e, benchPart(g, m))
			ins := convInputs(r, interp)
			prog, err := Generate(interp, Options{EwGrain: 1})
			if err != nil || prog.Native == nil {
				b.Fatal(err)
			}
			for _, l := range native.Levels() {
				if l.Runs() != nil {
					continue
				}
				p := withObject(b, prog, l)
				name := fmt.Sprintf("layer=%s/code=%s-F%d", c.name, l.Name, m)
				b.Run(name, func(b *testing.B) {
					benchRuns(b, pool, p, ins)
					b.ReportMetric(float64(flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
				for si, s := range steps {
					q := *p
					q.Steps = p.Steps[si : si+1]
					b.Run(name+"/step="+s, func(b *testing.B) { benchRuns(b, pool, &q, ins) })
				}
			}
		}
	}
}
