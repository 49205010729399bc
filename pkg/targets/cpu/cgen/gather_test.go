package cgen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// gatherCase is a gather of x [outer, axisLen, inner] elements of elem
// bytes with constant indices idx, stored as idxDType.
type gatherCase struct {
	name                  string
	outer, axisLen, inner int64
	elem                  int64
	idx                   []int64
	idxDType              tensor.DType
}

// gatherDTypes are tensor dtypes of each element size, for the slots.
var gatherDTypes = map[int64]tensor.DType{1: tensor.U8, 2: tensor.F16, 4: tensor.F32, 8: tensor.F64}

// gatherProgram is one Gather step per case, each from an input of its
// own to an output of its own, the indices weight i of the returned
// table (stored after a few bytes of another constant, as a view at an
// offset into a weight).
func gatherProgram(cs []gatherCase) (*lir.Program, []*tensor.Tensor) {
	p := &lir.Program{}
	var weights []*tensor.Tensor
	for i, c := range cs {
		dt := gatherDTypes[c.elem]
		idx := tensor.FromI64([]int64{int64(len(c.idx))}, c.idx)
		if c.idxDType == tensor.I32 {
			idx = tensor.New(tensor.I32, int64(len(c.idx)))
			for j, x := range c.idx {
				idx.I32()[j] = int32(x)
			}
		} else {
			c.idxDType = tensor.I64
		}
		const pad = 8
		w := tensor.New(tensor.U8, int64(pad+len(idx.Data)))
		copy(w.Data[pad:], idx.Data)
		weights = append(weights, w)
		ib := lir.Buf(len(p.Buffers))
		p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufWeight, Index: i, Offset: pad, Bytes: int64(len(idx.Data))})
		op := &lir.Gather{Idx: ib, Outer: c.outer, AxisLen: c.axisLen, Inner: c.inner, ElemSize: c.elem, IdxDType: c.idxDType}
		op.X = addInput(p, fmt.Sprintf("x%d", i), dt, c.outer*c.axisLen*c.inner)
		op.Out = addOutput(p, fmt.Sprintf("y%d", i), dt, c.outer*int64(len(c.idx))*c.inner)
		p.Steps = append(p.Steps, lir.Step{Op: op, Src: "t.hir:1:1 " + c.name})
	}
	return p, weights
}

// gatherInputs are random bits for every input.
func gatherInputs(r *rand.Rand, p *lir.Program) []*tensor.Tensor {
	var ins []*tensor.Tensor
	for _, s := range p.Inputs {
		dt, _ := tensor.ParseDType(s.DType)
		t := tensor.New(dt, s.Shape...)
		for i := range t.Data {
			t.Data[i] = byte(r.Uint32())
		}
		ins = append(ins, t)
	}
	return ins
}

// zeroed is weights with every byte 0.
func zeroed(weights []*tensor.Tensor) []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, w := range weights {
		out = append(out, tensor.New(w.DType, w.Shape...))
	}
	return out
}

// resizeIndices are a linear resize's source columns from in to out
// (half pixel): the floor's and the ceiling's.
func resizeIndices(in, out int64) (lo, hi []int64) {
	for i := range out {
		c := (float64(i)+0.5)*float64(in)/float64(out) - 0.5
		c = max(0, min(c, float64(in-1)))
		f := int64(c)
		lo, hi = append(lo, f), append(hi, min(f+1, in-1))
	}
	return lo, hi
}

// gatherCases are gathers along the first, a middle and the last axis,
// rows of one element and of several (4 bytes, and 1, 2 and 8), repeated
// and negative indices, i32 and i64 indices, one outer block and many,
// rows shorter than a vector and periods that split a row, and the
// operator sweep's resize.
func gatherCases() []gatherCase {
	lo, hi := resizeIndices(28, 56)
	return []gatherCase{
		{name: "last axis resize floor", outer: 256 * 56, axisLen: 28, inner: 1, elem: 4, idx: lo},
		{name: "last axis resize ceil", outer: 3 * 56, axisLen: 28, inner: 1, elem: 4, idx: hi},
		{name: "middle axis resize", outer: 5, axisLen: 28, inner: 28, elem: 4, idx: lo},
		{name: "last axis negative", outer: 7, axisLen: 9, inner: 1, elem: 4, idx: []int64{-1, 0, 8, -9, 3, 3, 3, -2, 1, 0, 5}},
		{name: "last axis one row", outer: 1, axisLen: 1000, inner: 1, elem: 4, idx: []int64{999, 0, 17, 500, -1, 2, 2, 2, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 3}},
		{name: "last axis partial period", outer: 7, axisLen: 28, inner: 1, elem: 4, idx: hi},
		{name: "last axis odd rows", outer: 9, axisLen: 17, inner: 1, elem: 4, idx: []int64{0, 0, 1, 2, 2, 3, 16, 16, 15}},
		{name: "last axis one index", outer: 300, axisLen: 5, inner: 1, elem: 4, idx: []int64{2}},
		{name: "last axis long row", outer: 3, axisLen: 40, inner: 1, elem: 4, idx: append(lo, hi...)},
		{name: "first axis", outer: 1, axisLen: 6, inner: 37, elem: 4, idx: []int64{5, 0, -6, 3, 3}, idxDType: tensor.I32},
		{name: "middle axis i32", outer: 4, axisLen: 6, inner: 3, elem: 4, idx: []int64{1, -1, 1, 0}, idxDType: tensor.I32},
		{name: "last axis i32", outer: 33, axisLen: 7, inner: 1, elem: 4, idx: []int64{6, 5, -7, 0, 1}, idxDType: tensor.I32},
		{name: "bytes last axis", outer: 20, axisLen: 13, inner: 1, elem: 1, idx: []int64{12, 0, 1, 1, -3}},
		{name: "bytes rows", outer: 3, axisLen: 13, inner: 5, elem: 1, idx: []int64{12, 0, -1}},
		{name: "halves last axis", outer: 19, axisLen: 13, inner: 1, elem: 2, idx: []int64{12, 0, 1, 1, -3, 7}},
		{name: "doubles last axis", outer: 50, axisLen: 10, inner: 1, elem: 8, idx: []int64{9, 0, 4, 4, -10, 2, 3}},
		{name: "doubles rows", outer: 2, axisLen: 10, inner: 9, elem: 8, idx: []int64{9, 0, -4}},
	}
}

// TestNativeGather compiles every case for every level this CPU runs
// and checks the results bit for bit against the runtime's kernel
// (data.Gather) on the same program, on 1 and 3 threads.
func TestNativeGather(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	cs := gatherCases()
	interp, weights := gatherProgram(cs)
	prog, err := Generate(interp, Options{EwGrain: 16, Weights: weights})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range prog.Steps {
		if _, ok := s.Op.(*lir.NativeCall); !ok {
			t.Fatalf("%s: stays %s", cs[i].name, s.Op.Kind())
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	inputs := [][]*tensor.Tensor{gatherInputs(r, interp), gatherInputs(r, interp)}
	objects := compileUnit(t, prog.Native, levels)
	for _, threads := range []int{1, 3} {
		pool := parallel.NewPool(threads)
		defer pool.Close()
		for k, ins := range inputs {
			want := runWeights(t, pool, interp, weights, ins)
			for li, l := range levels {
				prog.Native.Objects = []lir.NativeObject{objects[li]}
				if err := prog.Verify(); err != nil {
					t.Fatal(err)
				}
				// The native program reads no index: they are in its code,
				// so indices zeroed at run time change nothing.
				for i, got := range runWeights(t, pool, prog, zeroed(weights), ins) {
					if !bytes.Equal(got.Data, want[i].Data) {
						t.Errorf("%s, %d threads: %s, input %d: native and runtime differ", l.Name, threads, cs[i].name, k)
					}
				}
			}
		}
	}
}

// TestNativeGatherSplits runs a gather whose chunks start and end inside
// rows and periods (grain 1 on 3 threads is what the pool makes of a
// tiny grain), against the runtime.
func TestNativeGatherSplits(t *testing.T) {
	needToolchain(t)
	levels := runnableLevels(t)
	cs := []gatherCase{
		{name: "last axis", outer: 11, axisLen: 28, inner: 1, elem: 4, idx: []int64{0, 0, 1, 1, 2, 27, -1}},
		{name: "rows", outer: 5, axisLen: 4, inner: 3, elem: 4, idx: []int64{3, 0, 1}},
	}
	interp, weights := gatherProgram(cs)
	prog, err := Generate(interp, Options{Weights: weights})
	if err != nil {
		t.Fatal(err)
	}
	for i := range prog.Native.Funcs {
		prog.Native.Funcs[i].Grain = 1
	}
	objects := compileUnit(t, prog.Native, levels)
	ins := gatherInputs(rand.New(rand.NewPCG(5, 6)), interp)
	pool := parallel.NewPool(3)
	defer pool.Close()
	want := runWeights(t, pool, interp, weights, ins)
	for li, l := range levels {
		prog.Native.Objects = []lir.NativeObject{objects[li]}
		for i, got := range runWeights(t, pool, prog, weights, ins) {
			if !bytes.Equal(got.Data, want[i].Data) {
				t.Errorf("%s: %s: native and runtime differ", l.Name, cs[i].name)
			}
		}
	}
}

// TestNativeGatherDeclines: gathers whose indices are not a constant the
// build has, or are out of range, or whose element size or buffers the
// generated code does not handle, stay on the runtime.
func TestNativeGatherDeclines(t *testing.T) {
	base := gatherCase{name: "base", outer: 2, axisLen: 5, inner: 1, elem: 4, idx: []int64{4, 0}}
	with := func(name string, f func(c *gatherCase)) gatherCase {
		c := base
		c.name = name
		c.idx = append([]int64(nil), c.idx...)
		f(&c)
		return c
	}
	cases := []gatherCase{
		with("index too large", func(c *gatherCase) { c.idx[1] = 5 }),
		with("index too small", func(c *gatherCase) { c.idx[0] = -6 }),
		with("elem 3", func(c *gatherCase) { c.elem = 4; c.inner = 1 }),
	}
	p, weights := gatherProgram(cases)
	p.Steps[2].Op.(*lir.Gather).ElemSize = 3
	// Indices in an input, and in a weight derived at load time.
	in := *p.Steps[0].Op.(*lir.Gather)
	in.Idx = addInput(p, "idx", tensor.I64, 2)
	derived := *p.Steps[0].Op.(*lir.Gather)
	derived.Idx = lir.Buf(len(p.Buffers))
	p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufWeight, Index: len(weights), Bytes: 16})
	weights = append(weights, nil)
	p.Steps = append(p.Steps, lir.Step{Op: &in, Src: "t.hir:1:1 input indices"}, lir.Step{Op: &derived, Src: "t.hir:1:1 derived weight"})
	out, err := Generate(p, Options{EwGrain: 16, Weights: weights})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range out.Steps {
		if s.Op.Kind() != "gather" {
			t.Errorf("step %d (%s): became %s", i, p.Steps[i].Src, s.Op.Kind())
		}
	}
	// Without the weights' data nothing is known about the indices.
	ok, okW := gatherProgram([]gatherCase{base})
	if out, err := Generate(ok, Options{}); err != nil || out.Steps[0].Op.Kind() != "gather" {
		t.Errorf("without weights: %v, step %s", err, out.Steps[0].Op.Kind())
	}
	if out, err := Generate(ok, Options{Weights: okW}); err != nil || out.Steps[0].Op.Kind() != "native" {
		t.Errorf("with weights: %v, step %s", err, out.Steps[0].Op.Kind())
	}
	// An operand and result that share arena bytes.
	arena := &lir.Program{Buffers: []lir.Buffer{{Kind: lir.BufArena, Bytes: 40}, {Kind: lir.BufArena, Offset: 32, Bytes: 16},
		{Kind: lir.BufWeight, Bytes: 16}}}
	arena.Steps = []lir.Step{{Op: &lir.Gather{X: 0, Out: 1, Idx: 2, Outer: 2, AxisLen: 5, Inner: 1, ElemSize: 4, IdxDType: tensor.I64}}}
	if out, err := Generate(arena, Options{Weights: okW}); err != nil || out.Steps[0].Op.Kind() != "gather" {
		t.Errorf("overlapping buffers: %v, step %s", err, out.Steps[0].Op.Kind())
	}
}

// TestGatherWindows: every window the generated code loads lies in the
// rows its elements come from (so the last period, however few rows it
// has, reads nothing past the source), and its permutation gives each
// element's offset back.
func TestGatherWindows(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for range 2000 {
		axisLen, ni := 1+r.Int64N(40), 1+r.Int64N(70)
		rows := 1 + r.Int64N(6)
		idx := make([]int64, ni)
		start, spread := r.Int64N(axisLen), 1+r.Int64N(axisLen)
		for j := range idx {
			idx[j] = min(axisLen-1, start+r.Int64N(spread))
			if r.IntN(2) == 0 {
				idx[j] = min(axisLen-1, int64(j)*axisLen/ni) // a resize's monotone columns
			}
		}
		var offs []int64
		for row := range rows {
			for _, v := range idx {
				offs = append(offs, row*axisLen+v)
			}
		}
		for _, lanes := range []int64{8, 16} {
			base, perm, ok := windows(offs, ni, axisLen, lanes)
			if !ok {
				continue
			}
			for c, b := range base {
				lastRow := ((int64(c)+1)*lanes - 1) / ni
				if b < 0 || b+lanes > (lastRow+1)*axisLen {
					t.Fatalf("axisLen %d idx %v lanes %d: window %d at %d passes row %d", axisLen, idx, lanes, c, b, lastRow)
				}
				for l := range lanes {
					k := int64(c)*lanes + l
					if p := perm[k]; p < 0 || p >= lanes || b+p != offs[k] {
						t.Fatalf("axisLen %d idx %v lanes %d: element %d: base %d + %d, want %d", axisLen, idx, lanes, k, b, p, offs[k])
					}
				}
			}
		}
	}
}

// TestNativeGatherTable: the indices are in the function, made
// non-negative, and equal gathers share one function.
func TestNativeGatherTable(t *testing.T) {
	c := gatherCase{name: "neg", outer: 1, axisLen: 5, inner: 4, elem: 4, idx: []int64{-1, 0, -5}}
	p, weights := gatherProgram([]gatherCase{c, c})
	out, err := Generate(p, Options{Weights: weights})
	if err != nil {
		t.Fatal(err)
	}
	if out.Native == nil || len(out.Native.Funcs) != 1 {
		t.Fatalf("want one function, got %+v", out.Native)
	}
	src := out.Native.Funcs[0].Source
	if !strings.Contains(src, "static const int32_t idx[3] = {\n\t\t4, 0, 0,\n\t};") {
		t.Errorf("table not in the function:\n%s", src)
	}
	if f := out.Native.Funcs[0]; f.N != 3 || f.In[0] != 5*4*4 || f.Out[0] != 3*4*4 {
		t.Errorf("function %+v", f)
	}
	// A resize's columns move in windows at x86-64-v3 and v4; a
	// downsample's do not fit one.
	lo, _ := resizeIndices(28, 56)
	down, _ := resizeIndices(56, 28)
	p, weights = gatherProgram([]gatherCase{{outer: 56, axisLen: 28, inner: 1, elem: 4, idx: lo}, {outer: 56, axisLen: 56, inner: 1, elem: 4, idx: down}})
	out, err = Generate(p, Options{Weights: weights})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		src := out.Native.Funcs[i].Source
		if got := strings.Contains(src, "__builtin_ia32_permvarsi512") && strings.Contains(src, "__builtin_ia32_permvarsi256"); got != want {
			t.Errorf("function %d: windows %v, want %v", i, got, want)
		}
	}
}

// BenchmarkGather reports ns per output element of the operator sweep's
// resize gathers (1x256x28x28 to 56x56: along the last axis, rows of one
// element, and along H, rows of 28) on one thread: the runtime's kernel
// and the native code of each level this CPU runs, in the same run.
func BenchmarkGather(b *testing.B) {
	pool := parallel.NewPool(1)
	defer pool.Close()
	lo, _ := resizeIndices(28, 56)
	for _, c := range []gatherCase{
		{name: "W 256x56x28 to 56", outer: 256 * 56, axisLen: 28, inner: 1, elem: 4, idx: lo},
		{name: "H 256x28x28 to 56", outer: 256, axisLen: 28, inner: 28, elem: 4, idx: lo},
		{name: "rows 64x16x512", outer: 8, axisLen: 256, inner: 512, elem: 4, idx: lo},
	} {
		n := c.outer * int64(len(c.idx)) * c.inner
		interp, weights := gatherProgram([]gatherCase{c})
		ins := gatherInputs(rand.New(rand.NewPCG(1, 1)), interp)
		perElement := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		}
		b.Run(c.name+"/runtime", func(b *testing.B) {
			benchRunsWeights(b, pool, interp, weights, ins)
			perElement(b)
		})
		if toolchain.NativeTools() != nil {
			continue
		}
		p, err := Generate(interp, Options{Weights: weights})
		if err != nil {
			b.Fatal(err)
		}
		if p.Native == nil {
			b.Fatalf("%s: not compiled", c.name)
		}
		for _, l := range copyLevels() {
			q := withObject(b, p, l.Level)
			b.Run(c.name+"/native-"+l.label, func(b *testing.B) {
				benchRunsWeights(b, pool, q, weights, ins)
				perElement(b)
			})
		}
	}
}
