package fusion_test

import (
	"path/filepath"
	"testing"

	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir"
)

// TestOpTableCoversModels ties the MIR op table to what lowering and
// fusion make of the bundled models: every node of every model, before and
// after each fusion pass, is an op of the table with an argument count and
// attributes its row allows; and every op of the table occurs in some
// bundled model, so the end-to-end tests that run those models through
// the reference interpreter, the cpu target and the GPU targets run every
// op. A new op without a bundled model that uses it fails here.
func TestOpTableCoversModels(t *testing.T) {
	files, err := filepath.Glob("../../testdata/models/*.hir")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled models: %v", err)
	}
	seen := map[mir.Op]bool{}
	var check func(file, when string, g *mir.Graph)
	check = func(file, when string, g *mir.Graph) {
		for _, n := range g.Nodes {
			if err := mir.CheckNode(n); err != nil {
				t.Errorf("%s, %s: %s: %v", filepath.Base(file), when, n.Src, err)
			}
			seen[n.Op] = true
			if n.Region != nil {
				check(file, when+" (in a fused region)", n.Region)
			}
		}
	}
	for _, f := range files {
		m, _ := lowerModel(t, f)
		for _, d := range m.Decls {
			fd, ok := d.(*hir.FuncDecl)
			if !ok {
				continue
			}
			ws := &lower.Weights{Dir: filepath.Dir(f), Random: true, Seed: 5}
			g, err := lower.ToMIR(m, fd.Name, ws)
			if err != nil {
				ws.Close()
				t.Fatalf("%s: %s: %v", f, fd.Name, err)
			}
			where := f + " " + fd.Name
			check(where, "lowered", g)
			for _, p := range fusion.Passes() {
				if _, err := p.Run(g); err != nil {
					t.Fatalf("%s: pass %s: %v", where, p.Name, err)
				}
				check(where, "after "+p.Name, g)
			}
			ws.Close()
		}
	}
	// matmul_i8 and conv2d_i8 are made by specialization alone
	// (specialize/int8.go) from the quantized products in ops_linalg.hir
	// and ops_conv.hir (TestBundledInt8Products).
	seen[mir.OpMatMulI8], seen[mir.OpConv2DI8] = true, true
	for _, info := range mir.Ops() {
		if !seen[info.Op] {
			t.Errorf("op %s occurs in no bundled model (testdata/models): add a use so every layer's end-to-end tests run it", info.Op)
		}
	}
}
