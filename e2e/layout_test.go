package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/specialize"
)

// TestChannelsLastStretch checks that the cpu target runs mbblock's
// small-plane convolutions channels last (the numbers are checked by
// TestModelsMatchReference; this checks the layout pass still applies):
// every 1x1 and depthwise convolution of the stretch becomes matmul_packed
// or dwconv_nhwc_taps, with one relayout in (after the NCHW stem) and none out:
// the global pool reads the last convolution's channels-last result as
// [N, H, W, C]. Nothing stays a conv2d but the stem.
func TestChannelsLastStretch(t *testing.T) {
	p := buildProgram(t, "mbblock.hir", specialize.Binding{"batch": 2})
	counts := map[string]int{}
	for _, s := range p.Steps {
		counts[s.Kind()]++
	}
	want := map[string]int{"conv2d": 1, "dwconv_nhwc_taps": 3, "nchw_to_nhwc": 1, "nhwc_to_nchw": 0, "reduce": 1}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%d %s steps, want %d (all steps: %v)", counts[k], k, n, counts)
		}
	}
	for _, s := range p.Steps {
		if r, ok := s.Op.(*lir.Reduce); ok {
			if len(r.Shape) != 4 || r.Shape[3] != 32 || !slices.Equal(r.Axes, []int64{1, 2}) {
				t.Errorf("global pool reduces shape %v over axes %v, want [N H W 32] over [1 2]", r.Shape, r.Axes)
			}
		}
	}
	// 7 convolutions 1x1 (three expands, three projections, the head) and
	// the classifier.
	if counts["matmul_packed"]+counts["matmul"] != 8 {
		t.Errorf("%d matmul steps, want 8 (all steps: %v)", counts["matmul_packed"]+counts["matmul"], counts)
	}
}

// buildProgram builds testdata/models/file for the cpu target (portable)
// with one binding and returns its program.
func buildProgram(t *testing.T, file string, b specialize.Binding) lir.Program {
	t.Helper()
	path := filepath.Join("..", "testdata", "models", file)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(1)
	out := filepath.Join(t.TempDir(), "m.rlx")
	// Portable: the layout passes make the schedule; native code (cgen)
	// then rewrites some of its steps, which is not what these tests check.
	if _, err := build(t, path, src, out, driver.Options{Target: "cpu", CPU: []string{"portable"}, Bindings: []specialize.Binding{b}, RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatalf("build: %v", err)
	}
	_, progs := artifactPrograms(t, out)
	return progs[0]
}

// TestAttentionReadsInPlace checks that the cpu target reads the encoder's
// attention heads straight out of the projections (the numbers are
// checked by TestModelsMatchReference): the head transposes of q, k and v
// are not emitted, only the merge of the output heads is a copy, and the
// attention step carries the projections' row stride (256).
func TestAttentionReadsInPlace(t *testing.T) {
	for _, b := range []specialize.Binding{{"batch": 1, "seq": 7}, {"batch": 2, "seq": 20}} {
		p := buildProgram(t, "encoder.hir", b)
		copies, attn := 0, 0
		for _, s := range p.Steps {
			switch op := s.Op.(type) {
			case *lir.Copy:
				copies++
			case *lir.Attention:
				attn++
				if g := op.Geom; g.QRow != 256 || g.KRow != 256 || g.VRow != 256 {
					t.Errorf("%v: attention row strides %d, %d, %d, want 256 for q, k and v", b, g.QRow, g.KRow, g.VRow)
				}
			}
		}
		if attn != 1 || copies != 1 {
			t.Errorf("%v: %d attention steps and %d copies, want 1 and 1 (the output heads' merge)", b, attn, copies)
		}
	}
}

// outputViews is a model whose outputs are views (reshapes) of values:
// y of a value computed here, which relu then writes straight into y;
// z of the same value, which y has taken (a copy out of y); w of an
// input and f of another output (copies); and s, which reads the value
// after it lives in y.
const outputViews = `hir 1
module outviews
func main(x: f32[4, 6]) -> (y: f32[24], z: f32[2, 12], w: f32[6, 4], e: f32[4, 6], f: f32[24], s: f32[4, 6]) {
  h = relu(x)
  y = reshape(h, shape=[24])
  z = reshape(h, shape=[2, 12])
  w = reshape(x, shape=[6, 4])
  e = exp(x)
  f = reshape(e, shape=[24])
  s = sigmoid(h)
  return y, z, w, e, f, s
}
`

// TestOutputViewsInPlace checks that an output that is a reshape of a
// value computed in the model costs no copy (the value is computed in
// the output), that the views which must copy still do, and that the
// results match the reference interpreter, on the portable and the
// native cpu target.
func TestOutputViewsInPlace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "outviews.hir")
	if err := os.WriteFile(file, []byte(outputViews), 0o644); err != nil {
		t.Fatal(err)
	}
	m := load(t, file)
	b := specialize.Binding{}
	for _, cpu := range cpuConfigs(t) {
		out := filepath.Join(dir, strings.Join(cpu, "+")+".rlx")
		if _, err := build(t, file, []byte(outputViews), out, driver.Options{Target: "cpu", CPU: cpu, Bindings: []specialize.Binding{b}, Compiler: "test"}); err != nil {
			t.Fatalf("%v: build: %v", cpu, err)
		}
		_, progs := artifactPrograms(t, out)
		copies := 0
		for _, s := range progs[0].Steps {
			switch s.Op.(type) {
			case *lir.Memcpy, *lir.Copy:
				copies++
			}
		}
		// z, w and f copy; y does not.
		if copies != 3 {
			t.Errorf("%v: %d copy steps, want 3 (z, w, f)\n%v", cpu, copies, progs[0].Steps)
		}
		model, err := loader.Open(out, loader.Options{Threads: 2})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		inputs := modelInputs(t, model, b, 1)
		got, err := model.Run(inputs)
		model.Close()
		if err != nil {
			t.Fatalf("%v: run: %v", cpu, err)
		}
		want := newReference(t, file, m, 1).run(t, b, inputs)
		for i := range want {
			if msg := compare(got[i].Tensor, want[i]); msg != "" {
				t.Errorf("%v: output %s: %s", cpu, got[i].Name, msg)
			}
		}
	}
}
