package hir

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Format prints m in canonical form: the layout `rlxc fmt` writes. It keeps
// every comment and the author's paragraph breaks, aligns end-of-line
// comments (and param types) within a run of lines, puts one blank line
// around functions, and spells every expression in one way. Formatting
// formatted output changes nothing.
func Format(m *Module) []byte {
	var pr printer
	pr.doc(m.HeaderDoc.Doc, "")
	pr.line("", "hir "+strconv.Itoa(m.Version), m.HeaderDoc.Trailer)
	pr.flush()
	pr.para(m.ModuleDoc.Blank)
	pr.doc(m.ModuleDoc.Doc, "")
	pr.line("", "module "+Quote(m.Name), m.ModuleDoc.Trailer)
	pr.flush()
	prevFunc := false
	for i, d := range m.Decls {
		c := d.comments()
		_, isFunc := d.(*FuncDecl)
		_, isParam := d.(*ParamDecl)
		prevParam := false
		if i > 0 {
			_, prevParam = m.Decls[i-1].(*ParamDecl)
		}
		if c.Blank || isFunc || prevFunc || len(c.Doc) > 0 || isParam != prevParam {
			pr.flush()
		}
		pr.para(c.Blank || isFunc || prevFunc)
		pr.doc(c.Doc, "")
		switch d := d.(type) {
		case *DimDecl:
			s := "dim " + d.Name
			if d.HasBounds {
				s += " in [" + strconv.FormatInt(d.Lo, 10) + ", " + strconv.FormatInt(d.Hi, 10) + "]"
			}
			pr.line("", s, d.Trailer)
		case *ParamDecl:
			rest := ": " + formatType(d.Type)
			if d.Init != nil {
				rest += " = " + FormatExpr(d.Init)
			} else if d.File != nil {
				rest += " = @" + quoteString(d.File.Path)
			}
			pr.param("param "+Quote(d.Name), rest, d.Trailer)
		case *FuncDecl:
			pr.function(d)
		}
		prevFunc = isFunc
	}
	pr.flush()
	if len(m.EndDoc) > 0 {
		pr.para(true)
		pr.doc(m.EndDoc, "")
	}
	return pr.out.Bytes()
}

// printer buffers a run of lines so their end-of-line comments can be
// aligned in one column, as gofmt does.
type printer struct {
	out     bytes.Buffer
	run     []pline
	started bool // something has been written
}

type pline struct {
	indent  string
	code    string
	split   int // for params: where the name column ends, else 0
	trailer string
}

func (pr *printer) line(indent, code, trailer string) {
	pr.run = append(pr.run, pline{indent: indent, code: code, trailer: trailer})
}

func (pr *printer) param(name, rest, trailer string) {
	pr.run = append(pr.run, pline{code: name + " " + rest, split: len(name), trailer: trailer})
}

// para writes a blank line before the next paragraph.
func (pr *printer) para(blank bool) {
	if blank && pr.started {
		pr.flush()
		pr.out.WriteByte('\n')
	}
}

// doc writes whole-line comments; "" marks a blank line between them.
func (pr *printer) doc(lines []string, indent string) {
	if len(lines) == 0 {
		return
	}
	pr.flush()
	for _, l := range lines {
		if l == "" {
			pr.out.WriteByte('\n')
		} else {
			pr.out.WriteString(indent + l + "\n")
		}
	}
	pr.started = true
}

func (pr *printer) flush() {
	if len(pr.run) == 0 {
		return
	}
	nameWidth, codeWidth := 0, 0
	for _, l := range pr.run {
		if l.split > 0 {
			nameWidth = max(nameWidth, utf8.RuneCountInString(l.code[:l.split]))
		}
	}
	codes := make([]string, len(pr.run))
	for i, l := range pr.run {
		code := l.code
		if l.split > 0 {
			name := code[:l.split]
			code = name + strings.Repeat(" ", nameWidth-utf8.RuneCountInString(name)) + code[l.split:]
		}
		codes[i] = l.indent + code
		if l.trailer != "" {
			codeWidth = max(codeWidth, utf8.RuneCountInString(codes[i]))
		}
	}
	for i, l := range pr.run {
		pr.out.WriteString(codes[i])
		if l.trailer != "" {
			pr.out.WriteString(strings.Repeat(" ", codeWidth-utf8.RuneCountInString(codes[i])+1))
			pr.out.WriteString(l.trailer)
		}
		pr.out.WriteByte('\n')
	}
	pr.run = pr.run[:0]
	pr.started = true
}

func (pr *printer) function(f *FuncDecl) {
	var b strings.Builder
	b.WriteString("func " + Quote(f.Name))
	writeFields(&b, f.Params)
	b.WriteString(" -> ")
	writeFields(&b, f.Results)
	b.WriteString(" {")
	pr.line("", b.String(), f.Trailer)
	pr.flush()
	const indent = "  "
	for _, s := range f.Body {
		if s.Blank || len(s.Doc) > 0 {
			pr.flush()
		}
		if s.Blank {
			pr.out.WriteByte('\n')
		}
		pr.doc(s.Doc, indent)
		pr.line(indent, FormatStmt(s), s.Trailer)
	}
	if r := f.Return; r != nil {
		if r.Blank || len(r.Doc) > 0 {
			pr.flush()
		}
		if r.Blank {
			pr.out.WriteByte('\n')
		}
		pr.doc(r.Doc, indent)
		names := make([]string, len(r.Values))
		for i, v := range r.Values {
			names[i] = Quote(v.Name)
		}
		pr.line(indent, strings.TrimSpace("return "+strings.Join(names, ", ")), r.Trailer)
	}
	pr.flush()
	pr.doc(f.EndDoc, indent)
	pr.out.WriteString("}\n")
}

func writeFields(b *strings.Builder, fields []*Field) {
	b.WriteByte('(')
	for i, fd := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Quote(fd.Name) + ": " + formatType(fd.Type))
	}
	b.WriteByte(')')
}

// FormatStmt prints one statement (without comments) in canonical form.
func FormatStmt(s *Stmt) string {
	var b strings.Builder
	for i, r := range s.Results {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Quote(r.Name))
	}
	if s.Type != nil {
		b.WriteString(" : " + formatType(s.Type))
	}
	b.WriteString(" = " + s.Op + "(")
	for i, a := range s.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		if id, ok := a.(*Ident); ok {
			b.WriteString(Quote(id.Name))
		} else {
			b.WriteString(FormatExpr(a))
		}
	}
	for i, a := range s.Attrs {
		if i > 0 || len(s.Args) > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Name + "=" + FormatExpr(a.Value))
	}
	b.WriteByte(')')
	return b.String()
}

func formatType(t *TypeExpr) string {
	if t == nil {
		return "invalid[]"
	}
	var b strings.Builder
	b.WriteString(t.DType.String() + "[")
	for i, d := range t.Dims {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(FormatExpr(d))
	}
	b.WriteByte(']')
	return b.String()
}

// Operator precedence for printing dim arithmetic with the fewest parentheses.
const (
	precAdd = 1
	precMul = 2
)

func precOf(op Token) int {
	if op == ADD || op == SUB {
		return precAdd
	}
	return precMul
}

// FormatExpr prints an expression in canonical form.
func FormatExpr(x Expr) string {
	var b strings.Builder
	writeExpr(&b, x, 0, false)
	return b.String()
}

// writeExpr prints x as an operand of an operator of precedence prec; right
// says x is a right operand, where equal precedence needs parentheses
// because the operators associate to the left.
func writeExpr(b *strings.Builder, x Expr, prec int, right bool) {
	switch x := x.(type) {
	case *Ident:
		b.WriteString(x.Name)
	case *IntLit:
		s := strconv.FormatInt(x.Value, 10)
		if x.Value < 0 && prec > 0 {
			s = "(" + s + ")"
		}
		b.WriteString(s)
	case *FloatLit:
		s := formatFloat(x.Value)
		if strings.HasPrefix(s, "-") && prec > 0 {
			s = "(" + s + ")"
		}
		b.WriteString(s)
	case *BoolLit:
		b.WriteString(strconv.FormatBool(x.Value))
	case *StringLit:
		b.WriteString(quoteString(x.Value))
	case *DTypeLit:
		b.WriteString(x.DType.String())
	case *TypeExpr:
		b.WriteString(formatType(x))
	case *ListLit:
		b.WriteByte('[')
		for i, e := range x.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, e, 0, false)
		}
		b.WriteByte(']')
	case *UnaryExpr:
		if prec > 0 {
			b.WriteByte('(')
		}
		b.WriteByte('-')
		writeExpr(b, x.X, precMul+1, false)
		if prec > 0 {
			b.WriteByte(')')
		}
	case *BinaryExpr:
		p := precOf(x.Op)
		paren := p < prec || p == prec && right
		if paren {
			b.WriteByte('(')
		}
		writeExpr(b, x.X, p, false)
		b.WriteString(x.Op.String()[1:2])
		writeExpr(b, x.Y, p, true)
		if paren {
			b.WriteByte(')')
		}
	}
}

// formatFloat spells a float so that it reads back as the same float and
// always as a float: 0.5, 1.0, 1e-5, inf, -inf, nan.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		sign := ""
		if exp[0] == '-' || exp[0] == '+' {
			if exp[0] == '-' {
				sign = "-"
			}
			exp = exp[1:]
		}
		exp = strings.TrimLeft(exp, "0")
		return mant + "e" + sign + exp
	}
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// quoteString always quotes, for string literals and file paths.
func quoteString(s string) string {
	q := Quote(s)
	if !strings.HasPrefix(q, `"`) {
		q = `"` + q + `"`
	}
	return q
}
