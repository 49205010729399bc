package onnx

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Shape arithmetic used as data. A model may use a dim as a number: the
// positions of a rotary embedding are Range(0, float(seq)), a mask is built
// from seq. Such a value stays symbolic at import (so Range becomes an iota
// of a symbolic length), and where it is data at run time the importer
// computes it there from the dims, exactly, in HIR.

// symRuntime materializes a symbolic value (v.sym, possibly float-tagged)
// as a HIR value named after the ONNX value: each symbolic element is a
// run-time i64 scalar (dimScalar), constant elements are constants, a 1-D
// list is their concatenation, and a float-tagged value is cast to its
// float dtype.
func (im *importer) symRuntime(name string, v *val) (string, error) {
	var parts []string
	for i, d := range v.sym {
		var p string
		if c, ok := d.Const(); ok {
			p = im.emitTmp(fmt.Sprintf("%s_%d", name, i), "const", nil, fmt.Sprint(c), "i64[]")
		} else {
			s, err := im.dimScalar(d)
			if err != nil {
				return "", err
			}
			p = s
		}
		parts = append(parts, p)
	}
	var out string
	switch {
	case v.scal && len(parts) == 1:
		out = parts[0]
	case len(parts) == 0:
		out = im.emitTmp(name+"_empty", "const", nil, "[]", "i64[0]")
	default:
		ups := make([]string, len(parts))
		for i, p := range parts {
			ups[i] = im.emitTmp(p+"_1", "unsqueeze", []string{p}, "axes=[0]")
		}
		if len(ups) == 1 {
			out = ups[0]
		} else {
			out = im.emitTmp(name+"_list", "concat", ups, "axis=0")
		}
	}
	if v.fdt != tensor.InvalidDType {
		out = im.emitTmp(name+"_"+v.fdt.String(), "cast", []string{out}, "to="+v.fdt.String())
	}
	v.name = out
	return out, nil
}

// dimScalar returns a run-time i64 scalar holding the value of the dim
// expression d, for any expression. Each dim symbol s is the sum of s ones,
// reduce_sum(expand(1, shape=[s])), which is exact and costs O(s) (a dim
// is a sequence length or a batch, not a data size); the expression is
// then computed from them with add, sub, mul and neg, floor division
// spelled exactly as (a - mod(a, b)) / b (mod is floored), reading d's
// canonical text with the grammar of pkg/dim. Each symbol and expression
// is computed once.
func (im *importer) dimScalar(d dim.Expr) (string, error) {
	key := d.String()
	if im.dimData == nil {
		im.dimData = map[string]string{}
	}
	if s, ok := im.dimData[key]; ok {
		return s, nil
	}
	p := &dimEmitter{im: im, s: key}
	s, err := p.expr(0)
	if err == nil && p.pos != len(p.s) {
		err = p.unexpected()
	}
	if err != nil {
		return "", fmt.Errorf("the graph uses the symbolic value %s as tensor data at run time, and rlx cannot compute it there: %v", key, err)
	}
	im.dimData[key] = s
	return s, nil
}

// dimEmitter parses a dim expression's text (pkg/dim's grammar) and emits
// the HIR statements that compute it.
type dimEmitter struct {
	im  *importer
	s   string
	pos int
}

const maxDimDepth = 64

func (p *dimEmitter) peek() byte {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *dimEmitter) unexpected() error {
	return fmt.Errorf("unexpected %q at offset %d of %q", p.s[min(p.pos, len(p.s)):], p.pos, p.s)
}

func (p *dimEmitter) expr(depth int) (string, error) {
	x, err := p.term(depth)
	for err == nil {
		op := p.peek()
		if op != '+' && op != '-' {
			break
		}
		p.pos++
		var y string
		if y, err = p.term(depth); err == nil {
			x = p.im.emitTmp("dim_value", map[byte]string{'+': "add", '-': "sub"}[op], []string{x, y})
		}
	}
	return x, err
}

func (p *dimEmitter) term(depth int) (string, error) {
	x, err := p.unary(depth)
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			break
		}
		p.pos++
		var y string
		if y, err = p.unary(depth); err != nil {
			break
		}
		switch op {
		case '*':
			x = p.im.emitTmp("dim_value", "mul", []string{x, y})
		case '%':
			x = p.im.emitTmp("dim_value", "mod", []string{x, y})
		default: // floor division, exact whatever div rounds to
			r := p.im.emitTmp("dim_value", "mod", []string{x, y})
			x = p.im.emitTmp("dim_value", "sub", []string{x, r})
			x = p.im.emitTmp("dim_value", "div", []string{x, y})
		}
	}
	return x, err
}

func (p *dimEmitter) unary(depth int) (string, error) {
	neg := false
	for p.peek() == '-' {
		p.pos++
		neg = !neg
	}
	x, err := p.primary(depth)
	if err == nil && neg {
		x = p.im.emitTmp("dim_value", "neg", []string{x})
	}
	return x, err
}

func (p *dimEmitter) primary(depth int) (string, error) {
	c := p.peek()
	start := p.pos
	switch {
	case c == '(':
		if depth >= maxDimDepth {
			return "", fmt.Errorf("parentheses nested more than %d deep", maxDimDepth)
		}
		p.pos++
		x, err := p.expr(depth + 1)
		if err != nil {
			return "", err
		}
		if p.peek() != ')' {
			return "", p.unexpected()
		}
		p.pos++
		return x, nil
	case '0' <= c && c <= '9':
		for p.pos < len(p.s) && '0' <= p.s[p.pos] && p.s[p.pos] <= '9' {
			p.pos++
		}
		return p.im.emitTmp("dim_const", "const", nil, p.s[start:p.pos], "i64[]"), nil
	case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		for p.pos < len(p.s) && !strings.ContainsRune(" +-*/%()", rune(p.s[p.pos])) {
			p.pos++
		}
		return p.im.symScalar(p.s[start:p.pos]), nil
	}
	return "", p.unexpected()
}

// symScalar returns a run-time i64 scalar holding the dim symbol name
// (never negative): the sum of that many ones.
func (im *importer) symScalar(name string) string {
	if s, ok := im.dimData[name]; ok {
		return s
	}
	one := im.emitTmp("dim_one", "const", nil, "1", "i64[]")
	ones := im.emitTmp("dim_ones", "expand", []string{one}, "shape=["+name+"]")
	s := im.emitTmp("dim_"+name, "reduce_sum", []string{ones}, "axes=[0]")
	im.dimData[name] = s
	return s
}
