package codegen

import (
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/conv"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Channels-last stretches.
//
// Convolutions over small planes (MobileNet's 14×14 and 7×7 stages) lose
// in NCHW: a 1×1 convolution's plane is too narrow for full column tiles
// and a depthwise one's rows too short for vectors. In channels-last
// (NHWC) order a 1×1 convolution is a plain product [N·H·W, C]·Wᵀ with Wᵀ
// packed at build time (matmul_packed), and a depthwise one runs along the
// channels (dwconv_nhwc_taps). So values produced and consumed only by such
// convolutions are stored NHWC, and a stretch of them costs one relayout
// in and one out (nchw_to_nhwc, nhwc_to_nchw, into scratch at the end of
// the arena) instead of one per layer. Every other kernel sees NCHW.

// nhwcMaxPlane is the largest input plane (H·W) of a convolution that runs
// channels last. MobileNetV2 with 28×28 included against 14×14: its 28×28
// depthwise layers 0.27/0.21 -> 0.10 ms, the 1x1s ~5% faster, the stride-2
// one into 14×14 0.10 -> 0.03 ms, the stretch's entry 0.04 ms dearer.
const nhwcMaxPlane = 28 * 28

// nhwcConv reports whether n is a convolution that runs channels last:
// f32, constant weights, a small plane, and a 1×1 stride-1 unpadded
// ungrouped one or a depthwise one conv.DepthwiseNHWC computes.
func (g *gen) nhwcConv(n *mir.Node) bool {
	if n.Op != mir.OpConv2D || g.w.Layout == "" || len(n.Args) < 2 || !n.Args[1].IsConst() {
		return false
	}
	for _, v := range []*mir.Value{n.Args[0], n.Args[1], n.Results[0]} {
		if v.Type.DType != tensor.F32 {
			return false
		}
	}
	xs, ws, os := g.shape(n.Args[0]), g.shape(n.Args[1]), g.shape(n.Results[0])
	if len(xs) != 4 || len(ws) != 4 || len(os) != 4 {
		return false
	}
	if xs[2]*xs[3] > nhwcMaxPlane {
		return false
	}
	if ws[2] == 1 && ws[3] == 1 {
		return pointwise(n)
	}
	st, pad, dil := n.Attrs.Ints("stride"), n.Attrs.Ints("pad"), n.Attrs.Ints("dilation")
	return conv.DepthwiseNHWCApplies(convGeomOf(xs, ws, os, st, pad, dil, n.Attrs.Int("groups")))
}

// pointwise reports whether a 1×1 convolution is a plain product over its
// channels: stride 1, no padding or dilation, one group.
func pointwise(n *mir.Node) bool {
	st, pad, dil := n.Attrs.Ints("stride"), n.Attrs.Ints("pad"), n.Attrs.Ints("dilation")
	return n.Attrs.Int("groups") == 1 && st[0] == 1 && st[1] == 1 && dil[0] == 1 && dil[1] == 1 &&
		pad[0] == 0 && pad[1] == 0 && pad[2] == 0 && pad[3] == 0
}

// convGeomOf is the kernels' geometry of a convolution.
func convGeomOf(xs, ws, os, st, pad, dil []int64, groups int64) conv.ConvGeom {
	return conv.ConvGeom{N: int(xs[0]), C: int(xs[1]), H: int(xs[2]), W: int(xs[3]), O: int(ws[0]), KH: int(ws[2]), KW: int(ws[3]),
		StrideH: int(st[0]), StrideW: int(st[1]), PadT: int(pad[0]), PadL: int(pad[1]), PadB: int(pad[2]), PadR: int(pad[3]),
		DilH: int(dil[0]), DilW: int(dil[1]), Groups: int(groups), OH: int(os[2]), OW: int(os[3])}
}

// planLayouts decides which values are stored channels last: those a
// channels-last convolution produces in an arena block of their own and
// that only channels-last convolutions read (as input or residual).
func (g *gen) planLayouts() {
	g.nhwc, g.relaid = map[*mir.Value]bool{}, map[*mir.Value]lir.Buf{}
	if g.w.Layout == "" {
		return
	}
	nodes := g.p.Graph.Nodes
	conv := map[*mir.Node]bool{}
	for _, n := range nodes {
		conv[n] = g.nhwcConv(n)
	}
	// Values some other value shares its bytes with (views) stay NCHW.
	shared := map[*mir.Value]bool{}
	for v, s := range g.p.Stores {
		if s.Root != v {
			shared[s.Root] = true
		}
	}
	ok := map[*mir.Value]bool{}
	for _, n := range nodes {
		if !conv[n] {
			continue
		}
		out := n.Results[0]
		if s := g.p.Stores[out]; s.Kind == specialize.StoreArena && s.Root == out && !shared[out] {
			ok[out] = true
		}
	}
	for _, n := range nodes {
		for i, a := range n.Args {
			// A channels-last convolution reads x (0) and the residual
			// (after the bias, if any) channels last, and a reduction over
			// the plane (a global pool) reads it as [N, H·W, C]; nothing
			// else does.
			if spatialReduce(n) {
				continue
			}
			if !conv[n] || i == 1 || (i == 2 && n.Attrs.Bool("bias")) {
				delete(ok, a)
			}
		}
	}
	for _, o := range g.p.Graph.Outputs {
		delete(ok, o)
	}
	g.nhwc = ok
}

// spatialReduce reports whether n reduces a 4-D value over its plane
// (axes 2 and 3: a global pool), whose result has the same order whether
// the input is NCHW or NHWC.
func spatialReduce(n *mir.Node) bool {
	if n.Op != mir.OpReduce || len(n.Args) != 1 || len(n.Args[0].Type.Shape) != 4 {
		return false
	}
	ax := n.Attrs.Ints("axes")
	return len(ax) == 2 && ax[0] == 2 && ax[1] == 3
}

// scratch appends an arena block of the given size past the planned ones
// and returns its buffer.
func (g *gen) scratch(bytes int64) lir.Buf {
	off := (g.prog.ArenaBytes + specialize.Align - 1) / specialize.Align * specialize.Align
	g.prog.ArenaBytes = off + (bytes+specialize.Align-1)/specialize.Align*specialize.Align
	return g.add(lir.Buffer{Kind: lir.BufArena, Offset: off, Bytes: bytes})
}

// channelsLast returns the buffer holding v channels last: v's own, or a
// scratch block it is relaid into here.
func (g *gen) channelsLast(n *mir.Node, v *mir.Value) lir.Buf {
	if g.nhwc[v] {
		return g.buffer(v)
	}
	if b, ok := g.relaid[v]; ok {
		return b // relaid for an earlier reader (an input that is also a residual)
	}
	s := g.shape(v)
	b := g.scratch(g.p.Stores[v].Bytes)
	g.emit(n, &lir.Relayout{Src: g.buffer(v), Dst: b, N: s[0], C: s[1], HW: s[2] * s[3], ToNHWC: true})
	g.relaid[v] = b
	return b
}

// convNHWC emits a channels-last convolution (nhwcConv): its input and
// residual relaid in where they are NCHW, its result relaid out where a
// reader needs NCHW.
func (g *gen) convNHWC(n *mir.Node, bias, res *mir.Value, epi lir.Epilogue) error {
	x, w, out := n.Args[0], n.Args[1], n.Results[0]
	xs, ws, os := g.shape(x), g.shape(w), g.shape(out)
	xb := g.channelsLast(n, x)
	var wb lir.Buf
	if ws[2] == 1 && ws[3] == 1 {
		// [N·H·W, C] · Wᵀ[C, O]: bias per column, residual [N·H·W, O].
		idx, err := g.w.AddPackedT(w, ws[1], ws[0])
		if err != nil {
			return err
		}
		wb = g.weightBuffer(idx)
	} else {
		// Weights tap-major, [KH·KW, C].
		wb = g.weightBuffer(g.w.AddTaps(w))
	}
	epi.Bias, epi.Residual = g.optBuffer(bias), lir.NoBuf
	if res != nil {
		epi.Residual = g.channelsLast(n, res)
	}
	ob := g.buffer(out)
	if !g.nhwc[out] {
		ob = g.scratch(g.p.Stores[out].Bytes)
	}
	if ws[2] == 1 && ws[3] == 1 {
		g.emit(n, &lir.PackedMatMul{A: xb, B: wb, Out: ob, M: xs[0] * xs[2] * xs[3], N: ws[0], K: ws[1], Epilogue: epi})
	} else {
		g.emit(n, &lir.DepthwiseNHWC{X: xb, W: wb, Out: ob, Geom: convGeom(n, xs, ws, os), Epilogue: epi})
	}
	if !g.nhwc[out] {
		g.emit(n, &lir.Relayout{Src: ob, Dst: g.buffer(out), N: os[0], C: os[1], HW: os[2] * os[3]})
	}
	return nil
}
