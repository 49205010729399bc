package fusion_test

import (
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
)

// TestFuseAttentionCombinedMasks: masks_combined.hir's causal masks
// combined with padding masks (added, filled with where, or'ed, and'ed)
// become causal=true with the padding part as the additive mask; a band
// combined with padding stays one additive mask. The results match the
// reference interpreter's on the unfused graph.
func TestFuseAttentionCombinedMasks(t *testing.T) {
	m, g := lowerModel(t, "testdata/masks_combined.hir")
	b := binding(t, m)
	in := inputs(g, b)
	want, err := eval.Run(g, b, in)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	r, err := fusion.Run(g)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Run(g, b, in)
	if err != nil {
		t.Fatalf("fused: %v\n%s", err, g)
	}
	for i := range want {
		if msg := close(got[i], want[i]); msg != "" {
			t.Errorf("output %s: %s", g.Outputs[i].Name, msg)
		}
	}
	for _, o := range g.Outputs {
		n := o.Def
		if n == nil || n.Op != mir.OpAttention {
			t.Errorf("%s: not an attention: %v", o.Name, n)
			continue
		}
		wantCausal := o.Name != "bandpad"
		if n.Attrs.Bool("causal") != wantCausal || len(n.Args) != 4 {
			t.Errorf("%s: causal=%v with %d operands, want causal=%v and a mask: %s", o.Name, n.Attrs.Bool("causal"), len(n.Args), wantCausal, n)
		}
	}
	if !strings.Contains(r.String(), "fused 5 attention patterns into attention kernels, 4 causal masks into causal=true, 4 bool masks into additive ones") {
		t.Errorf("fusion report:\n%s", r)
	}
}
