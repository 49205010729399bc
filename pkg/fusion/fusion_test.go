package fusion_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// lowerModel parses, checks and lowers a bundled model with random weights.
func lowerModel(t *testing.T, file string) (*hir.Module, *mir.Graph) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := hir.ParseFile(file, src)
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	ws := &lower.Weights{Dir: filepath.Dir(file), Random: true, Seed: 5}
	t.Cleanup(ws.Close)
	g, err := lower.ToMIR(m, "main", ws)
	if err != nil {
		t.Fatal(err)
	}
	return m, g
}

// binding gives every dim a small value the model accepts.
func binding(t *testing.T, m *hir.Module) map[string]int64 {
	for k := int64(3); k < 40; k++ {
		b := map[string]int64{}
		for i, n := range m.DimNames() {
			iv := m.Bounds[n]
			b[n] = min(max(k+int64(i), iv.Lo), iv.Hi)
		}
		if m.CheckBinding(b) == nil {
			return b
		}
	}
	t.Fatal("no binding")
	return nil
}

func inputs(g *mir.Graph, b map[string]int64) []*tensor.Tensor {
	var out []*tensor.Tensor
	for i, v := range g.Inputs {
		shape := make([]int64, v.Type.Rank())
		for j, d := range v.Type.Shape {
			shape[j], _ = d.Eval(b)
		}
		tn := tensor.New(v.Type.DType, shape...)
		for k := 0; k < tn.Len(); k++ {
			switch v.Type.DType {
			case tensor.F32:
				tn.F32()[k] = float32(math.Sin(float64(k*7+i)) * 2)
			case tensor.I64:
				tn.I64()[k] = int64(k % 3)
			case tensor.I32:
				tn.I32()[k] = int32(k % 3)
			default:
				tn.Data[k*v.Type.DType.Size()] = byte(k % 2)
			}
		}
		out = append(out, tn)
	}
	return out
}

// TestPassesPreserveResults runs every pass, one at a time and in order, on
// every bundled model, and checks each graph against the unfused one with
// the reference interpreter.
func TestPassesPreserveResults(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/models/*.hir")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			m, g := lowerModel(t, file)
			b := binding(t, m)
			in := inputs(g, b)
			want, err := eval.Run(g, b, in)
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			for _, p := range fusion.Passes() {
				if _, err := p.Run(g); err != nil {
					t.Fatalf("%s: %v", p.Name, err)
				}
				got, err := eval.Run(g, b, in)
				if err != nil {
					t.Fatalf("after %s: %v\n%s", p.Name, err, g)
				}
				for i := range want {
					if msg := close(got[i], want[i]); msg != "" {
						t.Fatalf("after %s, output %d: %s", p.Name, i, msg)
					}
				}
			}
		})
	}
}

func close(got, want *tensor.Tensor) string {
	if got.DType != want.DType || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		return fmt.Sprintf("got %s%v, want %s%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	if got.DType != tensor.F32 {
		if string(got.Data) != string(want.Data) {
			return "values differ"
		}
		return ""
	}
	g, w := got.F32(), want.F32()
	for i := range g {
		d := math.Abs(float64(g[i]) - float64(w[i]))
		// A fused kernel rounds once where the unfused graph rounds per node.
		if d > 1e-6*math.Max(1, math.Abs(float64(w[i]))) && !(math.IsNaN(float64(g[i])) && math.IsNaN(float64(w[i]))) && g[i] != w[i] {
			return fmt.Sprintf("element %d: got %g, want %g", i, g[i], w[i])
		}
	}
	return ""
}

// TestFusionShapes pins what the passes make of the bundled transformer and
// CNN: the structure a regression would change.
func TestFusionShapes(t *testing.T) {
	count := func(g *mir.Graph) map[mir.Op]int {
		c := map[mir.Op]int{}
		for _, n := range g.Nodes {
			c[n.Op]++
		}
		return c
	}
	_, g := lowerModel(t, "../../testdata/models/encoder.hir")
	if _, err := fusion.Run(g); err != nil {
		t.Fatal(err)
	}
	c := count(g)
	// q, k, v, out projection, ffn1, ffn2: six matmuls with their biases;
	// gelu in ffn1's epilogue; both residual adds in the epilogues of the
	// matmuls that feed them (out projection, ffn2), so no add remains.
	if c[mir.OpMatMul] != 6 || c["add"] != 0 || c["gelu"] != 0 || c[mir.OpLayerNorm] != 2 {
		t.Errorf("encoder after fusion: %v\n%s", c, g)
	}
	residuals, gelus := 0, 0
	for _, n := range g.Nodes {
		if n.Op == mir.OpMatMul && !n.Attrs.Bool("bias") {
			t.Errorf("matmul without a fused bias: %s", n)
		}
		if n.Attrs.Bool("residual") {
			residuals++
		}
		if n.Attrs.String("act") == "gelu" {
			gelus++
		}
	}
	if residuals != 2 || gelus != 1 {
		t.Errorf("encoder: %d residual epilogues (want 2), %d gelu epilogues (want 1)", residuals, gelus)
	}
	_, g = lowerModel(t, "../../testdata/models/cnn.hir")
	r, err := fusion.Run(g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.String(), "computed") {
		t.Errorf("batchnorm statistics were not folded:\n%s", r)
	}
	for _, n := range g.Nodes {
		if n.Op == "rsqrt" {
			t.Errorf("rsqrt of the batchnorm variance left to run time: %s", n)
		}
		if n.Op == "relu" {
			t.Errorf("a relu left as a node of its own: %s", n)
		}
	}
	// The residual block ends relu(conv + bias + shortcut): one conv
	// whose activation follows its residual; the other convs' relus come
	// before any residual.
	last := 0
	for _, n := range g.Nodes {
		if n.Attrs.Bool("act_last") {
			last++
			if n.Op != mir.OpConv2D || !n.Attrs.Bool("residual") || n.Attrs.String("act") != "relu" {
				t.Errorf("act_last on %s", n)
			}
		}
	}
	if last != 1 {
		t.Errorf("cnn: %d epilogues with the activation last, want 1\n%s", last, g)
	}
}

// TestFuseAttention: both spelled-out attentions of attn_explicit.hir
// become attention nodes, with their scales.
func TestFuseAttention(t *testing.T) {
	_, g := lowerModel(t, "../../testdata/models/attn_explicit.hir")
	if _, err := fusion.Run(g); err != nil {
		t.Fatal(err)
	}
	var scales []float64
	for _, n := range g.Nodes {
		switch n.Op {
		case mir.OpAttention:
			scales = append(scales, n.Attrs.Float("scale"))
		case mir.OpSoftmax, mir.OpMatMul:
			t.Errorf("left unfused: %s", n)
		}
	}
	if len(scales) != 2 || math.Abs(scales[0]-1/5.656854) > 1e-6 || math.Abs(scales[1]-0.17677669) > 1e-6 {
		t.Errorf("attention scales %v, want [%g %g]\n%s", scales, 1/5.656854, 0.17677669, g)
	}
}

// TestFuseAttentionMasks: masks.hir's causal masks (a sliced tril
// buffer, Trilu, arange comparisons both ways, a sliced additive buffer)
// become causal=true, its padding masks and the masks that are not causal
// (a band, a shifted diagonal) the kernel's additive mask.
// TestPassesPreserveResults checks the values.
func TestFuseAttentionMasks(t *testing.T) {
	_, g := lowerModel(t, "../../testdata/models/masks.hir")
	r, err := fusion.Run(g)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"gpt2": "causal", "trilu": "causal", "arange": "causal", "keep": "causal", "buffer": "causal",
		"bert": "mask", "additive": "mask", "band": "mask", "shifted": "mask",
	}
	for _, o := range g.Outputs {
		n := o.Def
		if n == nil || n.Op != mir.OpAttention {
			t.Errorf("%s: not an attention: %v", o.Name, n)
			continue
		}
		got := "none"
		switch {
		case n.Attrs.Bool("causal") && len(n.Args) == 3:
			got = "causal"
		case !n.Attrs.Bool("causal") && len(n.Args) == 4:
			got = "mask"
		}
		if got != want[o.Name] {
			t.Errorf("%s: %s (want %s): %s", o.Name, got, want[o.Name], n)
		}
	}
	for _, n := range g.Nodes {
		if n.Op == mir.OpSoftmax || n.Op == mir.OpMatMul {
			t.Errorf("left unfused: %s", n)
		}
	}
	if !strings.Contains(r.String(), "fused 9 attention patterns into attention kernels, 5 causal masks into causal=true, 3 bool masks into additive ones") {
		t.Errorf("fusion report:\n%s", r)
	}
}

// TestCausalMasksNeedProof: a mask that is causal only for the bound
// seq, or off by one, stays an additive mask.
func TestCausalMasksNeedProof(t *testing.T) {
	_, g := lowerModel(t, "../../testdata/models/masks.hir")
	for _, n := range g.Nodes {
		for _, a := range n.Args {
			// tril[7][0] false: triangular on every [:seq, :seq] with seq < 8
			// but not for seq = 8.
			if a.Name == "tril" && a.IsConst() {
				a.Const.Data[7*8] = 0
			}
		}
		// Trilu's col - row >= 1 made col - row > 1: one diagonal too many seen.
		if len(n.Results) == 1 && n.Results[0].Name == "upper" {
			n.Op = "gt"
		}
	}
	if _, err := fusion.Run(g); err != nil {
		t.Fatal(err)
	}
	for _, o := range g.Outputs {
		if (o.Name == "gpt2" || o.Name == "trilu") && (o.Def.Op != mir.OpAttention || o.Def.Attrs.Bool("causal") || len(o.Def.Args) != 4) {
			t.Errorf("%s: want a non-causal attention with a mask: %s", o.Name, o.Def)
		}
	}
}

// TestDeadCode removes what nothing uses.
func TestDeadCode(t *testing.T) {
	_, g := lowerModel(t, "../../testdata/models/mlp.hir")
	x := g.Inputs[0]
	g.Add("exp", []*mir.Value{x}, nil, "test", x.Type) // unused
	before := len(g.Nodes)
	did, err := fusion.DeadCode(g)
	if err != nil || len(g.Nodes) != before-1 || !strings.Contains(did, "removed 1") {
		t.Errorf("DeadCode: %q, %v, %d -> %d nodes", did, err, before, len(g.Nodes))
	}
}

// TestCanonicalize: the spellings in spelled.hir become single ops (a
// layernorm, two rmsnorms, a silu and a gelu_tanh in matmul epilogues, a
// gelu_tanh and a gelu alone, two hardswish and a mish, no pow, tanh,
// erf, clamp or log left),
// and cnn.hir's batchnorms fold into its convolutions' weights.
// TestPassesPreserveResults checks the values.
func TestCanonicalize(t *testing.T) {
	_, g := lowerModel(t, "../../testdata/models/spelled.hir")
	r, err := fusion.Run(g)
	if err != nil {
		t.Fatal(err)
	}
	var ln, rms, silu, geluT, gelu, hswish, mish int
	for _, n := range g.Nodes {
		switch {
		case n.Op == mir.OpLayerNorm && n.Attrs.Bool("rms"):
			rms++
			if !n.Attrs.Bool("scale") || n.Attrs.Float("eps") != float64(float32(1e-6)) {
				t.Errorf("rmsnorm without its weight or eps 1e-6: %s", n)
			}
		case n.Op == mir.OpLayerNorm:
			ln++
			if !n.Attrs.Bool("scale") || !n.Attrs.Bool("bias") || n.Attrs.Int("axis") != 2 {
				t.Errorf("layernorm without its scale and bias over the last axis: %s", n)
			}
		case n.Op == mir.OpMatMul && n.Attrs.String("act") == "silu":
			silu++
		case n.Op == mir.OpMatMul && n.Attrs.String("act") == "gelu_tanh" || n.Op == "gelu_tanh":
			geluT++
		case n.Op == "gelu":
			gelu++
		case n.Op == "hardswish":
			hswish++
		case n.Op == "mish":
			mish++
		case n.Op == "pow" || n.Op == "sigmoid" || n.Op == mir.OpReduce || n.Op == "tanh" || n.Op == "erf" || n.Op == "clamp" || n.Op == "log":
			t.Errorf("left spelled out: %s", n)
		}
		if n.Op == mir.OpFused {
			for _, m := range n.Region.Nodes {
				switch m.Op {
				case "hardswish":
					hswish++
				case "mish":
					mish++
				}
				if m.Op == "pow" || m.Op == "sigmoid" || m.Op == "tanh" || m.Op == "erf" || m.Op == "clamp" || m.Op == "log" {
					t.Errorf("left spelled out in a fused region: %s", m)
				}
			}
		}
	}
	if ln != 1 || rms != 2 || silu != 1 || geluT != 2 || gelu != 1 || hswish != 2 || mish != 1 {
		t.Errorf("spelled.hir: %d layernorms, %d rmsnorms, %d silu epilogues, %d gelu_tanh, %d gelu, %d hardswish, %d mish (want 1, 2, 1, 2, 1, 2, 1)\n%s\n%s", ln, rms, silu, geluT, gelu, hswish, mish, r, g)
	}
	for _, want := range []string{"rewrote 6 pow", "recognized 1 layernorm and 2 rmsnorms", "fused 1 x*sigmoid(x)", "fused 1 erf-form and 2 tanh-form GELUs",
		"fused 2 x*clamp(x/6+1/2, 0, 1) into hardswish", "fused 1 x*tanh(log(1+exp(x))) into mish"} {
		if !strings.Contains(r.String(), want) {
			t.Errorf("fusion report lacks %q:\n%s", want, r)
		}
	}

	_, g = lowerModel(t, "../../testdata/models/cnn.hir")
	if _, err := fusion.Run(g); err != nil {
		t.Fatal(err)
	}
	convs := 0
	for _, n := range g.Nodes {
		if n.Op == mir.OpConv2D {
			convs++
			if !n.Attrs.Bool("bias") {
				t.Errorf("a batchnorm was not folded into its conv: %s", n)
			}
		}
		if n.Op == "mul" {
			t.Errorf("a per-channel scale is left after a conv: %s", n)
		}
	}
	if convs != 3 {
		t.Errorf("cnn: %d convolutions, want 3\n%s", convs, g)
	}
}

// TestDropIdentities: a zero pad and a one-operand concat go; a pad that
// pads, a concat of two and an identity that is a graph output stay, and
// the results do not change.
func TestDropIdentities(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ids.hir")
	src := `hir 1
module ids

dim batch
dim h

func main(x: f32[batch, 4, h, 6]) -> (y: f32[batch, 8, h+2, 6], z: f32[batch, 4, h, 6]) {
  p = pad(x, pads=[0, 0, 0, 0, 0, 0, 0, 0])
  c = concat(p, axis=1)
  r = relu(c)
  q = pad(r, pads=[0, 0, 1, 0, 0, 0, 1, 0])
  w = concat(q, q, axis=1)
  y = relu(w)
  z = pad(x, pads=[0, 0, 0, 0, 0, 0, 0, 0])
  return y, z
}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, g := lowerModel(t, file)
	b := binding(t, m)
	in := inputs(g, b)
	want, err := eval.Run(g, b, in)
	if err != nil {
		t.Fatal(err)
	}
	did, err := fusion.DropIdentities(g)
	if err != nil || did != "dropped 2 identity nodes" {
		t.Errorf("DropIdentities: %q, %v", did, err)
	}
	if _, err := fusion.DeadCode(g); err != nil {
		t.Fatal(err)
	}
	ops := map[mir.Op]int{}
	for _, n := range g.Nodes {
		ops[n.Op]++
	}
	if ops[mir.OpPad] != 2 || ops[mir.OpConcat] != 1 {
		t.Errorf("%d pads and %d concats left, want 2 and 1\n%s", ops[mir.OpPad], ops[mir.OpConcat], g)
	}
	got, err := eval.Run(g, b, in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if msg := close(got[i], want[i]); msg != "" {
			t.Errorf("output %d: %s", i, msg)
		}
	}
}
