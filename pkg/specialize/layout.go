package specialize

import (
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
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
// in and one out (nchw_to_nhwc, nhwc_to_nchw, through scratch that the
// arena planner places with its lifetime) instead of one per layer. Every
// other kernel sees NCHW. The "channels-last" pass (passes.go) decides the
// stretches, where the backend's Caps.ChannelsLast says a convolution runs
// so; this file emits them.

// scratch returns the buffer of a planned scratch block.
func (g *gen) scratch(s *Store) lir.Buf {
	return g.add(lir.Buffer{Kind: lir.BufArena, Offset: s.Offset, Bytes: s.Bytes})
}

// channelsLast returns the buffer holding v channels last: v's own, or
// the scratch block it is relaid into here (Plan.Relaid).
func (g *gen) channelsLast(n *mir.Node, v *mir.Value) lir.Buf {
	if g.p.ChannelsLast[v] || g.p.layoutFree(v) {
		return g.buffer(v)
	}
	if b, ok := g.relaid[v]; ok {
		return b // relaid for an earlier reader (an input that is also a residual)
	}
	s := g.shape(v)
	b := g.scratch(g.p.Relaid[v])
	g.emit(n, &lir.Relayout{Src: g.buffer(v), Dst: b, N: s[0], C: s[1], HW: s[2] * s[3], ToNHWC: true})
	g.relaid[v] = b
	return b
}

// convNHWC emits a channels-last convolution (KernelChannelsLast): its
// input and residual relaid in where they are NCHW, its result relaid out
// where a reader needs NCHW.
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
		idx, err := g.w.AddTaps(w)
		if err != nil {
			return err
		}
		wb = g.weightBuffer(idx)
	}
	epi.Bias, epi.Residual = g.optBuffer(bias), lir.NoBuf
	if res != nil {
		epi.Residual = g.channelsLast(n, res)
	}
	ob := g.buffer(out)
	relayOut := !g.p.ChannelsLast[out] && !g.p.layoutFree(out)
	if relayOut {
		ob = g.scratch(g.p.OutScratch[n])
	}
	if ws[2] == 1 && ws[3] == 1 {
		g.emit(n, &lir.PackedMatMul{A: xb, B: wb, Out: ob, M: xs[0] * xs[2] * xs[3], N: ws[0], K: ws[1], Epilogue: epi})
	} else {
		g.emit(n, &lir.DepthwiseNHWC{X: xb, W: wb, Out: ob, Geom: ConvGeom(n, xs, ws, os), Epilogue: epi})
	}
	if relayOut {
		g.emit(n, &lir.Relayout{Src: ob, Dst: g.buffer(out), N: os[0], C: os[1], HW: os[2] * os[3]})
	}
	return nil
}
