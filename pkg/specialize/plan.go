package specialize

import (
	"fmt"
	"sort"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Align is the byte alignment of every arena buffer: a cache line, and enough
// for any vector load.
const Align = 64

// StoreKind says where a value's bytes live in a specialized program.
type StoreKind uint8

// Where values live.
const (
	StoreNone   StoreKind = iota // not materialized (inside a fused region)
	StoreArena                   // the per-run scratch arena
	StoreConst                   // a weight or folded constant in the artifact
	StoreInput                   // a caller-provided input
	StoreOutput                  // a caller-owned output
)

// Store is a value's storage. Views (reshapes) share their source's Root.
type Store struct {
	Kind   StoreKind
	Root   *mir.Value // the value that owns the bytes
	Offset int64      // arena offset (StoreArena); else into the input, weight or output (a contiguous slice's run, a concat's guest)
	Bytes  int64
	Index  int // input or output slot
}

// Plan is a template specialized for one binding: every shape concrete,
// every shape-dependent kernel and layout decided (passes.go) and every
// value placed. Schedule turns it into the target-neutral LIR program:
// kernels run in Graph.Nodes order over these buffers.
type Plan struct {
	Graph      *mir.Graph
	Binding    Binding
	Shapes     map[*mir.Value][]int64
	Stores     map[*mir.Value]*Store
	ArenaBytes int64 // the arena after reuse, relayout scratch included
	TempBytes  int64 // the sum of every intermediate tensor, without reuse
	Caps       Caps  // what the backend's kernels can do

	// The decision passes' choices (passes.go).
	Kernels      map[*mir.Node]Kernel  // a node's kernel, where not the default
	ChannelsLast map[*mir.Value]bool   // values stored channels last (NHWC)
	Relaid       map[*mir.Value]*Store // NCHW values relaid channels last: the scratch holding the copy
	OutScratch   map[*mir.Node]*Store  // channels-last convolutions with an NCHW result: the scratch they write first
	Winograd     map[*mir.Node]WinogradPlan
	Int8Conv     map[*mir.Node]Int8ConvPlan
	Int8MatMul   map[*mir.Node]*Store // integer products: the scratch of their A (lir.QMatMul.Scratch)
	Guests       map[*mir.Value]Guest // values computed in place of a concat's operand (concat.go)

	views   map[*mir.Node]bool     // slices and transposes made views (views.go)
	placed  map[*mir.Node][]bool   // a concat's operands computed in place (concat.go)
	contig  map[*mir.Node]bool     // slice views whose store is a run of their source's (slices.go)
	scratch map[*Store]*scratchUse // relayout scratch and when it is live
	order   []*scratchUse          // the scratch in the order passes asked for it
}

// scratchUse is an arena block that belongs to no value (relayout
// scratch), live from node first to node last.
type scratchUse struct {
	s           *Store
	first, last int
}

// addScratch asks the arena planner for block s, live at node at (a
// pass may extend its last use).
func (p *Plan) addScratch(s *Store, at int) {
	u := &scratchUse{s: s, first: at, last: at}
	p.scratch[s] = u
	p.order = append(p.order, u)
}

// Specialize evaluates every shape of g under b and plans memory. The binding
// must bind every dim that g's shapes use.
func Specialize(g *mir.Graph, b Binding) (*Plan, error) {
	return SpecializeWith(g, b, Caps{})
}

// SpecializeWith is Specialize for a backend whose kernels can do c.
func SpecializeWith(g *mir.Graph, b Binding, c Caps) (*Plan, error) {
	g, err := expandRecurrent(g, b)
	if err != nil {
		return nil, err
	}
	if g, err = foldBound(g, b); err != nil {
		return nil, err
	}
	if g, err = cropDeadTaps(g, b); err != nil {
		return nil, err
	}
	if c.SparseTaps != nil {
		if g, err = splitSparseTaps(g, b, c.SparseTaps); err != nil {
			return nil, err
		}
	}
	if c.Int8Products && c.Packer != nil {
		// before subsampleStrided, which would turn a strided 1x1
		// convolution's operand into a slice of its f32 form: the
		// integer convolution takes strides itself
		g = int8Products(g, c.Int8MinK)
	}
	if c.SubsampleStrided {
		g = subsampleStrided(g)
	}
	p := &Plan{Graph: g, Binding: b, Shapes: map[*mir.Value][]int64{}, Stores: map[*mir.Value]*Store{}, Caps: c,
		scratch: map[*Store]*scratchUse{}}
	shape := func(v *mir.Value) error {
		if _, ok := p.Shapes[v]; ok {
			return nil
		}
		s, err := Concrete(v.Type.Shape, b)
		if err != nil {
			return fmt.Errorf("%s: %v", v, err)
		}
		if !fits(s, int64(v.Type.DType.Size())) {
			return fmt.Errorf("%s: %s%v would take more than 1 PiB", v, v.Type.DType, s)
		}
		p.Shapes[v] = s
		return nil
	}
	for _, v := range g.Inputs {
		if err := shape(v); err != nil {
			return nil, err
		}
	}
	for _, n := range g.Nodes {
		for _, v := range append(append([]*mir.Value(nil), n.Args...), n.Results...) {
			if err := shape(v); err != nil {
				return nil, fmt.Errorf("%s: %v", n.Src, err)
			}
		}
	}
	p.placeFixed()
	p.runPasses()
	p.plan()
	return p, nil
}

// MaxTensorBytes bounds one tensor of a specialized program (1 PiB): far
// past any memory, and small enough that the arena planner's sums over
// thousands of tensors cannot overflow int64.
const MaxTensorBytes = 1 << 50

// fits reports whether a tensor of shape and element size takes at most
// MaxTensorBytes, computed without overflow.
func fits(shape []int64, size int64) bool {
	n := size
	for _, d := range shape {
		if d != 0 && n > MaxTensorBytes/d {
			return n == 0
		}
		n *= d
	}
	return n <= MaxTensorBytes
}

// Concrete evaluates a symbolic shape; an unbound dim is an error naming it.
func Concrete(shape []dim.Expr, b Binding) ([]int64, error) {
	out := make([]int64, len(shape))
	for i, d := range shape {
		v, err := d.Eval(b)
		if err != nil {
			return nil, err
		}
		if v < 0 {
			return nil, fmt.Errorf("dim %s is %d under %s", d, v, b)
		}
		out[i] = v
	}
	return out, nil
}

// indices evaluates slice starts or ends under the binding. Unlike a
// shape's dims (Concrete) they may be negative: they count from the end.
func indices(es []dim.Expr, b Binding) ([]int64, error) {
	out := make([]int64, len(es))
	for i, e := range es {
		v, err := e.Eval(b)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Bytes is the size of a value under the plan.
func (p *Plan) Bytes(v *mir.Value) int64 {
	return tensor.NumElements(p.Shapes[v]) * int64(v.Type.DType.Size())
}

// IsView reports a node whose result shares its operand's bytes: a
// reshape, a transpose that under the plan's shapes moves only dims of
// size 1 (the encoder's [1, seq, d] <-> [seq, 1, d] at batch 1), which
// keeps every element where it was, or a link of a strided attention
// operand (views.go).
func (p *Plan) IsView(n *mir.Node) bool {
	if p.views[n] {
		return true
	}
	switch n.Op {
	case mir.OpReshape:
		return true
	case mir.OpTranspose:
		s := p.Shapes[n.Args[0]]
		last := -1
		for _, a := range n.Attrs.Ints("perm") {
			if a < 0 || int(a) >= len(s) {
				return false
			}
			if s[a] == 1 {
				continue
			}
			if int(a) < last {
				return false
			}
			last = int(a)
		}
		return true
	}
	return false
}

// placeFixed places the values whose storage is their own: inputs,
// outputs and constants.
func (p *Plan) placeFixed() {
	g := p.Graph
	for i, v := range g.Inputs {
		p.Stores[v] = &Store{Kind: StoreInput, Root: v, Index: i, Bytes: p.Bytes(v)}
	}
	for i, v := range g.Outputs {
		p.Stores[v] = &Store{Kind: StoreOutput, Root: v, Index: i, Bytes: p.Bytes(v)}
	}
	// An output that is a view (a reshape) of a value computed here
	// takes that value's place: the value is computed straight into the
	// output and the view copies nothing. Only a value with no bytes of
	// its own yet: an input, a constant or another output (the first
	// output to claim a value gets it) keeps its own, and the view stays
	// a copy. Nothing else writes an output, so the value's other
	// readers read it there as they would in the arena.
	for i, v := range g.Outputs {
		if p.Stores[v].Index != i {
			continue // listed twice: the last slot holds it
		}
		src := v
		for src.Def != nil && p.IsView(src.Def) && len(src.Def.Args) > 0 && (src == v || p.Stores[src] == nil) {
			src = src.Def.Args[0]
		}
		if src == v || p.Stores[src] != nil || src.Def == nil || src.IsConst() {
			continue
		}
		// The value owns the bytes; the output is its view.
		p.Stores[v].Root = src
		s := *p.Stores[v]
		p.Stores[src] = &s
	}
	for _, n := range g.Nodes {
		for _, a := range n.Args {
			if a.IsConst() && p.Stores[a] == nil {
				p.Stores[a] = &Store{Kind: StoreConst, Root: a, Bytes: p.Bytes(a)}
			}
		}
	}
}

// root is the value whose bytes v shares through views (v itself where it
// is no view); placeFixed must have run.
func (p *Plan) root(v *mir.Value) *mir.Value {
	for v.Def != nil && p.IsView(v.Def) && p.Stores[v] == nil {
		v = v.Def.Args[0]
	}
	return v
}

// plan assigns the arena: views share their source; every other value
// not placed by placeFixed gets an arena block, and so does the passes'
// relayout scratch, each reused once dead (first fit, 64-byte aligned).
// A node's results and scratch never share bytes with its operands, so
// kernels need not work in place.
func (p *Plan) plan() {
	g := p.Graph
	root := p.root
	// The last node index that touches each root.
	last := map[*mir.Value]int{}
	for i, n := range g.Nodes {
		for _, a := range n.Args {
			last[root(a)] = i
		}
		for _, r := range n.Results {
			if _, ok := last[root(r)]; !ok {
				last[root(r)] = i
			}
		}
	}
	for _, o := range g.Outputs {
		last[root(o)] = len(g.Nodes)
	}
	// A host's block lives as long as any value in it.
	for v, gu := range p.Guests {
		last[gu.Host] = max(last[gu.Host], last[v])
	}
	scratchAt := map[int][]*scratchUse{}
	for _, u := range p.order {
		scratchAt[u.first] = append(scratchAt[u.first], u)
	}
	var live []*Store         // arena blocks in use, sorted by offset
	until := map[*Store]int{} // each live block's last use
	alloc := func(s *Store, lastUse int) {
		s.Offset = firstFit(live, s.Bytes)
		live = append(live, s)
		sort.Slice(live, func(a, b int) bool { return live[a].Offset < live[b].Offset })
		if end := s.Offset + s.Bytes; end > p.ArenaBytes {
			p.ArenaBytes = end
		}
		until[s] = lastUse
	}
	for i, n := range g.Nodes {
		for _, r := range n.Results {
			if p.Stores[r] != nil {
				continue
			}
			if rt := root(r); rt != r {
				s := *p.Stores[rt]
				if base, off, ok := p.subrange(r); ok {
					// Measured from the chain's first value, whose
					// store is the whole of the bytes.
					s = *p.Stores[base]
					s.Offset += off
					s.Bytes = p.Bytes(r)
				}
				p.Stores[r] = &s
				continue
			}
			if gu, ok := p.Guests[r]; ok {
				if h := p.Stores[gu.Host]; h != nil && h.Kind == StoreOutput {
					p.Stores[r] = &Store{Kind: StoreOutput, Root: r, Index: h.Index, Offset: gu.Offset, Bytes: p.Bytes(r)}
					continue
				}
				// The host's block from its first guest on.
				h := p.Stores[gu.Host]
				if h == nil {
					h = &Store{Kind: StoreArena, Root: gu.Host, Bytes: p.Bytes(gu.Host)}
					p.TempBytes += h.Bytes
					alloc(h, last[gu.Host])
					p.Stores[gu.Host] = h
				}
				p.Stores[r] = &Store{Kind: StoreArena, Root: r, Offset: h.Offset + gu.Offset, Bytes: p.Bytes(r)}
				continue
			}
			size := p.Bytes(r)
			p.TempBytes += size
			s := &Store{Kind: StoreArena, Root: r, Bytes: size}
			alloc(s, last[r])
			p.Stores[r] = s
		}
		for _, u := range scratchAt[i] {
			alloc(u.s, u.last)
		}
		// Free the blocks whose last use is this node.
		kept := live[:0]
		for _, s := range live {
			if until[s] > i {
				kept = append(kept, s)
			}
		}
		live = kept
	}
	p.ArenaBytes = alignUp(p.ArenaBytes)
}

func alignUp(n int64) int64 { return (n + Align - 1) / Align * Align }

// firstFit returns the lowest aligned offset where size bytes fit between
// the live blocks.
func firstFit(live []*Store, size int64) int64 {
	off := int64(0)
	for _, s := range live {
		if off+size <= s.Offset {
			return off
		}
		off = max(off, alignUp(s.Offset+s.Bytes))
	}
	return off
}
