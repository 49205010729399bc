package specialize

import (
	"maps"
	"math"
	"slices"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Decision passes.
//
// Every shape-dependent choice of a kernel or a data layout is one pass of
// Passes, run in order on a plan whose shapes are concrete and whose
// inputs, outputs and constants are placed, before the arena is planned.
// A pass runs only where Enabled says the backend's Caps allow it, and it
// records its decisions in the plan (views, Kernels, ChannelsLast and the
// relayout scratch), which the arena planner and Schedule then follow:
// Schedule itself decides nothing.

// Pass is one named decision pass.
type Pass struct {
	Name    string
	Enabled func(c Caps) bool
	Run     func(p *Plan)
}

// Passes is the decision pipeline, in order. Channels-last stretches are
// decided before packing: a convolution that runs channels last is not
// also a packed NCHW one.
func Passes() []Pass {
	return []Pass{
		{"strided-attention", func(c Caps) bool { return c.StridedAttention }, stridedAttention},
		{"slice-views", func(c Caps) bool { return c.StridedElementwise }, sliceViews},
		{"channels-last", func(c Caps) bool { return c.Packer != nil && c.ChannelsLast != nil }, channelsLast},
		{"pack-weights", func(c Caps) bool { return c.Packer != nil }, packWeights},
		{"tap-major", func(c Caps) bool { return c.TapConv != nil }, tapMajor},
		{"winograd", func(c Caps) bool { return c.Packer != nil && c.WinogradTile != nil }, winograd},
		{"concat-in-place", func(c Caps) bool { return c.InPlaceConcat }, concatInPlace},
		{"int8-scratch", func(c Caps) bool { return c.Int8Products }, int8Scratch},
	}
}

// Kernel is a node's kernel where a pass chose one other than the
// default (the NCHW kernel of the node's op).
type Kernel uint8

// Kernel choices.
const (
	KernelDefault Kernel = iota
	// KernelPacked: a matmul as matmul_packed with its [K, N] weight
	// packed at build time; a 1x1 convolution as conv1x1_packed, the
	// transposed product with Wᵀ packed.
	KernelPacked
	// KernelChannelsLast: a convolution of a channels-last stretch (a 1x1
	// one as matmul_packed over [N·H·W, C], a depthwise one as
	// dwconv_nhwc_taps), its NCHW operands relaid in and its NCHW result
	// relaid out; a global pool reading a channels-last value as
	// [N, H, W, C].
	KernelChannelsLast
	// KernelWinograd: a 3x3 stride-1 convolution as Winograd's F(m×m,
	// 3×3), three steps through scratch (Plan.Winograd).
	KernelWinograd
	// KernelTapMajor: a one-group convolution as conv2d_taps, its weights
	// laid out tap-major at build time (Caps.TapConv).
	KernelTapMajor
)

// WinogradPlan is how a convolution runs as F(m×m, 3×3): its tile m and
// the scratch of its transformed input V and its products M, live for the
// node alone.
type WinogradPlan struct {
	Tile int64
	Part int64 // tiles a part holds: the scratch's; TP when one part
	V, M *Store
}

// runPasses runs the enabled passes of Passes in order.
func (p *Plan) runPasses() {
	p.Kernels = map[*mir.Node]Kernel{}
	p.ChannelsLast = map[*mir.Value]bool{}
	p.Relaid = map[*mir.Value]*Store{}
	p.OutScratch = map[*mir.Node]*Store{}
	p.Winograd = map[*mir.Node]WinogradPlan{}
	p.Int8Conv = map[*mir.Node]Int8ConvPlan{}
	p.Int8MatMul = map[*mir.Node]*Store{}
	for _, ps := range Passes() {
		if ps.Enabled(p.Caps) {
			ps.Run(p)
		}
	}
}

// convGeomOK is the geometry of convolution n under the plan; ok is false
// where its operands are not 4-D.
func (p *Plan) convGeomOK(n *mir.Node) (lir.ConvGeom, bool) {
	if n.Op != mir.OpConv2D || len(n.Args) < 2 {
		return lir.ConvGeom{}, false
	}
	xs, ws, os := p.Shapes[n.Args[0]], p.Shapes[n.Args[1]], p.Shapes[n.Results[0]]
	if len(xs) != 4 || len(ws) != 4 || len(os) != 4 {
		return lir.ConvGeom{}, false
	}
	return ConvGeom(n, xs, ws, os), true
}

// ConvGeom is the geometry of convolution n over the given shapes.
func ConvGeom(n *mir.Node, xs, ws, os []int64) lir.ConvGeom {
	st, pad, dil := n.Attrs.Ints("stride"), n.Attrs.Ints("pad"), n.Attrs.Ints("dilation")
	return lir.ConvGeom{N: xs[0], C: xs[1], H: xs[2], W: xs[3], O: ws[0], KH: ws[2], KW: ws[3],
		StrideH: st[0], StrideW: st[1], PadT: pad[0], PadL: pad[1], PadB: pad[2], PadR: pad[3],
		DilH: dil[0], DilW: dil[1], Groups: n.Attrs.Int("groups"), OH: os[2], OW: os[3]}
}

// packWeights chooses the packed kernels: a matmul whose B is a 2-D
// weight reads it packed into the kernel's panels at build time, so runs
// never repack it (few-row products too: their threads then stream
// contiguous panels, where a row-major B split by columns is read in
// strided pieces); a 1x1 convolution the backend takes as the transposed
// product (Caps.PackedConv1x1) reads Wᵀ packed.
func packWeights(p *Plan) {
	for _, n := range p.Graph.Nodes {
		if p.Kernels[n] != KernelDefault || len(n.Args) < 2 || !n.Args[1].IsConst() {
			continue
		}
		switch n.Op {
		case mir.OpMatMul:
			if len(p.Shapes[n.Args[1]]) == 2 {
				p.Kernels[n] = KernelPacked
			}
		case mir.OpConv2D:
			if g, ok := p.convGeomOK(n); ok && p.Caps.PackedConv1x1 != nil && Pointwise(g) && p.Caps.PackedConv1x1(g) {
				p.Kernels[n] = KernelPacked
			}
		}
	}
}

// winograd runs as Winograd's F(m×m, 3×3) the 3x3, stride-1, undilated,
// ungrouped f32 convolutions with constant weights that no earlier pass
// took and where the backend picks a tile (Caps.WinogradTile). Weights
// that are all integers are a quantized model's (QLinearConv,
// ConvInteger: integer data in f32), whose sums every other kernel
// computes exactly; Winograd's fractional transforms do not (errors of a
// few units on sums near 10^6), so those stay direct.
func winograd(p *Plan) {
	for i, n := range p.Graph.Nodes {
		if n.Op != mir.OpConv2D || p.Kernels[n] != KernelDefault || len(n.Args) < 2 || !n.Args[1].IsConst() {
			continue
		}
		if n.Args[0].Type.DType != tensor.F32 || n.Args[1].Type.DType != tensor.F32 || n.Results[0].Type.DType != tensor.F32 {
			continue
		}
		g, ok := p.convGeomOK(n)
		if !ok || !Winograd3x3(g) || integerValued(n.Args[1].Const) {
			continue
		}
		act, ok := lir.ParseActivation(n.Attrs.String("act"))
		if !ok {
			continue // Schedule reports it
		}
		m := p.Caps.WinogradTile(g, act)
		if m != 2 && m != 4 {
			continue
		}
		_, _, _, tp := g.WinogradTiles(m)
		part := tp
		if p.Caps.WinogradPart != nil {
			if k := p.Caps.WinogradPart(g, m, tp); k > 0 && k < tp && k%16 == 0 {
				part = k
			}
		}
		pts := (m + 2) * (m + 2)
		wp := WinogradPlan{Tile: m, Part: part,
			V: &Store{Kind: StoreArena, Root: n.Args[0], Bytes: pts * g.C * part * 4},
			M: &Store{Kind: StoreArena, Root: n.Results[0], Bytes: pts * g.O * part * 4}}
		p.addScratch(wp.V, i)
		p.addScratch(wp.M, i)
		p.Winograd[n] = wp
		p.Kernels[n] = KernelWinograd
	}
}

// tapMajor runs as conv2d_taps the one-group f32 convolutions with
// constant weights that no earlier pass took and that the backend runs so
// (Caps.TapConv).
func tapMajor(p *Plan) {
	for _, n := range p.Graph.Nodes {
		if n.Op != mir.OpConv2D || p.Kernels[n] != KernelDefault || len(n.Args) < 2 || !n.Args[1].IsConst() {
			continue
		}
		if n.Args[0].Type.DType != tensor.F32 || n.Args[1].Type.DType != tensor.F32 || n.Results[0].Type.DType != tensor.F32 {
			continue
		}
		if g, ok := p.convGeomOK(n); ok && g.Groups == 1 && p.Caps.TapConv(g) {
			p.Kernels[n] = KernelTapMajor
		}
	}
}

// integerValued reports an f32 tensor whose every element is an integer.
func integerValued(t *tensor.Tensor) bool { return integersIn(t, math.Inf(-1), math.Inf(1)) }

// integersIn reports an f32 tensor whose every element is an integer in
// [lo, hi].
func integersIn(t *tensor.Tensor, lo, hi float64) bool {
	if t == nil || t.DType != tensor.F32 {
		return false
	}
	for _, v := range t.F32() {
		if f := float64(v); f != math.Trunc(f) || f < lo || f > hi {
			return false
		}
	}
	return true
}

// Winograd3x3 reports whether g is a convolution Winograd's F(m×m, 3×3)
// computes: 3x3, stride 1, no dilation, one group.
func Winograd3x3(g lir.ConvGeom) bool {
	return g.KH == 3 && g.KW == 3 && g.StrideH == 1 && g.StrideW == 1 && g.DilH == 1 && g.DilW == 1 && g.Groups == 1
}

// channelsLastConv reports whether n is a convolution that can run
// channels last: f32, constant weights, and a geometry the backend runs
// so (Caps.ChannelsLast).
func (p *Plan) channelsLastConv(n *mir.Node) bool {
	if n.Op != mir.OpConv2D || len(n.Args) < 2 || !n.Args[1].IsConst() {
		return false
	}
	for _, v := range []*mir.Value{n.Args[0], n.Args[1], n.Results[0]} {
		if v.Type.DType != tensor.F32 {
			return false
		}
	}
	g, ok := p.convGeomOK(n)
	return ok && p.Caps.ChannelsLast(g)
}

// int8ChannelsLast reports whether n is an integer convolution that may
// join a channels-last stretch (Caps.Int8ChannelsLast).
func (p *Plan) int8ChannelsLast(n *mir.Node) bool {
	if n.Op != mir.OpConv2DI8 || !p.Caps.Int8ChannelsLast || len(n.Args) < 2 {
		return false
	}
	return len(p.Shapes[n.Args[0]]) == 4 && len(p.Shapes[n.Results[0]]) == 4
}

// channelsLastRegion reports whether n is an elementwise node (a fused
// region or a single op) that can run channels last: its results all of
// one 4-D shape. Its operands broadcast to that shape, so each is read
// channels last through its strides permuted like the shape (a
// per-channel scale's, [1, C, 1, 1], step along the channels innermost).
func (p *Plan) channelsLastRegion(n *mir.Node) bool {
	if n.Op != mir.OpFused && !mir.IsElementwise(n.Op) || len(n.Results) == 0 {
		return false
	}
	s := p.Shapes[n.Results[0]]
	if len(s) != 4 {
		return false
	}
	for _, r := range n.Results {
		if !slices.Equal(p.Shapes[r], s) {
			return false
		}
	}
	for _, a := range n.Args {
		if len(p.Shapes[a]) > 4 {
			return false
		}
	}
	return true
}

// regionPlanes is the 4-D values channels-last-capable region n reads
// and writes that must be stored in the order it runs in: all but those
// with the same bytes in either order (layoutFree) that no stretch could
// store NHWC anyway (cand: constants, graph inputs, a pool's result).
func (p *Plan) regionPlanes(n *mir.Node, cand map[*mir.Value]bool) []*mir.Value {
	var vs []*mir.Value
	for _, v := range slices.Concat(n.Args, n.Results) {
		if len(p.Shapes[v]) == 4 && (cand[v] || !p.layoutFree(v)) {
			vs = append(vs, v)
		}
	}
	return vs
}

// channelsLast decides the channels-last stretches (layout.go has the
// why): which values are stored NHWC, which convolutions, elementwise
// regions and global pools read them, and the scratch each stretch's
// edges relayout through.
//
// A value is stored NHWC when a channels-last convolution or elementwise
// region produces it in an arena block of its own (no view shares its
// bytes, it is no output) and only channels-last convolutions read it
// (as input or residual), or elementwise regions, or global pools. A
// channels-last convolution runs as one when its input or its result is
// stored NHWC; an NCHW input or residual is relaid into scratch that
// lives from its first such reader to its last, and an NCHW result is
// written to scratch that lives for the node and relaid out. An integer
// convolution reads and writes either order itself. An elementwise
// region runs channels last when every 4-D value it reads or writes is
// stored so (regionPlanes: but for layout-free ones no stretch stores),
// and NCHW otherwise: it is never relaid, so a region between two
// stretches (a quantized model's requantization, between each pair of
// convolutions) joins them only where all its operands can be NHWC.
func channelsLast(p *Plan) {
	nodes := p.Graph.Nodes
	conv := map[*mir.Node]bool{}
	i8 := map[*mir.Node]bool{}
	region := map[*mir.Node]bool{}
	for _, n := range nodes {
		conv[n] = p.channelsLastConv(n)
		i8[n] = p.int8ChannelsLast(n)
		region[n] = p.channelsLastRegion(n)
	}
	// Values some other value shares its bytes with (views) stay NCHW.
	shared := map[*mir.Value]bool{}
	for _, n := range nodes {
		for _, r := range n.Results {
			if p.Stores[r] == nil {
				if rt := p.root(r); rt != r {
					shared[rt] = true
				}
			}
		}
	}
	ok := map[*mir.Value]bool{}
	for _, n := range nodes {
		if !conv[n] && !i8[n] && !region[n] {
			continue
		}
		for _, out := range n.Results {
			if p.Stores[out] == nil && p.root(out) == out && !shared[out] {
				ok[out] = true
			}
		}
	}
	cand := maps.Clone(ok)
	for _, n := range nodes {
		for i, a := range n.Args {
			// A channels-last convolution reads x (0) and the residual
			// (after the bias, if any) channels last, an integer one x,
			// a region any operand, and a reduction over the plane (a
			// global pool) reads it as [N, H·W, C]; nothing else does.
			if spatialReduce(n) || region[n] || i8[n] && i == 0 {
				continue
			}
			if !conv[n] || i == 1 || (i == 2 && n.Attrs.Bool("bias")) {
				delete(ok, a)
			}
		}
	}
	for _, o := range p.Graph.Outputs {
		delete(ok, o)
	}
	// A convolution runs channels last only where its input or result is
	// stored so (below); one that does not reads its residual NCHW, so a
	// residual it reads is not stored channels last either, which can
	// leave another convolution without a channels-last input or result:
	// repeat until nothing changes.
	// A region runs in one order: where one of its planes (regionPlanes)
	// cannot be NHWC, none of them is. Both rules repeat until nothing
	// changes.
	for changed := true; changed; {
		changed = false
		for _, n := range nodes {
			if region[n] {
				vs := p.regionPlanes(n, cand)
				if !slices.ContainsFunc(vs, func(v *mir.Value) bool { return !ok[v] }) {
					continue
				}
				for _, v := range vs {
					if ok[v] {
						delete(ok, v)
						changed = true
					}
				}
				continue
			}
			if !conv[n] || ok[n.Args[0]] || ok[n.Results[0]] {
				continue
			}
			for _, a := range n.Args[2:] {
				if ok[a] {
					delete(ok, a)
					changed = true
				}
			}
		}
	}
	p.ChannelsLast = ok

	// The kernels, and the scratch of the stretches' edges.
	for i, n := range nodes {
		if spatialReduce(n) && ok[n.Args[0]] {
			p.Kernels[n] = KernelChannelsLast
			continue
		}
		out := n.Results[0]
		if region[n] && ok[out] || i8[n] && (ok[n.Args[0]] || ok[out]) {
			p.Kernels[n] = KernelChannelsLast
			continue
		}
		if !conv[n] || !(ok[n.Args[0]] || ok[out]) {
			continue
		}
		p.Kernels[n] = KernelChannelsLast
		in := []*mir.Value{n.Args[0]}
		if n.Attrs.Bool("residual") {
			ri := 2
			if n.Attrs.Bool("bias") {
				ri = 3
			}
			in = append(in, n.Args[ri])
		}
		for _, v := range in {
			if ok[v] || p.layoutFree(v) {
				continue
			}
			if s := p.Relaid[v]; s != nil {
				p.scratch[s].last = i // relaid for an earlier reader
				continue
			}
			s := &Store{Kind: StoreArena, Root: v, Bytes: p.Bytes(v)}
			p.Relaid[v] = s
			p.addScratch(s, i)
		}
		if !ok[out] && !p.layoutFree(out) {
			s := &Store{Kind: StoreArena, Root: out, Bytes: p.Bytes(out)}
			p.OutScratch[n] = s
			p.addScratch(s, i)
		}
	}
}

// layoutFree reports whether a 4-D value has the same bytes in NCHW and
// NHWC order: a plane of one position (a squeeze-and-excitation block's
// pooled [N, C, 1, 1]) or one channel. Its channels-last readers read it
// in place and a channels-last convolution writes it in place: relaid
// through scratch, MobileNetV3-Small's nine such blocks cost 18 copy
// kernels a run.
func (p *Plan) layoutFree(v *mir.Value) bool {
	s := p.Shapes[v]
	return len(s) == 4 && (s[1] == 1 || s[2]*s[3] == 1)
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
