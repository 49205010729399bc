package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// einsumRef evaluates an explicit equation (letters only, each term's
// ellipsis already spelled out as capital letters by the caller) over
// float64 by visiting every assignment of its labels.
func einsumRef(eq string, shapes [][]int64, data [][]float32) ([]float64, []int64) {
	lhs, rhs, _ := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	size := map[rune]int64{}
	var labels []rune
	for i, t := range terms {
		for j, r := range t {
			if _, ok := size[r]; !ok {
				labels = append(labels, r)
			}
			size[r] = shapes[i][j]
		}
	}
	var outShape []int64
	for _, r := range rhs {
		outShape = append(outShape, size[r])
	}
	n := int64(1)
	for _, d := range outShape {
		n *= d
	}
	out := make([]float64, n)
	idx := map[rune]int64{}
	var visit func(k int)
	visit = func(k int) {
		if k == len(labels) {
			p := 1.0
			for i, t := range terms {
				at := int64(0)
				for j, r := range t {
					at = at*shapes[i][j] + idx[r]
				}
				p *= float64(data[i][at])
			}
			at := int64(0)
			for j, r := range rhs {
				at = at*outShape[j] + idx[r]
			}
			out[at] += p
			return
		}
		for v := range size[labels[k]] {
			idx[labels[k]] = v
			visit(k + 1)
		}
	}
	visit(0)
	return out, outShape
}

// TestONNXEinsum: Einsum against the definition, for products, batched
// products, attention's forms, reductions, transposes, an outer and a
// dot product, three operands, an ellipsis (operands of different ranks
// under it), the implicit output and a symbolic batch at two sizes.
func TestONNXEinsum(t *testing.T) {
	for _, c := range []struct {
		eq     string
		ref    string // the equation einsumRef reads (explicit, no ellipsis); "" for eq
		shapes [][]any
	}{
		{"ij,jk->ik", "", [][]any{{3, 4}, {4, 5}}},
		{"bij,bjk->bik", "", [][]any{{"b", 3, 4}, {"b", 4, 2}}},
		{"bhqd,bhkd->bhqk", "", [][]any{{"b", 2, 3, 4}, {"b", 2, 5, 4}}},
		{"bhqk,bhkd->bqhd", "", [][]any{{2, 2, 3, 5}, {2, 2, 5, 4}}},
		{"ij->ji", "", [][]any{{3, 4}}},
		{"ij->", "", [][]any{{3, 4}}},
		{"bij->bj", "", [][]any{{"b", 3, 4}}},
		{"i,i->", "", [][]any{{6}, {6}}},
		{"i,j->ij", "", [][]any{{3}, {4}}},
		{"ij,jk,kl->il", "", [][]any{{2, 3}, {3, 4}, {4, 2}}},
		{"Ab,bC->AC", "", [][]any{{3, 2}, {2, 4}}},
		{"ij,jk", "ij,jk->ik", [][]any{{3, 4}, {4, 2}}},
		{"ba,ca", "ba,ca->bc", [][]any{{3, 4}, {2, 4}}},
		{"...ij,...jk->...ik", "XYij,Yjk->XYik", [][]any{{2, 3, 4, 5}, {3, 5, 2}}},
		{"b...d,nd->b...n", "bXd,nd->bXn", [][]any{{"b", 3, 4}, {5, 4}}},
		{"bij,jk->bik", "", [][]any{{"b", 3, 4}, {4, 5}}},
		{"bi,bi->b", "", [][]any{{"b", 6}, {"b", 6}}},
		{"ijk,ikj->i", "", [][]any{{2, 3, 4}, {2, 4, 3}}},
	} {
		ref := c.eq
		if c.ref != "" {
			ref = c.ref
		}
		bs := []int64{2}
		if strings.Contains(fmt.Sprint(c.shapes), "b") {
			bs = []int64{2, 3} // a symbolic batch at two sizes
		}
		for _, b := range bs {
			g := &graph{outs: []string{"y"}}
			var ins []string
			var shapes [][]int64
			var data [][]float32
			inputs := map[string]*tensor.Tensor{}
			for i, s := range c.shapes {
				name := fmt.Sprintf("x%d", i)
				ins = append(ins, name)
				g.input(name, s...)
				var shape []int64
				n := 1
				for _, d := range s {
					v, ok := d.(int)
					if !ok {
						v = int(b)
					}
					shape = append(shape, int64(v))
					n *= v
				}
				x := seq1(n, 1, i)
				shapes, data = append(shapes, shape), append(data, x)
				inputs[name] = tensor.FromF32(shape, x)
			}
			g.node("Einsum", ins, []string{"y"}, as("equation", c.eq))
			bind := specialize.Binding{}
			if len(bs) > 1 {
				bind["b"] = b
			}
			out, _ := runONNX(t, g, bind, inputs)
			want, shape := einsumRef(ref, shapes, data)
			var ds []int
			for _, d := range shape {
				ds = append(ds, int(d))
			}
			shapeIs(t, "Einsum "+c.eq, out[0], ds...)
			nearTol(t, fmt.Sprintf("Einsum %s b=%d", c.eq, b), out[0].F32(), want, 1e-5)
		}
	}
}

// TestONNXEinsumErrors: a diagonal, labels of two sizes, and a term of
// the wrong rank are errors that say so.
func TestONNXEinsumErrors(t *testing.T) {
	for _, c := range []struct {
		eq     string
		shapes [][]any
		want   string
	}{
		{"ii->i", [][]any{{3, 3}}, `repeats label 'i' (a diagonal)`},
		{"ij,jk->ik", [][]any{{3, 4}, {5, 2}}, `label 'j' is 4 in one operand and 5 in operand 1`},
		{"ijk->i", [][]any{{3, 4}}, "3 labels for an operand of rank 2"},
		{"ij,jk->iz", [][]any{{3, 4}, {4, 2}}, `output label 'z' is in no operand`},
		{"ij->i", [][]any{{3, 4}, {4, 2}}, "1 operands, the node 2"},
		{"i.j->i", [][]any{{3, 4}}, "one ellipsis at most"},
	} {
		g := &graph{outs: []string{"y"}}
		var ins []string
		for i, s := range c.shapes {
			name := fmt.Sprintf("x%d", i)
			ins = append(ins, name)
			g.input(name, s...)
		}
		g.node("Einsum", ins, []string{"y"}, as("equation", c.eq))
		if _, err := onnx.Import(g.model(17), onnx.Options{Source: "t.onnx"}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Einsum %q: error %v, want %q", c.eq, err, c.want)
		}
	}
}
