package fusion

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// f32Kernels are the ops whose kernels, on every target, take float32
// alone (the products, convolutions, pools, softmax, norms and
// attention), and the reductions, whose f32 kernels are the fast ones
// (a half ResNet-18's global average pool took 3% of the model on the
// runtime's half path, and a negligible share widened).
var f32Kernels = map[mir.Op]bool{
	mir.OpMatMul: true, mir.OpConv2D: true, mir.OpMaxPool2D: true, mir.OpAvgPool2D: true,
	mir.OpSoftmax: true, mir.OpLayerNorm: true, mir.OpAttention: true, mir.OpReduce: true,
}

// isHalf reports the 16-bit float dtypes.
func isHalf(dt tensor.DType) bool { return dt == tensor.F16 || dt == tensor.BF16 }

// WidenHalves computes the f32-only ops (f32Kernels) of a half-precision
// model in float32: each f16 or bf16 operand is cast to f32 before the
// op, and each half result is the op's f32 result cast back, so every op
// still rounds its result to the model's dtype. ONNX Runtime's CPU
// provider runs nodes without a half kernel the same way (it inserts the
// casts). Weights' casts fold at build time (fold-constants runs next);
// the others fuse with the elementwise work around them.
func WidenHalves(g *mir.Graph) (string, error) {
	widened := 0
	nodes := make([]*mir.Node, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		if !f32Kernels[n.Op] || !touchesHalf(n) {
			nodes = append(nodes, n)
			continue
		}
		for i, a := range n.Args {
			if a != nil && isHalf(a.Type.DType) {
				c := castNode(g, a, g.NewValue("", mir.Type{DType: tensor.F32, Shape: a.Type.Shape}), n.Src)
				nodes = append(nodes, c)
				n.Args[i] = c.Results[0]
			}
		}
		nodes = append(nodes, n)
		for i, r := range n.Results {
			if !isHalf(r.Type.DType) {
				continue
			}
			// n now computes a new f32 value; a cast of it becomes r's
			// definition, so r's uses stay as they are.
			r32 := g.NewValue(r.Name, mir.Type{DType: tensor.F32, Shape: r.Type.Shape})
			r32.Def = n
			n.Results[i] = r32
			nodes = append(nodes, castNode(g, r32, r, n.Src))
		}
		widened++
	}
	g.Nodes = nodes
	if widened == 0 {
		return "", nil
	}
	return fmt.Sprintf("%d half-precision ops computed in f32", widened), nil
}

// touchesHalf reports a node with a half-precision operand or result.
func touchesHalf(n *mir.Node) bool {
	for _, v := range append(append([]*mir.Value(nil), n.Args...), n.Results...) {
		if v != nil && isHalf(v.Type.DType) {
			return true
		}
	}
	return false
}

// castNode is a node casting v to r's dtype into r (not yet in g's node
// list): r is a fresh value, or an existing one the cast now defines.
func castNode(g *mir.Graph, v, r *mir.Value, src string) *mir.Node {
	n := &mir.Node{Op: "cast", Args: []*mir.Value{v}, Results: []*mir.Value{r}, Attrs: mir.Attrs{"to": r.Type.DType}, Src: src}
	r.Def = n
	return n
}
