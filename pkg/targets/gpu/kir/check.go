package kir

import "fmt"

// Check verifies a kernel: every variable is declared before use with one
// type, operands agree in type, parameters and arrays exist, stores go to
// writable parameters, and barriers are not inside a branch (a barrier
// every invocation of a workgroup might not reach hangs or is undefined).
func Check(k *Kernel) error {
	if k.Name == "" {
		return fmt.Errorf("kernel without a name")
	}
	if k.Threads() <= 0 || k.Threads() > 1024 {
		return fmt.Errorf("kernel %s: workgroup %v has %d invocations (1..1024)", k.Name, k.Local, k.Threads())
	}
	c := &checker{k: k, scopes: []map[string]Type{{}}}
	if err := c.stmts(k.Body, false); err != nil {
		return fmt.Errorf("kernel %s: %v", k.Name, err)
	}
	return nil
}

type checker struct {
	k      *Kernel
	scopes []map[string]Type
}

func (c *checker) lookup(name string) (Type, bool) {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if t, ok := c.scopes[i][name]; ok {
			return t, true
		}
	}
	return 0, false
}

func (c *checker) block(ss []*Stmt, branch bool, decl func()) error {
	c.scopes = append(c.scopes, map[string]Type{})
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	if decl != nil {
		decl()
	}
	return c.stmts(ss, branch)
}

func (c *checker) stmts(ss []*Stmt, branch bool) error {
	for _, s := range ss {
		for _, a := range s.Args {
			if err := c.expr(a); err != nil {
				return err
			}
		}
		switch s.Op {
		case SDecl:
			if _, ok := c.scopes[len(c.scopes)-1][s.Name]; ok {
				return fmt.Errorf("%s declared twice", s.Name)
			}
			if s.T != s.Args[0].T {
				return fmt.Errorf("%s: declared %s, initialized with %s", s.Name, s.T, s.Args[0].T)
			}
			c.scopes[len(c.scopes)-1][s.Name] = s.T
		case SAssign:
			t, ok := c.lookup(s.Name)
			if !ok {
				return fmt.Errorf("assignment to undeclared %s", s.Name)
			}
			if t != s.Args[0].T {
				return fmt.Errorf("%s: %s assigned %s", s.Name, t, s.Args[0].T)
			}
		case SStore:
			if s.I < 0 || s.I >= len(c.k.Params) {
				return fmt.Errorf("store to parameter %d of %d", s.I, len(c.k.Params))
			}
			p := c.k.Params[s.I]
			if !p.Write {
				return fmt.Errorf("store to read-only parameter %s", p.Name)
			}
			if s.Args[0].T != I32 {
				return fmt.Errorf("store index of %s has type %s", p.Name, s.Args[0].T)
			}
			if s.Args[1].T != p.Elem.Compute() {
				return fmt.Errorf("store of %s to %s elements of %s", s.Args[1].T, p.Elem, p.Name)
			}
		case SStoreShared:
			if s.I < 0 || s.I >= len(c.k.Shared) {
				return fmt.Errorf("store to workgroup array %d of %d", s.I, len(c.k.Shared))
			}
			if s.Args[0].T != I32 || s.Args[1].T != c.k.Shared[s.I].Elem {
				return fmt.Errorf("store of %s at %s index to %s", s.Args[1].T, s.Args[0].T, c.k.Shared[s.I].Name)
			}
		case SFor:
			for _, a := range s.Args {
				if a.T != I32 {
					return fmt.Errorf("loop %s bound of type %s", s.Name, a.T)
				}
			}
			if err := c.block(s.Body, branch, func() { c.scopes[len(c.scopes)-1][s.Name] = I32 }); err != nil {
				return err
			}
		case SIf:
			if s.Args[0].T != Bool {
				return fmt.Errorf("if condition of type %s", s.Args[0].T)
			}
			if err := c.block(s.Body, true, nil); err != nil {
				return err
			}
			if err := c.block(s.Else, true, nil); err != nil {
				return err
			}
		case SBarrier:
			if branch {
				return fmt.Errorf("barrier inside a branch")
			}
		case SBreak:
		default:
			return fmt.Errorf("unknown statement %d", s.Op)
		}
	}
	return nil
}

func (c *checker) expr(e *Expr) error {
	if e == nil {
		return fmt.Errorf("missing expression")
	}
	for _, a := range e.Args {
		if err := c.expr(a); err != nil {
			return err
		}
	}
	want := func(n int) error {
		if len(e.Args) != n {
			return fmt.Errorf("operation %d with %d operands, want %d", e.Op, len(e.Args), n)
		}
		return nil
	}
	same := func() error {
		if err := want(2); err != nil {
			return err
		}
		if e.Args[0].T != e.Args[1].T {
			return fmt.Errorf("operation %d on %s and %s", e.Op, e.Args[0].T, e.Args[1].T)
		}
		return nil
	}
	switch e.Op {
	case OpConst:
		if e.T > F32 {
			return fmt.Errorf("constant of storage type %s", e.T)
		}
	case OpVar:
		t, ok := c.lookup(e.Name)
		if !ok {
			return fmt.Errorf("use of undeclared %s", e.Name)
		}
		if t != e.T {
			return fmt.Errorf("%s used as %s, declared %s", e.Name, e.T, t)
		}
	case OpIndex:
		if e.I < 0 || e.I > 2 || (e.Name != "global" && e.Name != "local" && e.Name != "group") {
			return fmt.Errorf("bad index %s.%d", e.Name, e.I)
		}
	case OpLoad:
		if e.I < 0 || int(e.I) >= len(c.k.Params) {
			return fmt.Errorf("load of parameter %d of %d", e.I, len(c.k.Params))
		}
		if e.Args[0].T != I32 || e.T != c.k.Params[e.I].Elem.Compute() {
			return fmt.Errorf("load of %s from %s", e.T, c.k.Params[e.I].Name)
		}
	case OpLoadShared:
		if e.I < 0 || int(e.I) >= len(c.k.Shared) || e.Args[0].T != I32 || e.T != c.k.Shared[e.I].Elem {
			return fmt.Errorf("bad workgroup load %d", e.I)
		}
	case OpNeg, OpBitNot:
		if err := want(1); err != nil {
			return err
		}
		if e.Op == OpBitNot && !e.T.IsInt() {
			return fmt.Errorf("bitwise not of %s", e.T)
		}
	case OpNot:
		if err := want(1); err != nil {
			return err
		}
		if e.Args[0].T != Bool {
			return fmt.Errorf("not of %s", e.Args[0].T)
		}
	case OpAdd, OpSub, OpMul, OpDiv, OpMin, OpMax:
		if err := same(); err != nil {
			return err
		}
		if e.T == Bool {
			return fmt.Errorf("arithmetic on bool")
		}
	case OpRem, OpBitAnd, OpBitOr, OpBitXor, OpShl, OpShr:
		if err := same(); err != nil {
			return err
		}
		if !e.T.IsInt() {
			return fmt.Errorf("integer operation %d on %s", e.Op, e.T)
		}
	case OpLt, OpLe, OpGt, OpGe, OpEq, OpNe:
		return same()
	case OpAnd, OpOr:
		if err := same(); err != nil {
			return err
		}
		if e.Args[0].T != Bool {
			return fmt.Errorf("logic on %s", e.Args[0].T)
		}
	case OpSelect:
		if err := want(3); err != nil {
			return err
		}
		if e.Args[0].T != Bool || e.Args[1].T != e.Args[2].T {
			return fmt.Errorf("select of %s ? %s : %s", e.Args[0].T, e.Args[1].T, e.Args[2].T)
		}
	case OpConvert:
		if err := want(1); err != nil {
			return err
		}
		if e.T > F32 || e.T == Bool || e.Args[0].T == Bool {
			return fmt.Errorf("conversion from %s to %s (bools convert with Select and Ne)", e.Args[0].T, e.T)
		}
	case OpBitcast:
		if err := want(1); err != nil {
			return err
		}
		if e.T.Size() != 4 || e.Args[0].T.Size() != 4 || e.T == Bool || e.Args[0].T == Bool {
			return fmt.Errorf("bitcast from %s to %s", e.Args[0].T, e.T)
		}
	case OpCall:
		n, ok := Funcs[e.Name]
		if !ok {
			return fmt.Errorf("unknown function %s", e.Name)
		}
		if err := want(n); err != nil {
			return err
		}
		for _, a := range e.Args {
			if a.T != F32 {
				return fmt.Errorf("%s of %s", e.Name, a.T)
			}
		}
	default:
		return fmt.Errorf("unknown operation %d", e.Op)
	}
	return nil
}
