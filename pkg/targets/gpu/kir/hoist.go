package kir

import "fmt"

// Hoist binds every expression node that a statement uses more than once
// (the same *Expr reached along several paths, as the builders in math.go
// make) to a variable declared just before the statement, so the printed
// source says each once. Without it, nested builders multiply: a half
// float rounding of a half float widening of x prints x hundreds of times.
//
// Subtrees holding a load are left in place: a load may sit under a
// Select whose condition is what keeps it in bounds.
//
// The variables are named h_1, h_2, ..., skipping names the kernel already
// uses, so that hoisting twice (Print hoists) or a kernel with its own h_1
// never declares a name twice or hides a variable a statement reads. A
// malformed tree (nil statements or expressions) is left for Check to
// report.
func Hoist(k *Kernel) {
	h := &hoister{used: map[string]bool{}}
	h.names(k.Body)
	k.Body = h.stmts(k.Body)
}

type hoister struct {
	n    int
	used map[string]bool // variable names in the kernel
}

// names records every variable name ss declares or reads.
func (h *hoister) names(ss []*Stmt) {
	var expr func(e *Expr)
	expr = func(e *Expr) {
		if e == nil {
			return
		}
		if e.Op == OpVar {
			h.used[e.Name] = true
		}
		for _, a := range e.Args {
			expr(a)
		}
	}
	for _, s := range ss {
		if s == nil {
			continue
		}
		if s.Op == SDecl || s.Op == SFor || s.Op == SAssign {
			h.used[s.Name] = true
		}
		for _, a := range s.Args {
			expr(a)
		}
		h.names(s.Body)
		h.names(s.Else)
	}
}

// fresh returns the next unused h_N.
func (h *hoister) fresh() string {
	for {
		h.n++
		name := fmt.Sprintf("h_%d", h.n)
		if !h.used[name] {
			h.used[name] = true
			return name
		}
	}
}

// printedTwice are the operations whose printed form repeats each
// operand (see printer.expr): an operand shared once under them is
// printed twice.
func printedTwice(op Op) bool { return op == OpMin || op == OpMax || op == OpRem }

func (h *hoister) stmts(ss []*Stmt) []*Stmt {
	var out []*Stmt
	for _, s := range ss {
		if s == nil || hasNil(s.Args) {
			out = append(out, s)
			continue
		}
		s.Body = h.stmts(s.Body)
		s.Else = h.stmts(s.Else)
		out = append(out, h.stmt(s)...)
	}
	return out
}

// stmt returns the declarations s's expressions need, then s.
func (h *hoister) stmt(s *Stmt) []*Stmt {
	uses := map[*Expr]int{}
	var count func(e *Expr)
	count = func(e *Expr) {
		uses[e]++
		if uses[e] > 1 {
			return // its operands were counted on the first visit
		}
		for _, a := range e.Args {
			count(a)
			if printedTwice(e.Op) {
				count(a)
			}
		}
	}
	for _, a := range s.Args {
		count(a)
	}
	loads := map[*Expr]bool{}
	var hasLoad func(e *Expr) bool
	hasLoad = func(e *Expr) bool {
		if v, ok := loads[e]; ok {
			return v
		}
		v := e.Op == OpLoad || e.Op == OpLoadShared
		for _, a := range e.Args {
			if hasLoad(a) {
				v = true
			}
		}
		loads[e] = v
		return v
	}
	var decls []*Stmt
	done := map[*Expr]*Expr{}
	var rewrite func(e *Expr) *Expr
	rewrite = func(e *Expr) *Expr {
		if r, ok := done[e]; ok {
			return r
		}
		c := *e
		c.Args = make([]*Expr, len(e.Args))
		for i, a := range e.Args {
			c.Args[i] = rewrite(a)
		}
		r := &c
		if uses[e] > 1 && len(e.Args) > 0 && !hasLoad(e) {
			name := h.fresh()
			decls = append(decls, Decl(name, r))
			r = Var(name, e.T)
		}
		done[e] = r
		return r
	}
	for i, a := range s.Args {
		s.Args[i] = rewrite(a)
	}
	return append(decls, s)
}

// hasNil reports a nil expression anywhere in es.
func hasNil(es []*Expr) bool {
	for _, e := range es {
		if e == nil || hasNil(e.Args) {
			return true
		}
	}
	return false
}
