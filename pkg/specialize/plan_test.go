package specialize_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/specialize"
)

// TestArenaPlanIsSafe checks the memory plan of every bundled model, with
// and without strided attention operands and channels-last stretches: no
// two arena blocks (values and relayout scratch) that are live at the
// same time share bytes, every block is 64-byte aligned and inside the
// arena, and reuse makes the arena no larger than the sum of the blocks.
func TestArenaPlanIsSafe(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/models/*.hir")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, _ := os.ReadFile(file)
			m, g := lowerSource(t, file, src, true)
			b := specialize.Binding{}
			for i, n := range m.DimNames() {
				iv := m.Bounds[n]
				b[n] = min(max(int64(5+i), iv.Lo), iv.Hi)
			}
			if m.CheckBinding(b) != nil {
				t.Skip("binding rejected by the model's relations")
			}
			all := specialize.Caps{StridedAttention: true, Packer: testPacker{}, PackedConv1x1: specialize.Pointwise, ChannelsLast: smallPlanes,
				InPlaceConcat: true, StridedElementwise: true}
			for _, o := range []specialize.Caps{{}, {StridedAttention: true}, all} {
				p, err := specialize.SpecializeWith(g, b, o)
				if err != nil {
					t.Fatal(err)
				}
				checkPlan(t, p)
			}
		})
	}
}

func checkPlan(t *testing.T, p *specialize.Plan) {
	g := p.Graph
	// A value computed in place of a concat's operand lies where its
	// host says, and its bytes are the host's.
	hostOf := func(v *mir.Value) *mir.Value {
		if gu, ok := p.Guests[v]; ok {
			return gu.Host
		}
		return v
	}
	for v, gu := range p.Guests {
		s, h := p.Stores[v], p.Stores[gu.Host]
		if s == nil || h == nil || s.Offset != h.Offset+gu.Offset || gu.Offset+s.Bytes > h.Bytes || gu.Offset%int64(v.Type.DType.Size()) != 0 {
			t.Errorf("%s is not at %d in its host %s: %+v in %+v", v, gu.Offset, gu.Host, s, h)
		}
	}
	// Liveness by storage root: from the defining node to the last use.
	first, last := map[*mir.Value]int{}, map[*mir.Value]int{}
	for i, n := range g.Nodes {
		for _, a := range n.Args {
			if s := p.Stores[a]; s != nil && s.Kind == specialize.StoreArena {
				last[hostOf(s.Root)] = i
			}
		}
		for _, r := range n.Results {
			if s := p.Stores[r]; s != nil && s.Kind == specialize.StoreArena {
				b := hostOf(s.Root)
				if _, ok := first[b]; !ok {
					first[b] = i
				}
				if last[b] < i {
					last[b] = i
				}
			}
		}
	}
	for _, o := range g.Outputs {
		if s := p.Stores[o]; s.Kind == specialize.StoreArena {
			t.Errorf("output %s lives in the arena", o)
		}
	}
	// A value stored channels last is read only by kernels that read it
	// so: channels-last convolutions (input or residual) and reductions.
	for _, n := range g.Nodes {
		for _, a := range n.Args {
			if p.ChannelsLast[a] && p.Kernels[n] != specialize.KernelChannelsLast {
				t.Errorf("%s is stored channels last, but %s (%s) reads it with kernel %d", a, n.Op, n.Src, p.Kernels[n])
			}
		}
	}
	// Every arena block with its lifetime: the values' and the relayout
	// scratch of channels-last stretches (from its first reader to its
	// last, or the one node that writes it).
	type block struct {
		name        string
		s           *specialize.Store
		first, last int
	}
	var blocks []block
	for r := range first {
		blocks = append(blocks, block{r.String(), p.Stores[r], first[r], last[r]})
	}
	for v, s := range p.Relaid {
		b := block{"relaid " + v.String(), s, -1, -1}
		for i, n := range g.Nodes {
			if p.Kernels[n] == specialize.KernelChannelsLast && n.Op == mir.OpConv2D && slices.Contains(n.Args, v) {
				if b.first < 0 {
					b.first = i
				}
				b.last = i
			}
		}
		if b.first < 0 {
			t.Errorf("%s has relayout scratch but no channels-last reader", v)
		}
		blocks = append(blocks, b)
	}
	for n, s := range p.OutScratch {
		i := slices.Index(g.Nodes, n)
		blocks = append(blocks, block{"scratch of " + n.Results[0].String(), s, i, i})
	}
	for n, w := range p.Winograd {
		i := slices.Index(g.Nodes, n)
		blocks = append(blocks, block{"winograd V of " + n.Results[0].String(), w.V, i, i},
			block{"winograd M of " + n.Results[0].String(), w.M, i, i})
	}
	for _, b := range blocks {
		s := b.s
		if s.Offset%specialize.Align != 0 || s.Offset+s.Bytes > p.ArenaBytes {
			t.Errorf("%s: block [%d, %d) misaligned or outside the arena of %d", b.name, s.Offset, s.Offset+s.Bytes, p.ArenaBytes)
		}
	}
	for i, a := range blocks {
		for _, b := range blocks[i+1:] {
			sa, sb := a.s, b.s
			if sa.Bytes == 0 || sb.Bytes == 0 {
				continue
			}
			liveTogether := a.first <= b.last && b.first <= a.last
			overlap := sa.Offset < sb.Offset+sb.Bytes && sb.Offset < sa.Offset+sa.Bytes
			if liveTogether && overlap {
				t.Errorf("%s [%d,%d) live %d..%d and %s [%d,%d) live %d..%d share bytes",
					a.name, sa.Offset, sa.Offset+sa.Bytes, a.first, a.last, b.name, sb.Offset, sb.Offset+sb.Bytes, b.first, b.last)
			}
		}
	}
	scratch := int64(0)
	for _, b := range blocks[len(first):] {
		scratch += alignUp(b.s.Bytes)
	}
	if p.ArenaBytes > alignUp(p.TempBytes)+scratch+int64(len(blocks))*specialize.Align {
		t.Errorf("arena %d bytes exceeds the intermediates' %d", p.ArenaBytes, p.TempBytes)
	}
}

// lowerSource parses, checks and lowers a module (params get random
// weights, files beside it theirs), then runs the fusion passes if fuse.
func lowerSource(t *testing.T, file string, src []byte, fuse bool) (*hir.Module, *mir.Graph) {
	t.Helper()
	m, err := hir.ParseFile(file, src)
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	ws := &lower.Weights{Dir: filepath.Dir(file), Random: true, Seed: 1}
	t.Cleanup(ws.Close)
	g, err := lower.ToMIR(m, "main", ws)
	if err != nil {
		t.Fatal(err)
	}
	if fuse {
		if _, err := fusion.Run(g); err != nil {
			t.Fatal(err)
		}
	}
	return m, g
}

func alignUp(n int64) int64 { return (n + specialize.Align - 1) / specialize.Align * specialize.Align }

// TestArenaReuse: a chain of same-sized ops needs two live blocks, not one
// per op.
func TestArenaReuse(t *testing.T) {
	src := `hir 1
module chain
func main(x: f32[1024]) -> (y: f32[1024]) {
  a = relu(x)
  b = softmax(a)
  c = log_softmax(b)
  d = softmax(c)
  e = log_softmax(d)
  y = softmax(e)
  return y
}
`
	_, g := lowerSource(t, "chain.hir", []byte(src), false)
	p, err := specialize.Specialize(g, specialize.Binding{})
	if err != nil {
		t.Fatal(err)
	}
	// a..e are intermediates (4 KiB each); y is an output. Two blocks suffice.
	if p.TempBytes != 5*4096 || p.ArenaBytes != 2*4096 {
		t.Errorf("arena %d bytes for %d bytes of intermediates, want 8192 for 20480", p.ArenaBytes, p.TempBytes)
	}
	checkPlan(t, p)
}

// TestTransposeViews checks which transposes share their operand's bytes:
// those that move only dims of size 1 under the binding (the encoder's
// batch-1 [1, seq, d] <-> [seq, 1, d]), and no other.
func TestTransposeViews(t *testing.T) {
	src := `hir 1
module tv
dim batch
func main(x: f32[batch, 6, 4]) -> (y: f32[batch, 4, 6]) {
  a = transpose(x, perm=[1, 0, 2])
  b = relu(a)
  c = transpose(b, perm=[1, 2, 0])
  d = relu(c)
  y = transpose(d, perm=[0, 1, 2])
  return y
}
`
	m, err := hir.ParseFile("tv.hir", []byte(src))
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		batch int64
		views []bool // a, c, y
	}{
		{1, []bool{true, false, true}},
		{3, []bool{false, false, true}},
	} {
		g, err := lower.ToMIR(m, "main", &lower.Weights{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := specialize.Specialize(g, specialize.Binding{"batch": tc.batch})
		if err != nil {
			t.Fatal(err)
		}
		var got []bool
		for _, n := range p.Graph.Nodes {
			if n.Op == mir.OpTranspose {
				got = append(got, p.IsView(n))
			}
		}
		if len(got) != 3 || got[0] != tc.views[0] || got[1] != tc.views[1] || got[2] != tc.views[2] {
			t.Errorf("batch=%d: transposes are views %v, want %v", tc.batch, got, tc.views)
		}
		// a view shares its operand's storage (y, an output, keeps its own).
		for _, n := range p.Graph.Nodes {
			if n.Op == mir.OpTranspose && p.IsView(n) && p.Stores[n.Results[0]].Kind != specialize.StoreOutput &&
				p.Stores[n.Results[0]].Root != p.Stores[n.Args[0]].Root {
				t.Errorf("batch=%d: a view transpose has its own storage", tc.batch)
			}
		}
		checkPlan(t, p)
	}
}

// TestChannelsLastResidual plans a ResNet-50 bottleneck whose shortcut,
// a 1x1 convolution on a small plane, could run channels last while the
// convolution reading it as a residual (its input from a 3x3 one) cannot:
// the shortcut must then be stored NCHW (checkPlan).
func TestChannelsLastResidual(t *testing.T) {
	src := `hir 1
module bneck

param e1 : f32[8, 32, 1, 1]
param e2 : f32[8, 8, 3, 3]
param e3 : f32[64, 8, 1, 1]
param d1 : f32[64, 32, 1, 1]

func main(v: f32[1, 32, 6, 6]) -> (b: f32[1, 64, 6, 6]) {
  v1 = conv2d(v, e1)
  v1r = relu(v1)
  v2 = conv2d(v1r, e2, pad=[1, 1, 1, 1])
  v2r = relu(v2)
  v3 = conv2d(v2r, e3)
  vd = conv2d(v, d1)
  vs = add(v3, vd)
  b = relu(vs)
  return b
}
`
	_, g := lowerSource(t, "bneck.hir", []byte(src), true)
	caps := specialize.Caps{StridedAttention: true, Packer: testPacker{}, PackedConv1x1: specialize.Pointwise, ChannelsLast: smallPlanes}
	p, err := specialize.SpecializeWith(g, specialize.Binding{}, caps)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p)
}

// TestChannelsLastPooled plans a squeeze-and-excitation block: a global
// pool, two 1x1 convolutions over its [1, C, 1, 1] result, channels last,
// and a product with the input. A one-position plane is the same bytes
// in either order, so nothing is relaid: the convolutions read the pool's
// result and write theirs in place.
func TestChannelsLastPooled(t *testing.T) {
	src := `hir 1
module se

param w1 : f32[8, 32, 1, 1]
param w2 : f32[32, 8, 1, 1]

func main(x: f32[1, 32, 6, 6]) -> (y: f32[1, 32, 6, 6]) {
  p = global_avgpool(x)
  s1 = conv2d(p, w1)
  s1r = relu(s1)
  s2 = conv2d(s1r, w2)
  g = sigmoid(s2)
  y = mul(x, g)
  return y
}
`
	_, gr := lowerSource(t, "se.hir", []byte(src), true)
	caps := specialize.Caps{StridedAttention: true, Packer: testPacker{}, PackedConv1x1: specialize.Pointwise, ChannelsLast: smallPlanes}
	p, err := specialize.SpecializeWith(gr, specialize.Binding{}, caps)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p)
	if kinds := stepKinds(t, p, caps); kinds["matmul_packed"] != 2 || kinds["nchw_to_nhwc"]+kinds["nhwc_to_nchw"] != 0 {
		t.Errorf("steps %v: want two channels-last products and no relayout", kinds)
	}
}
