// Package codegen turns a specialized plan into a CPU program: one kernel
// launch per node, with concrete geometry, over the planned buffers.
package codegen

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Weights collects the constants that programs reference, once each, across
// all the variants of one artifact.
type Weights struct {
	Refs    []artifact.WeightRef
	Data    []*tensor.Tensor
	index   map[*mir.Value]int
	packed  map[*mir.Value]int
	packedT map[*mir.Value]int
	taps    map[*mir.Value]int

	// Layout is the panel layout matmul weights are packed in (the build
	// machine's, kernels.PackedLayout()); "" packs nothing.
	Layout string

	// Target names the target in errors: the GPU targets start from this
	// package's program too.
	Target string
}

// NewWeights returns an empty table that packs weights for layout.
func NewWeights(layout string) *Weights {
	return &Weights{index: map[*mir.Value]int{}, packed: map[*mir.Value]int{}, packedT: map[*mir.Value]int{}, taps: map[*mir.Value]int{}, Layout: layout, Target: "cpu"}
}

// AddPacked registers a [K, N] weight packed into the micro-kernel's panel
// layout and returns its index.
func (w *Weights) AddPacked(v *mir.Value) (int, error) {
	if i, ok := w.packed[v]; ok {
		return i, nil
	}
	k, n := v.Const.Shape[0], v.Const.Shape[1]
	return w.addPacked(v, w.packed, "#", k, n, v.Const.F32())
}

// conv1x1PackedMaxHW is the largest plane (H·W) a 1x1 convolution runs as
// the transposed product with pre-packed weights: above it the plane's
// columns already make full tiles (at 14x14 the transposed product was a
// third slower in MobileNetV2; at 7x7, 15-20% faster).
const conv1x1PackedMaxHW = 100

// AddPackedT registers the [O, C, 1, 1] weight of a 1x1 convolution packed
// as the [C, O] matrix Wᵀ, and returns its index.
func (w *Weights) AddPackedT(v *mir.Value, c, o int64) (int, error) {
	if i, ok := w.packedT[v]; ok {
		return i, nil
	}
	src := v.Const.F32()
	wt := make([]float32, c*o)
	for oc := int64(0); oc < o; oc++ {
		for ic := int64(0); ic < c; ic++ {
			wt[ic*o+oc] = src[oc*c+ic]
		}
	}
	return w.addPacked(v, w.packedT, "#T#", c, o, wt)
}

// addPacked packs the row-major [k, n] matrix b for the table's layout and
// registers it under v's name plus tag and the layout.
func (w *Weights) addPacked(v *mir.Value, seen map[*mir.Value]int, tag string, k, n int64, b []float32) (int, error) {
	data, err := kernels.PackBLayout(w.Layout, int(k), int(n), b, int(n))
	if err != nil {
		return 0, err
	}
	return w.addDerived(v, seen, tag+w.Layout, data), nil
}

// AddTaps registers the [C, 1, KH, KW] weight of a depthwise convolution
// tap-major, as [KH·KW, C] (kernels.DepthwiseTaps), and returns its index.
func (w *Weights) AddTaps(v *mir.Value) int {
	if i, ok := w.taps[v]; ok {
		return i
	}
	s := v.Const.Shape
	return w.addDerived(v, w.taps, "#taps", kernels.DepthwiseTaps(v.Const.F32(), int(s[0]), int(s[2]*s[3])))
}

// addDerived registers data, computed from the constant v, as a flat f32
// weight under v's name plus tag.
func (w *Weights) addDerived(v *mir.Value, seen map[*mir.Value]int, tag string, data []float32) int {
	t := tensor.FromF32([]int64{int64(len(data))}, data)
	name := v.Param
	if name == "" {
		name = fmt.Sprintf("const/%d:%s", len(w.Refs), v.Name)
	}
	seen[v] = len(w.Refs)
	w.Refs = append(w.Refs, artifact.WeightRef{Name: name + tag, DType: "f32", Shape: t.Shape, Bytes: int64(len(t.Data))})
	w.Data = append(w.Data, t)
	return len(w.Refs) - 1
}

// Add registers a constant and returns its index.
func (w *Weights) Add(v *mir.Value) int {
	if i, ok := w.index[v]; ok {
		return i
	}
	name := v.Param
	if name == "" {
		name = fmt.Sprintf("const/%d:%s", len(w.Refs), v.Name)
	}
	w.index[v] = len(w.Refs)
	w.Refs = append(w.Refs, artifact.WeightRef{Name: name, DType: v.Const.DType.String(), Shape: v.Const.Shape, Bytes: int64(len(v.Const.Data))})
	w.Data = append(w.Data, v.Const)
	return len(w.Refs) - 1
}

// Generate emits the program of one plan.
func Generate(p *specialize.Plan, w *Weights) (*artifact.Program, error) {
	g := &gen{p: p, w: w, buf: map[*mir.Value]int{}, prog: &artifact.Program{ArenaBytes: p.ArenaBytes}}
	g.planLayouts()
	for i, v := range p.Graph.Inputs {
		g.prog.Inputs = append(g.prog.Inputs, artifact.Slot{Name: v.Name, DType: v.Type.DType.String(), Shape: p.Shapes[v], Buffer: g.buffer(v)})
		_ = i
	}
	for _, v := range p.Graph.Outputs {
		g.prog.Outputs = append(g.prog.Outputs, artifact.Slot{Name: v.Name, DType: v.Type.DType.String(), Shape: p.Shapes[v], Buffer: g.buffer(v)})
	}
	for _, n := range p.Graph.Nodes {
		if err := g.node(n); err != nil {
			return nil, fmt.Errorf("%s: %v", n.Src, err)
		}
	}
	return g.prog, nil
}

type gen struct {
	p      *specialize.Plan
	w      *Weights
	buf    map[*mir.Value]int
	prog   *artifact.Program
	nhwc   map[*mir.Value]bool // values stored channels last (layout.go)
	relaid map[*mir.Value]int  // NCHW values relaid channels last, by scratch buffer
}

// buffer returns the buffer index of a value, adding it on first use.
func (g *gen) buffer(v *mir.Value) int {
	if i, ok := g.buf[v]; ok {
		return i
	}
	s := g.p.Stores[v]
	var b artifact.Buffer
	switch s.Kind {
	case specialize.StoreArena:
		b = artifact.Buffer{Kind: artifact.BufArena, Offset: s.Offset, Bytes: s.Bytes}
	case specialize.StoreConst:
		b = artifact.Buffer{Kind: artifact.BufWeight, Index: g.w.Add(s.Root), Bytes: s.Bytes}
	case specialize.StoreInput:
		b = artifact.Buffer{Kind: artifact.BufInput, Index: s.Index, Bytes: s.Bytes}
	case specialize.StoreOutput:
		b = artifact.Buffer{Kind: artifact.BufOutput, Index: s.Index, Bytes: s.Bytes}
	}
	g.buf[v] = len(g.prog.Buffers)
	g.prog.Buffers = append(g.prog.Buffers, b)
	return g.buf[v]
}

func (g *gen) step(kernel string, n *mir.Node, args []*mir.Value, s artifact.Step) {
	s.Kernel, s.Src = kernel, n.Src
	for _, a := range args {
		s.Args = append(s.Args, g.buffer(a))
	}
	g.prog.Steps = append(g.prog.Steps, s)
}

func (g *gen) shape(v *mir.Value) []int64 { return g.p.Shapes[v] }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// broadcastStrides are the strides that read a tensor of shape in as if it
// had shape out (NumPy broadcasting, dims aligned right): 0 along a
// broadcast dim.
func broadcastStrides(in, out []int64) []int64 {
	cs := tensor.Strides(in)
	st := make([]int64, len(out))
	off := len(out) - len(in)
	for i := range in {
		if in[i] != 1 || out[off+i] == 1 {
			st[off+i] = cs[i]
		}
	}
	return st
}

var actCodes = map[string]int64{"": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4, "sigmoid": 5, "tanh": 6, "leaky_relu": 7, "clamp": 8}

// ActCode is the activation number the runtime understands.
func ActCode(name string) (int64, bool) { c, ok := actCodes[name]; return c, ok }

// epilogue returns the epilogue operands of a matmul or conv and its params.
func epilogue(n *mir.Node, first int) (bias, residual *mir.Value, ints []int64, floats []float64, err error) {
	i := first
	if n.Attrs.Bool("bias") {
		bias = n.Args[i]
		i++
	}
	if n.Attrs.Bool("residual") {
		residual = n.Args[i]
	}
	act, ok := ActCode(n.Attrs.String("act"))
	if !ok {
		return nil, nil, nil, nil, fmt.Errorf("unknown epilogue activation %q", n.Attrs.String("act"))
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if n.Attrs.Has("min") {
		lo = n.Attrs.Float("min")
	}
	if n.Attrs.Has("max") {
		hi = n.Attrs.Float("max")
	}
	return bias, residual, []int64{b2i(bias != nil), b2i(residual != nil), act}, []float64{n.Attrs.Float("alpha"), lo, hi}, nil
}

func (g *gen) requireF32(n *mir.Node, vs ...*mir.Value) error {
	for _, v := range vs {
		if v != nil && v.Type.DType != tensor.F32 {
			return fmt.Errorf("target %s: %s on %s is not supported (it supports f32)", g.w.Target, n.Op, v.Type.DType)
		}
	}
	return nil
}

func (g *gen) node(n *mir.Node) error {
	switch {
	case n.Op == mir.OpFused || mir.IsElementwise(n.Op):
		return g.elementwise(n)
	}
	x := n.Args
	out := n.Results[0]
	switch n.Op {
	case mir.OpMatMul:
		bias, res, ints, floats, err := epilogue(n, 2)
		if err != nil {
			return err
		}
		if err := g.requireF32(n, x[0], x[1], out); err != nil {
			return err
		}
		as, bs := g.shape(x[0]), g.shape(x[1])
		rows := tensor.NumElements(as[:len(as)-1])
		if g.w.Layout != "" && x[1].IsConst() && len(bs) == 2 {
			// A weight: packed at build time into the kernel's panels, so
			// runs never repack it. Few-row products too: their threads
			// then stream contiguous panels, where a row-major B split by
			// columns is read in strided pieces (MobileNetV2's classifier,
			// one row: 238 -> 155 us on 1 thread, 176 -> 105 on 2).
			idx, err := g.w.AddPacked(x[1])
			if err != nil {
				return err
			}
			pb := len(g.prog.Buffers)
			g.prog.Buffers = append(g.prog.Buffers, artifact.Buffer{Kind: artifact.BufWeight, Index: idx, Bytes: g.w.Refs[idx].Bytes})
			st := artifact.Step{Kernel: "matmul_packed", Src: n.Src, Ints: append([]int64{rows, bs[1], bs[0]}, ints...), Floats: floats}
			st.Args = []int{g.buffer(x[0]), pb}
			for _, v := range nonNil(bias, res, out) {
				st.Args = append(st.Args, g.buffer(v))
			}
			g.prog.Steps = append(g.prog.Steps, st)
			return nil
		}
		g.step("matmul", n, nonNil(x[0], x[1], bias, res, out), artifact.Step{Ints: ints, Floats: floats, Shapes: [][]int64{as, bs}})
	case mir.OpConv2D:
		convBias, res, ints, floats, err := epilogue(n, 2)
		if err != nil {
			return err
		}
		if err := g.requireF32(n, x[0], x[1], out); err != nil {
			return err
		}
		if g.nhwcConv(n) && (g.nhwc[x[0]] || g.nhwc[out]) {
			return g.convNHWC(n, convBias, res, ints, floats)
		}
		xs, ws, os := g.shape(x[0]), g.shape(x[1]), g.shape(out)
		st, pad, dil := n.Attrs.Ints("stride"), n.Attrs.Ints("pad"), n.Attrs.Ints("dilation")
		if hw := xs[2] * xs[3]; g.w.Layout != "" && x[1].IsConst() && ws[2] == 1 && ws[3] == 1 && pointwise(n) &&
			hw <= conv1x1PackedMaxHW {
			// A 1x1 convolution over a small plane: the transposed product
			// with Wᵀ packed here (kernels.Conv1x1Packed).
			idx, err := g.w.AddPackedT(x[1], ws[1], ws[0])
			if err != nil {
				return err
			}
			pb := len(g.prog.Buffers)
			g.prog.Buffers = append(g.prog.Buffers, artifact.Buffer{Kind: artifact.BufWeight, Index: idx, Bytes: g.w.Refs[idx].Bytes})
			st := artifact.Step{Kernel: "conv1x1_packed", Src: n.Src, Ints: append([]int64{xs[0], xs[1], hw, ws[0]}, ints...), Floats: floats}
			st.Args = []int{g.buffer(x[0]), pb}
			for _, v := range nonNil(convBias, res, out) {
				st.Args = append(st.Args, g.buffer(v))
			}
			g.prog.Steps = append(g.prog.Steps, st)
			return nil
		}
		geom := []int64{xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], st[0], st[1], pad[0], pad[1], pad[2], pad[3], dil[0], dil[1], n.Attrs.Int("groups"), os[2], os[3]}
		g.step("conv2d", n, nonNil(x[0], x[1], convBias, res, out), artifact.Step{Ints: append(geom, ints...), Floats: floats})
	case mir.OpMaxPool2D, mir.OpAvgPool2D:
		if err := g.requireF32(n, x[0]); err != nil {
			return err
		}
		xs, os := g.shape(x[0]), g.shape(out)
		k, st, pad, dil := n.Attrs.Ints("kernel"), n.Attrs.Ints("stride"), n.Attrs.Ints("pad"), n.Attrs.Ints("dilation")
		geom := []int64{xs[0], xs[1], xs[2], xs[3], k[0], k[1], st[0], st[1], pad[0], pad[1], pad[2], pad[3], dil[0], dil[1], os[2], os[3], b2i(n.Attrs.Bool("count_include_pad"))}
		g.step(string(n.Op), n, []*mir.Value{x[0], out}, artifact.Step{Ints: geom})
	case mir.OpReduce:
		kinds := map[string]int64{"sum": 0, "mean": 1, "max": 2, "min": 3, "prod": 4}
		shape, axes := g.shape(x[0]), n.Attrs.Ints("axes")
		if g.nhwc[x[0]] {
			// A global pool of a channels-last value (spatialReduce): the
			// same reduction over [N, H, W, C]'s plane.
			shape, axes = []int64{shape[0], shape[2], shape[3], shape[1]}, []int64{1, 2}
		}
		g.step("reduce", n, []*mir.Value{x[0], out}, artifact.Step{
			Ints:   []int64{kinds[n.Attrs.String("kind")], int64(x[0].Type.DType)},
			Shapes: [][]int64{shape, axes}})
	case mir.OpArgReduce:
		s := g.shape(x[0])
		ax := n.Attrs.Int("axis")
		g.step("argreduce", n, []*mir.Value{x[0], out}, artifact.Step{Ints: []int64{b2i(n.Attrs.Bool("max")), tensor.NumElements(s[:ax]), s[ax], tensor.NumElements(s[ax+1:]), int64(x[0].Type.DType)}})
	case mir.OpSoftmax:
		if err := g.requireF32(n, x[0]); err != nil {
			return err
		}
		s := g.shape(x[0])
		ax := n.Attrs.Int("axis")
		g.step("softmax", n, []*mir.Value{x[0], out}, artifact.Step{Ints: []int64{tensor.NumElements(s[:ax]), s[ax], tensor.NumElements(s[ax+1:]), b2i(n.Attrs.Bool("log"))}})
	case mir.OpLayerNorm, mir.OpAddLayerNorm:
		return g.layernorm(n)
	case mir.OpAttention:
		return g.attention(n)
	case mir.OpReshape, mir.OpCopy:
		if g.p.Stores[out].Root == g.p.Stores[x[0]].Root {
			return nil // a view: nothing to run
		}
		g.step("memcpy", n, []*mir.Value{x[0], out}, artifact.Step{})
	case mir.OpTranspose:
		if g.p.Stores[out].Root == g.p.Stores[x[0]].Root {
			return nil // a view: moves only dims of size 1, or a strided attention operand's
		}
		s := g.shape(x[0])
		perm := n.Attrs.Ints("perm")
		in := tensor.Strides(s)
		src := make([]int64, len(perm))
		for i, p := range perm {
			src[i] = in[p]
		}
		g.copyStep(n, x[0], out, g.shape(out), 0, tensor.Strides(g.shape(out)), 0, src)
	case mir.OpExpand:
		g.copyStep(n, x[0], out, g.shape(out), 0, tensor.Strides(g.shape(out)), 0, broadcastStrides(g.shape(x[0]), g.shape(out)))
	case mir.OpSlice:
		return g.slice(n)
	case mir.OpConcat:
		os := g.shape(out)
		ax := n.Attrs.Int("axis")
		dst := tensor.Strides(os)
		at := int64(0)
		for _, a := range x {
			s := g.shape(a)
			g.copyStep(n, a, out, s, at*dst[ax], dst, 0, tensor.Strides(s))
			at += s[ax]
		}
	case mir.OpPad:
		os := g.shape(out)
		dst := tensor.Strides(os)
		pads, err := specialize.Concrete(n.Attrs.Dims("pads"), g.p.Binding)
		if err != nil {
			return err
		}
		off := int64(0)
		for i := range os {
			off += pads[i] * dst[i]
		}
		g.step("fill", n, []*mir.Value{out}, artifact.Step{Ints: []int64{int64(out.Type.DType)}, Floats: []float64{n.Attrs.Float("value")}})
		s := g.shape(x[0])
		g.copyStep(n, x[0], out, s, off, dst, 0, tensor.Strides(s))
	case mir.OpGather:
		s := g.shape(x[0])
		ax := n.Attrs.Int("axis")
		g.step("gather", n, []*mir.Value{x[0], x[1], out}, artifact.Step{Ints: []int64{tensor.NumElements(s[:ax]), s[ax], tensor.NumElements(s[ax+1:]), int64(x[0].Type.DType.Size()), int64(x[1].Type.DType)}})
	case mir.OpIota:
		g.step("iota", n, []*mir.Value{out}, artifact.Step{Ints: []int64{g.shape(out)[0], int64(out.Type.DType)}})
	default:
		return fmt.Errorf("target %s has no kernel for %s", g.w.Target, n.Op)
	}
	return nil
}

func nonNil(vs ...*mir.Value) []*mir.Value {
	out := vs[:0:0]
	for _, v := range vs {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

// copyStep emits a strided copy of shape elements from src to dst.
func (g *gen) copyStep(n *mir.Node, src, dst *mir.Value, shape []int64, dstOff int64, dstStrides []int64, srcOff int64, srcStrides []int64) {
	g.step("copy", n, []*mir.Value{src, dst}, artifact.Step{
		Ints:   []int64{int64(src.Type.DType.Size()), dstOff, srcOff},
		Shapes: [][]int64{shape, dstStrides, srcStrides}})
}

// slice normalizes the slice under the binding (NumPy: negative indices
// count from the end, then clamp) and emits a strided copy.
func (g *gen) slice(n *mir.Node) error {
	x, out := n.Args[0], n.Results[0]
	if g.p.Stores[out].Root == g.p.Stores[x].Root {
		return nil // a view: a strided attention operand's
	}
	s := g.shape(x)
	starts, err := specialize.Concrete(n.Attrs.Dims("starts"), g.p.Binding)
	if err != nil {
		return err
	}
	ends, err := specialize.Concrete(n.Attrs.Dims("ends"), g.p.Binding)
	if err != nil {
		return err
	}
	in := tensor.Strides(s)
	src := append([]int64(nil), in...)
	off := int64(0)
	for i, ax := range n.Attrs.Ints("axes") {
		step := n.Attrs.Ints("steps")[i]
		start, _ := tensor.SliceRange(starts[i], ends[i], step, s[ax])
		off += start * in[ax]
		src[ax] = in[ax] * step
	}
	g.copyStep(n, x, out, g.shape(out), 0, tensor.Strides(g.shape(out)), off, src)
	return nil
}

func (g *gen) layernorm(n *mir.Node) error {
	x := n.Args[0]
	if err := g.requireF32(n, x); err != nil {
		return err
	}
	s := g.shape(x)
	ax := n.Attrs.Int("axis")
	rows, cols := tensor.NumElements(s[:ax]), tensor.NumElements(s[ax:])
	hasS, hasB := n.Attrs.Bool("scale"), n.Attrs.Bool("bias")
	first := 1
	if n.Op == mir.OpAddLayerNorm {
		first = 2
	}
	args := append([]*mir.Value(nil), n.Args[:first]...)
	i := first
	var scale, bias *mir.Value
	if hasS {
		scale = n.Args[i]
		i++
	}
	if hasB {
		bias = n.Args[i]
	}
	args = append(args, nonNil(scale, bias)...)
	args = append(args, n.Results...)
	kernel := "layernorm"
	if n.Op == mir.OpAddLayerNorm {
		kernel = "add_layernorm"
	}
	g.step(kernel, n, args, artifact.Step{Ints: []int64{rows, cols, b2i(hasS), b2i(hasB), b2i(n.Attrs.Bool("rms"))}, Floats: []float64{n.Attrs.Float("eps")}})
	return nil
}

func (g *gen) attention(n *mir.Node) error {
	q, k, v := n.Args[0], n.Args[1], n.Args[2]
	var mask *mir.Value
	if len(n.Args) > 3 {
		mask = n.Args[3]
	}
	if err := g.requireF32(n, q, k, v, mask); err != nil {
		return err
	}
	out := n.Results[0]
	os := g.shape(out)
	batch := os[:len(os)-2]
	qs, ks := g.shape(q), g.shape(k)
	sq, d := qs[len(qs)-2], qs[len(qs)-1]
	sk := ks[len(ks)-2]
	dv := os[len(os)-1]
	// Each operand's buffer, batch strides and row stride: its own,
	// contiguous, or a strided view read in place (specialize's views.go).
	qb, qbs, qr, err := g.operandBuffer(q, batch)
	if err != nil {
		return err
	}
	kb, kbs, kr, err := g.operandBuffer(k, batch)
	if err != nil {
		return err
	}
	vb, vbs, vr, err := g.operandBuffer(v, batch)
	if err != nil {
		return err
	}
	scale := 1 / math.Sqrt(float64(d))
	if n.Attrs.Has("scale") {
		scale = n.Attrs.Float("scale")
	}
	shapes := [][]int64{batch, qbs, kbs, vbs, nil}
	ints := []int64{sq, sk, d, dv, b2i(n.Attrs.Bool("causal")), 0, 0, b2i(mask != nil), qr, kr, vr}
	args := []int{qb, kb, vb}
	if mask != nil {
		full := append(append([]int64(nil), batch...), sq, sk)
		st := broadcastStrides(g.shape(mask), full)
		shapes[4] = st[:len(batch)]
		ints[5], ints[6] = st[len(batch)], st[len(batch)+1]
		args = append(args, g.buffer(mask))
	}
	kernel := "attention"
	if qr != 0 || kr != 0 || vr != 0 {
		// A kernel name of its own: a runtime that predates row strides
		// refuses the step instead of reading the operands contiguous.
		kernel = "attention_strided"
	} else {
		ints = ints[:8]
	}
	g.prog.Steps = append(g.prog.Steps, artifact.Step{Kernel: kernel, Src: n.Src, Ints: ints, Floats: []float64{scale},
		Shapes: shapes, Args: append(args, g.buffer(out))})
	return nil
}

// operandBuffer is the buffer an attention operand is read from, its
// strides per batch dim of the output (0 broadcasts) and its row stride
// (0: rows back to back). Under StridedAttention an operand may be a view
// of a value it reads in place (a buffer starting at its first element).
func (g *gen) operandBuffer(v *mir.Value, batch []int64) (buf int, bstrides []int64, row int64, err error) {
	s := g.shape(v)
	full := append(append([]int64(nil), batch...), s[len(s)-2], s[len(s)-1])
	if !g.p.Options.StridedAttention || g.p.Stores[v].Root == v {
		st := broadcastStrides(s, full)
		return g.buffer(v), st[:len(batch)], 0, nil
	}
	root, off, strides, ok := g.p.ViewOf(v)
	if !ok {
		return 0, nil, 0, fmt.Errorf("internal error: attention operand %s is a view without row strides", v)
	}
	b := g.prog.Buffers[g.buffer(root)]
	span := int64(1)
	for d, st := range strides {
		span += (s[d] - 1) * st
	}
	size := int64(v.Type.DType.Size())
	b.Offset += off * size
	b.Bytes = span * size
	g.prog.Buffers = append(g.prog.Buffers, b)
	// v's dims align with the output's from the right; a dim of 1 broadcasts.
	bstrides = make([]int64, len(batch))
	lead := len(full) - len(s)
	for d := range batch {
		if i := d - lead; i >= 0 && s[i] != 1 {
			bstrides[d] = strides[i]
		}
	}
	return len(g.prog.Buffers) - 1, bstrides, strides[len(s)-2], nil
}
