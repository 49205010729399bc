package specialize

import (
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Concatenation in place.
//
// A concat whose operands are whole blocks of its result (every dim
// before the axis is 1: channels at batch 1, the steps of an unrolled
// recurrence) need not copy them: each operand can be computed straight
// into its block of the result, and the concat then has nothing to do
// for it. DenseNet's dense blocks, Inception's and SqueezeNet's branches
// and an unrolled LSTM's hidden states (a quarter of a small LSTM's time
// was these copies) are such concats.

// Guest says where a value computed in place of a concat's operand
// lives: Offset bytes into the concat's result, its Host.
type Guest struct {
	Host   *mir.Value
	Offset int64
}

// concatInPlace chooses the guests (Plan.Guests). A value becomes one
// only where nothing else decides its bytes: it is computed here, in the
// arena (no input, constant or output, nor an output's source), stored
// as it reads (not channels last), the root of no view but of one that
// covers all its bytes (an operand through reshapes), an operand
// of this concat once and of no other concat in place, and no host
// itself (hosts do not nest), of the host's dtype (so it starts at a
// multiple of its element size in the host's block, which Caps.
// InPlaceConcat says the kernels take). The host is the same: an arena
// value of its own or a graph output, no guest.
func concatInPlace(p *Plan) {
	p.Guests = map[*mir.Value]Guest{}
	p.placed = map[*mir.Node][]bool{}
	hosts := map[*mir.Value]bool{}
	own := func(v *mir.Value) bool {
		return v.Def != nil && !v.IsConst() && p.Stores[v] == nil && p.root(v) == v && !p.ChannelsLast[v]
	}
	outputs := map[*mir.Value]int{}
	for _, o := range p.Graph.Outputs {
		outputs[o]++
	}
	// A host in the arena, or a graph output (listed once) whose bytes
	// are its own: the guests then lie in the caller's output tensor.
	host := func(v *mir.Value) bool {
		s := p.Stores[v]
		return own(v) || s != nil && s.Kind == StoreOutput && s.Root == v && outputs[v] == 1
	}
	// Last concat first: a dense block's concats each take the operands
	// of the one before and one more, so the block's last (largest)
	// becomes the host and each earlier one a prefix of it (below).
	nodes := p.Graph.Nodes
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		if n.Op != mir.OpConcat || len(n.Results) != 1 {
			continue
		}
		out := n.Results[0]
		if !host(out) {
			continue
		}
		if _, guest := p.Guests[out]; guest {
			continue
		}
		shape, ax := p.Shapes[out], int(n.Attrs.Int("axis"))
		if ax < 0 || ax >= len(shape) || tensor.NumElements(shape[:ax]) != 1 {
			continue
		}
		// A concat whose operands already lie one after another in a
		// host, in its order, is that run of the host: a guest itself,
		// with nothing to copy.
		if h, off, ok := p.runOf(n); ok && own(out) {
			p.Guests[out] = Guest{Host: h, Offset: off}
			all := make([]bool, len(n.Args))
			for i := range all {
				all[i] = true
			}
			p.placed[n] = all
			continue
		}
		// An operand that is a view of all of a value's bytes (an
		// unrolled step's reshaped state) places that value.
		count := map[*mir.Value]int{}
		for _, a := range n.Args {
			count[p.sameOrder(a)]++
		}
		off := int64(0)
		placed := make([]bool, len(n.Args))
		for i, a := range n.Args {
			v := p.sameOrder(a)
			_, taken := p.Guests[v]
			if own(v) && count[v] == 1 && !taken && !hosts[v] && p.Bytes(v) == p.Bytes(a) && v.Type.DType == out.Type.DType {
				p.Guests[v] = Guest{Host: out, Offset: off}
				hosts[out] = true
				placed[i] = true
			}
			off += p.Bytes(a)
		}
		if hosts[out] {
			p.placed[n] = placed
		}
	}
}

// sameOrder is the value whose bytes v is in the same order: v's source
// through reshapes and transposes that move only dims of size 1, not
// through a strided attention operand's views (another order); before
// the arena is planned (a placed value ends the walk, as in root).
func (p *Plan) sameOrder(v *mir.Value) *mir.Value {
	for v.Def != nil && !p.views[v.Def] && p.IsView(v.Def) && p.Stores[v] == nil && len(v.Def.Args) > 0 {
		v = v.Def.Args[0]
	}
	return v
}

// runOf reports a concat whose operands are guests of one host, each
// starting where the one before ends, and where the first starts.
func (p *Plan) runOf(n *mir.Node) (host *mir.Value, off int64, ok bool) {
	next := int64(-1)
	for _, a := range n.Args {
		v := p.sameOrder(a)
		gu, ok := p.Guests[v]
		if !ok || p.Bytes(v) != p.Bytes(a) || v.Type.DType != n.Results[0].Type.DType ||
			host != nil && (gu.Host != host || gu.Offset != next) {
			return nil, 0, false
		}
		if host == nil {
			host, off = gu.Host, gu.Offset
		}
		next = gu.Offset + p.Bytes(v)
	}
	return host, off, host != nil
}
