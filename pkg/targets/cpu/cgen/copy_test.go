package cgen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// copyCase is a copy of shape from a source of srcLen elements to a
// destination of dstLen, as one lir.Copy of 4-byte elements.
type copyCase struct {
	name           string
	shape          []int64
	srcOff, dstOff int64
	ss, ds         []int64
	srcLen, dstLen int64
}

// rowMajor is the contiguous strides of shape.
func rowMajor(shape []int64) []int64 {
	st := make([]int64, len(shape))
	n := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		st[d] = n
		n *= shape[d]
	}
	return st
}

// reach is one past the last element a view reaches.
func reach(off int64, shape, st []int64) int64 {
	for d, n := range shape {
		off += (n - 1) * st[d]
	}
	return off + 1
}

// permCase is the copy of a transpose of in by perm into a contiguous
// destination, both with the given offsets (a window of a larger buffer,
// as slices and concats make).
func permCase(in []int64, perm []int, srcOff, dstOff int64) copyCase {
	ist := rowMajor(in)
	shape := make([]int64, len(perm))
	ss := make([]int64, len(perm))
	for d, p := range perm {
		shape[d], ss[d] = in[p], ist[p]
	}
	ds := rowMajor(shape)
	return copyCase{name: fmt.Sprintf("%v perm %v off %d,%d", in, perm, srcOff, dstOff), shape: shape, srcOff: srcOff, dstOff: dstOff,
		ss: ss, ds: ds, srcLen: reach(srcOff, shape, ss) + 3, dstLen: reach(dstOff, shape, ds) + 5}
}

// copyCases are transposes the generator handles: swaps of the last two
// axes at sizes around every tile side, other permutations of ranks 2 to
// 5, batch dims, offsets, the operator sweep's shape, and views that are
// not plain permutations (a strided source, a broadcast outer dim, a
// window of the destination, the destination contiguous along a dim
// that is not the last).
func copyCases() []copyCase {
	var cs []copyCase
	for _, m := range []int64{4, 5, 7, 8, 9, 15, 16, 17, 31, 33} {
		for _, n := range []int64{4, 6, 8, 13, 16, 19, 130} {
			cs = append(cs, permCase([]int64{m, n}, []int{1, 0}, 0, 0))
		}
	}
	cs = append(cs,
		permCase([]int64{8, 12, 128, 64}, []int{0, 1, 3, 2}, 0, 0),
		permCase([]int64{3, 5, 37, 20}, []int{0, 1, 3, 2}, 7, 3),
		permCase([]int64{2, 64, 9, 11}, []int{0, 2, 3, 1}, 1, 0),
		permCase([]int64{1, 64, 112, 112}, []int{0, 2, 3, 1}, 0, 0),
		permCase([]int64{17, 5, 130}, []int{2, 1, 0}, 0, 2),
		permCase([]int64{4, 6, 5, 7}, []int{3, 2, 1, 0}, 0, 0),
		permCase([]int64{2, 3, 4, 18, 21}, []int{0, 4, 2, 1, 3}, 5, 0),
		permCase([]int64{2, 3, 20, 4, 33}, []int{4, 1, 0, 2, 3}, 0, 9),
		permCase([]int64{300, 40}, []int{1, 0}, 0, 0),
		permCase([]int64{1, 1, 24, 1, 40}, []int{0, 4, 3, 2, 1}, 0, 0),
		// Interleaves (a destination row of 2): two rows woven into one,
		// ConvTranspose's stride-2 phases put in place, a long row.
		permCase([]int64{2, 37}, []int{1, 0}, 3, 1),
		permCase([]int64{6, 2, 2, 5, 9}, []int{0, 3, 1, 4, 2}, 0, 0),
		permCase([]int64{3, 2, 2, 4, 1500}, []int{0, 3, 1, 4, 2}, 2, 0),
	)
	// Subsamples (every second element of a row, no dim contiguous in
	// the source): a strided 1x1 convolution's input at odd and even
	// widths, with offsets, rows of exactly 8 and rows longer than a strip.
	sub := func(name string, c, h, w, srcOff, dstOff int64) copyCase {
		oh, ow := (h+1)/2, (w+1)/2
		shape, ss := []int64{c, oh, ow}, []int64{h * w, 2 * w, 2}
		ds := rowMajor(shape)
		return copyCase{name: name, shape: shape, ss: ss, ds: ds, srcOff: srcOff, dstOff: dstOff,
			srcLen: reach(srcOff, shape, ss) + 2, dstLen: reach(dstOff, shape, ds) + 3}
	}
	cs = append(cs, sub("subsample 3x10x18", 3, 10, 18, 0, 0), sub("subsample 5x9x17 off", 5, 9, 17, 3, 1),
		sub("subsample rows of 8", 4, 16, 16, 0, 0), sub("subsample long rows", 2, 3, 2600, 0, 0))
	// A source read with a step: x[::2, :] of a 42x40 x, transposed.
	cs = append(cs, copyCase{name: "strided source", shape: []int64{40, 21}, ss: []int64{1, 80}, ds: []int64{21, 1},
		srcLen: 42 * 40, dstLen: 40 * 21})
	// A broadcast outer dim.
	cs = append(cs, copyCase{name: "broadcast outer", shape: []int64{3, 20, 18}, ss: []int64{0, 1, 20}, ds: []int64{360, 18, 1},
		srcLen: 360, dstLen: 3 * 360})
	// A window of the destination (concat along the last axis).
	cs = append(cs, copyCase{name: "dst window", shape: []int64{2, 19, 35}, ss: []int64{19 * 35, 1, 19}, ds: []int64{19 * 50, 50, 1},
		dstOff: 7, srcLen: 2 * 19 * 35, dstLen: 2 * 19 * 50})
	// The source contiguous innermost, the destination along dim 1.
	cs = append(cs, copyCase{name: "dst strided inner", shape: []int64{3, 22, 26}, ss: []int64{22 * 26, 26, 1}, ds: []int64{22 * 26, 1, 22},
		srcLen: 3 * 22 * 26, dstLen: 3 * 22 * 26})
	return cs
}

// copyProgram is one Copy step per case, each from an input of its own
// to an output of its own.
func copyProgram(cs []copyCase) *lir.Program {
	p := &lir.Program{}
	for i, c := range cs {
		op := &lir.Copy{ElemSize: 4, Shape: c.shape, SrcOff: c.srcOff, DstOff: c.dstOff, SrcStrides: c.ss, DstStrides: c.ds}
		op.Src = addInput(p, fmt.Sprintf("x%d", i), tensor.F32, c.srcLen)
		op.Dst = addOutput(p, fmt.Sprintf("y%d", i), tensor.F32, c.dstLen)
		p.Steps = append(p.Steps, lir.Step{Op: op, Src: "t.hir:1:1 " + c.name})
	}
	return p
}

// copyInputs are random bits: NaN payloads and denormals must come
// through unchanged.
func copyInputs(r *rand.Rand, p *lir.Program) []*tensor.Tensor {
	var ins []*tensor.Tensor
	for _, s := range p.Inputs {
		t := tensor.New(tensor.F32, s.Shape...)
		for i := range t.Data {
			t.Data[i] = byte(r.Uint32())
		}
		ins = append(ins, t)
	}
	return ins
}

// copyTestLevel is a level to test and its label: the fallback runs in
// x86-64-v3's place, so it keeps that level's name.
type copyTestLevel struct {
	native.Level
	label string
}

// copyLevels are the levels this CPU runs, and on x86-64 the fallback
// (4x4 tiles, as NEON builds it) compiled for x86-64-v2.
func copyLevels() []copyTestLevel {
	var levels []copyTestLevel
	for _, l := range native.Levels() {
		if l.Runs() == nil {
			levels = append(levels, copyTestLevel{l, l.Name})
		}
	}
	for _, l := range levels {
		if l.Name == "x86-64-v3" {
			fallback := copyTestLevel{fallbackLevel(l.Level), "x86-64-v2"}
			levels = append(levels, fallback)
		}
	}
	return levels
}

// TestNativeTranspose compiles every case for every level this CPU runs
// (and the 4x4 fallback) and checks the results bit for bit against the
// runtime's kernel (data.Copy) on the same program, on 1 and 3 threads.
func TestNativeTranspose(t *testing.T) {
	needToolchain(t)
	if len(runnableLevels(t)) == 0 {
		return
	}
	levels := copyLevels()
	cs := copyCases()
	interp := copyProgram(cs)
	prog, err := Generate(interp, Options{EwGrain: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range prog.Steps {
		if _, ok := s.Op.(*lir.NativeCall); !ok {
			t.Fatalf("%s: stays %s", cs[i].name, s.Op.Kind())
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	inputs := [][]*tensor.Tensor{copyInputs(r, interp), copyInputs(r, interp)}
	objects := make([]lir.NativeObject, len(levels))
	for li, l := range levels {
		objects[li] = nativeObject(t, prog, l.Level)
	}
	for _, threads := range []int{1, 3} {
		pool := parallel.NewPool(threads)
		defer pool.Close()
		wants := make([][]*tensor.Tensor, len(inputs))
		for k, ins := range inputs {
			wants[k] = run(t, pool, interp, ins)
		}
		for li, l := range levels {
			prog.Native.Objects = []lir.NativeObject{objects[li]}
			if err := prog.Verify(); err != nil {
				t.Fatal(err)
			}
			for k, ins := range inputs {
				for i, got := range run(t, pool, prog, ins) {
					compareCopy(t, fmt.Sprintf("%s, %d threads: %s, input %d", l.label, threads, cs[i].name, k), got, wants[k][i])
				}
			}
		}
	}
}

// compareCopy checks got against want bit for bit.
func compareCopy(t *testing.T, what string, got, want *tensor.Tensor) {
	t.Helper()
	for j := 0; j < len(want.Data); j += 4 {
		if !bytes.Equal(got.Data[j:j+4], want.Data[j:j+4]) {
			t.Errorf("%s: element %d: native %x, runtime %x", what, j/4, got.Data[j:j+4], want.Data[j:j+4])
			return
		}
	}
}

// TestNativeTransposeDeclines: copies that are not transposes of 4-byte
// elements, or whose views the generated code does not handle, stay on
// the runtime.
func TestNativeTransposeDeclines(t *testing.T) {
	base := permCase([]int64{8, 12}, []int{1, 0}, 0, 0)
	with := func(name string, f func(c *copyCase)) copyCase {
		c := base
		c.name = name
		c.shape, c.ss, c.ds = append([]int64(nil), c.shape...), append([]int64(nil), c.ss...), append([]int64(nil), c.ds...)
		f(&c)
		return c
	}
	cases := []copyCase{
		permCase([]int64{8, 12, 64}, []int{1, 0, 2}, 0, 0),              // rows stay contiguous
		permCase([]int64{8, 3}, []int{1, 0}, 0, 0),                      // too short for a tile
		permCase([]int64{2, 5}, []int{1, 0}, 0, 0),                      // an interleave of rows too short
		permCase([]int64{3, 12}, []int{1, 0}, 0, 0),                     // a destination row of 3
		with("contiguous", func(c *copyCase) { c.ss = []int64{12, 1} }), // a plain copy
		with("no unit source stride", func(c *copyCase) { c.ss = []int64{2, 16}; c.srcLen = 200 }),
		with("a step of 3", func(c *copyCase) { c.ss = []int64{30, 3}; c.srcLen = 400 }),
		with("a subsample of rows of 7", func(c *copyCase) {
			c.shape = []int64{12, 7}
			c.ss = []int64{30, 2}
			c.ds = []int64{7, 1}
			c.srcLen = 400
		}),
		with("negative stride", func(c *copyCase) { c.ss = []int64{-1, 8}; c.srcOff = 11 }),
		with("dst writes twice", func(c *copyCase) { c.ds = []int64{1, 1} }),
	}
	p := copyProgram(cases)
	// Element size 8.
	p.Steps = append(p.Steps, p.Steps[0])
	c8 := *p.Steps[1].Op.(*lir.Copy)
	c8.ElemSize = 8
	c8.Shape = []int64{4, 6}
	c8.SrcStrides, c8.DstStrides = []int64{1, 4}, []int64{6, 1}
	p.Steps[len(p.Steps)-1] = lir.Step{Op: &c8, Src: "t.hir:1:1 elem 8"}
	// A source and destination that share arena bytes.
	arena := &lir.Program{Buffers: []lir.Buffer{{Kind: lir.BufArena, Offset: 0, Bytes: 4096}, {Kind: lir.BufArena, Offset: 1024, Bytes: 4096}}}
	arena.Steps = []lir.Step{{Op: &lir.Copy{Src: 0, Dst: 1, ElemSize: 4, Shape: []int64{16, 16}, SrcStrides: []int64{1, 16}, DstStrides: []int64{16, 1}}}}
	for _, prog := range []*lir.Program{p, arena} {
		out, err := Generate(prog, Options{EwGrain: 16})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range out.Steps {
			if s.Op.Kind() != "copy" {
				t.Errorf("step %d (%s): became %s", i, prog.Steps[i].Src, s.Op.Kind())
			}
		}
	}
	// Disjoint arena regions are fine.
	arena.Buffers[1].Offset = 4096
	out, err := Generate(arena, Options{EwGrain: 16})
	if err != nil {
		t.Fatal(err)
	}
	if out.Steps[0].Op.Kind() != "native" {
		t.Errorf("disjoint arena copy stays %s", out.Steps[0].Op.Kind())
	}
}

// BenchmarkTranspose reports ns per element of the operator sweep's
// transpose (8x12x128x64, last two axes swapped), NCHW to NHWC of a
// 64x112x112 image and a 1024x1024 transpose on one thread: the
// runtime's kernel, the native code of each level this CPU runs, and a
// plain copy of the same bytes, all in the same run.
func BenchmarkTranspose(b *testing.B) {
	pool := parallel.NewPool(1)
	defer pool.Close()
	for _, c := range []copyCase{
		permCase([]int64{8, 12, 128, 64}, []int{0, 1, 3, 2}, 0, 0),
		permCase([]int64{1, 64, 112, 112}, []int{0, 2, 3, 1}, 0, 0),
		permCase([]int64{1024, 1024}, []int{1, 0}, 0, 0),
		permCase([]int64{3, 2, 8, 4}, []int{0, 1, 3, 2}, 0, 0),
		permCase([]int64{4, 16, 16}, []int{0, 2, 1}, 0, 0),
		permCase([]int64{2, 8, 16, 16}, []int{0, 1, 3, 2}, 0, 0),
		permCase([]int64{96, 12, 77}, []int{0, 2, 1}, 0, 0),
	} {
		n := reach(0, c.shape, c.ds)
		interp := copyProgram([]copyCase{c})
		ins := copyInputs(rand.New(rand.NewPCG(1, 1)), interp)
		perElement := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		}
		name := fmt.Sprintf("%v", c.shape)
		b.Run(name+"/copy", func(b *testing.B) {
			src, dst := ins[0].F32(), make([]float32, n)
			b.SetBytes(8 * n)
			for b.Loop() {
				copy(dst, src)
			}
			perElement(b)
		})
		b.Run(name+"/runtime", func(b *testing.B) {
			benchRuns(b, pool, interp, ins)
			perElement(b)
		})
		if toolchain.NativeTools() != nil {
			continue
		}
		p, err := Generate(interp, Options{EwGrain: 16384})
		if err != nil {
			b.Fatal(err)
		}
		if p.Native == nil {
			b.Fatalf("%s: not compiled", name)
		}
		for _, l := range copyLevels() {
			q := withObject(b, p, l.Level)
			b.Run(name+"/native-"+l.label, func(b *testing.B) {
				benchRuns(b, pool, q, ins)
				perElement(b)
			})
		}
	}
}
