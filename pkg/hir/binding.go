package hir

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
)

// CheckBinding checks dim values against a checked module: every value is a
// declared dim within its bounds, and every constraint that Check deferred
// holds. Unbound dims are allowed (they stay symbolic); constraints that
// mention them are skipped. Errors carry the position of the declaration or
// the operation that needs the relation.
func (m *Module) CheckBinding(values map[string]int64) error {
	var errs ErrorList
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	decls := map[string]*DimDecl{}
	for _, d := range m.Decls {
		if d, ok := d.(*DimDecl); ok {
			decls[d.Name] = d
		}
	}
	for _, n := range names {
		v := values[n]
		d, ok := decls[n]
		if !ok {
			errs.Add(m.File, Pos{}, fmt.Sprintf("--bind %s=%d: module %s has no dim %s (its dims: %s)", n, v, Quote(m.Name), n, strings.Join(m.DimNames(), ", ")))
			continue
		}
		iv := m.Bounds[n]
		if v < iv.Lo || v > iv.Hi {
			errs.Add(m.File, d.NamePos, fmt.Sprintf("dim %s = %d is outside its bounds %s", n, v, iv))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	for _, c := range m.Constraints {
		if !boundAll(c.A, values) || !boundAll(c.B, values) {
			continue
		}
		a, errA := c.A.Eval(values)
		b, errB := c.B.Eval(values)
		if errA != nil || errB != nil {
			err := errA
			if err == nil {
				err = errB
			}
			errs.Add(c.File, c.Pos, fmt.Sprintf("%s: %v under %s", c.Why, err, bindingString(values, c)))
			continue
		}
		var ok bool
		var rel string
		switch c.Kind {
		case MustEqual:
			ok, rel = a == b, "=="
		case MustBeAtLeast:
			ok, rel = a >= b, ">="
		case MustDivideEvenly:
			ok, rel = b != 0 && a%b == 0, "divisible by"
		}
		if !ok {
			errs.Add(c.File, c.Pos, fmt.Sprintf("%s: needs %s %s %s, which fails for %s (%d vs %d)",
				c.Why, c.A, rel, c.B, bindingString(values, c), a, b))
		}
	}
	errs.Sort()
	return errs.Err()
}

func boundAll(e dim.Expr, values map[string]int64) bool {
	for _, s := range e.Syms() {
		if _, ok := values[s]; !ok {
			return false
		}
	}
	return true
}

// bindingString lists the values of the dims a constraint mentions.
func bindingString(values map[string]int64, c Constraint) string {
	seen := map[string]bool{}
	var parts []string
	for _, e := range []dim.Expr{c.A, c.B} {
		for _, s := range e.Syms() {
			if !seen[s] {
				seen[s] = true
				parts = append(parts, fmt.Sprintf("%s=%d", s, values[s]))
			}
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// DimNames lists the module's declared dims in declaration order.
func (m *Module) DimNames() []string {
	var names []string
	for _, d := range m.Decls {
		if d, ok := d.(*DimDecl); ok {
			names = append(names, d.Name)
		}
	}
	return names
}
