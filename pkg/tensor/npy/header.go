package npy

import (
	"fmt"
	"strconv"
	"strings"
)

// The .npy header is the repr of a Python dict:
//
//	{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//
// It is parsed here as a small Python literal grammar (strings, ints, True,
// False, None, tuples, lists and dicts), never evaluated.

type pyKind int

const (
	pyStr pyKind = iota
	pyInt
	pyBool
	pyNone
	pyTuple
	pyList
	pyDict
)

type pyValue struct {
	kind  pyKind
	str   string    // pyStr
	num   int64     // pyInt
	big   bool      // pyInt too large for int64
	truth bool      // pyBool
	items []pyValue // pyTuple, pyList; pyDict: the values
	keys  []pyValue // pyDict: the keys
	raw   string    // the source text of the value
}

// maxNesting bounds the depth of nested brackets in a header.
const maxNesting = 32

type pyParser struct {
	src   string
	pos   int
	depth int
}

type syntaxError struct {
	msg string
	pos int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.pos) }

func (p *pyParser) fail(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), pos: p.pos}
}

func (p *pyParser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

// parsePyLiteral parses one literal followed only by whitespace.
func parsePyLiteral(src string) (pyValue, error) {
	p := &pyParser{src: src}
	v, err := p.value()
	if err != nil {
		return v, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return v, p.fail("unexpected %s after the dict", p.describe())
	}
	return v, nil
}

// describe names the next character for an error message.
func (p *pyParser) describe() string {
	if p.pos >= len(p.src) {
		return "end of header"
	}
	return strconv.QuoteRune(rune(p.src[p.pos]))
}

func (p *pyParser) value() (pyValue, error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return pyValue{}, p.fail("unexpected end of header")
	}
	start := p.pos
	c := p.src[p.pos]
	var v pyValue
	var err error
	switch {
	case c == '\'' || c == '"':
		v, err = p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		v, err = p.integer()
	case c == '(' || c == '[' || c == '{':
		if p.depth >= maxNesting {
			return pyValue{}, p.fail("brackets nested deeper than %d", maxNesting)
		}
		p.depth++
		if c == '{' {
			v, err = p.dict()
		} else {
			v, err = p.sequence()
		}
		p.depth--
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_':
		v, err = p.ident()
	default:
		return pyValue{}, p.fail("unexpected %s", p.describe())
	}
	if err != nil {
		return v, err
	}
	v.raw = p.src[start:p.pos]
	return v, nil
}

func (p *pyParser) str() (pyValue, error) {
	q := p.src[p.pos]
	start := p.pos
	p.pos++
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == q:
			p.pos++
			return pyValue{kind: pyStr, str: b.String()}, nil
		case c == '\n':
			p.pos = start
			return pyValue{}, p.fail("unterminated string")
		case c == '\\' && p.pos+1 < len(p.src):
			e := p.src[p.pos+1]
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			p.pos += 2
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	p.pos = start
	return pyValue{}, p.fail("unterminated string")
}

func (p *pyParser) integer() (pyValue, error) {
	start := p.pos
	neg := false
	if p.src[p.pos] == '-' {
		neg = true
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits {
		return pyValue{}, p.fail("expected a digit after '-'")
	}
	text := p.src[start:p.pos]
	// Python 2 wrote longs with an L suffix: (3L, 4L).
	if p.pos < len(p.src) && (p.src[p.pos] == 'L' || p.src[p.pos] == 'l') {
		p.pos++
	}
	if p.pos < len(p.src) {
		if c := p.src[p.pos]; c == '.' || c == 'e' || c == 'E' || c == 'j' || c == 'x' || c == '_' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return pyValue{}, p.fail("unexpected %s in the number %s", p.describe(), text)
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		// Only a range error is possible here: the text is an optional '-'
		// and digits.
		v := pyValue{kind: pyInt, big: true}
		if neg {
			v.num = -1 // keeps the sign for the error message
		}
		return v, nil
	}
	return pyValue{kind: pyInt, num: n}, nil
}

func (p *pyParser) ident() (pyValue, error) {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' {
			p.pos++
			continue
		}
		break
	}
	switch word := p.src[start:p.pos]; word {
	case "True":
		return pyValue{kind: pyBool, truth: true}, nil
	case "False":
		return pyValue{kind: pyBool}, nil
	case "None":
		return pyValue{kind: pyNone}, nil
	default:
		p.pos = start
		if len(word) > 20 {
			word = word[:20] + "..."
		}
		return pyValue{}, p.fail("unexpected name %q (only True, False and None are allowed)", word)
	}
}

// sequence parses a tuple or a list. A parenthesized single value without a
// trailing comma is that value, as in Python.
func (p *pyParser) sequence() (pyValue, error) {
	open := p.src[p.pos]
	closing := byte(')')
	kind := pyTuple
	if open == '[' {
		closing, kind = ']', pyList
	}
	p.pos++
	v := pyValue{kind: kind}
	sawComma := false
	for {
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == closing {
			p.pos++
			break
		}
		item, err := p.value()
		if err != nil {
			return v, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			sawComma = true
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == closing {
			p.pos++
			break
		}
		return v, p.fail("expected ',' or %q, found %s", closing, p.describe())
	}
	if kind == pyTuple && len(v.items) == 1 && !sawComma {
		return v.items[0], nil
	}
	return v, nil
}

func (p *pyParser) dict() (pyValue, error) {
	p.pos++ // '{'
	v := pyValue{kind: pyDict}
	for {
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		key, err := p.value()
		if err != nil {
			return v, err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return v, p.fail("expected ':' after the key %s, found %s", key.raw, p.describe())
		}
		p.pos++
		val, err := p.value()
		if err != nil {
			return v, err
		}
		v.keys = append(v.keys, key)
		v.items = append(v.items, val)
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		return v, p.fail("expected ',' or '}', found %s", p.describe())
	}
}

// header is what a .npy header says.
type header struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseHeader checks the dict: exactly the keys descr, fortran_order and
// shape, as NumPy requires.
func parseHeader(text string) (header, error) {
	var h header
	v, err := parsePyLiteral(text)
	if err != nil {
		return h, fmt.Errorf("malformed header %s: %v", quoteHeader(text), err)
	}
	if v.kind != pyDict {
		return h, fmt.Errorf("malformed header %s: not a dict", quoteHeader(text))
	}
	seen := map[string]bool{}
	for i, k := range v.keys {
		if k.kind != pyStr {
			return h, fmt.Errorf("header key %s is not a string", clip(k.raw))
		}
		if seen[k.str] {
			return h, fmt.Errorf("header has the key %q twice", k.str)
		}
		seen[k.str] = true
		val := v.items[i]
		switch k.str {
		case "descr":
			if val.kind != pyStr {
				return h, fmt.Errorf("unsupported descr %s: structured and nested dtypes are not supported", clip(val.raw))
			}
			h.descr = val.str
		case "fortran_order":
			if val.kind != pyBool {
				return h, fmt.Errorf("header fortran_order is %s, want True or False", clip(val.raw))
			}
			h.fortran = val.truth
		case "shape":
			if val.kind != pyTuple {
				return h, fmt.Errorf("header shape is %s, want a tuple of ints", clip(val.raw))
			}
			if len(val.items) > MaxDims {
				return h, fmt.Errorf("header shape has %d dims, more than the %d NumPy allows", len(val.items), MaxDims)
			}
			h.shape = make([]int64, len(val.items))
			for j, d := range val.items {
				switch {
				case d.kind != pyInt:
					return h, fmt.Errorf("header shape %s: dim %d is %s, not an int", clip(val.raw), j, clip(d.raw))
				case d.num < 0:
					return h, fmt.Errorf("header shape %s: dim %d is negative", clip(val.raw), j)
				case d.big:
					return h, fmt.Errorf("header shape %s: dim %d is too large", clip(val.raw), j)
				}
				h.shape[j] = d.num
			}
		default:
			return h, fmt.Errorf("header has the unexpected key %q (want descr, fortran_order, shape)", clip(k.str))
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("header %s has no %q key", quoteHeader(text), k)
		}
	}
	return h, nil
}

// clip shortens a piece of header text for an error message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

func quoteHeader(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	if len(text) > 120 {
		return strconv.Quote(text[:120]) + "..."
	}
	return strconv.Quote(text)
}

// shapeString prints a shape as Python does: (), (5,), (2, 3).
func shapeString(shape []int64) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}
