// Package mir is the mid-level IR: a graph of primitive tensor operations
// over symbolic shapes, plus the fused-region nodes that fusion makes.
//
// HIR's composite operations are lowered to a small set (elementwise,
// reductions, matmul, conv, pools, data movement, gather, creation), except
// where one kernel beats the decomposition: softmax, log_softmax, layernorm,
// rmsnorm and attention stay whole. Values are SSA; Nodes are kept in a
// topological order.
package mir

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/irtype"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Type is a dtype and a symbolic shape.
type Type = irtype.Type

// Attrs are an operation's attributes (see irtype.Attrs for the value types).
type Attrs = irtype.Attrs

// Value is one SSA tensor value.
type Value struct {
	ID    int
	Name  string // the HIR name, for reports and errors
	Type  Type
	Def   *Node          // nil for graph inputs and constants
	Const *tensor.Tensor // data of a weight or a constant, else nil
	Param string         // the weight's name when the value is a param
}

// IsConst reports a value whose data is known at build time.
func (v *Value) IsConst() bool { return v.Const != nil }

func (v *Value) String() string {
	if v.Name != "" {
		return fmt.Sprintf("%%%d:%s", v.ID, v.Name)
	}
	return fmt.Sprintf("%%%d", v.ID)
}

// Op names a MIR operation. Elementwise ops keep their HIR names.
type Op string

// The MIR operations beyond the elementwise ones (which keep their HIR
// names; ops.go has the table of all of them).
const (
	OpMatMul       Op = "matmul"        // NumPy matmul on rank >= 2 operands; attrs: epilogue (after fusion)
	OpConv2D       Op = "conv2d"        // attrs: stride, pad, dilation, groups; args x, w, [bias]
	OpMaxPool2D    Op = "maxpool2d"     // attrs as HIR
	OpAvgPool2D    Op = "avgpool2d"     // attrs as HIR
	OpReduce       Op = "reduce"        // attrs: kind (sum mean max min prod), axes, keepdims
	OpArgReduce    Op = "argreduce"     // attrs: max (bool), axis, keepdims
	OpTopK         Op = "topk"          // attrs: k, axis, largest; results: values, indices (i64)
	OpSoftmax      Op = "softmax"       // attrs: axis, log
	OpLayerNorm    Op = "layernorm"     // args x, [scale], [bias]; attrs: axis, eps, rms
	OpAttention    Op = "attention"     // args q, k, v, [mask]; attrs: causal, scale
	OpReshape      Op = "reshape"       // a view: same bytes, new shape
	OpTranspose    Op = "transpose"     // attrs: perm
	OpSlice        Op = "slice"         // attrs: starts, ends, axes, steps (normalized: see lower)
	OpConcat       Op = "concat"        // attrs: axis
	OpPad          Op = "pad"           // attrs: pads, value
	OpExpand       Op = "expand"        // broadcast to the result shape
	OpGather       Op = "gather"        // attrs: axis
	OpScatter      Op = "scatter"       // args x [N], idx [M], updates [M]: x with the updates written at idx, in order
	OpIota         Op = "iota"          // attrs: n
	OpCopy         Op = "copy"          // materializes a value (an output that would alias an input)
	OpFused        Op = "fused"         // an elementwise region: Node.Region
	OpAddLayerNorm Op = "add_layernorm" // s = a + b; results: layernorm(s) and, when used, s
	// OpRecurrent is an LSTM or GRU over a whole sequence (recurrent.go
	// says its operands, attributes and results); specialization expands
	// it into primitive nodes once the sequence length is bound.
	OpRecurrent Op = "recurrent"
	// OpMatMulI8 is (x − zero)·w of 8-bit x (u8 or i8, [..., M, K]) and a
	// constant i8 w [K, N], summed exactly, as f32; attrs: zero, or a
	// third argument: the zero point at run time, a scalar of x's dtype. Only
	// specialization makes it (int8.go), for backends with integer
	// products.
	OpMatMulI8 Op = "matmul_i8"
	// OpConv2DI8 is conv2d's integer twin, one group: (x − zero) of 8-bit
	// x by a constant i8 w [O, C, KH, KW], plus an optional constant i32
	// bias, summed exactly, as f32; attrs: stride, pad, dilation, groups
	// (1), zero, bias. Made as OpMatMulI8 is.
	OpConv2DI8 Op = "conv2d_i8"
)

// Node is one operation.
type Node struct {
	Op      Op
	Args    []*Value
	Results []*Value
	Attrs   Attrs
	Region  *Graph // the fused subgraph of an OpFused node
	Src     string // where it came from: "encoder.hir:12:7 linear"
}

// Graph is one function (or a fused region's body).
type Graph struct {
	Name    string
	Inputs  []*Value
	Outputs []*Value
	Nodes   []*Node
	nextID  int
}

// NewValue makes a value with a fresh ID.
func (g *Graph) NewValue(name string, t Type) *Value {
	g.nextID++
	return &Value{ID: g.nextID, Name: name, Type: t}
}

// NewConst makes a constant value holding data.
func (g *Graph) NewConst(name string, data *tensor.Tensor) *Value {
	v := g.NewValue(name, Type{DType: data.DType, Shape: constShape(data.Shape)})
	v.Const = data
	return v
}

func constShape(s []int64) []dim.Expr {
	out := make([]dim.Expr, len(s))
	for i, d := range s {
		out[i] = dim.Const(d)
	}
	return out
}

// Add appends a node computing op over args with one result per type.
func (g *Graph) Add(op Op, args []*Value, attrs Attrs, src string, results ...Type) *Node {
	n := &Node{Op: op, Args: args, Attrs: attrs, Src: src}
	if n.Attrs == nil {
		n.Attrs = Attrs{}
	}
	for _, t := range results {
		v := g.NewValue("", t)
		v.Def = n
		n.Results = append(n.Results, v)
	}
	g.Nodes = append(g.Nodes, n)
	return n
}

// Uses counts how many node arguments and graph outputs use each value.
func (g *Graph) Uses() map[*Value]int {
	uses := map[*Value]int{}
	for _, n := range g.Nodes {
		for _, a := range n.Args {
			uses[a]++
		}
	}
	for _, o := range g.Outputs {
		uses[o]++
	}
	return uses
}

// String prints the graph, one node per line, for reports and tests.
func (g *Graph) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph %s(", g.Name)
	for i, v := range g.Inputs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", v, v.Type)
	}
	b.WriteString(")\n")
	for _, n := range g.Nodes {
		b.WriteString("  " + n.String() + "\n")
	}
	b.WriteString("  return ")
	for i, v := range g.Outputs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	b.WriteString("\n")
	return b.String()
}

func (n *Node) String() string {
	var b strings.Builder
	for i, r := range n.Results {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", r, r.Type)
	}
	fmt.Fprintf(&b, " = %s(", n.Op)
	for i, a := range n.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
		if a.IsConst() {
			b.WriteString("(const)")
		}
	}
	b.WriteString(")")
	if n.Region != nil {
		ops := make([]string, len(n.Region.Nodes))
		for i, rn := range n.Region.Nodes {
			ops[i] = string(rn.Op)
		}
		fmt.Fprintf(&b, " {%s}", strings.Join(ops, ", "))
	}
	return b.String()
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
