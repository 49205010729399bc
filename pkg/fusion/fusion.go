// Package fusion rewrites MIR graphs for speed: it folds constants, drops
// dead code and fuses kernels. The passes are one ordered table, each a
// small function that can be run and tested alone.
package fusion

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/mir"
)

// Pass is one named rewrite of a graph. It returns what it did, in a few
// words for the fusion report ("" when it did nothing).
type Pass struct {
	Name string
	Run  func(g *mir.Graph) (string, error)
}

// Passes is the pipeline, in order. Later passes rely on earlier ones:
// widen-halves' casts of half-precision weights fold with the constants;
// the canonicalizations (pow-const to conv-affine, canon.go) turn spelled-
// out computations into the ops the fusions below look for (norms wants
// pow(d, 2) as d*d; conv-affine wants batchnorm's scale and shift folded
// to constants); sink-views moves a product's reshape below the ops that
// follow it; epilogues and layernorm fusion look for the add nodes that
// lowering emits, before elementwise fusion swallows them.
func Passes() []Pass {
	return []Pass{
		{"widen-halves", WidenHalves},
		{"fold-constants", FoldConstants},
		{"identities", DropIdentities},
		{"dead-code", DeadCode},
		{"pow-const", PowConst},
		{"norms", FuseNorms},
		{"silu", FuseSilu},
		{"hardswish", FuseHardSwish},
		{"mish", FuseMish},
		{"conv-affine", FoldConvAffine},
		{"gelu", FuseGelu},
		{"attention", FuseAttention},
		{"sink-views", SinkViews},
		{"matmul-epilogue", FuseEpilogues},
		{"add-layernorm", FuseAddLayerNorm},
		{"elementwise", FuseElementwise},
		{"dead-code", DeadCode},
	}
}

// Report is what each pass did.
type Report []struct{ Pass, Did string }

func (r Report) String() string {
	var b strings.Builder
	for _, e := range r {
		did := e.Did
		if did == "" {
			did = "nothing to do"
		}
		fmt.Fprintf(&b, "  %-16s %s\n", e.Pass, did)
	}
	return b.String()
}

// Run applies every pass in order.
func Run(g *mir.Graph) (Report, error) {
	var r Report
	for _, p := range Passes() {
		did, err := p.Run(g)
		if err != nil {
			return r, fmt.Errorf("pass %s: %v", p.Name, err)
		}
		r = append(r, struct{ Pass, Did string }{p.Name, did})
	}
	return r, nil
}

// DeadCode removes nodes none of whose results is used.
func DeadCode(g *mir.Graph) (string, error) {
	removed := 0
	for {
		uses := g.Uses()
		kept := g.Nodes[:0]
		changed := false
		for _, n := range g.Nodes {
			live := false
			for _, r := range n.Results {
				if uses[r] > 0 {
					live = true
				}
			}
			if live {
				kept = append(kept, n)
			} else {
				removed++
				changed = true
			}
		}
		g.Nodes = kept
		if !changed {
			break
		}
	}
	if removed == 0 {
		return "", nil
	}
	return fmt.Sprintf("removed %d unused nodes", removed), nil
}

// replaceUses makes every use of old (in nodes and outputs) use new.
func replaceUses(g *mir.Graph, old, new *mir.Value) {
	for _, n := range g.Nodes {
		for i, a := range n.Args {
			if a == old {
				n.Args[i] = new
			}
		}
	}
	for i, o := range g.Outputs {
		if o == old {
			g.Outputs[i] = new
			if new.Name == "" {
				new.Name = old.Name
			}
		}
	}
}
