package kir

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// dialect is what differs between the languages a kernel is printed in;
// the statement and expression printer below is shared, so the three
// languages cannot drift apart in structure.
type dialect struct {
	types     map[Type]string // compute types
	storage   map[Type]string // parameter element types
	funcs     map[string]string
	i64Lit    string                   // suffix of i64 literals
	u32Lit    string                   // suffix of u32 literals
	f32Lit    string                   // suffix of f32 literals
	conv      func(t, e string) string // numeric conversion of e to type t
	bitcast   func(to, from Type, e string) string
	index     func(kind string, axis int64) string
	elem      func(p int) string       // the lvalue prefix of parameter p's elements: p3.v, p3
	offset    func(p int) string       // parameter p's launch offset (Kernel.Offsets)
	nonFinite func(bits uint32) string // an f32 with these bits (inf, nan)
	barrier   string
	mma       map[MMAKind]string // the function each kind of tensor-core product (SMMA) calls; none where the language has none
}

type printer struct {
	d   *dialect
	k   *Kernel
	b   strings.Builder
	ind int
}

func (p *printer) line(format string, args ...any) {
	p.b.WriteString(strings.Repeat("  ", p.ind))
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteByte('\n')
}

func (p *printer) stmts(ss []*Stmt) {
	for _, s := range ss {
		p.stmt(s)
	}
}

func (p *printer) stmt(s *Stmt) {
	d := p.d
	switch s.Op {
	case SDecl:
		p.line("%s %s = %s;", d.types[s.T], s.Name, p.expr(s.Args[0]))
	case SAssign:
		p.line("%s = %s;", s.Name, p.expr(s.Args[0]))
	case SStore:
		par := p.k.Params[s.I]
		p.line("%s[%s] = %s;", d.elem(s.I), p.index(s.I, s.Args[0]), p.narrow(par.Elem, s.Args[1]))
	case SStoreShared:
		p.line("s%d[%s] = %s;", s.I, p.expr(s.Args[0]), p.expr(s.Args[1]))
	case SFor:
		p.line("for (%s %s = %s; %s < %s; %s += %s) {", d.types[I32], s.Name, p.expr(s.Args[0]), s.Name, p.expr(s.Args[1]), s.Name, p.expr(s.Args[2]))
		p.ind++
		p.stmts(s.Body)
		p.ind--
		p.line("}")
	case SIf:
		p.line("if (%s) {", p.cond(s.Args[0]))
		p.ind++
		p.stmts(s.Body)
		p.ind--
		if len(s.Else) > 0 {
			p.line("} else {")
			p.ind++
			p.stmts(s.Else)
			p.ind--
		}
		p.line("}")
	case SBarrier:
		p.line("%s", d.barrier)
	case SBreak:
		p.line("break;")
	case SMMA:
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = p.expr(a)
		}
		p.line("%s(%s);", d.mma[MMAKind(s.I)], strings.Join(args, ", "))
	}
}

// cond prints an if condition without the outer parentheses of a binary
// operation: clang warns about if ((a == b)) (-Wparentheses-equality) in
// every CUDA and MSL compile.
func (p *printer) cond(e *Expr) string {
	s := p.expr(e)
	if _, ok := binOps[e.Op]; ok && strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		return s[1 : len(s)-1]
	}
	return s
}

// narrow converts a compute value to a parameter's storage type.
func (p *printer) narrow(elem Type, e *Expr) string {
	s := p.expr(e)
	switch elem {
	case Bool:
		return p.d.conv(p.d.storage[Bool], "("+s+") ? 1 : 0")
	case U8, I8, I16, F16, BF16:
		return p.d.conv(p.d.storage[elem], s)
	}
	return s
}

// index prints the element index e of parameter par: e itself, or the
// launch offset plus e when the kernel takes offsets at launch.
func (p *printer) index(par int, e *Expr) string {
	if !p.k.Offsets {
		return p.expr(e)
	}
	return "(" + p.d.offset(par) + " + " + p.expr(e) + ")"
}

var binOps = map[Op]string{
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/",
	OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpEq: "==", OpNe: "!=",
	OpAnd: "&&", OpOr: "||", OpBitAnd: "&", OpBitOr: "|", OpBitXor: "^", OpShl: "<<", OpShr: ">>",
}

// expr prints e fully parenthesized: the printed text is never subject to
// a language's precedence rules.
func (p *printer) expr(e *Expr) string {
	d := p.d
	a := func(i int) string { return p.expr(e.Args[i]) }
	switch e.Op {
	case OpConst:
		return p.constant(e)
	case OpVar:
		return e.Name
	case OpIndex:
		return d.index(e.Name, e.I)
	case OpLoad:
		par := p.k.Params[e.I]
		s := fmt.Sprintf("%s[%s]", d.elem(int(e.I)), p.index(int(e.I), e.Args[0]))
		switch par.Elem {
		case Bool:
			return "(" + s + " != " + d.conv(d.storage[Bool], "0") + ")"
		case U8, I8, I16, F16, BF16:
			return d.conv(d.types[par.Elem.Compute()], s)
		}
		return s
	case OpLoadShared:
		return fmt.Sprintf("s%d[%s]", e.I, a(0))
	case OpNeg:
		return "(-" + a(0) + ")"
	case OpNot:
		return "(!" + a(0) + ")"
	case OpBitNot:
		return "(~" + a(0) + ")"
	case OpMin, OpMax:
		// Written out so that integer and float forms print alike in
		// every language (the operands are not NaN; see math.go).
		op := "<"
		if e.Op == OpMax {
			op = ">"
		}
		return fmt.Sprintf("((%s %s %s) ? %s : %s)", a(0), op, a(1), a(0), a(1))
	case OpSelect:
		return fmt.Sprintf("(%s ? %s : %s)", a(0), a(1), a(2))
	case OpConvert:
		return d.conv(d.types[e.T], a(0))
	case OpBitcast:
		return d.bitcast(e.T, e.Args[0].T, a(0))
	case OpCall:
		args := make([]string, len(e.Args))
		for i := range e.Args {
			args[i] = a(i)
		}
		return d.funcs[e.Name] + "(" + strings.Join(args, ", ") + ")"
	}
	if e.Op == OpRem {
		// Truncated remainder written out: GLSL leaves % of negative
		// operands undefined, and this reads the same in C.
		return fmt.Sprintf("(%s - ((%s / %s) * %s))", a(0), a(0), a(1), a(1))
	}
	if op, ok := binOps[e.Op]; ok {
		return "(" + a(0) + " " + op + " " + a(1) + ")"
	}
	return fmt.Sprintf("/* unknown op %d */", e.Op)
}

func (p *printer) constant(e *Expr) string {
	d := p.d
	switch e.T {
	case Bool:
		if e.I != 0 {
			return "true"
		}
		return "false"
	case I32:
		if e.I < 0 {
			if e.I == math.MinInt32 {
				return "(-2147483647 - 1)"
			}
			return "(" + strconv.FormatInt(e.I, 10) + ")"
		}
		return strconv.FormatInt(e.I, 10)
	case U32:
		return strconv.FormatUint(uint64(uint32(e.I)), 10) + d.u32Lit
	case I64:
		if e.I == math.MinInt64 {
			return "(-9223372036854775807" + d.i64Lit + " - 1" + d.i64Lit + ")"
		}
		s := strconv.FormatInt(e.I, 10) + d.i64Lit
		if e.I < 0 {
			return "(" + s + ")"
		}
		return s
	case F32:
		f := float32(e.F)
		if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
			return d.nonFinite(math.Float32bits(f))
		}
		s := strconv.FormatFloat(float64(f), 'g', -1, 32)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		s += d.f32Lit
		if f < 0 || (f == 0 && math.Signbit(float64(f))) {
			return "(" + s + ")"
		}
		return s
	}
	return fmt.Sprintf("/* constant of %s */", e.T)
}
