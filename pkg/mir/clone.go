package mir

import "maps"

// Clone copies g: new nodes, and new values for every node's results
// (fused regions included), with the same IDs, names and types. The copy
// shares g's inputs and constants, which no pass changes, so it may be
// rewritten freely while others read g (the variants of a build
// specialize concurrently from one template).
func (g *Graph) Clone() *Graph {
	m := map[*Value]*Value{}
	c := &Graph{Name: g.Name, nextID: g.nextID}
	c.Inputs = append([]*Value(nil), g.Inputs...)
	c.Nodes = cloneNodes(g.Nodes, m)
	c.Outputs = mapValues(g.Outputs, m)
	return c
}

func cloneNodes(nodes []*Node, m map[*Value]*Value) []*Node {
	out := make([]*Node, len(nodes))
	for i, n := range nodes {
		c := &Node{Op: n.Op, Args: mapValues(n.Args, m), Attrs: maps.Clone(n.Attrs), Src: n.Src}
		if c.Attrs == nil {
			c.Attrs = Attrs{}
		}
		if n.Region != nil {
			r := n.Region
			c.Region = &Graph{Name: r.Name, nextID: r.nextID, Inputs: mapValues(r.Inputs, m)}
			c.Region.Nodes = cloneNodes(r.Nodes, m)
		}
		for _, v := range n.Results {
			nv, ok := m[v]
			if !ok { // a region's result is its last inner node's, cloned there
				cp := *v
				nv = &cp
				m[v] = nv
			}
			if nv.Def == nil || nv.Def == v.Def {
				nv.Def = c
			}
			c.Results = append(c.Results, nv)
		}
		if n.Region != nil {
			c.Region.Outputs = mapValues(n.Region.Outputs, m)
		}
		out[i] = c
	}
	return out
}

func mapValues(vs []*Value, m map[*Value]*Value) []*Value {
	out := make([]*Value, len(vs))
	for i, v := range vs {
		if c, ok := m[v]; ok {
			out[i] = c
		} else {
			out[i] = v
		}
	}
	return out
}
