package specialize

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Dead taps.
//
// A kernel row or column whose every tap falls in the padding, for every
// output position, only ever multiplies zeros. That happens where the
// dilation is large against the plane: DeepLabV3's ASPP runs 3x3 kernels
// at dilations 12, 24 and 36 (padded as much) over a 14x14 plane at a
// 224x224 input, where at 24 and 36 only the centre tap ever reads the
// input: a 3x3 convolution that is a 1x1 one, at nine times its work.
// Whether a tap is dead depends on the plane, so on the binding; the
// kernels would otherwise run every tap (masked or against zeros), so the
// convolution is rewritten with its kernel cropped to the live taps and
// its padding shrunk to match: the same output, the same positions read.

// cropDeadTaps rewrites every convolution with constant weights whose
// kernel has dead rows or columns at its ends under b into one over the
// live taps alone. It works on a copy (g.Clone), as expandRecurrent does,
// and returns g itself when nothing matches.
func cropDeadTaps(g *mir.Graph, b Binding) (*mir.Graph, error) {
	var c *mir.Graph
	for i, n := range g.Nodes {
		crop, err := deadTaps(n, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", n.Src, err)
		}
		if crop == nil {
			continue
		}
		if c == nil {
			c = g.Clone()
		}
		crop.apply(c, c.Nodes[i], b)
	}
	if c == nil {
		return g, nil
	}
	return c, nil
}

// tapCrop is the live window of a convolution's kernel: rows [h0, h1)
// and columns [w0, w1).
type tapCrop struct{ h0, h1, w0, w1 int64 }

// deadTaps is the crop of convolution n under b, or nil where n is no
// convolution with constant 4-D weights, or every tap is live, or no tap
// is (its output is its bias alone: left as it is), or cropping would
// need a negative padding.
func deadTaps(n *mir.Node, b Binding) (*tapCrop, error) {
	g, ok, err := boundConv(n, b)
	if !ok || err != nil || g.KH*g.KW == 1 {
		return nil, err
	}
	h0, h1 := liveTaps(g.H, g.OH, g.KH, g.StrideH, g.PadT, g.DilH)
	w0, w1 := liveTaps(g.W, g.OW, g.KW, g.StrideW, g.PadL, g.DilW)
	if h0 >= h1 || w0 >= w1 || h0 == 0 && h1 == g.KH && w0 == 0 && w1 == g.KW {
		return nil, nil
	}
	cr := &tapCrop{h0, h1, w0, w1}
	for _, p := range cr.pads(g) {
		if p < 0 {
			return nil, nil
		}
	}
	return cr, nil
}

// boundConv is the geometry under b of convolution n with constant 4-D
// weights; false for any other node.
func boundConv(n *mir.Node, b Binding) (lir.ConvGeom, bool, error) {
	if n.Op != mir.OpConv2D || len(n.Args) < 2 || len(n.Results) != 1 || !n.Args[1].IsConst() {
		return lir.ConvGeom{}, false, nil
	}
	ws := n.Args[1].Const.Shape
	st, pad, dil := n.Attrs.Ints("stride"), n.Attrs.Ints("pad"), n.Attrs.Ints("dilation")
	if len(ws) != 4 || len(st) != 2 || len(pad) != 4 || len(dil) != 2 {
		return lir.ConvGeom{}, false, nil
	}
	xs, err := Concrete(n.Args[0].Type.Shape, b)
	if err != nil {
		return lir.ConvGeom{}, false, err
	}
	os, err := Concrete(n.Results[0].Type.Shape, b)
	if err != nil {
		return lir.ConvGeom{}, false, err
	}
	if len(xs) != 4 || len(os) != 4 {
		return lir.ConvGeom{}, false, nil
	}
	return ConvGeom(n, xs, ws, os), true, nil
}

// liveTaps is the first live tap of a kernel axis of k taps and one past
// the last: tap t reads input index o·stride + t·dil - pad for output
// index o in [0, out), and is live where one of those lies in [0, in).
func liveTaps(in, out, k, stride, pad, dil int64) (lo, hi int64) {
	live := func(t int64) bool {
		first := t*dil - pad // the index output 0 reads
		o := int64(0)
		if first < 0 {
			o = (-first + stride - 1) / stride // the first output reading index >= 0
		}
		return o < out && first+o*stride < in
	}
	lo, hi = 0, k
	for lo < k && !live(lo) {
		lo++
	}
	for hi > lo && !live(hi-1) {
		hi--
	}
	return lo, hi
}

// pads is the padding [top, left, bottom, right] of the cropped kernel
// of a convolution of geometry g: each output position reads the same
// input positions as before.
func (cr *tapCrop) pads(g lir.ConvGeom) []int64 {
	return []int64{g.PadT - cr.h0*g.DilH, g.PadL - cr.w0*g.DilW, g.PadB - (g.KH-cr.h1)*g.DilH, g.PadR - (g.KW-cr.w1)*g.DilW}
}

// apply rewrites convolution n of g to the cropped kernel and shrinks its
// padding (n's geometry under b is deadTaps').
func (cr *tapCrop) apply(g *mir.Graph, n *mir.Node, b Binding) {
	geom, _, _ := boundConv(n, b)
	n.Args[1] = cr.weight(g, n.Args[1])
	n.Attrs["pad"] = cr.pads(geom)
}

// weight is a new constant of the window's taps of the weight w, named
// after the weight and the window (so that the variants cropping a
// weight alike share one copy, Weights.Add).
func (cr *tapCrop) weight(g *mir.Graph, w *mir.Value) *mir.Value {
	ws := w.Const.Shape
	kh, kw := cr.h1-cr.h0, cr.w1-cr.w0
	size := int64(w.Const.DType.Size())
	src := w.Const.Data
	data := make([]byte, 0, ws[0]*ws[1]*kh*kw*size)
	for oc := range ws[0] * ws[1] {
		for h := cr.h0; h < cr.h1; h++ {
			at := ((oc*ws[2]+h)*ws[3] + cr.w0) * size
			data = append(data, src[at:at+kw*size]...)
		}
	}
	t := &tensor.Tensor{DType: w.Const.DType, Shape: []int64{ws[0], ws[1], kh, kw}, Data: data}
	v := g.NewConst(w.Name, t)
	if w.Param != "" {
		v.Param = fmt.Sprintf("%s#taps[%d:%d,%d:%d]", w.Param, cr.h0, cr.h1, cr.w0, cr.w1)
	}
	return v
}
