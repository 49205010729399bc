package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/build"
	"github.com/rlx-project/rlx/pkg/specialize"
)

// TestChannelsLastStretch checks that the cpu target runs mbblock's
// small-plane convolutions channels last (the numbers are checked by
// TestModelsMatchReference; this checks the layout pass still applies):
// every 1x1 and depthwise convolution of the stretch becomes matmul_packed
// or dwconv_nhwc, with one relayout in (after the NCHW stem) and one out
// (before the pooling head), and nothing stays a conv2d but the stem.
func TestChannelsLastStretch(t *testing.T) {
	file := filepath.Join("..", "testdata", "models", "mbblock.hir")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(1)
	out := filepath.Join(t.TempDir(), "mbblock.rlx")
	bindings := []specialize.Binding{{"batch": 2}}
	if _, err := build.Build(file, src, out, build.Options{Target: "cpu", Bindings: bindings, RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatalf("build: %v", err)
	}
	f, err := artifact.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := f.Section("program/0")
	if err != nil {
		t.Fatal(err)
	}
	var p artifact.Program
	if err := artifact.UnmarshalManifest(raw, &p); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, s := range p.Steps {
		counts[s.Kernel]++
	}
	want := map[string]int{"conv2d": 1, "dwconv_nhwc": 3, "nchw_to_nhwc": 1, "nhwc_to_nchw": 1}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%d %s steps, want %d (all steps: %v)", counts[k], k, n, counts)
		}
	}
	// 7 convolutions 1x1 (three expands, three projections, the head) and
	// the classifier.
	if counts["matmul_packed"]+counts["matmul"] != 8 {
		t.Errorf("%d matmul steps, want 8 (all steps: %v)", counts["matmul_packed"]+counts["matmul"], counts)
	}
}
