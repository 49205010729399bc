package onnx

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
)

// Einsum as HIR products. Each operand's labels that no other operand
// and not the output has are summed out first (reduce_sum); two operands
// then meet in one batched matmul: the labels both have and the output
// keeps are its batch, those both have and the output drops its
// reduction, the rest its rows (the left's) and columns (the right's),
// each group flattened into one dim by a transpose and a reshape. More
// operands fold left to right, each product keeping the labels later
// operands or the output still need. The result is transposed into the
// output's order. An ellipsis stands for the same unnamed labels in every
// operand, aligned from the right; a label repeated within one operand
// (a diagonal) is not supported.

// einsumTerm is one operand's labels (an ellipsis expanded into the
// labels ellipsisLabel gives).
type einsumTerm []rune

// ellipsisLabel is the label of the k-th dim (from the right) an
// ellipsis stands for: runes no equation spells.
func ellipsisLabel(k int) rune { return rune(0x10000 + k) }

// parseEinsum splits equation into its operands' labels and the
// output's (implicit: every label used once, in alphabetical order,
// after the ellipsis's), expanding each ellipsis by that operand's rank.
func parseEinsum(equation string, ranks []int) ([]einsumTerm, einsumTerm, error) {
	eq := strings.ReplaceAll(equation, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	parts := strings.Split(lhs, ",")
	if len(parts) != len(ranks) {
		return nil, nil, fmt.Errorf("Einsum equation %q has %d operands, the node %d", equation, len(parts), len(ranks))
	}
	ell := -1 // dims the ellipsis stands for: the most any operand gives it
	expand := func(s string, rank int) (einsumTerm, error) {
		before, after, has := strings.Cut(s, "...")
		if strings.Contains(after, "...") || strings.Contains(strings.ReplaceAll(s, "...", ""), ".") {
			return nil, fmt.Errorf("Einsum term %q: one ellipsis at most, spelled ...", s)
		}
		var t einsumTerm
		for _, r := range before + after {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return nil, fmt.Errorf("Einsum term %q: label %q is not a letter", s, r)
			}
		}
		named := len(before) + len(after)
		if rank >= 0 && (named > rank || !has && named != rank) {
			return nil, fmt.Errorf("Einsum term %q has %d labels for an operand of rank %d", s, named, rank)
		}
		t = append(t, []rune(before)...)
		if has {
			k := rank - named
			if rank < 0 { // the output: as many as the operands'
				k = max(ell, 0)
			}
			ell = max(ell, k)
			for i := k - 1; i >= 0; i-- {
				t = append(t, ellipsisLabel(i))
			}
		}
		return append(t, []rune(after)...), nil
	}
	terms := make([]einsumTerm, len(parts))
	for i, p := range parts {
		t, err := expand(p, ranks[i])
		if err != nil {
			return nil, nil, err
		}
		for j, r := range t {
			if slices.Contains(t[j+1:], r) {
				return nil, nil, fmt.Errorf("Einsum term %q repeats label %q (a diagonal): not supported", p, r)
			}
		}
		terms[i] = t
	}
	if explicit {
		out, err := expand(rhs, -1)
		if err != nil {
			return nil, nil, err
		}
		for j, r := range out {
			if slices.Contains(out[j+1:], r) {
				return nil, nil, fmt.Errorf("Einsum output %q repeats label %q", rhs, r)
			}
			if !slices.ContainsFunc(terms, func(t einsumTerm) bool { return slices.Contains(t, r) }) {
				return nil, nil, fmt.Errorf("Einsum output label %q is in no operand", r)
			}
		}
		return terms, out, nil
	}
	count := map[rune]int{}
	for _, t := range terms {
		for _, r := range t {
			count[r]++
		}
	}
	var out einsumTerm
	for i := max(ell, 0) - 1; i >= 0; i-- {
		out = append(out, ellipsisLabel(i))
	}
	var once []rune
	for r, c := range count {
		if c == 1 && r < 0x10000 {
			once = append(once, r)
		}
	}
	slices.Sort(once)
	return terms, append(out, once...), nil
}

// einsumValue is an operand or partial product: its HIR name, labels and
// dims.
type einsumValue struct {
	name   string
	labels einsumTerm
	dims   []dim.Expr
}

func convEinsum(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) < 1 {
		return fmt.Errorf("Einsum needs at least one input")
	}
	equation := attrString(n, "equation", "")
	ranks := make([]int, len(n.Inputs))
	types := make([]hir.Type, len(n.Inputs))
	for i, in := range n.Inputs {
		t, err := im.typeOf(in)
		if err != nil {
			return err
		}
		ranks[i], types[i] = t.Rank(), t
	}
	terms, out, err := parseEinsum(equation, ranks)
	if err != nil {
		return err
	}
	size := map[rune]dim.Expr{}
	vals := make([]einsumValue, len(terms))
	for i, t := range terms {
		for j, r := range t {
			d := types[i].Shape[j]
			if s, ok := size[r]; ok && !dim.Equal(s, d) {
				return fmt.Errorf("Einsum label %s is %s in one operand and %s in operand %d (broadcasting is not supported)", labelName(r), s, d, i)
			}
			size[r] = d
		}
		name, err := im.rt(i)
		if err != nil {
			return err
		}
		vals[i] = einsumValue{name: name, labels: t, dims: types[i].Shape}
	}
	o := n.Outputs[0]
	// needed reports whether label r is read after operand k: by a later
	// operand or the output.
	needed := func(r rune, k int) bool {
		if slices.Contains(out, r) {
			return true
		}
		for _, t := range terms[k+1:] {
			if slices.Contains(t, r) {
				return true
			}
		}
		return false
	}
	acc := im.einsumSumOut(o+"_e0", vals[0], func(r rune) bool { return needed(r, 0) })
	for k := 1; k < len(vals); k++ {
		// The right operand's labels the left lacks and nothing later
		// reads are summed out first.
		right := im.einsumSumOut(fmt.Sprintf("%s_e%d", o, k), vals[k], func(r rune) bool { return needed(r, k) || slices.Contains(acc.labels, r) })
		acc, err = im.einsumProduct(fmt.Sprintf("%s_p%d", o, k), acc, right, func(r rune) bool { return needed(r, k) }, size)
		if err != nil {
			return err
		}
	}
	// Labels no one reads any more are summed out, then the order is
	// the output's.
	acc = im.einsumSumOut(o+"_last", acc, func(r rune) bool { return slices.Contains(out, r) })
	perm := make([]int64, len(out))
	identity := true
	for i, r := range out {
		perm[i] = int64(slices.Index(acc.labels, r))
		identity = identity && perm[i] == int64(i)
	}
	if identity {
		return im.emit(n.Outputs[:1], "reshape", []string{acc.name}, "shape="+dimList(acc.dims))
	}
	return im.emit(n.Outputs[:1], "transpose", []string{acc.name}, "perm="+intList(perm))
}

// labelName is how an error names a label: the letter, or the ellipsis's
// dim.
func labelName(r rune) string {
	if r >= 0x10000 {
		return fmt.Sprintf("... (dim %d from the right)", int(r-0x10000))
	}
	return fmt.Sprintf("%q", r)
}

// einsumSumOut sums v over the labels keep rejects.
func (im *importer) einsumSumOut(hint string, v einsumValue, keep func(r rune) bool) einsumValue {
	var axes []int64
	res := einsumValue{name: v.name}
	for i, r := range v.labels {
		if keep(r) {
			res.labels = append(res.labels, r)
			res.dims = append(res.dims, v.dims[i])
		} else {
			axes = append(axes, int64(i))
		}
	}
	if len(axes) > 0 {
		res.name = im.emitTmp(hint, "reduce_sum", []string{v.name}, "axes="+intList(axes))
	}
	return res
}

// einsumProduct is the product of a and b over the labels both have and
// keep rejects, as one batched matmul [batch, rows, k] · [batch, k, cols].
func (im *importer) einsumProduct(hint string, a, b einsumValue, keep func(r rune) bool, size map[rune]dim.Expr) (einsumValue, error) {
	var batch, rows, red, cols einsumTerm
	for _, r := range a.labels {
		switch {
		case !slices.Contains(b.labels, r):
			rows = append(rows, r)
		case keep(r):
			batch = append(batch, r)
		default:
			red = append(red, r)
		}
	}
	for _, r := range b.labels {
		if !slices.Contains(a.labels, r) {
			cols = append(cols, r)
		}
	}
	prod := func(ls einsumTerm) (dim.Expr, error) {
		ds := make([]dim.Expr, len(ls))
		for i, r := range ls {
			ds[i] = size[r]
		}
		return dimProduct(ds)
	}
	var bd []dim.Expr
	for _, r := range batch {
		bd = append(bd, size[r])
	}
	m, err := prod(rows)
	if err != nil {
		return einsumValue{}, err
	}
	k, err := prod(red)
	if err != nil {
		return einsumValue{}, err
	}
	nc, err := prod(cols)
	if err != nil {
		return einsumValue{}, err
	}
	// arrange transposes v's labels into order and reshapes the trailing
	// groups into the given dims.
	arrange := func(tag string, v einsumValue, order einsumTerm, dims []dim.Expr) string {
		perm := make([]int64, len(order))
		name := v.name
		moved := false
		for i, r := range order {
			perm[i] = int64(slices.Index(v.labels, r))
			moved = moved || perm[i] != int64(i)
		}
		if moved {
			name = im.emitTmp(hint+"_t"+tag, "transpose", []string{name}, "perm="+intList(perm))
		}
		same := len(dims) == len(order)
		for i := 0; same && i < len(dims); i++ {
			same = dim.Equal(dims[i], size[order[i]])
		}
		if same {
			return name
		}
		return im.emitTmp(hint+"_r"+tag, "reshape", []string{name}, "shape="+dimList(dims))
	}
	an := arrange("a", a, append(append(append(einsumTerm(nil), batch...), rows...), red...), append(append(append([]dim.Expr(nil), bd...), m), k))
	bn := arrange("b", b, append(append(append(einsumTerm(nil), batch...), red...), cols...), append(append(append([]dim.Expr(nil), bd...), k), nc))
	mm := im.emitTmp(hint+"_mm", "matmul", []string{an, bn})
	res := einsumValue{labels: append(append(append(einsumTerm(nil), batch...), rows...), cols...)}
	for _, r := range res.labels {
		res.dims = append(res.dims, size[r])
	}
	res.name = mm
	if len(res.labels) != len(bd)+2 || len(rows) != 1 || len(cols) != 1 {
		res.name = im.emitTmp(hint, "reshape", []string{mm}, "shape="+dimList(res.dims))
	}
	return res, nil
}
