package onnx

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// FoldMax bounds constant folding at import: a node is evaluated at import
// time only when every input and every output has at most this many
// elements. Shape and mask subgraphs are far smaller; a bigger constant
// subgraph (a transposed weight) stays in the HIR for rlxc's build-time
// constant folding, so the weights file never holds a second copy of a
// large weight.
const FoldMax = 1 << 16

// constOf returns the data of a value known at import time: a constant, or
// shape arithmetic whose every value is a number.
func (im *importer) constOf(name string) (*tensor.Tensor, bool) {
	v := im.vals[name]
	switch {
	case v == nil:
		return nil, false
	case v.konst != nil:
		return v.konst, true
	case v.sym != nil && v.fdt == tensor.InvalidDType:
		return v.symTensor()
	}
	return nil, false
}

// symData is a shape value as an i64 tensor, or the first of its dims that
// is not a number.
func symData(sym []dim.Expr, scalar bool) (*tensor.Tensor, dim.Expr, bool) {
	data := make([]int64, len(sym))
	for i, d := range sym {
		c, ok := d.Const()
		if !ok {
			return nil, d, false
		}
		data[i] = c
	}
	shape := []int64{int64(len(data))}
	if scalar {
		shape = nil
	}
	return tensor.FromI64(shape, data), dim.Expr{}, true
}

// fold evaluates a node whose inputs are all constants at import time and
// reports whether it did. It does not interpret ONNX itself: the node goes
// through its converter into a module of its own, which is lowered to MIR
// and run by the reference interpreter (pkg/mir/eval), so a folded node
// means exactly what the same node computed at run time means, for every
// operator the converter table has.
func (im *importer) fold(n *onnxpb.Node) (bool, error) {
	conv, ok := converters[n.OpType]
	if !ok || n.OpType == "Constant" || n.OpType == "If" { // an If imports its branch in place
		return false, nil
	}
	known := 0
	for _, in := range n.Inputs {
		if in == "" {
			continue
		}
		t, ok := im.constOf(in)
		if !ok || t.Len() > FoldMax {
			return false, nil
		}
		known++
	}
	if known == 0 {
		return false, nil
	}
	for _, a := range n.Attrs {
		if a.HasGraph {
			return false, nil
		}
	}
	sub := &importer{
		m: im.m, opts: Options{InlineMax: im.opts.InlineMax, Source: im.opts.Source}, opset: im.opset,
		vals: map[string]*val{}, used: map[string]bool{}, dimSeen: map[string]bool{},
		weights: map[string]*tensor.Tensor{}, node: n, index: im.index,
	}
	ins := map[*val]string{}
	for _, in := range n.Inputs {
		if in == "" || sub.vals[in] != nil {
			continue
		}
		t, _ := im.constOf(in)
		v := &val{konst: t}
		sub.vals[in], ins[v] = v, in
	}
	if err := conv(sub, n); err != nil {
		// The node cannot be evaluated this way; the regular path reports
		// what is wrong with it, or emits it for run time.
		return false, nil
	}
	var results, rets, evaluated []string
	outs := map[string]*tensor.Tensor{}
	for _, o := range n.Outputs {
		if o == "" {
			continue
		}
		v := sub.vals[o]
		if v == nil {
			return false, nil
		}
		if in, ok := ins[v]; ok {
			im.alias(o, in) // Identity: the same value, not a copy of it
			continue
		}
		if v.name == "" {
			t, ok := sub.constOf(o)
			if !ok || t.Len() > FoldMax {
				return false, nil
			}
			outs[o] = t
			continue
		}
		t, err := sub.typeOf(o)
		if err != nil {
			return false, nil
		}
		size := int64(1)
		for _, d := range t.Shape {
			c, ok := d.Const()
			if !ok {
				return false, nil
			}
			size *= c
		}
		if size > FoldMax {
			return false, nil
		}
		results = append(results, fmt.Sprintf("%s: %s", hir.Quote(v.name), t))
		rets = append(rets, hir.Quote(v.name))
		evaluated = append(evaluated, o)
	}
	if len(rets) > 0 {
		sub.stmts = append(sub.stmts, "return "+strings.Join(rets, ", "))
		sub.results = results
		got, err := sub.evaluate()
		if err != nil || len(got) != len(evaluated) {
			return false, nil
		}
		for i, o := range evaluated {
			outs[o] = got[i]
		}
	}
	for o, t := range outs {
		im.vals[o] = &val{konst: t}
	}
	return true, nil
}

// evaluate checks, lowers and runs the module a fold assembled.
func (im *importer) evaluate() ([]*tensor.Tensor, error) {
	src := im.text(true)
	mod, err := hir.ParseFile(im.opts.Source+".fold.hir", []byte(src))
	if err == nil {
		err = hir.Check(mod)
	}
	if err != nil {
		return nil, err
	}
	g, err := lower.ToMIR(mod, "main", &lower.Weights{Named: im.weights})
	if err != nil {
		return nil, err
	}
	return eval.Run(g, nil, nil)
}
