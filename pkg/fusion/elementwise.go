package fusion

import (
	"fmt"
	"slices"

	"github.com/rlx-project/rlx/pkg/mir"
)

// FuseElementwise merges chains of elementwise nodes into fused regions
// that one kernel runs element by element, so intermediates never reach
// memory. A producer joins its consumer's region when the consumer is its
// only user and both have the same shape (a smaller producer would be
// recomputed per broadcast element). Because every merged edge is the
// producer's only use, a region is convex: nothing outside it reads its
// intermediates, so it can run where its last node was.
func FuseElementwise(g *mir.Graph) (string, error) {
	uses := users(g)
	group := map[*mir.Node]*mir.Node{} // union-find parent
	var find func(n *mir.Node) *mir.Node
	find = func(n *mir.Node) *mir.Node {
		p, ok := group[n]
		if !ok || p == n {
			return n
		}
		r := find(p)
		group[n] = r
		return r
	}
	isEW := func(n *mir.Node) bool { return n != nil && mir.IsElementwise(n.Op) && len(n.Results) == 1 }
	for _, n := range g.Nodes {
		if !isEW(n) {
			continue
		}
		group[n] = find(n)
		for _, a := range n.Args {
			d := a.Def
			if !isEW(d) || uses[a] != 1 || !sameShape(a.Type.Shape, n.Results[0].Type.Shape) {
				continue
			}
			group[find(d)] = find(n)
		}
	}
	members := map[*mir.Node][]*mir.Node{}
	for _, n := range g.Nodes {
		if isEW(n) {
			r := find(n)
			members[r] = append(members[r], n)
		}
	}
	regions, swallowed := 0, 0
	var nodes []*mir.Node
	for _, n := range g.Nodes {
		if !isEW(n) {
			nodes = append(nodes, n)
			continue
		}
		ms := members[find(n)]
		if len(ms) < 2 {
			nodes = append(nodes, n)
			continue
		}
		if n != ms[len(ms)-1] {
			continue // emitted with the region's last node
		}
		nodes = append(nodes, Region(ms))
		regions++
		swallowed += len(ms)
	}
	g.Nodes = nodes
	if regions == 0 {
		return "", nil
	}
	return fmt.Sprintf("fused %d elementwise nodes into %d kernels", swallowed, regions), nil
}

// users counts the nodes (and graph outputs) that use each value: a node
// that reads a value twice (x*x) is one user, so the value may still join
// its region.
func users(g *mir.Graph) map[*mir.Value]int {
	n := map[*mir.Value]int{}
	for _, m := range g.Nodes {
		for i, a := range m.Args {
			if !slices.Contains(m.Args[:i], a) {
				n[a]++
			}
		}
	}
	for _, o := range g.Outputs {
		n[o]++
	}
	return n
}

// Region makes one fused node out of members (in order; the last one's
// result is the region's result): it reads the values the members read
// from outside, but for scalar constants, which stay inside.
func Region(ms []*mir.Node) *mir.Node {
	inside := map[*mir.Value]bool{}
	for _, m := range ms {
		inside[m.Results[0]] = true
	}
	var inputs []*mir.Value
	seen := map[*mir.Value]bool{}
	for _, m := range ms {
		for _, a := range m.Args {
			if !inside[a] && !seen[a] && !(a.IsConst() && a.Const.Len() == 1) {
				seen[a] = true
				inputs = append(inputs, a)
			}
		}
	}
	last := ms[len(ms)-1]
	res := last.Results[0]
	sub := &mir.Graph{Name: "region", Inputs: inputs, Outputs: []*mir.Value{res}, Nodes: ms}
	n := &mir.Node{Op: mir.OpFused, Args: inputs, Results: []*mir.Value{res}, Region: sub, Attrs: mir.Attrs{}, Src: last.Src}
	return n
}
