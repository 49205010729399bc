package dim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// This file checks the canonical form against a reference: expressions are
// kept as plain syntax trees and evaluated directly with Python's floor
// semantics, with no simplification at all.

type node struct {
	op   byte // 'n' integer, 'v' symbol, 'u' unary minus, or + - * / %
	val  int64
	name string
	x, y *node
}

var errRefDivZero = errors.New("reference: division by zero")

// refEval evaluates the syntax tree as Python would, with overflow checks.
func refEval(n *node, env map[string]int64) (int64, error) {
	switch n.op {
	case 'n':
		return n.val, nil
	case 'v':
		v, ok := env[n.name]
		if !ok {
			return 0, fmt.Errorf("reference: unbound %s", n.name)
		}
		return v, nil
	case 'u':
		x, err := refEval(n.x, env)
		if err != nil {
			return 0, err
		}
		return sub64(0, x)
	}
	x, err := refEval(n.x, env)
	if err != nil {
		return 0, err
	}
	y, err := refEval(n.y, env)
	if err != nil {
		return 0, err
	}
	switch n.op {
	case '+':
		return add64(x, y)
	case '-':
		return sub64(x, y)
	case '*':
		return mul64(x, y)
	}
	if y == 0 {
		return 0, errRefDivZero
	}
	if x == math.MinInt64 && y == -1 {
		return 0, errOverflow
	}
	// Go's / and % truncate; Python's // and % floor.
	q, r := x/y, x%y
	if r != 0 && (r < 0) != (y < 0) {
		q, r = q-1, r+y
	}
	if n.op == '/' {
		return q, nil
	}
	return r, nil
}

func prec(op byte) int {
	switch op {
	case '+', '-':
		return 1
	case '*', '/', '%':
		return 2
	case 'u':
		return 3
	}
	return 4
}

// render writes the tree with Python precedence and only the parentheses it
// needs, plus random extra ones (and spaces) when rnd is not nil.
func (n *node) render(rnd *rand.Rand) string {
	var b strings.Builder
	n.write(&b, 0, rnd)
	return b.String()
}

func (n *node) write(b *strings.Builder, min int, rnd *rand.Rand) {
	p := prec(n.op)
	paren := p < min || (rnd != nil && rnd.IntN(8) == 0)
	if paren {
		b.WriteByte('(')
	}
	switch n.op {
	case 'n':
		b.WriteString(strconv.FormatInt(n.val, 10))
	case 'v':
		b.WriteString(n.name)
	case 'u':
		b.WriteByte('-')
		n.x.write(b, p, rnd)
	default:
		n.x.write(b, p, rnd)
		if rnd != nil && rnd.IntN(4) == 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(n.op)
		n.y.write(b, p+1, rnd) // left associative
	}
	if paren {
		b.WriteByte(')')
	}
}

// refParse is an independent parser for the same grammar, producing a
// syntax tree for refEval.
func refParse(s string) (*node, error) {
	toks := strings.Fields(strings.NewReplacer("(", " ( ", ")", " ) ", "+", " + ", "-", " - ",
		"*", " * ", "/", " / ", "%", " % ").Replace(s))
	i := 0
	next := func() string {
		if i < len(toks) {
			return toks[i]
		}
		return ""
	}
	var expr, term, unary func() (*node, error)
	expr = func() (*node, error) {
		x, err := term()
		for err == nil && (next() == "+" || next() == "-") {
			op := next()[0]
			i++
			var y *node
			y, err = term()
			x = &node{op: op, x: x, y: y}
		}
		return x, err
	}
	term = func() (*node, error) {
		x, err := unary()
		for err == nil && (next() == "*" || next() == "/" || next() == "%") {
			op := next()[0]
			i++
			var y *node
			y, err = unary()
			x = &node{op: op, x: x, y: y}
		}
		return x, err
	}
	unary = func() (*node, error) {
		t := next()
		i++
		switch {
		case t == "-":
			x, err := unary()
			return &node{op: 'u', x: x}, err
		case t == "(":
			x, err := expr()
			if next() != ")" {
				return nil, fmt.Errorf("refParse %q: missing )", s)
			}
			i++
			return x, err
		case t != "" && t[0] >= '0' && t[0] <= '9':
			v, err := strconv.ParseInt(t, 10, 64)
			return &node{op: 'n', val: v}, err
		case t != "" && t != ")":
			return &node{op: 'v', name: t}, nil
		}
		return nil, fmt.Errorf("refParse %q: unexpected %q", s, t)
	}
	n, err := expr()
	if err == nil && i != len(toks) {
		err = fmt.Errorf("refParse %q: trailing %q", s, next())
	}
	return n, err
}

var refSyms = []string{"a", "b", "c"}

// randNode returns a random syntax tree over a, b, c and small constants.
func randNode(rnd *rand.Rand, depth int) *node {
	if depth == 0 || rnd.IntN(4) == 0 {
		if rnd.IntN(2) == 0 {
			return &node{op: 'n', val: rnd.Int64N(11) - 4} // -4..6
		}
		return &node{op: 'v', name: refSyms[rnd.IntN(len(refSyms))]}
	}
	if rnd.IntN(10) == 0 {
		return &node{op: 'u', x: randNode(rnd, depth-1)}
	}
	op := "+-*/%/%"[rnd.IntN(7)] // floor division and remainder are the interesting ones
	return &node{op: op, x: randNode(rnd, depth-1), y: randNode(rnd, depth-1)}
}

// randEnv binds a, b, c to values in [lo, 20].
func randEnv(rnd *rand.Rand, lo int64) map[string]int64 {
	env := map[string]int64{}
	for _, s := range refSyms {
		env[s] = lo + rnd.Int64N(21-lo)
	}
	return env
}

// TestEvalOracle is the main correctness check of the canonical form: for
// thousands of random expressions and bindings, evaluating the simplified
// expression gives what direct evaluation of the syntax gives.
func TestEvalOracle(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const exprs, bindings = 20000, 8
	checked, divZero, tooBig := 0, 0, 0
	for range exprs {
		n := randNode(rnd, 4)
		text := n.render(rnd)
		e, err := Parse(text)
		switch {
		case err == nil:
		case strings.Contains(err.Error(), "division by zero"):
			divZero++ // a constant 0 divisor: an error for every binding
			continue
		case strings.Contains(err.Error(), "too complex"):
			// Nested remainders, each p-q*(p/q), can exceed the limits.
			tooBig++
			continue
		default:
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		back, err := refParse(text)
		if err != nil {
			t.Fatal(err)
		}
		for i := range bindings {
			// Dims are never negative, but the canonical form is exact for
			// all integers (Substitute may bring in negative values): check
			// some negative bindings too.
			lo := int64(0)
			if i%4 == 3 {
				lo = -20
			}
			env := randEnv(rnd, lo)
			want, werr := refEval(n, env)
			if werr == nil {
				// The reference parser must agree with the generator.
				if v, err := refEval(back, env); err != nil || v != want {
					t.Fatalf("refParse(%q) evaluates to %d, %v; want %d", text, v, err, want)
				}
			}
			got, gerr := e.Eval(env)
			switch {
			case errors.Is(werr, errRefDivZero):
				// Simplification may remove a division by zero, never add one.
			case errors.Is(werr, errOverflow):
				// Rare (a product of many values near 20); nothing to compare.
			case werr != nil:
				t.Fatalf("reference on %q: %v", text, werr)
			case gerr != nil:
				t.Errorf("%q = %s: Eval(%v): %v, want %d", text, e, env, gerr, want)
			case got != want:
				t.Errorf("%q = %s: Eval(%v) = %d, want %d", text, e, env, got, want)
			default:
				checked++
			}
			if gerr != nil && werr == nil {
				return
			}
		}
	}
	t.Logf("%d evaluations checked; of %d expressions, %d divide by a constant 0, %d too complex",
		checked, exprs, divZero, tooBig)
	if checked < exprs*bindings/2 || tooBig > exprs/100 {
		t.Errorf("only %d evaluations checked, %d expressions too complex", checked, tooBig)
	}
}

// TestRoundTripRandom checks Parse(String()) on the random expressions too.
func TestRoundTripRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		text := randNode(rnd, 4).render(rnd)
		e, err := Parse(text)
		if err != nil {
			continue
		}
		back, err := Parse(e.String())
		if err != nil || !Equal(back, e) || back.String() != e.String() {
			t.Fatalf("Parse(%q) = %s; reparsed: %s, %v", text, e, back, err)
		}
		if n := textLen(e.terms()); e.p != nil && n != len(e.String()) {
			t.Fatalf("textLen(%s) = %d, want %d", e, n, len(e.String()))
		}
	}
}

// TestSubstituteOracle checks that substituting part of a binding and then
// evaluating with the rest gives the same value as evaluating directly.
func TestSubstituteOracle(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	checked := 0
	for range 5000 {
		text := randNode(rnd, 4).render(nil)
		e, err := Parse(text)
		if err != nil {
			continue
		}
		env := randEnv(rnd, -5)
		want, err := e.Eval(env)
		if err != nil {
			continue
		}
		part := map[string]Expr{}
		for _, s := range refSyms {
			if rnd.IntN(2) == 0 {
				part[s] = Const(env[s])
			}
		}
		s, err := Substitute(e, part)
		if err != nil {
			t.Errorf("Substitute(%s, %v): %v", e, part, err)
			continue
		}
		for name := range part {
			for _, left := range s.Syms() {
				if left == name {
					t.Errorf("Substitute(%s, %v) = %s still has %s", e, part, s, name)
				}
			}
		}
		if got, err := s.Eval(env); err != nil || got != want {
			t.Errorf("Substitute(%s, %v) = %s; Eval = %d, %v; want %d", e, part, s, got, err, want)
		}
		full := map[string]Expr{}
		for _, name := range refSyms {
			full[name] = Const(env[name])
		}
		if c, err := Substitute(e, full); err != nil || !Equal(c, Const(want)) {
			t.Errorf("Substitute(%s, %v) = %s, %v; want %d", e, full, c, err, want)
		}
		checked++
	}
	if checked < 2000 {
		t.Errorf("only %d substitutions checked", checked)
	}
}

// TestRangeSound checks that every value sampled within the symbols' bounds
// lies in Range, for random expressions and random (including unbounded and
// negative) intervals.
func TestRangeSound(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		text := randNode(rnd, 4).render(nil)
		e, err := Parse(text)
		if err != nil {
			continue
		}
		syms := map[string]Interval{}
		window := map[string][2]int64{} // where to sample from
		for _, s := range refSyms {
			lo := rnd.Int64N(21) - 10
			hi := lo + rnd.Int64N(16)
			iv := Interval{lo, hi}
			switch rnd.IntN(6) {
			case 0:
				iv.Hi, hi = math.MaxInt64, lo+30
			case 1:
				iv.Lo, lo = math.MinInt64, hi-30
			case 2:
				iv, lo, hi = Unbounded(), -30, 30
			case 3:
				lo, hi = 0, 30 // missing: [0, inf)
				window[s] = [2]int64{lo, hi}
				continue
			}
			syms[s] = iv
			window[s] = [2]int64{lo, hi}
		}
		r := Range(e, syms)
		for range 20 {
			env := map[string]int64{}
			for _, s := range refSyms {
				w := window[s]
				env[s] = w[0] + rnd.Int64N(w[1]-w[0]+1)
			}
			v, err := e.Eval(env)
			if err != nil {
				continue
			}
			if v < r.Lo || v > r.Hi {
				t.Fatalf("%s with %v = %d, outside Range %v (syms %v)", e, env, v, r, syms)
			}
		}
	}
}
