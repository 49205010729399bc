package fusion

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
)

// activations a matmul or conv epilogue can apply while the tile is hot.
var activations = map[mir.Op]bool{
	"relu": true, "gelu": true, "gelu_tanh": true, "silu": true, "sigmoid": true,
	"tanh": true, "leaky_relu": true, "clamp": true,
}

// FuseEpilogues folds what follows a matmul or conv2d into it:
// out = act(acc + bias) + residual, or act(acc + bias + residual) (attr
// act_last). It takes, in that order and each only when the intermediate
// has no other use: an add of a per-column (matmul) or per-channel (conv)
// bias, an activation, an add of a tensor of the output's shape (the
// residual of a transformer block or a ResNet), and an activation after
// it where there was none before.
func FuseEpilogues(g *mir.Graph) (string, error) {
	biases, acts, residuals := 0, 0, 0
	// Counted once: absorbing next into n gives n next's result (its uses
	// unchanged) and n next's other operands (each still used once by
	// the merged node), so every count the pass reads stays right.
	uses := g.Uses()
	for _, n := range append([]*mir.Node(nil), g.Nodes...) {
		if (n.Op != mir.OpMatMul && n.Op != mir.OpConv2D) || n.Results[0].Type.DType.String() != "f32" {
			continue
		}
		for {
			out := n.Results[0]
			if uses[out] != 1 {
				break
			}
			next := consumer(g, out)
			if next == nil {
				break
			}
			switch {
			case next.Op == "add" && !n.Attrs.Bool("bias") && n.Attrs.String("act") == "" && !n.Attrs.Bool("residual") && isBias(n, next, out):
				bias := other(next, out)
				if n.Op == mir.OpConv2D {
					// The conv bias is [O]; a folded [O, 1, 1] constant is reshaped by data.
					if bias.Type.Rank() != 1 {
						if !bias.IsConst() {
							goto done
						}
						flat := *bias.Const
						flat.Shape = []int64{flat.Shape[len(flat.Shape)-3]}
						bias = g.NewConst(bias.Name, &flat)
					}
				}
				n.Args = insertBias(n, bias)
				n.Attrs["bias"] = true
				absorb(g, n, next)
				biases++
			case activations[next.Op] && n.Attrs.String("act") == "":
				// After the residual, the activation comes last (a
				// ResNet block's relu(conv + shortcut)).
				n.Attrs["act"] = string(next.Op)
				if n.Attrs.Bool("residual") {
					n.Attrs["act_last"] = true
				}
				for _, k := range []string{"alpha", "min", "max"} {
					if next.Attrs.Has(k) {
						n.Attrs[k] = next.Attrs.Float(k)
					}
				}
				absorb(g, n, next)
				acts++
			case next.Op == "add" && !n.Attrs.Bool("residual") && sameShape(other(next, out).Type.Shape, out.Type.Shape) && other(next, out) != out:
				n.Args = append(n.Args, other(next, out))
				n.Attrs["residual"] = true
				absorb(g, n, next)
				residuals++
			default:
				goto done
			}
		}
	done:
	}
	if biases+acts+residuals == 0 {
		return "", nil
	}
	return fmt.Sprintf("fused %d biases, %d activations and %d residual adds into matmul/conv", biases, acts, residuals), nil
}

// consumer returns the single node that uses v, or nil.
func consumer(g *mir.Graph, v *mir.Value) *mir.Node {
	for _, o := range g.Outputs {
		if o == v {
			return nil
		}
	}
	for _, n := range g.Nodes {
		for _, a := range n.Args {
			if a == v {
				return n
			}
		}
	}
	return nil
}

func other(add *mir.Node, v *mir.Value) *mir.Value {
	if add.Args[0] == v {
		return add.Args[1]
	}
	return add.Args[0]
}

// isBias reports an add of a vector along the output's last dim (matmul) or
// channel dim (conv), which leaves the output's shape unchanged.
func isBias(n, add *mir.Node, out *mir.Value) bool {
	if !sameShape(add.Results[0].Type.Shape, out.Type.Shape) {
		return false
	}
	b := other(add, out).Type.Shape
	os := out.Type.Shape
	if n.Op == mir.OpMatMul {
		return len(b) == 1 && dim.Equal(b[0], os[len(os)-1])
	}
	// conv: [O] would broadcast along W, so only [O, 1, 1] or [1, O, 1, 1].
	if len(b) < 3 || len(b) > 4 {
		return false
	}
	if len(b) == 4 && !isOne(b[0]) {
		return false
	}
	return dim.Equal(b[len(b)-3], os[1]) && isOne(b[len(b)-2]) && isOne(b[len(b)-1])
}

func isOne(d dim.Expr) bool { v, ok := d.Const(); return ok && v == 1 }

func sameShape(a, b []dim.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !dim.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// insertBias puts the bias right after the two main operands.
func insertBias(n *mir.Node, bias *mir.Value) []*mir.Value {
	return append(append(append([]*mir.Value(nil), n.Args[:2]...), bias), n.Args[2:]...)
}

// absorb makes n compute next's result, and moves n to next's place so every
// operand it now takes is computed before it runs.
func absorb(g *mir.Graph, n, next *mir.Node) {
	res := next.Results[0]
	res.Def = n
	n.Results = []*mir.Value{res}
	var nodes []*mir.Node
	for _, m := range g.Nodes {
		switch m {
		case n:
		case next:
			nodes = append(nodes, n)
		default:
			nodes = append(nodes, m)
		}
	}
	g.Nodes = nodes
}
