package specialize_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// bundled lowers and fuses a bundled model with random weights.
func bundled(t *testing.T, name string) *mir.Graph {
	t.Helper()
	file := filepath.Join("../../testdata/models", name+".hir")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, g := lowerSource(t, file, src, true)
	return g
}

// testPacker packs nothing for real: the passes only ask whether there is
// a packer.
type testPacker struct{}

func (testPacker) Layout() string                                 { return "test" }
func (testPacker) PackB(k, n int, b []float32) ([]float32, error) { return b, nil }
func (testPacker) DepthwiseTaps(w []float32, c, taps int) []float32 {
	return w
}
func (testPacker) PackInt8(k, n int, b []int8) []byte {
	return make([]byte, lir.QMatMulPackedBytes(int64(k), int64(n)))
}

func (testPacker) PackInt8Conv(w []int8, g lir.ConvGeom) []byte {
	return make([]byte, lir.QConvPackedBytes(g))
}

func (testPacker) WinogradLen(o, c, m int) (int, error) {
	return (m + 2) * (m + 2) * (o + 3) / 4 * 4 * c, nil
}

// smallPlanes runs 1x1 pointwise and 3x3 depthwise convolutions channels
// last on planes up to 14x14, like the CPU's rule with another bound.
func smallPlanes(g lir.ConvGeom) bool {
	if g.H*g.W > 14*14 {
		return false
	}
	return specialize.Pointwise(g) || (g.KH == 3 && g.KW == 3 && g.Groups == g.C && g.O == g.C)
}

func TestPassTable(t *testing.T) {
	var names []string
	for _, p := range specialize.Passes() {
		names = append(names, p.Name)
	}
	want := []string{"strided-attention", "slice-views", "channels-last", "pack-weights", "tap-major", "winograd", "concat-in-place", "int8-scratch"}
	if !slices.Equal(names, want) {
		t.Errorf("passes %v, want %v", names, want)
	}
	for _, p := range specialize.Passes() {
		if p.Enabled(specialize.Caps{}) {
			t.Errorf("pass %s runs for a backend that asks for nothing", p.Name)
		}
	}
}

// TestStridedAttentionPass: with the capability the transposes feeding
// gpt's attention become views of the projection; without it none does.
func TestStridedAttentionPass(t *testing.T) {
	g := bundled(t, "gpt")
	b := specialize.Binding{"batch": 2, "seq": 5}
	count := func(c specialize.Caps) int {
		p, err := specialize.SpecializeWith(g, b, c)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, p)
		views := 0
		for _, n := range p.Graph.Nodes {
			if n.Op == mir.OpAttention {
				for _, a := range n.Args[:3] {
					if a.Def != nil && a.Def.Op == mir.OpTranspose && p.IsView(a.Def) {
						views++
					}
				}
			}
		}
		return views
	}
	if n := count(specialize.Caps{}); n != 0 {
		t.Errorf("without strided attention %d operands are views", n)
	}
	if n := count(specialize.Caps{StridedAttention: true}); n != 3 {
		t.Errorf("with strided attention %d of 3 operands are views", n)
	}
}

// TestChannelsLastPass: mbblock's small-plane convolutions run channels
// last, the stretch's NCHW edges get planned scratch, and nothing changes
// without a packer or without the capability.
func TestChannelsLastPass(t *testing.T) {
	g := bundled(t, "mbblock")
	b := specialize.Binding{"batch": 2}
	for _, c := range []specialize.Caps{{}, {ChannelsLast: smallPlanes}, {Packer: testPacker{}}} {
		p, err := specialize.SpecializeWith(g, b, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.ChannelsLast) != 0 || len(p.Relaid) != 0 || len(p.OutScratch) != 0 {
			t.Errorf("caps %+v: channels-last values %d, relaid %d", c, len(p.ChannelsLast), len(p.Relaid))
		}
		for n, k := range p.Kernels {
			if k == specialize.KernelChannelsLast {
				t.Errorf("caps %+v: %s runs channels last", c, n.Op)
			}
		}
	}
	p, err := specialize.SpecializeWith(g, b, specialize.Caps{Packer: testPacker{}, ChannelsLast: smallPlanes})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p)
	convs, pools := 0, 0
	for _, n := range g.Nodes {
		if p.Kernels[n] != specialize.KernelChannelsLast {
			continue
		}
		switch n.Op {
		case mir.OpConv2D:
			convs++
			xs := p.Shapes[n.Args[0]]
			if xs[2]*xs[3] > 14*14 {
				t.Errorf("a convolution over %dx%d runs channels last", xs[2], xs[3])
			}
			if !p.ChannelsLast[n.Args[0]] && p.Relaid[n.Args[0]] == nil {
				t.Errorf("a channels-last convolution reads an NCHW input without relayout scratch")
			}
			if out := n.Results[0]; !p.ChannelsLast[out] && p.OutScratch[n] == nil {
				t.Errorf("a channels-last convolution writes an NCHW result without scratch")
			}
		case mir.OpReduce:
			pools++
		default:
			t.Errorf("%s runs channels last", n.Op)
		}
	}
	// Every 1x1 and depthwise convolution of the three blocks and the head
	// (the stem's plane is 28x28) and the global pool.
	if convs != 10 || pools != 1 {
		t.Errorf("%d convolutions and %d pools run channels last, want 10 and 1", convs, pools)
	}
	for v := range p.ChannelsLast {
		if v.Def == nil || p.Kernels[v.Def] != specialize.KernelChannelsLast {
			t.Errorf("%s is stored channels last but no channels-last convolution writes it", v)
		}
	}
	// The stretch starts at the stem's result (block 1's input and
	// residual: relaid once) and ends in the pool.
	if len(p.Relaid) != 1 || len(p.OutScratch) != 0 {
		t.Errorf("%d relaid inputs and %d NCHW results, want 1 and 0", len(p.Relaid), len(p.OutScratch))
	}

	// Channels last on 14x14 planes only: the stretch ends at block 2's
	// strided depthwise convolution, whose 7x7 result is written to
	// scratch and relaid out for block 2's NCHW projection.
	only14 := func(g lir.ConvGeom) bool { return g.H*g.W == 14*14 && smallPlanes(g) }
	p, err = specialize.SpecializeWith(g, b, specialize.Caps{Packer: testPacker{}, ChannelsLast: only14})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p)
	if len(p.Relaid) != 1 || len(p.OutScratch) != 1 {
		t.Errorf("14x14 only: %d relaid inputs and %d NCHW results, want 1 and 1", len(p.Relaid), len(p.OutScratch))
	}
	for n, s := range p.OutScratch {
		if os := p.Shapes[n.Results[0]]; os[2] != 7 || s.Bytes != p.Bytes(n.Results[0]) {
			t.Errorf("scratch of %d bytes for a %v result", s.Bytes, os)
		}
	}
}

// TestPackWeightsPass: matmuls by a 2-D weight read it packed where there
// is a packer, and 1x1 convolutions where the backend says so.
func TestPackWeightsPass(t *testing.T) {
	g := bundled(t, "mbblock")
	b := specialize.Binding{"batch": 2}
	kinds := func(c specialize.Caps) (matmuls, convs int) {
		p, err := specialize.SpecializeWith(g, b, c)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, p)
		for _, n := range g.Nodes {
			if p.Kernels[n] != specialize.KernelPacked {
				continue
			}
			switch n.Op {
			case mir.OpMatMul:
				matmuls++
			case mir.OpConv2D:
				convs++
				if ws := p.Shapes[n.Args[1]]; ws[2] != 1 || ws[3] != 1 {
					t.Errorf("a %dx%d convolution is packed", ws[2], ws[3])
				}
			default:
				t.Errorf("%s is packed", n.Op)
			}
		}
		return matmuls, convs
	}
	if m, c := kinds(specialize.Caps{PackedConv1x1: specialize.Pointwise}); m != 0 || c != 0 {
		t.Errorf("without a packer %d matmuls and %d convolutions are packed", m, c)
	}
	if m, c := kinds(specialize.Caps{Packer: testPacker{}}); m != 1 || c != 0 {
		t.Errorf("with a packer %d matmuls and %d convolutions are packed, want 1 and 0", m, c)
	}
	// Every pointwise convolution: the three blocks' expand and project
	// and the head.
	if m, c := kinds(specialize.Caps{Packer: testPacker{}, PackedConv1x1: specialize.Pointwise}); m != 1 || c != 7 {
		t.Errorf("with packed 1x1 convolutions %d matmuls and %d convolutions are packed, want 1 and 7", m, c)
	}
	// Channels-last convolutions are decided first and are not also packed.
	p, err := specialize.SpecializeWith(g, b, specialize.Caps{Packer: testPacker{}, PackedConv1x1: specialize.Pointwise, ChannelsLast: smallPlanes})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if n.Op == mir.OpConv2D && p.Kernels[n] == specialize.KernelPacked && p.Shapes[n.Args[0]][2] <= 14 {
			t.Errorf("a pointwise convolution on a 14x14 plane is packed, not channels last")
		}
	}
}

// TestWinogradPass: cnn's 3x3 stride-1 convolutions run as F(m×m, 3×3)
// where the backend picks a tile (three steps through planned scratch,
// the weights transformed), and as themselves without the capability or
// where it picks none.
func TestWinogradPass(t *testing.T) {
	g := bundled(t, "cnn")
	b := specialize.Binding{"batch": 2}
	parts := func(g lir.ConvGeom, m, tp int64) int64 { return 16 }
	for _, tc := range []struct {
		name string
		caps specialize.Caps
		want int64
	}{
		{"no capability", specialize.Caps{Packer: testPacker{}}, 0},
		{"tile 2 in parts of 16", specialize.Caps{Packer: testPacker{}, WinogradTile: func(lir.ConvGeom, lir.Activation) int64 { return 2 }, WinogradPart: parts}, 2},
		{"no packer", specialize.Caps{WinogradTile: func(lir.ConvGeom, lir.Activation) int64 { return 4 }}, 0},
		{"tile 0", specialize.Caps{Packer: testPacker{}, WinogradTile: func(lir.ConvGeom, lir.Activation) int64 { return 0 }}, 0},
		{"tile 4", specialize.Caps{Packer: testPacker{}, WinogradTile: func(lir.ConvGeom, lir.Activation) int64 { return 4 }}, 4},
		{"tile 2", specialize.Caps{Packer: testPacker{}, WinogradTile: func(lir.ConvGeom, lir.Activation) int64 { return 2 }}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := specialize.SpecializeWith(g, b, tc.caps)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p)
			convs := 0
			for _, n := range g.Nodes {
				if n.Op != mir.OpConv2D {
					continue
				}
				gm := specialize.ConvGeom(n, p.Shapes[n.Args[0]], p.Shapes[n.Args[1]], p.Shapes[n.Results[0]])
				if !specialize.Winograd3x3(gm) {
					if p.Kernels[n] == specialize.KernelWinograd {
						t.Errorf("%s: a %dx%d stride-%d convolution runs as Winograd", n.Results[0], gm.KH, gm.KW, gm.StrideH)
					}
					continue
				}
				convs++
				w, ok := p.Winograd[n]
				if (p.Kernels[n] == specialize.KernelWinograd) != (tc.want != 0) || ok != (tc.want != 0) || ok && w.Tile != tc.want {
					t.Errorf("%s: kernel %d, plan %+v, want tile %d", n.Results[0], p.Kernels[n], w, tc.want)
				}
			}
			if convs == 0 {
				t.Fatal("cnn has no 3x3 stride-1 convolution")
			}
			kinds := stepKinds(t, p, tc.caps)
			if tc.caps.WinogradPart != nil {
				// Each convolution's tiles in parts of 16, the last
				// perhaps short: three steps per part.
				wantParts := 0
				for n, w := range p.Winograd {
					gm := specialize.ConvGeom(n, p.Shapes[n.Args[0]], p.Shapes[n.Args[1]], p.Shapes[n.Results[0]])
					_, _, _, tp := gm.WinogradTiles(w.Tile)
					if w.Part != 16 || w.V.Bytes != (w.Tile+2)*(w.Tile+2)*gm.C*16*4 {
						t.Errorf("%s: plan %+v, want parts of 16 tiles and scratch for one", n.Results[0], w)
					}
					wantParts += int((tp + 15) / 16)
				}
				if wantParts <= convs || kinds["winograd_input_part"] != wantParts || kinds["winograd_product_part"] != wantParts || kinds["winograd_output_part"] != wantParts {
					t.Errorf("steps %v for %d parts of %d convolutions", kinds, wantParts, convs)
				}
				return
			}
			if tc.want == 0 && kinds["winograd_product"] != 0 || tc.want != 0 && (kinds["winograd_input"] != convs || kinds["winograd_product"] != convs || kinds["winograd_output"] != convs) {
				t.Errorf("steps %v for %d convolutions", kinds, convs)
			}
		})
	}
}

// TestWinogradSkipsIntegerWeights: a 3x3 convolution whose weights are
// all integers (a quantized model's, computed in f32) stays direct, where
// sums are exact; Winograd's transforms are not.
func TestWinogradSkipsIntegerWeights(t *testing.T) {
	g := bundled(t, "cnn")
	caps := specialize.Caps{Packer: testPacker{}, WinogradTile: func(lir.ConvGeom, lir.Activation) int64 { return 4 }}
	var rounded *mir.Node
	for _, n := range g.Nodes {
		if n.Op == mir.OpConv2D && n.Args[1].IsConst() && n.Args[1].Const.DType == tensor.F32 {
			w := *n.Args[1].Const
			w.Data = append([]byte(nil), w.Data...)
			for i, v := range w.F32() {
				w.F32()[i] = float32(math.Round(float64(v * 100)))
			}
			n.Args[1] = g.NewConst(n.Args[1].Name+".int", &w)
			rounded = n
			break
		}
	}
	if rounded == nil {
		t.Fatal("cnn has no convolution with constant f32 weights")
	}
	p, err := specialize.SpecializeWith(g, specialize.Binding{"batch": 2}, caps)
	if err != nil {
		t.Fatal(err)
	}
	gm := specialize.ConvGeom(rounded, p.Shapes[rounded.Args[0]], p.Shapes[rounded.Args[1]], p.Shapes[rounded.Results[0]])
	if !specialize.Winograd3x3(gm) {
		t.Skipf("cnn's first convolution is %dx%d stride %d", gm.KH, gm.KW, gm.StrideH)
	}
	if p.Kernels[rounded] == specialize.KernelWinograd {
		t.Errorf("a convolution with integer weights runs as Winograd")
	}
	others := 0
	for _, n := range g.Nodes {
		if n != rounded && p.Kernels[n] == specialize.KernelWinograd {
			others++
		}
	}
	if others == 0 {
		t.Errorf("no other convolution runs as Winograd: the test shows nothing")
	}
}

// stepKinds schedules p with caps's packer, verifies the program and
// counts its steps by kind.
func stepKinds(t *testing.T, p *specialize.Plan, caps specialize.Caps) map[lir.Kind]int {
	t.Helper()
	prog, err := specialize.Schedule(p, specialize.NewWeights("test", caps.Packer))
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Verify(); err != nil {
		t.Fatal(err)
	}
	kinds := map[lir.Kind]int{}
	for _, s := range prog.Steps {
		kinds[s.Op.Kind()]++
	}
	return kinds
}
