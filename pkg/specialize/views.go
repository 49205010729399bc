package specialize

import (
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Strided attention operands.
//
// PyTorch's multi-head attention hands the attention its heads as slices
// of a QKV projection's [S, 3·H·D] output (or of separate projections),
// reshaped to [S, H, D] and transposed to [H, S, D]: a copy for each slice
// and transpose. A kernel that takes per-head strides and a row stride
// (the CPU's) reads them in place: with Caps.StridedAttention, the
// "strided-attention" pass makes each slice and transpose of such a chain,
// every link used once, a view of the value the chain starts from, so the
// plan keeps that value alive until the attention runs and gives the chain
// no bytes of its own.

// ViewOf returns the value whose bytes v is a view of (v itself where it
// is not one), the offset of v's first element there and v's element
// strides, following the plan's views back; ok is false where v is not a
// view with contiguous innermost rows that ViewOf can describe.
func (p *Plan) ViewOf(v *mir.Value) (root *mir.Value, off int64, strides []int64, ok bool) {
	root, off, strides, ok = p.stridedView(v)
	if !ok || !rowsContiguous(p.Shapes[v], strides) {
		return root, 0, nil, false
	}
	return root, off, strides, true
}

// compose is composeAny for an attention operand: its rows contiguous.
func (p *Plan) compose(root *mir.Value, chain []*mir.Node) (off int64, strides []int64, ok bool) {
	off, strides, ok = p.composeAny(root, chain)
	shape := p.Shapes[root]
	if len(chain) > 0 {
		shape = p.Shapes[chain[0].Results[0]]
	}
	if !ok || !rowsContiguous(shape, strides) {
		return 0, nil, false
	}
	return off, strides, true
}

// rowsContiguous reports a strided layout of rank 2 or more whose last
// dim is contiguous (or of length 1): rows an attention kernel reads.
func rowsContiguous(shape, strides []int64) bool {
	r := len(strides)
	return r >= 2 && (strides[r-1] == 1 || shape[r-1] <= 1)
}

// composeAny applies chain (last node first, as walked back from a value)
// to root's contiguous layout: the offset and strides of the chain's
// result, which must all be non-negative.
func (p *Plan) composeAny(root *mir.Value, chain []*mir.Node) (off int64, strides []int64, ok bool) {
	shape := p.Shapes[root]
	strides = tensor.Strides(shape)
	for i := len(chain) - 1; i >= 0; i-- {
		n := chain[i]
		out := p.Shapes[n.Results[0]]
		switch n.Op {
		case mir.OpTranspose:
			perm := n.Attrs.Ints("perm")
			st := make([]int64, len(perm))
			for d, a := range perm {
				st[d] = strides[a]
			}
			strides = st
		case mir.OpSlice:
			starts, err1 := indices(n.Attrs.Dims("starts"), p.Binding)
			ends, err2 := indices(n.Attrs.Dims("ends"), p.Binding)
			if err1 != nil || err2 != nil {
				return 0, nil, false
			}
			st := append([]int64(nil), strides...)
			for j, ax := range n.Attrs.Ints("axes") {
				step := n.Attrs.Ints("steps")[j]
				start, _ := tensor.SliceRange(starts[j], ends[j], step, shape[ax])
				off += start * strides[ax]
				st[ax] = strides[ax] * step
			}
			strides = st
		case mir.OpReshape:
			st, fits := reshapeStrides(shape, strides, out)
			if !fits {
				return 0, nil, false
			}
			strides = st
		default:
			return 0, nil, false
		}
		shape = out
	}
	for _, st := range strides {
		if st < 0 {
			return 0, nil, false
		}
	}
	return off, strides, true
}

// stridedAttention is the "strided-attention" pass: it marks the slices
// and transposes of attention operand chains as views (p.views) where the
// chain composes to rows an attention kernel can read with strides.
func stridedAttention(p *Plan) {
	uses := map[*mir.Value]int{}
	for _, n := range p.Graph.Nodes {
		for _, a := range n.Args {
			uses[a]++
		}
	}
	for _, o := range p.Graph.Outputs {
		uses[o]++
	}
	p.views = map[*mir.Node]bool{}
	for _, n := range p.Graph.Nodes {
		if n.Op != mir.OpAttention {
			continue
		}
		for _, v := range n.Args[:3] {
			var chain []*mir.Node
			root := v
			for root.Def != nil && uses[root] == 1 && len(root.Def.Args) > 0 && v.Type.DType == tensor.F32 {
				op := root.Def.Op
				if op != mir.OpTranspose && op != mir.OpSlice && op != mir.OpReshape {
					break
				}
				chain = append(chain, root.Def)
				root = root.Def.Args[0]
			}
			if len(chain) == 0 {
				continue
			}
			if _, _, ok := p.compose(root, chain); !ok {
				continue
			}
			for _, c := range chain {
				p.views[c] = true
			}
		}
	}
}

// reshapeStrides returns the strides of a reshape of a strided view
// (shape, strides) to to, without a copy, or false where the view's
// elements are not laid out so (NumPy's attempt_nocopy_reshape).
func reshapeStrides(shape, strides, to []int64) ([]int64, bool) {
	var od, os []int64 // the old dims other than 1s
	for i, d := range shape {
		if d != 1 {
			od, os = append(od, d), append(os, strides[i])
		}
	}
	out := make([]int64, len(to))
	oi, oj, ni, nj := 0, 1, 0, 1
	for ni < len(to) && oi < len(od) {
		np, op := to[ni], od[oi]
		for np != op {
			if np < op {
				if nj >= len(to) {
					return nil, false
				}
				np *= to[nj]
				nj++
			} else {
				if oj >= len(od) {
					return nil, false
				}
				op *= od[oj]
				oj++
			}
		}
		for k := oi; k < oj-1; k++ {
			if os[k] != od[k+1]*os[k+1] {
				return nil, false
			}
		}
		out[nj-1] = os[oj-1]
		for k := nj - 1; k > ni; k-- {
			out[k-1] = out[k] * to[k]
		}
		ni, nj = nj, nj+1
		oi, oj = oj, oj+1
	}
	last := int64(1)
	if ni > 0 {
		last = out[ni-1]
	}
	for ; ni < len(to); ni++ {
		if to[ni] != 1 {
			return nil, false
		}
		out[ni] = last
	}
	return out, true
}
