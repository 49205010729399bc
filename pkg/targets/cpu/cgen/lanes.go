package cgen

import (
	"fmt"
	"strings"
)

// halfOf is the C shuffle of vector v's lower (hi 0) or upper (hi 1) h
// lanes.
func halfOf(v string, h, hi int) string {
	idx := make([]string, h)
	for i := range idx {
		idx[i] = fmt.Sprint(hi*h + i)
	}
	return fmt.Sprintf("__builtin_shufflevector(%s, %s, %s)", v, v, strings.Join(idx, ", "))
}

// writeTree writes, at indent ind, the fold of the lanes of vector v
// into the scalar dst of C type ctype, as a tree of vector halves: each
// step folds a vector's upper half onto its lower with op (a format of
// two operands), the halves of h lanes typed typ+h (declared by the
// caller), named p+h. Folding lanes one after another in scalar code
// cost short rows as much as their loads.
func writeTree(b *strings.Builder, ind string, lanes int, typ, ctype, dst, v, p, op string) {
	prev := v
	for h := lanes / 2; h >= 2; h /= 2 {
		cur := fmt.Sprintf("%s%d", p, h)
		fmt.Fprintf(b, "%sconst %s%d %s = %s;\n", ind, typ, h, cur, fmt.Sprintf(op, halfOf(prev, h, 0), halfOf(prev, h, 1)))
		prev = cur
	}
	fmt.Fprintf(b, "%sconst %s %s = %s;\n", ind, ctype, dst, fmt.Sprintf(op, prev+"[0]", prev+"[1]"))
}
