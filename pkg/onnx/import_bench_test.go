package onnx

import (
	"fmt"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
)

// chain is a model of n nodes over [batch, seq, 64], every other one a
// Hardmax, whose converter asks for its input's type, as most converters
// do: the shape of a deep model's import.
func chain(n int) *onnxpb.Model {
	g := &onnxpb.Graph{Name: "chain",
		Inputs: []*onnxpb.ValueInfo{{Name: "x", ElemType: onnxpb.DTFloat, HasShape: true,
			Shape: []onnxpb.Dim{{Param: "batch"}, {Param: "seq"}, {Value: 64, Known: true}}}}}
	prev := "x"
	for i := range n {
		out := fmt.Sprintf("v%d", i)
		op := []string{"Hardmax", "Relu"}[i%2]
		g.Nodes = append(g.Nodes, &onnxpb.Node{Name: out, OpType: op, Inputs: []string{prev}, Outputs: []string{out}})
		prev = out
	}
	g.Outputs = []*onnxpb.ValueInfo{{Name: prev}}
	return &onnxpb.Model{IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// BenchmarkImportChain times importing chains of 500 and 2000 nodes: with
// each node's types found by checking only the new statements, the time
// per node stays flat as the model grows.
func BenchmarkImportChain(b *testing.B) {
	for _, n := range []int{500, 2000} {
		m := chain(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Import(m, Options{Module: "m", Source: "m.onnx"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "us/node")
		})
	}
}
