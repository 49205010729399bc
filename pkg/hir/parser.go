package hir

import (
	"fmt"
	"math"
	"strconv"
)

// maxErrors bounds the diagnostics of one file: past it, more are noise.
const maxErrors = 50

// maxNesting bounds parentheses and list nesting, so no input can exhaust
// the stack.
const maxNesting = 64

// bailout stops a parse that has reported maxErrors errors.
type bailout struct{}

// ParseFile parses one .hir file. It returns the module (partial when there
// were errors) and an ErrorList with every syntax error found.
func ParseFile(file string, src []byte) (m *Module, err error) {
	var errs ErrorList
	p := &parser{file: file, errs: &errs}
	p.scanner = NewScanner(file, src, &errs)
	p.tok = NEWLINE // the start of the file behaves like the start of a line
	p.next()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
		}
		errs.Sort()
		err = errs.Err()
	}()
	m = p.parseModule()
	return m, nil
}

type parser struct {
	file    string
	scanner *Scanner
	errs    *ErrorList

	pos Pos
	tok Token
	lit string

	// Comments seen but not yet attached: whole-line comments ("" marks a
	// blank line) wait for the next line's construct; an end-of-line
	// comment waits for the construct on its own line.
	doc     []string
	trailer string

	nesting int
}

// next advances to the next token that is not a comment, filing comments
// and blank lines on the way.
func (p *parser) next() {
	prev := p.tok
	for {
		pos, tok, lit := p.scanner.Scan()
		switch tok {
		case COMMENT:
			if prev != NEWLINE {
				if p.trailer != "" {
					p.doc = append(p.doc, p.trailer)
				}
				p.trailer = lit
			} else {
				p.doc = append(p.doc, lit)
			}
			prev = COMMENT
			continue
		case NEWLINE:
			if prev == NEWLINE && (len(p.doc) == 0 || p.doc[len(p.doc)-1] != "") {
				p.doc = append(p.doc, "")
			}
		}
		p.pos, p.tok, p.lit = pos, tok, lit
		return
	}
}

func (p *parser) errorf(pos Pos, format string, args ...any) {
	if n := len(*p.errs); n > 0 && (*p.errs)[n-1].Pos.Line == pos.Line {
		return
	}
	p.errs.Add(p.file, pos, fmt.Sprintf(format, args...))
	if len(*p.errs) >= maxErrors {
		p.errs.Add(p.file, pos, "too many errors")
		panic(bailout{})
	}
}

// found describes the current token for "expected X, found Y" messages.
func (p *parser) found() string {
	switch p.tok {
	case IDENT, INT, FLOAT:
		return fmt.Sprintf("%s %q", p.tok, p.lit)
	case STRING:
		return fmt.Sprintf("string %s", Quote(p.lit))
	}
	return p.tok.String()
}

func (p *parser) expect(tok Token, context string) Pos {
	pos := p.pos
	if p.tok != tok {
		p.errorf(pos, "expected %s %s, found %s", tok, context, p.found())
		return pos
	}
	p.next()
	return pos
}

// skipNewlines skips line ends. Inside brackets a list may continue on the
// next line after '(' , '[' or ',' (as in Go), so a missing ')' is reported
// at the end of its own line, not on the next one.
func (p *parser) skipNewlines() {
	for p.tok == NEWLINE {
		p.next()
	}
}

// syncLine skips to the start of the next line after an error.
func (p *parser) syncLine() {
	for p.tok != NEWLINE && p.tok != EOF {
		p.next()
	}
	p.skipNewlines()
}

// takeComments returns the comments waiting for the construct that starts
// at the current token.
func (p *parser) takeComments() Comments {
	var c Comments
	doc := p.doc
	for len(doc) > 0 && doc[0] == "" {
		c.Blank = true
		doc = doc[1:]
	}
	if len(doc) > 0 {
		c.Doc = append([]string(nil), doc...)
	}
	p.doc = p.doc[:0]
	return c
}

// endLine finishes a line-level construct: its end-of-line comment is
// attached to c, then the line must end.
func (p *parser) endLine(c *Comments, what string) {
	if p.tok != NEWLINE && p.tok != EOF {
		p.errorf(p.pos, "expected end of line after %s, found %s", what, p.found())
		p.syncLine()
	}
	if c != nil {
		c.Trailer, p.trailer = p.trailer, ""
	}
	p.skipNewlines()
}

// docLines returns pending whole-line comments (for the end of a body or file).
func (p *parser) docLines() []string {
	c := p.takeComments()
	if p.trailer != "" {
		c.Doc = append(c.Doc, p.trailer)
		p.trailer = ""
	}
	for len(c.Doc) > 0 && c.Doc[len(c.Doc)-1] == "" {
		c.Doc = c.Doc[:len(c.Doc)-1]
	}
	return c.Doc
}

func (p *parser) isKeyword(kw string) bool { return p.tok == IDENT && p.lit == kw }

func (p *parser) parseModule() *Module {
	m := &Module{File: p.file}
	p.skipNewlines()

	m.HeaderDoc = p.takeComments()
	m.HeaderDoc.Blank = false
	if !p.isKeyword("hir") {
		p.errorf(p.pos, "expected 'hir 1' at the start of the file, found %s", p.found())
		if !p.isKeyword("module") {
			p.syncLine()
		}
	} else {
		m.VersionPos = p.pos
		p.next()
		if p.tok != INT {
			p.errorf(p.pos, "expected the format version after 'hir', found %s", p.found())
		} else {
			v, err := strconv.Atoi(p.lit)
			if err != nil || v != 1 {
				p.errorf(p.pos, "unsupported HIR version %s: this rlxc reads version 1", p.lit)
			}
			m.Version = v
			p.next()
		}
		p.endLine(&m.HeaderDoc, "the version")
	}

	m.ModuleDoc = p.takeComments()
	if !p.isKeyword("module") {
		p.errorf(p.pos, "expected 'module NAME' after 'hir 1', found %s", p.found())
	} else {
		p.next()
		m.NamePos = p.pos
		m.Name = p.name("module name")
		p.endLine(&m.ModuleDoc, "the module name")
	}

	for p.tok != EOF {
		c := p.takeComments()
		var d Decl
		switch {
		case p.isKeyword("dim"):
			d = p.parseDim()
		case p.isKeyword("param"):
			d = p.parseParam()
		case p.isKeyword("func"):
			d = p.parseFunc(c)
		default:
			p.errorf(p.pos, "expected a declaration (dim, param or func), found %s", p.found())
			p.syncLine()
			continue
		}
		if d == nil {
			continue
		}
		if f, ok := d.(*FuncDecl); ok {
			f.Comments.Doc, f.Comments.Blank = c.Doc, c.Blank
		} else {
			*d.comments() = c
			p.endLine(d.comments(), "the declaration")
		}
		// Functions stand in their own paragraph in the canonical layout;
		// recording that here keeps parse(print(m)) equal to m.
		if _, isFunc := d.(*FuncDecl); isFunc || len(m.Decls) > 0 && isFuncDecl(m.Decls[len(m.Decls)-1]) {
			d.comments().Blank = true
		}
		m.Decls = append(m.Decls, d)
	}
	m.EndDoc = p.docLines()
	return m
}

// name parses a value, param or module name: an identifier or a quoted string.
func (p *parser) name(what string) string {
	switch p.tok {
	case IDENT, STRING:
		s := p.lit
		p.next()
		return s
	}
	p.errorf(p.pos, "expected %s, found %s", what, p.found())
	return ""
}

func (p *parser) parseDim() Decl {
	d := &DimDecl{Pos: p.pos}
	p.next()
	d.NamePos = p.pos
	if p.tok != IDENT {
		p.errorf(p.pos, "expected a dim name, found %s", p.found())
		p.syncLine()
		return nil
	}
	d.Name = p.lit
	p.next()
	if p.isKeyword("in") {
		p.next()
		d.HasBounds = true
		d.BoundsPos = p.pos
		if p.tok != LBRACK {
			p.errorf(p.pos, "expected '[LO, HI]' bounds after 'in', found %s", p.found())
			p.syncLine()
			return nil
		}
		p.next()
		d.Lo = p.boundInt("lower")
		p.expect(COMMA, "between the dim's bounds")
		d.Hi = p.boundInt("upper")
		p.expect(RBRACK, "after the dim's bounds")
	}
	return d
}

func (p *parser) boundInt(which string) int64 {
	pos := p.pos
	x := p.parseExpr()
	if v, ok := x.(*IntLit); ok {
		return v.Value
	}
	p.errorf(pos, "the %s bound must be an integer literal", which)
	return 0
}

func (p *parser) parseParam() Decl {
	d := &ParamDecl{Pos: p.pos}
	p.next()
	d.NamePos = p.pos
	d.Name = p.name("a param name")
	p.expect(COLON, "after the param name")
	d.Type = p.parseType()
	if p.tok == ASSIGN {
		p.next()
		if p.tok == AT {
			p.next()
			d.File = &FileRef{Pos: p.pos}
			if p.tok != STRING {
				p.errorf(p.pos, "expected a quoted file name after '@', found %s", p.found())
			} else {
				d.File.Path = p.lit
				p.next()
			}
		} else {
			d.Init = p.parseValue()
		}
	}
	return d
}

// parseType parses DTYPE[DIM, ...].
func (p *parser) parseType() *TypeExpr {
	t := &TypeExpr{Pos: p.pos}
	if p.tok != IDENT {
		p.errorf(p.pos, "expected a tensor type such as f32[batch, 512], found %s", p.found())
		return t
	}
	dt, ok := ParseDType(p.lit)
	if !ok {
		p.errorf(p.pos, "unknown dtype %q (want one of f32 f16 bf16 f64 i8 i16 i32 i64 u8 bool)", p.lit)
	}
	t.DType = dt
	p.next()
	if p.tok != LBRACK {
		p.errorf(p.pos, "expected '[' after dtype %s (a scalar is %s[]), found %s", dt, dt, p.found())
		return t
	}
	p.next()
	p.skipNewlines()
	for p.tok != RBRACK && p.tok != EOF {
		t.Dims = append(t.Dims, p.parseExpr())
		if p.tok != COMMA {
			break
		}
		p.next()
		p.skipNewlines()
	}
	p.expect(RBRACK, "to close the shape")
	return t
}

func (p *parser) parseFunc(c Comments) Decl {
	f := &FuncDecl{Pos: p.pos}
	p.next()
	f.NamePos = p.pos
	f.Name = p.name("a function name")
	f.Params = p.parseFields("(", "arguments")
	if p.tok != ARROW {
		p.errorf(p.pos, "expected '->' and the result list after the arguments, found %s", p.found())
	} else {
		p.next()
	}
	f.Results = p.parseFields("(", "results")
	if p.tok != LBRACE {
		p.errorf(p.pos, "expected '{' to open the function body, found %s", p.found())
		p.syncLine()
	} else {
		p.next()
		p.endLine(&f.Comments, "'{'")
	}
	f.Comments.Trailer = c.Trailer
	for {
		sc := p.takeComments()
		switch {
		case p.tok == RBRACE:
			p.doc = append(sc.Doc, p.doc...)
			f.EndDoc = p.docLines()
			f.Rbrace = p.pos
			p.next()
			if f.Return == nil {
				p.errorf(f.Rbrace, "function %s has no return statement", f.Name)
			}
			p.endLine(nil, "'}'")
			if p.trailer != "" {
				f.EndDoc = append(f.EndDoc, p.trailer)
				p.trailer = ""
			}
			return f
		case p.tok == EOF || p.isKeyword("func") && p.pos.Col == 1:
			p.errorf(p.pos, "expected '}' to close function %s, found %s", f.Name, p.found())
			return f
		case p.isKeyword("return"):
			r := &ReturnStmt{Comments: sc, Pos: p.pos}
			if f.Return != nil {
				p.errorf(p.pos, "function %s has a second return statement (the first is at %s)", f.Name, f.Return.Pos)
			}
			p.next()
			for p.tok != NEWLINE && p.tok != EOF && p.tok != RBRACE {
				pos := p.pos
				r.Values = append(r.Values, &Ident{Pos: pos, Name: p.name("a value name")})
				if p.tok != COMMA {
					break
				}
				p.next()
			}
			p.endLine(&r.Comments, "the return values")
			if f.Return == nil {
				f.Return = r
			}
		default:
			if f.Return != nil {
				p.errorf(p.pos, "statement after return: return must be the last statement of %s", f.Name)
			}
			s := p.parseStmt()
			if s == nil {
				continue
			}
			s.Comments = sc
			p.endLine(&s.Comments, "the operation")
			f.Body = append(f.Body, s)
		}
	}
}

// parseFields parses `(name: TYPE, ...)`.
func (p *parser) parseFields(open, what string) []*Field {
	if p.tok != LPAREN {
		p.errorf(p.pos, "expected '(' to open the %s, found %s", what, p.found())
		return nil
	}
	p.next()
	p.skipNewlines()
	var fields []*Field
	for p.tok != RPAREN && p.tok != EOF {
		fd := &Field{Pos: p.pos}
		fd.Name = p.name("a name")
		p.expect(COLON, "between the name and its type")
		fd.Type = p.parseType()
		fields = append(fields, fd)
		if p.tok != COMMA {
			break
		}
		p.next()
		p.skipNewlines()
	}
	p.expect(RPAREN, "to close the "+what)
	return fields
}

// parseStmt parses `a, b [: TYPE] = op(args)`; nil after an error.
func (p *parser) parseStmt() *Stmt {
	s := &Stmt{Pos: p.pos}
	for {
		if p.tok != IDENT && p.tok != STRING {
			p.errorf(p.pos, "expected a statement (NAME = op(...)) or return, found %s", p.found())
			p.syncLine()
			return nil
		}
		s.Results = append(s.Results, &Ident{Pos: p.pos, Name: p.lit})
		p.next()
		if p.tok != COMMA {
			break
		}
		p.next()
	}
	if p.tok == COLON {
		p.next()
		s.Type = p.parseType()
		if len(s.Results) > 1 {
			p.errorf(s.Type.Pos, "a declared type needs a single result, found %d", len(s.Results))
		}
	}
	if p.tok != ASSIGN {
		p.errorf(p.pos, "expected '=' after %s, found %s", Quote(s.Results[len(s.Results)-1].Name), p.found())
		p.syncLine()
		return nil
	}
	p.next()
	if p.tok != IDENT {
		p.errorf(p.pos, "expected an operation name after '=', found %s", p.found())
		p.syncLine()
		return nil
	}
	s.Op, s.OpPos = p.lit, p.pos
	p.next()
	if p.tok != LPAREN {
		p.errorf(p.pos, "expected '(' after %s, found %s", s.Op, p.found())
		p.syncLine()
		return nil
	}
	p.next()
	p.skipNewlines()
	for p.tok != RPAREN && p.tok != EOF && p.tok != NEWLINE {
		if p.tok == IDENT && p.peekAssign() {
			a := &Attr{Pos: p.pos, Name: p.lit}
			p.next() // name
			p.next() // =
			p.skipNewlines()
			a.Value = p.parseValue()
			s.Attrs = append(s.Attrs, a)
		} else {
			pos := p.pos
			x := p.parseOperand()
			if len(s.Attrs) > 0 {
				p.errorf(pos, "operand after attributes: operands come first, then name=value attributes")
			}
			s.Args = append(s.Args, x)
		}
		if p.tok != COMMA {
			break
		}
		p.next()
		p.skipNewlines()
	}
	s.Rparen = p.pos
	p.expect(RPAREN, "to close the operands of "+s.Op)
	return s
}

// peekAssign reports whether the token after the current one is '=', which
// makes the current name an attribute name. Scanning ahead is cheap: the
// scanner state is copied and restored.
func (p *parser) peekAssign() bool {
	saved := *p.scanner
	var errs ErrorList
	p.scanner.errs = &errs
	_, tok, _ := p.scanner.Scan()
	*p.scanner = saved
	return tok == ASSIGN
}

// parseOperand parses a value name, or, for const, a literal or a type.
func (p *parser) parseOperand() Expr {
	switch p.tok {
	case STRING:
		x := &Ident{Pos: p.pos, Name: p.lit}
		p.next()
		return x
	case IDENT:
		if _, ok := ParseDType(p.lit); ok && p.peekIs(LBRACK) {
			return p.parseType()
		}
		switch p.lit {
		case "true", "false", "inf", "nan":
			return p.parseValue()
		}
		x := &Ident{Pos: p.pos, Name: p.lit}
		p.next()
		return x
	}
	return p.parseValue()
}

func (p *parser) peekIs(tok Token) bool {
	saved := *p.scanner
	var errs ErrorList
	p.scanner.errs = &errs
	_, t, _ := p.scanner.Scan()
	*p.scanner = saved
	return t == tok
}

// parseValue parses an attribute value or a literal: a list or an expression.
func (p *parser) parseValue() Expr {
	if p.tok == LBRACK {
		return p.parseList()
	}
	return p.parseExpr()
}

func (p *parser) enter(pos Pos) bool {
	p.nesting++
	if p.nesting > maxNesting {
		p.errorf(pos, "nesting deeper than %d levels", maxNesting)
		return false
	}
	return true
}

func (p *parser) parseList() Expr {
	l := &ListLit{Pos: p.pos}
	if !p.enter(p.pos) {
		p.nesting--
		p.syncLine()
		return l
	}
	defer func() { p.nesting-- }()
	p.next()
	p.skipNewlines()
	for p.tok != RBRACK && p.tok != EOF {
		l.Elems = append(l.Elems, p.parseValue())
		if p.tok != COMMA {
			break
		}
		p.next()
		p.skipNewlines()
	}
	p.expect(RBRACK, "to close the list")
	return l
}

// parseExpr parses additive dim arithmetic; literals are its leaves.
func (p *parser) parseExpr() Expr {
	x := p.parseTerm()
	for p.tok == ADD || p.tok == SUB {
		op, pos := p.tok, p.pos
		p.next()
		x = &BinaryExpr{Pos: pos, Op: op, X: x, Y: p.parseTerm()}
	}
	return x
}

func (p *parser) parseTerm() Expr {
	x := p.parseUnary()
	for p.tok == MUL || p.tok == QUO || p.tok == REM {
		op, pos := p.tok, p.pos
		p.next()
		x = &BinaryExpr{Pos: pos, Op: op, X: x, Y: p.parseUnary()}
	}
	return x
}

func (p *parser) parseUnary() Expr {
	if p.tok != SUB {
		return p.parsePrimary()
	}
	pos := p.pos
	if !p.enter(pos) {
		p.nesting--
		p.syncLine()
		return &IntLit{Pos: pos}
	}
	defer func() { p.nesting-- }()
	p.next()
	x := p.parseUnary()
	// A minus on a number literal is part of the literal: -1, -0.5, -inf.
	switch v := x.(type) {
	case *IntLit:
		if v.Value != math.MinInt64 {
			return &IntLit{Pos: pos, Value: -v.Value}
		}
	case *FloatLit:
		return &FloatLit{Pos: pos, Value: -v.Value}
	}
	return &UnaryExpr{Pos: pos, X: x}
}

func (p *parser) parsePrimary() Expr {
	pos := p.pos
	switch p.tok {
	case INT:
		v, err := strconv.ParseInt(p.lit, 10, 64)
		if err != nil {
			p.errorf(pos, "integer %s does not fit in 64 bits", p.lit)
		}
		p.next()
		return &IntLit{Pos: pos, Value: v}
	case FLOAT:
		v, err := strconv.ParseFloat(p.lit, 64)
		if err != nil {
			p.errorf(pos, "number %s is out of range for a 64-bit float", p.lit)
		}
		p.next()
		return &FloatLit{Pos: pos, Value: v}
	case STRING:
		s := p.lit
		p.next()
		return &StringLit{Pos: pos, Value: s}
	case IDENT:
		name := p.lit
		p.next()
		switch name {
		case "true", "false":
			return &BoolLit{Pos: pos, Value: name == "true"}
		case "inf":
			return &FloatLit{Pos: pos, Value: math.Inf(1)}
		case "nan":
			return &FloatLit{Pos: pos, Value: math.NaN()}
		}
		if dt, ok := ParseDType(name); ok {
			return &DTypeLit{Pos: pos, DType: dt}
		}
		return &Ident{Pos: pos, Name: name}
	case LPAREN:
		if !p.enter(pos) {
			p.nesting--
			p.syncLine()
			return &IntLit{Pos: pos}
		}
		defer func() { p.nesting-- }()
		p.next()
		x := p.parseExpr()
		p.expect(RPAREN, "to close the parenthesis")
		return x
	case LBRACK:
		return p.parseList()
	}
	p.errorf(pos, "expected a value, found %s", p.found())
	if p.tok != NEWLINE && p.tok != EOF && p.tok != RPAREN && p.tok != RBRACK && p.tok != COMMA {
		p.next()
	}
	return &IntLit{Pos: pos}
}

func isFuncDecl(d Decl) bool { _, ok := d.(*FuncDecl); return ok }
