package specialize

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Convolutions of mostly padding.
//
// Where a dilation is large against the plane but not so large that a
// kernel row or column is dead everywhere (cropDeadTaps), each output
// position still reads the input through only some of the taps:
// DeepLabV3's ASPP 3x3 at dilation 12 over a 14x14 plane reads it through
// all nine taps at no position, through the centre tap alone at the
// 10x10 centre, and 1.65 taps on average. The kernels vectorize over
// output positions, and a vector spans a whole row of such a plane, so
// they run every tap at every position, masked. Output positions whose
// live taps are the same form a grid of rectangles (the live kernel rows
// change only at a few output rows, the columns at a few columns). Each
// rectangle is one 1x1 convolution (a product over the channels, which
// the kernels tile over output channels where the rectangle is small) of
// its live taps' input windows concatenated along the channels, an
// im2col of the rectangle's live taps alone, with the convolution's
// bias and activation; the rectangles are concatenated into the output. Where the backend says the live taps are few enough
// (Caps.SparseTaps) the convolution is rewritten so.

// maxTapRegions bounds the rectangles a convolution splits into: each is
// a slice, a convolution and part of a concat, and a kernel of k taps
// along an axis has at most 2k-1 distinct live windows (9 rectangles
// for DeepLabV3's 3x3).
const maxTapRegions = 25

// tapRun is a run of output indices [o0, o1) along one axis whose live
// taps are [t0, t1).
type tapRun struct{ o0, o1, t0, t1 int64 }

// tapRuns splits the out output indices of a kernel axis of k taps
// (stride, pad, dilation over an input of in) into runs of the same live
// taps, or nil where some index reads the input through no tap.
func tapRuns(in, out, k, stride, pad, dil int64) []tapRun {
	var runs []tapRun
	for o := range out {
		t0, t1 := int64(-1), int64(-1)
		for t := range k {
			if i := o*stride + t*dil - pad; i >= 0 && i < in {
				if t0 < 0 {
					t0 = t
				}
				t1 = t + 1
			}
		}
		if t0 < 0 {
			return nil
		}
		if n := len(runs); n > 0 && runs[n-1].t0 == t0 && runs[n-1].t1 == t1 {
			runs[n-1].o1 = o + 1
			continue
		}
		runs = append(runs, tapRun{o, o + 1, t0, t1})
	}
	return runs
}

// livePairs counts the (tap, output position) pairs of the runs of a
// kernel's rows and columns that read the input.
func livePairs(rows, cols []tapRun) int64 {
	live := int64(0)
	for _, r := range rows {
		for _, c := range cols {
			live += (r.o1 - r.o0) * (c.o1 - c.o0) * (r.t1 - r.t0) * (c.t1 - c.t0)
		}
	}
	return live
}

// LiveTapPairs returns how many of g's (tap, output position) pairs read
// the input, not the padding, and how many there are (per image and
// channel pair): the sparsity Caps.SparseTaps and Caps.TapConv judge. A
// pair is live where its kernel row reads an input row and its column an
// input column, so the count is the product of the two axes' counts.
func LiveTapPairs(g lir.ConvGeom) (live, total int64) {
	axis := func(in, out, k, stride, pad, dil int64) int64 {
		n := int64(0)
		for o := range out {
			for t := range k {
				if i := o*max(stride, 1) + t*max(dil, 1) - pad; i >= 0 && i < in {
					n++
				}
			}
		}
		return n
	}
	return axis(g.H, g.OH, g.KH, g.StrideH, g.PadT, g.DilH) * axis(g.W, g.OW, g.KW, g.StrideW, g.PadL, g.DilW), g.OH * g.OW * g.KH * g.KW
}

// splitSparseTaps rewrites every convolution that sparse says to split
// (live of its total tap-position pairs read the input) into its
// rectangles of constant live taps. It works on a copy, as cropDeadTaps
// does, and returns g itself when nothing matches.
func splitSparseTaps(g *mir.Graph, b Binding, sparse func(live, total int64) bool) (*mir.Graph, error) {
	type split struct {
		rows, cols []tapRun
	}
	plans := map[int]split{}
	for i, n := range g.Nodes {
		geom, ok, err := boundConv(n, b)
		if err != nil {
			return nil, err
		}
		if !ok || geom.Groups != 1 || n.Attrs.Bool("residual") || n.Args[1].Const.DType != tensor.F32 {
			continue
		}
		rows := tapRuns(geom.H, geom.OH, geom.KH, geom.StrideH, geom.PadT, geom.DilH)
		cols := tapRuns(geom.W, geom.OW, geom.KW, geom.StrideW, geom.PadL, geom.DilW)
		if len(rows)*len(cols) <= 1 || len(rows)*len(cols) > maxTapRegions {
			continue
		}
		if sparse(livePairs(rows, cols), geom.OH*geom.OW*geom.KH*geom.KW) {
			plans[i] = split{rows, cols}
		}
	}
	if len(plans) == 0 {
		return g, nil
	}
	c := g.Clone()
	nodes := c.Nodes
	c.Nodes = nil
	for i, n := range nodes {
		sp, ok := plans[i]
		if !ok {
			c.Nodes = append(c.Nodes, n)
			continue
		}
		shape := n.Results[0].Type.Shape
		var bands []*mir.Value
		for _, r := range sp.rows {
			var cells []*mir.Value
			for _, cl := range sp.cols {
				cells = append(cells, regionConv(c, n, r, cl))
			}
			if len(sp.rows) == 1 {
				bands = cells // one band: the convolution is the concat of its cells
				break
			}
			band := cells[0]
			if len(cells) > 1 {
				band = c.Add(mir.OpConcat, cells, mir.Attrs{"axis": int64(3)}, n.Src,
					mir.Type{DType: n.Results[0].Type.DType, Shape: []dim.Expr{shape[0], shape[1], dim.Const(r.o1 - r.o0), shape[3]}}).Results[0]
			}
			bands = append(bands, band)
		}
		// The convolution becomes the concat of its bands (of its cells
		// where it has one band): its result, and so its uses, stay.
		axis := int64(2)
		if len(sp.rows) == 1 {
			axis = 3
		}
		n.Op, n.Args, n.Attrs = mir.OpConcat, bands, mir.Attrs{"axis": axis}
		c.Nodes = append(c.Nodes, n)
	}
	return c, nil
}

// regionConv adds to g the steps of convolution n over the rectangle of
// output rows r and columns cl, and returns its [N, O, rows, cols]
// result: each live tap's input window (a slice, strided as the
// convolution is), concatenated along the channels tap by tap where
// there are several, through a 1x1 convolution whose weight holds the
// taps' planes in the same order, W'[o, t·C + c] = W[o, c, kh_t, kw_t].
func regionConv(g *mir.Graph, n *mir.Node, r, cl tapRun) *mir.Value {
	x, w := n.Args[0], n.Args[1]
	st, pad, dl := n.Attrs.Ints("stride"), n.Attrs.Ints("pad"), n.Attrs.Ints("dilation")
	xs, ws := x.Type.Shape, w.Const.Shape
	rows, cols := r.o1-r.o0, cl.o1-cl.o0
	var wins []*mir.Value
	for kh := r.t0; kh < r.t1; kh++ {
		for kw := cl.t0; kw < cl.t1; kw++ {
			y0, x0 := r.o0*st[0]+kh*dl[0]-pad[0], cl.o0*st[1]+kw*dl[1]-pad[1]
			win := g.Add(mir.OpSlice, []*mir.Value{x}, mir.Attrs{
				"starts": []dim.Expr{dim.Const(y0), dim.Const(x0)},
				"ends":   []dim.Expr{dim.Const(y0 + (rows-1)*st[0] + 1), dim.Const(x0 + (cols-1)*st[1] + 1)},
				"axes":   []int64{2, 3}, "steps": []int64{st[0], st[1]},
			}, n.Src, mir.Type{DType: x.Type.DType, Shape: []dim.Expr{xs[0], xs[1], dim.Const(rows), dim.Const(cols)}})
			wins = append(wins, win.Results[0])
		}
	}
	taps := int64(len(wins))
	in := wins[0]
	if taps > 1 {
		c, _ := xs[1].Const()
		in = g.Add(mir.OpConcat, wins, mir.Attrs{"axis": int64(1)}, n.Src,
			mir.Type{DType: x.Type.DType, Shape: []dim.Expr{xs[0], dim.Const(taps * c), dim.Const(rows), dim.Const(cols)}}).Results[0]
	}
	src := w.Const.F32()
	wt := make([]float32, 0, ws[0]*taps*ws[1])
	for o := range ws[0] {
		for kh := r.t0; kh < r.t1; kh++ {
			for kw := cl.t0; kw < cl.t1; kw++ {
				for c := range ws[1] {
					wt = append(wt, src[((o*ws[1]+c)*ws[2]+kh)*ws[3]+kw])
				}
			}
		}
	}
	wv := g.NewConst(w.Name, tensor.FromF32([]int64{ws[0], taps * ws[1], 1, 1}, wt))
	if w.Param != "" {
		wv.Param = fmt.Sprintf("%s#im2col[%d:%d,%d:%d]", w.Param, r.t0, r.t1, cl.t0, cl.t1)
	}
	attrs := mir.Attrs{}
	for k, v := range n.Attrs {
		attrs[k] = v
	}
	attrs["stride"], attrs["pad"], attrs["dilation"] = []int64{1, 1}, []int64{0, 0, 0, 0}, []int64{1, 1}
	args := append([]*mir.Value{in, wv}, n.Args[2:]...)
	shape := n.Results[0].Type.Shape
	return g.Add(mir.OpConv2D, args, attrs, n.Src,
		mir.Type{DType: n.Results[0].Type.DType, Shape: []dim.Expr{shape[0], shape[1], dim.Const(rows), dim.Const(cols)}}).Results[0]
}
