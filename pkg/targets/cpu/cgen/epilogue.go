package cgen

import (
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Epilogue activations as native code. A product or convolution whose
// epilogue applies a smooth activation (GELU, SiLU, sigmoid, tanh) runs
// it in the runtime's Go kernels at several ns an element, as long as a
// GPT block's 128x1024 product itself; the math header's versions take
// well under one (docs/perf/native.md). So such a step becomes two: the
// kernel with the bias alone, then one elementwise region, out =
// act(out) + residual (or act(out + residual)), in place, which the
// generator compiles like any other. Piecewise-linear activations stay in the kernels' epilogues,
// where they cost nothing.

// ewActivation maps the activations split off to their elementwise
// instructions. Winograd's output transform has the same split, so a 3x3
// convolution with one of them still runs as Winograd
// (WinogradActivation).
var ewActivation = map[lir.Activation]lir.EwOp{
	lir.ActGelu:     lir.EwGelu,
	lir.ActGeluTanh: lir.EwGeluTanh,
	lir.ActSilu:     lir.EwSilu,
	lir.ActSigmoid:  lir.EwSigmoid,
	lir.ActTanh:     lir.EwTanh,
}

// splitActivation returns op without its smooth activation and residual,
// and the elementwise region that applies them to its output; false
// where op has no such epilogue, where its residual is its output (the
// kernel would overwrite it before the region reads it), or where no
// native code is built.
func splitActivation(prog *lir.Program, op lir.Op, opts Options) (lir.Op, *lir.Elementwise, bool) {
	if len(opts.Levels) == 0 {
		return nil, nil, false
	}
	var ep *lir.Epilogue
	var out lir.Buf
	var n int64
	var kernel lir.Op
	switch o := op.(type) {
	case *lir.PackedMatMul:
		c := *o
		ep, out, n, kernel = &c.Epilogue, c.Out, c.M*c.N, &c
	case *lir.MatMul:
		c := *o
		ep, out, kernel = &c.Epilogue, c.Out, &c
		n = prog.Buffers[c.Out].Bytes / 4
	case *lir.PackedConv1x1:
		c := *o
		ep, out, n, kernel = &c.Epilogue, c.Out, c.N*c.O*c.HW, &c
	case *lir.Conv2D:
		c := *o
		ep, out, n, kernel = &c.Epilogue, c.Out, c.Geom.N*c.Geom.O*c.Geom.OH*c.Geom.OW, &c
	case *lir.TapConv2D:
		c := *o
		ep, out, n, kernel = &c.Epilogue, c.Out, c.Geom.N*c.Geom.O*c.Geom.OH*c.Geom.OW, &c
	case *lir.DepthwiseNHWC:
		c := *o
		ep, out, n, kernel = &c.Epilogue, c.Out, c.Geom.N*c.Geom.O*c.Geom.OH*c.Geom.OW, &c
	case *lir.WinogradOutput:
		c := *o
		ep, out, n, kernel = &c.Epilogue, c.Out, c.Geom.N*c.Geom.O*c.Geom.OH*c.Geom.OW, &c
	default:
		return nil, nil, false
	}
	act, ok := ewActivation[ep.Act]
	if !ok || n < 1 || n*4 > prog.Buffers[out].Bytes {
		return nil, nil, false
	}
	if ep.Residual != lir.NoBuf && sameBytes(prog, out, ep.Residual) {
		return nil, nil, false
	}
	ew := &lir.Elementwise{Shape: []int64{n},
		In:   []lir.EwIn{{Buf: out, DType: tensor.F32, Strides: []int64{1}}},
		Out:  []lir.EwOut{{Buf: out, DType: tensor.F32}},
		Code: []lir.Instr{{Op: lir.EwLoad, Dst: 0, A: 0}}}
	v := 0
	if !ep.ActLast {
		ew.Code = append(ew.Code, lir.Instr{Op: act, Dst: 1, A: 0})
		v = 1
	}
	if ep.Residual != lir.NoBuf {
		ew.In = append(ew.In, lir.EwIn{Buf: ep.Residual, DType: tensor.F32, Strides: []int64{1}})
		ew.Code = append(ew.Code, lir.Instr{Op: lir.EwLoad, Dst: v + 1, A: 1}, lir.Instr{Op: lir.EwAdd, Dst: v + 2, A: v, B: v + 1})
		v += 2
	}
	if ep.ActLast {
		ew.Code = append(ew.Code, lir.Instr{Op: act, Dst: v + 1, A: v})
		v++
	}
	ew.Code = append(ew.Code, lir.Instr{Op: lir.EwStore, Dst: v, A: 0})
	if _, ok := elementwise(prog, ew, opts); !ok {
		return nil, nil, false
	}
	ep.Act, ep.Residual, ep.ActLast = lir.ActNone, lir.NoBuf, false
	return kernel, ew, true
}
