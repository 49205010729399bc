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
func Hoist(k *Kernel) {
	h := &hoister{}
	k.Body = h.stmts(k.Body)
}

type hoister struct{ n int }

func (h *hoister) stmts(ss []*Stmt) []*Stmt {
	var out []*Stmt
	for _, s := range ss {
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
			h.n++
			name := fmt.Sprintf("h_%d", h.n)
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
