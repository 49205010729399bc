package dim

import (
	"fmt"
	"strconv"
)

// maxParens bounds parenthesis nesting so that the recursive parser's stack
// stays small whatever the input.
const maxParens = 256

// Parse reads a dim expression: integers, identifiers
// [A-Za-z_][A-Za-z0-9_.]*, binary + - * / % (floor division and floored
// remainder), unary minus, parentheses and spaces. * / % bind tighter than
// + and -, all are left associative, and unary minus binds tightest, as in
// Python: -a/2 is (-a)/2. The result is simplified to canonical form.
// Errors give the byte offset into s.
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = { "-" } primary
//	primary = integer | identifier | "(" expr ")"
func Parse(s string) (Expr, error) {
	p := &parser{s: s}
	e, err := p.expr()
	if err != nil {
		return Expr{}, err
	}
	if p.peek() != 0 {
		return Expr{}, p.unexpected()
	}
	return e, nil
}

// MustParse is Parse for tests and constants known to be valid: it panics if
// s does not parse.
func MustParse(s string) Expr {
	e, err := Parse(s)
	if err != nil {
		panic(fmt.Sprintf("dim.MustParse(%q): %v", s, err))
	}
	return e
}

type parser struct {
	s      string
	pos    int
	parens int
}

// peek skips spaces and returns the next byte, or 0 at the end.
func (p *parser) peek() byte {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
	if p.pos == len(p.s) {
		return 0
	}
	return p.s[p.pos]
}

func (p *parser) unexpected() error {
	if p.pos >= len(p.s) {
		return fmt.Errorf("unexpected end of dim expression")
	}
	return fmt.Errorf("unexpected %q at offset %d in dim expression", p.s[p.pos], p.pos)
}

func (p *parser) expr() (Expr, error) {
	x, err := p.term()
	for err == nil {
		op := p.peek()
		if op != '+' && op != '-' {
			break
		}
		p.pos++
		var y Expr
		if y, err = p.term(); err != nil {
			break
		}
		if op == '+' {
			x, err = Add(x, y)
		} else {
			x, err = Sub(x, y)
		}
	}
	return x, err
}

func (p *parser) term() (Expr, error) {
	x, err := p.unary()
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			break
		}
		p.pos++
		var y Expr
		if y, err = p.unary(); err != nil {
			break
		}
		switch op {
		case '*':
			x, err = Mul(x, y)
		case '/':
			x, err = FloorDiv(x, y)
		default:
			x, err = Mod(x, y)
		}
	}
	return x, err
}

func (p *parser) unary() (Expr, error) {
	neg := false
	for p.peek() == '-' {
		p.pos++
		neg = !neg
	}
	x, err := p.primary()
	if err == nil && neg {
		x, err = Neg(x)
	}
	return x, err
}

func (p *parser) primary() (Expr, error) {
	c := p.peek()
	start := p.pos
	switch {
	case c == '(':
		if p.parens++; p.parens > maxParens {
			return Expr{}, tooComplex("parentheses nested more than %d deep", maxParens)
		}
		p.pos++
		x, err := p.expr()
		if err != nil {
			return Expr{}, err
		}
		if p.peek() != ')' {
			return Expr{}, p.unexpected()
		}
		p.pos++
		p.parens--
		return x, nil
	case isDigit(c):
		for p.pos < len(p.s) && isDigit(p.s[p.pos]) {
			p.pos++
		}
		v, err := strconv.ParseInt(p.s[start:p.pos], 10, 64)
		if err != nil {
			return Expr{}, fmt.Errorf("integer %s at offset %d overflows int64", p.s[start:p.pos], start)
		}
		return Const(v), nil
	case isLetter(c):
		for p.pos < len(p.s) && (isLetter(p.s[p.pos]) || isDigit(p.s[p.pos]) || p.s[p.pos] == '.') {
			p.pos++
		}
		return Sym(p.s[start:p.pos]), nil
	}
	return Expr{}, p.unexpected()
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
