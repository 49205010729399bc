package specialize

import (
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Slices read in place by elementwise regions.
//
// An unrolled LSTM slices each step's gate product [batch, 4·H] into its
// four gates, and a SwiGLU or GLU layer splits one product in halves,
// only for an elementwise region to read each slice once: a strided copy
// per slice. A region reads its operands through per-dim strides
// (lir.EwIn), so with Caps.StridedElementwise the "slice-views" pass
// makes such a slice a view (p.views) and the region reads the sliced
// elements where they are, at the view's offset and strides. A slice of
// contiguous elements needs no copy for any reader: it becomes a view
// whose store is its run of the source's bytes.

// sliceViews is the "slice-views" pass. A slice (no graph output) whose
// elements compose to non-negative strides of its source becomes a view
// where every reader is an elementwise region, or where its elements are
// one contiguous run of the source's (every dim before the sliced ones 1:
// an unrolled step's row of a product over all steps, a last token at
// batch 1): any reader reads that run in place, the slice's store a
// sub-range of its source's (Plan.contig).
func sliceViews(p *Plan) {
	p.contig = map[*mir.Node]bool{}
	if p.views == nil {
		p.views = map[*mir.Node]bool{}
	}
	readers := map[*mir.Value][]*mir.Node{}
	for _, n := range p.Graph.Nodes {
		for _, a := range n.Args {
			readers[a] = append(readers[a], n)
		}
	}
	for _, n := range p.Graph.Nodes {
		if n.Op != mir.OpSlice || len(n.Args) == 0 || len(n.Results) != 1 {
			continue
		}
		v := n.Results[0]
		if p.views[n] || p.Stores[v] != nil || len(readers[v]) == 0 {
			continue
		}
		ew := true
		for _, r := range readers[v] {
			ew = ew && (r.Op == mir.OpFused || mir.IsElementwise(r.Op))
		}
		p.views[n] = true
		_, _, st, ok := p.stridedView(v)
		switch {
		case ok && contiguous(p.Shapes[v], st) && p.sameOrderChain(n.Args[0]):
			p.contig[n] = true
		case !ok || !ew:
			delete(p.views, n)
		}
	}
}

// contiguous reports strides that are a contiguous layout of shape (dims
// of 1 take any stride).
func contiguous(shape, strides []int64) bool {
	want := tensor.Strides(shape)
	for d := range shape {
		if shape[d] > 1 && strides[d] != want[d] {
			return false
		}
	}
	return true
}

// sameOrderChain reports that v's bytes are its view root's in the same
// order, or a contiguous run of them: its view links are reshapes,
// transposes of dims of 1 and contiguous slices, no strided attention
// operand's.
func (p *Plan) sameOrderChain(v *mir.Value) bool {
	for v.Def != nil && len(v.Def.Args) > 0 && p.IsView(v.Def) {
		if p.views[v.Def] && !p.contig[v.Def] {
			return false
		}
		v = v.Def.Args[0]
	}
	return true
}

// subrange is, where view v's bytes are a contiguous run of its view
// root's (a chain with a contiguous slice, sliceViews), that root and the
// byte offset of v's first element in it: v's store is that run of the
// root's. ok is false for other views, whose store is their source's (an
// attention operand's, read through ViewOf).
func (p *Plan) subrange(v *mir.Value) (root *mir.Value, off int64, ok bool) {
	sliced := false
	for u := v; u.Def != nil && len(u.Def.Args) > 0 && p.IsView(u.Def); u = u.Def.Args[0] {
		if p.views[u.Def] && !p.contig[u.Def] {
			return nil, 0, false
		}
		sliced = sliced || p.contig[u.Def]
	}
	if !sliced {
		return nil, 0, false
	}
	root, off, _, ok = p.stridedView(v)
	return root, off * int64(v.Type.DType.Size()), ok
}

// stridedView is ViewOf without its rows' condition: the value v's
// elements lie in, the offset of its first element there and its element
// strides, for any view whose links compose to non-negative strides.
func (p *Plan) stridedView(v *mir.Value) (root *mir.Value, off int64, strides []int64, ok bool) {
	var chain []*mir.Node
	root = v
	for root.Def != nil && len(root.Def.Args) > 0 && p.IsView(root.Def) {
		chain = append(chain, root.Def)
		root = root.Def.Args[0]
	}
	off, strides, ok = p.composeAny(root, chain)
	return root, off, strides, ok
}

// viewStrides is the strides an elementwise region reads operand v with
// over its iteration shape out (v's dims aligned from the right; a dim of
// 1 broadcasts): v's own where v is a slice view (sliceViews), else
// broadcastStrides of v's contiguous layout. base is the value whose
// buffer holds v, off the element offset of v's first element there.
func (g *gen) viewStrides(v *mir.Value, out []int64) (base *mir.Value, off int64, strides []int64) {
	if !g.p.slicedView(v) {
		return v, 0, broadcastStrides(g.shape(v), out)
	}
	root, off, st, _ := g.p.stridedView(v)
	s := g.shape(v)
	strides = make([]int64, len(out))
	lead := len(out) - len(s)
	for i := range s {
		if s[i] != 1 || out[lead+i] == 1 {
			strides[lead+i] = st[i]
		}
	}
	return root, off, strides
}

// slicedView reports whether v is read through a slice made a view by
// sliceViews (a link of its view chain that is a slice).
func (p *Plan) slicedView(v *mir.Value) bool {
	for v.Def != nil && len(v.Def.Args) > 0 && p.IsView(v.Def) {
		if v.Def.Op == mir.OpSlice {
			return true
		}
		v = v.Def.Args[0]
	}
	return false
}

// span is the elements from a strided view's first to its last, plus one.
func span(shape, strides []int64) int64 {
	n := int64(1)
	for d, st := range strides {
		if shape[d] == 0 {
			return 0
		}
		n += (shape[d] - 1) * st
	}
	return n
}
