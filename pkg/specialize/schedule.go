package specialize

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// The schedule: a plan, its decisions made, as the target-neutral LIR
// program, one typed kernel launch per node (lir.MatMul, lir.Conv2D, ...)
// with concrete geometry over the planned buffers. The CPU runs it as it
// is; the GPU backends rewrite its steps into dispatches.

// Schedule emits the program of one plan, following the plan's decisions;
// w collects the weights it references (shared by an artifact's variants).
func Schedule(p *Plan, w *Weights) (*lir.Program, error) {
	g := &gen{p: p, w: w, buf: map[*mir.Value]lir.Buf{}, relaid: map[*mir.Value]lir.Buf{}, prog: &lir.Program{ArenaBytes: p.ArenaBytes}}
	for _, v := range p.Graph.Inputs {
		g.prog.Inputs = append(g.prog.Inputs, lir.Slot{Name: v.Name, DType: v.Type.DType.String(), Shape: p.Shapes[v], Buffer: int(g.buffer(v))})
	}
	for _, v := range p.Graph.Outputs {
		g.prog.Outputs = append(g.prog.Outputs, lir.Slot{Name: v.Name, DType: v.Type.DType.String(), Shape: p.Shapes[v], Buffer: int(g.buffer(v))})
	}
	for _, n := range p.Graph.Nodes {
		if err := g.node(n); err != nil {
			return nil, fmt.Errorf("%s: %v", n.Src, err)
		}
	}
	return g.prog, nil
}

type gen struct {
	p      *Plan
	w      *Weights
	buf    map[*mir.Value]lir.Buf
	prog   *lir.Program
	relaid map[*mir.Value]lir.Buf // NCHW values relaid channels last, by scratch buffer
}

// buffer returns the buffer index of a value, adding it on first use.
func (g *gen) buffer(v *mir.Value) lir.Buf {
	if i, ok := g.buf[v]; ok {
		return i
	}
	s := g.p.Stores[v]
	var b lir.Buffer
	switch s.Kind {
	case StoreArena:
		b = lir.Buffer{Kind: lir.BufArena, Offset: s.Offset, Bytes: s.Bytes}
	case StoreConst:
		b = lir.Buffer{Kind: lir.BufWeight, Index: g.w.Add(s.Root), Offset: s.Offset, Bytes: s.Bytes}
	case StoreInput:
		b = lir.Buffer{Kind: lir.BufInput, Index: s.Index, Offset: s.Offset, Bytes: s.Bytes}
	case StoreOutput:
		b = lir.Buffer{Kind: lir.BufOutput, Index: s.Index, Offset: s.Offset, Bytes: s.Bytes}
	}
	g.buf[v] = g.add(b)
	return g.buf[v]
}

// optBuffer is buffer for an optional operand: NoBuf for nil.
func (g *gen) optBuffer(v *mir.Value) lir.Buf {
	if v == nil {
		return lir.NoBuf
	}
	return g.buffer(v)
}

// add appends a buffer that belongs to no value (a packed weight, a view
// with an offset, scratch) and returns its index.
func (g *gen) add(b lir.Buffer) lir.Buf {
	g.prog.Buffers = append(g.prog.Buffers, b)
	return lir.Buf(len(g.prog.Buffers) - 1)
}

// weightBuffer is the buffer of the whole weight idx.
func (g *gen) weightBuffer(idx int) lir.Buf {
	return g.add(lir.Buffer{Kind: lir.BufWeight, Index: idx, Bytes: g.w.Refs[idx].Bytes})
}

func (g *gen) emit(n *mir.Node, op lir.Op) {
	g.prog.Steps = append(g.prog.Steps, lir.Step{Op: op, Src: n.Src})
}

func (g *gen) shape(v *mir.Value) []int64 { return g.p.Shapes[v] }

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

// epilogue returns a matmul's or conv's epilogue operands (its arguments
// from first on) and its activation; the caller fills in the buffers.
func epilogue(n *mir.Node, first int) (bias, residual *mir.Value, e lir.Epilogue, err error) {
	i := first
	if n.Attrs.Bool("bias") {
		bias = n.Args[i]
		i++
	}
	if n.Attrs.Bool("residual") {
		residual = n.Args[i]
	}
	act, ok := lir.ParseActivation(n.Attrs.String("act"))
	if !ok {
		return nil, nil, e, fmt.Errorf("unknown epilogue activation %q", n.Attrs.String("act"))
	}
	e = lir.NoEpilogue()
	e.Act, e.Alpha, e.Min, e.Max = act, n.Attrs.Float("alpha"), math.Inf(-1), math.Inf(1)
	e.ActLast = n.Attrs.Bool("act_last") && residual != nil && act != lir.ActNone
	if n.Attrs.Has("min") {
		e.Min = n.Attrs.Float("min")
	}
	if n.Attrs.Has("max") {
		e.Max = n.Attrs.Float("max")
	}
	return bias, residual, e, nil
}

func (g *gen) requireF32(n *mir.Node, vs ...*mir.Value) error {
	for _, v := range vs {
		if v != nil && v.Type.DType != tensor.F32 {
			return fmt.Errorf("target %s: %s on %s is not supported (it supports f32)", g.w.Target, n.Op, v.Type.DType)
		}
	}
	return nil
}

// outer, axis and inner view a shape as [outer, s[ax], inner].
func outerAxisInner(s []int64, ax int64) (int64, int64, int64) {
	return tensor.NumElements(s[:ax]), s[ax], tensor.NumElements(s[ax+1:])
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
		return g.matmul(n)
	case mir.OpMatMulI8:
		return g.matmulI8(n)
	case mir.OpConv2DI8:
		return g.convI8(n)
	case mir.OpConv2D:
		return g.conv(n)
	case mir.OpMaxPool2D, mir.OpAvgPool2D:
		if err := g.requireF32(n, x[0]); err != nil {
			return err
		}
		xs, os := g.shape(x[0]), g.shape(out)
		k, st, pad, dil := n.Attrs.Ints("kernel"), n.Attrs.Ints("stride"), n.Attrs.Ints("pad"), n.Attrs.Ints("dilation")
		g.emit(n, &lir.Pool2D{X: g.buffer(x[0]), Out: g.buffer(out), Max: n.Op == mir.OpMaxPool2D,
			Geom: lir.PoolGeom{N: xs[0], C: xs[1], H: xs[2], W: xs[3], KH: k[0], KW: k[1], StrideH: st[0], StrideW: st[1],
				PadT: pad[0], PadL: pad[1], PadB: pad[2], PadR: pad[3], DilH: dil[0], DilW: dil[1], OH: os[2], OW: os[3]},
			CountIncludePad: n.Attrs.Bool("count_include_pad")})
	case mir.OpReduce:
		fn, ok := lir.ParseReduceFn(n.Attrs.String("kind"))
		if !ok {
			return fmt.Errorf("unknown reduction %q", n.Attrs.String("kind"))
		}
		shape, axes := g.shape(x[0]), n.Attrs.Ints("axes")
		if g.p.Kernels[n] == KernelChannelsLast {
			// A global pool of a channels-last value (spatialReduce): the
			// same reduction over [N, H, W, C]'s plane.
			shape, axes = []int64{shape[0], shape[2], shape[3], shape[1]}, []int64{1, 2}
		}
		g.emit(n, &lir.Reduce{X: g.buffer(x[0]), Out: g.buffer(out), Fn: fn, DType: x[0].Type.DType, Shape: shape, Axes: axes})
	case mir.OpArgReduce:
		o, a, i := outerAxisInner(g.shape(x[0]), n.Attrs.Int("axis"))
		g.emit(n, &lir.ArgReduce{X: g.buffer(x[0]), Out: g.buffer(out), Max: n.Attrs.Bool("max"), Outer: o, Axis: a, Inner: i, DType: x[0].Type.DType})
	case mir.OpTopK:
		ax := n.Attrs.Int("axis")
		o, a, i := outerAxisInner(g.shape(x[0]), ax)
		k := g.shape(n.Results[0])[ax]
		if k < 1 || k > a {
			return fmt.Errorf("topk: k %d outside [1, %d] (axis %d of the operand)", k, a, ax)
		}
		g.emit(n, &lir.TopK{X: g.buffer(x[0]), Values: g.buffer(n.Results[0]), Indices: g.buffer(n.Results[1]),
			Outer: o, Axis: a, Inner: i, K: k, Largest: n.Attrs.Bool("largest"), DType: x[0].Type.DType})
	case mir.OpSoftmax:
		if err := g.requireF32(n, x[0]); err != nil {
			return err
		}
		o, a, i := outerAxisInner(g.shape(x[0]), n.Attrs.Int("axis"))
		g.emit(n, &lir.Softmax{X: g.buffer(x[0]), Out: g.buffer(out), Outer: o, Axis: a, Inner: i, Log: n.Attrs.Bool("log")})
	case mir.OpLayerNorm, mir.OpAddLayerNorm:
		return g.layernorm(n)
	case mir.OpAttention:
		return g.attention(n)
	case mir.OpReshape, mir.OpCopy:
		if g.p.Stores[out].Root == g.p.Stores[x[0]].Root {
			return nil // a view: nothing to run
		}
		g.emit(n, &lir.Memcpy{Src: g.buffer(x[0]), Dst: g.buffer(out)})
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
		placed := g.p.placed[n]
		for i, a := range x {
			s := g.shape(a)
			if placed == nil || !placed[i] {
				g.copyStep(n, a, out, s, at*dst[ax], dst, 0, tensor.Strides(s))
			}
			at += s[ax]
		}
	case mir.OpPad:
		os := g.shape(out)
		dst := tensor.Strides(os)
		pads, err := Concrete(n.Attrs.Dims("pads"), g.p.Binding)
		if err != nil {
			return err
		}
		off := int64(0)
		for i := range os {
			off += pads[i] * dst[i]
		}
		g.emit(n, &lir.Fill{Dst: g.buffer(out), DType: out.Type.DType, Value: n.Attrs.Float("value")})
		s := g.shape(x[0])
		g.copyStep(n, x[0], out, s, off, dst, 0, tensor.Strides(s))
	case mir.OpGather:
		o, a, i := outerAxisInner(g.shape(x[0]), n.Attrs.Int("axis"))
		g.emit(n, &lir.Gather{X: g.buffer(x[0]), Idx: g.buffer(x[1]), Out: g.buffer(out), Outer: o, AxisLen: a, Inner: i,
			ElemSize: int64(x[0].Type.DType.Size()), IdxDType: x[1].Type.DType})
	case mir.OpScatter:
		// The data first (unless the plan put the result in its bytes),
		// then the updates written over it in place.
		if g.p.Stores[out].Root != g.p.Stores[x[0]].Root {
			g.emit(n, &lir.Memcpy{Src: g.buffer(x[0]), Dst: g.buffer(out)})
		}
		g.emit(n, &lir.Scatter{Out: g.buffer(out), Idx: g.buffer(x[1]), Upd: g.buffer(x[2]), N: g.shape(out)[0], M: g.shape(x[1])[0],
			ElemSize: int64(out.Type.DType.Size()), IdxDType: x[1].Type.DType})
	case mir.OpIota:
		g.emit(n, &lir.Iota{Out: g.buffer(out), N: g.shape(out)[0], DType: out.Type.DType})
	default:
		return fmt.Errorf("target %s has no kernel for %s", g.w.Target, n.Op)
	}
	return nil
}

func (g *gen) matmul(n *mir.Node) error {
	x, out := n.Args, n.Results[0]
	bias, res, epi, err := epilogue(n, 2)
	if err != nil {
		return err
	}
	if err := g.requireF32(n, x[0], x[1], out); err != nil {
		return err
	}
	as, bs := g.shape(x[0]), g.shape(x[1])
	if g.p.Kernels[n] == KernelPacked {
		// A weight packed at build time into the kernel's panels
		// (packWeights).
		idx, err := g.w.AddPacked(x[1])
		if err != nil {
			return err
		}
		op := &lir.PackedMatMul{B: g.weightBuffer(idx), M: tensor.NumElements(as[:len(as)-1]), N: bs[1], K: bs[0], Epilogue: epi}
		op.A = g.buffer(x[0])
		op.Epilogue.Bias, op.Epilogue.Residual = g.optBuffer(bias), g.optBuffer(res)
		op.Out = g.buffer(out)
		g.emit(n, op)
		return nil
	}
	op := &lir.MatMul{A: g.buffer(x[0]), B: g.buffer(x[1]), AShape: as, BShape: bs, Epilogue: epi}
	op.Epilogue.Bias, op.Epilogue.Residual = g.optBuffer(bias), g.optBuffer(res)
	op.Out = g.buffer(out)
	g.emit(n, op)
	return nil
}

// matmulI8 is an integer product (int8.go) over its weight packed here.
func (g *gen) matmulI8(n *mir.Node) error {
	x, out := n.Args, n.Results[0]
	as, ws := g.shape(x[0]), g.shape(x[1])
	idx, err := g.w.AddInt8(x[1])
	if err != nil {
		return err
	}
	sp, ok := g.p.Int8MatMul[n]
	if !ok {
		return fmt.Errorf("internal: integer product of %v by %v without its scratch", as, ws)
	}
	op := &lir.QMatMul{A: g.buffer(x[0]), B: g.weightBuffer(idx), Out: g.buffer(out), ZeroAt: lir.NoBuf, Bias: lir.NoBuf, Scratch: g.scratch(sp),
		M: tensor.NumElements(as[:len(as)-1]), N: ws[1], K: ws[0], Zero: n.Attrs.Int("zero"), Signed: x[0].Type.DType == tensor.I8}
	next := 2 // the operand after the weight: the bias, then a run-time zero point
	if n.Attrs.Bool("bias") {
		op.Bias = g.buffer(x[next])
		next++
	}
	if len(x) > next {
		op.ZeroAt = g.buffer(x[next])
	}
	g.emit(n, op)
	return nil
}

// convI8 is an integer convolution (int8.go) over its weight packed here
// and the scratch int8Scratch placed.
func (g *gen) convI8(n *mir.Node) error {
	x, out := n.Args, n.Results[0]
	xs, ws, os := g.shape(x[0]), g.shape(x[1]), g.shape(out)
	sp, ok := g.p.Int8Conv[n]
	if !ok || len(xs) != 4 || len(ws) != 4 || len(os) != 4 {
		return fmt.Errorf("internal: integer convolution of %v by %v without its scratch", xs, ws)
	}
	geom := ConvGeom(n, xs, ws, os)
	idx, err := g.w.AddInt8Conv(x[1], geom)
	if err != nil {
		return err
	}
	op := &lir.QConv2D{X: g.buffer(x[0]), W: g.weightBuffer(idx), Bias: lir.NoBuf, Geom: geom, Zero: n.Attrs.Int("zero"), Signed: x[0].Type.DType == tensor.I8}
	if n.Attrs.Bool("bias") {
		op.Bias = g.buffer(x[2])
	}
	op.Out, op.XPad, op.OutT = g.buffer(out), g.scratch(sp.XPad), lir.NoBuf
	if sp.OutT != nil {
		op.OutT = g.scratch(sp.OutT)
	}
	// a channels-last stretch's values as they are stored (channelsLast)
	op.XNHWC, op.OutNHWC = g.p.ChannelsLast[x[0]], g.p.ChannelsLast[out]
	g.emit(n, op)
	return nil
}

func (g *gen) conv(n *mir.Node) error {
	x, out := n.Args, n.Results[0]
	bias, res, epi, err := epilogue(n, 2)
	if err != nil {
		return err
	}
	if err := g.requireF32(n, x[0], x[1], out); err != nil {
		return err
	}
	if g.p.Kernels[n] == KernelChannelsLast {
		return g.convNHWC(n, bias, res, epi)
	}
	xs, ws, os := g.shape(x[0]), g.shape(x[1]), g.shape(out)
	if g.p.Kernels[n] == KernelWinograd {
		return g.convWinograd(n, bias, res, epi)
	}
	if g.p.Kernels[n] == KernelTapMajor {
		idx := g.w.AddTapMajor(x[1])
		op := &lir.TapConv2D{X: g.buffer(x[0]), W: g.weightBuffer(idx), Geom: ConvGeom(n, xs, ws, os), Epilogue: epi}
		op.Epilogue.Bias, op.Epilogue.Residual = g.optBuffer(bias), g.optBuffer(res)
		op.Out = g.buffer(out)
		g.emit(n, op)
		return nil
	}
	if hw := xs[2] * xs[3]; g.p.Kernels[n] == KernelPacked {
		// A 1x1 convolution over a small plane: the transposed product
		// with Wᵀ packed here (packWeights).
		idx, err := g.w.AddPackedT(x[1], ws[1], ws[0])
		if err != nil {
			return err
		}
		op := &lir.PackedConv1x1{W: g.weightBuffer(idx), N: xs[0], C: xs[1], HW: hw, O: ws[0], Epilogue: epi}
		op.X = g.buffer(x[0])
		op.Epilogue.Bias, op.Epilogue.Residual = g.optBuffer(bias), g.optBuffer(res)
		op.Out = g.buffer(out)
		g.emit(n, op)
		return nil
	}
	op := &lir.Conv2D{X: g.buffer(x[0]), W: g.buffer(x[1]), Geom: ConvGeom(n, xs, ws, os), Epilogue: epi}
	op.Epilogue.Bias, op.Epilogue.Residual = g.optBuffer(bias), g.optBuffer(res)
	op.Out = g.buffer(out)
	g.emit(n, op)
	return nil
}

// convWinograd emits a convolution run as F(m×m, 3×3) (the winograd
// pass): the input transform into scratch V, the products with the
// weights transformed here into scratch M, and the output transform with
// the epilogue; the three for each part of the tiles in turn where the
// plan has parts.
func (g *gen) convWinograd(n *mir.Node, bias, res *mir.Value, epi lir.Epilogue) error {
	x, w, out := n.Args[0], n.Args[1], n.Results[0]
	wp := g.p.Winograd[n]
	geom := ConvGeom(n, g.shape(x), g.shape(w), g.shape(out))
	idx, err := g.w.AddWinograd(w, wp.Tile)
	if err != nil {
		return err
	}
	_, _, _, tp := geom.WinogradTiles(wp.Tile)
	parts := lir.TileParts(tp, wp.Part)
	vb, mb := g.scratch(wp.V), g.scratch(wp.M)
	xb, ub := g.buffer(x), g.weightBuffer(idx)
	epi.Bias, epi.Residual = g.optBuffer(bias), g.optBuffer(res)
	ob := g.buffer(out)
	for _, r := range parts {
		prod := &lir.WinogradProduct{V: vb, U: ub, M: mb, P: (wp.Tile + 2) * (wp.Tile + 2), C: geom.C, O: geom.O, TP: tp}
		if !r.Whole() {
			prod.TP, prod.LD = r.T1-r.T0, r.LD
		}
		g.emit(n, &lir.WinogradInput{X: xb, V: vb, Geom: geom, Tile: wp.Tile, Part: r})
		g.emit(n, prod)
		g.emit(n, &lir.WinogradOutput{M: mb, Out: ob, Geom: geom, Tile: wp.Tile, Epilogue: epi, Part: r})
	}
	return nil
}

// copyStep emits a strided copy of shape elements from src to dst.
func (g *gen) copyStep(n *mir.Node, src, dst *mir.Value, shape []int64, dstOff int64, dstStrides []int64, srcOff int64, srcStrides []int64) {
	g.emit(n, &lir.Copy{Src: g.buffer(src), Dst: g.buffer(dst), ElemSize: int64(src.Type.DType.Size()), Shape: shape,
		DstOff: dstOff, SrcOff: srcOff, DstStrides: dstStrides, SrcStrides: srcStrides})
}

// slice normalizes the slice under the binding (NumPy: negative indices
// count from the end, then clamp) and emits a strided copy.
func (g *gen) slice(n *mir.Node) error {
	x, out := n.Args[0], n.Results[0]
	if g.p.Stores[out].Root == g.p.Stores[x].Root {
		return nil // a view: a strided attention operand's
	}
	s := g.shape(x)
	starts, err := indices(n.Attrs.Dims("starts"), g.p.Binding)
	if err != nil {
		return err
	}
	ends, err := indices(n.Attrs.Dims("ends"), g.p.Binding)
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
	first := 1
	if n.Op == mir.OpAddLayerNorm {
		first = 2
	}
	i := first
	var scale, bias *mir.Value
	if n.Attrs.Bool("scale") {
		scale = n.Args[i]
		i++
	}
	if n.Attrs.Bool("bias") {
		bias = n.Args[i]
	}
	eps, rms := n.Attrs.Float("eps"), n.Attrs.Bool("rms")
	if n.Op == mir.OpAddLayerNorm {
		if rms {
			return fmt.Errorf("add_layernorm with rms is not supported")
		}
		op := &lir.AddLayerNorm{A: g.buffer(n.Args[0]), B: g.buffer(n.Args[1]), Rows: rows, Cols: cols, Eps: eps}
		op.Scale, op.Bias = g.optBuffer(scale), g.optBuffer(bias)
		op.Out, op.Sum = g.buffer(n.Results[0]), lir.NoBuf
		if len(n.Results) > 1 {
			op.Sum = g.buffer(n.Results[1])
		}
		g.emit(n, op)
		return nil
	}
	op := &lir.LayerNorm{X: g.buffer(x), Rows: rows, Cols: cols, RMS: rms, Eps: eps}
	op.Scale, op.Bias = g.optBuffer(scale), g.optBuffer(bias)
	op.Out = g.buffer(n.Results[0])
	g.emit(n, op)
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
	geom := lir.AttnGeom{Batch: batch, Sq: qs[len(qs)-2], D: qs[len(qs)-1], Sk: ks[len(ks)-2], Dv: os[len(os)-1],
		Causal: n.Attrs.Bool("causal")}
	geom.Scale = 1 / math.Sqrt(float64(geom.D))
	if n.Attrs.Has("scale") {
		geom.Scale = n.Attrs.Float("scale")
	}
	// Each operand's buffer, batch strides and row stride: its own,
	// contiguous, or a strided view read in place (specialize's views.go).
	op := &lir.Attention{Mask: lir.NoBuf}
	var err error
	if op.Q, geom.QStrides, geom.QRow, err = g.operandBuffer(q, batch); err != nil {
		return err
	}
	if op.K, geom.KStrides, geom.KRow, err = g.operandBuffer(k, batch); err != nil {
		return err
	}
	if op.V, geom.VStrides, geom.VRow, err = g.operandBuffer(v, batch); err != nil {
		return err
	}
	if mask != nil {
		full := append(append([]int64(nil), batch...), geom.Sq, geom.Sk)
		st := broadcastStrides(g.shape(mask), full)
		geom.MaskStrides = st[:len(batch)]
		geom.MaskRowStride, geom.MaskColStride = st[len(batch)], st[len(batch)+1]
		op.Mask = g.buffer(mask)
	}
	op.Geom, op.Out = geom, g.buffer(out)
	g.emit(n, op)
	return nil
}

// operandBuffer is the buffer an attention operand is read from, its
// strides per batch dim of the output (0 broadcasts) and its row stride
// (0: rows back to back). Under StridedAttention an operand may be a view
// of a value it reads in place (a buffer starting at its first element).
func (g *gen) operandBuffer(v *mir.Value, batch []int64) (buf lir.Buf, bstrides []int64, row int64, err error) {
	s := g.shape(v)
	full := append(append([]int64(nil), batch...), s[len(s)-2], s[len(s)-1])
	if !g.p.Caps.StridedAttention || g.p.Stores[v].Root == v {
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
	// v's dims align with the output's from the right; a dim of 1 broadcasts.
	bstrides = make([]int64, len(batch))
	lead := len(full) - len(s)
	for d := range batch {
		if i := d - lead; i >= 0 && s[i] != 1 {
			bstrides[d] = strides[i]
		}
	}
	return g.add(b), bstrides, strides[len(s)-2], nil
}
