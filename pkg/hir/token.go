package hir

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a 1-based line and column (in characters) within one source file.
// The zero Pos means "no position".
type Pos struct {
	Line, Col int
}

// IsValid reports whether p names a place in a file.
func (p Pos) IsValid() bool { return p.Line > 0 }

func (p Pos) String() string {
	if !p.IsValid() {
		return "-"
	}
	return fmt.Sprintf("%d:%d", p.Line, p.Col)
}

// Error is one diagnostic at a position in a file.
type Error struct {
	File string
	Pos  Pos
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Pos.IsValid() {
		b.WriteString(e.Pos.String())
		b.WriteByte(':')
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList collects diagnostics, like go/scanner.ErrorList: every error is
// kept so a user sees all of them in one run, not one per run.
type ErrorList []*Error

// Add appends an error.
func (l *ErrorList) Add(file string, pos Pos, msg string) {
	*l = append(*l, &Error{File: file, Pos: pos, Msg: msg})
}

// Sort orders the list by file, line and column; errors at one position keep
// the order in which they were found.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Pos.Col < b.Pos.Col
	})
}

// Err returns nil for an empty list, else the list itself as an error.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Token is the kind of a lexical token.
type Token int

// The tokens of HIR. Keywords (hir, module, dim, param, func, return, in) are
// identifiers to the scanner; the parser gives them meaning by position, so
// "in" or "dim" stay usable as tensor names where nothing is ambiguous.
const (
	ILLEGAL Token = iota
	EOF
	NEWLINE
	IDENT   // fc1.weight
	STRING  // "onnx::MatMul_123"
	INT     // 512
	FLOAT   // 1e-5, 0.5
	COMMENT // # to end of line

	LPAREN // (
	RPAREN // )
	LBRACK // [
	RBRACK // ]
	LBRACE // {
	RBRACE // }
	COMMA  // ,
	COLON  // :
	ASSIGN // =
	ARROW  // ->
	AT     // @
	ADD    // +
	SUB    // -
	MUL    // *
	QUO    // /
	REM    // %
)

var tokenText = [...]string{
	ILLEGAL: "illegal character",
	EOF:     "end of file",
	NEWLINE: "end of line",
	IDENT:   "name",
	STRING:  "string",
	INT:     "integer",
	FLOAT:   "number",
	COMMENT: "comment",
	LPAREN:  "'('",
	RPAREN:  "')'",
	LBRACK:  "'['",
	RBRACK:  "']'",
	LBRACE:  "'{'",
	RBRACE:  "'}'",
	COMMA:   "','",
	COLON:   "':'",
	ASSIGN:  "'='",
	ARROW:   "'->'",
	AT:      "'@'",
	ADD:     "'+'",
	SUB:     "'-'",
	MUL:     "'*'",
	QUO:     "'/'",
	REM:     "'%'",
}

func (t Token) String() string {
	if t >= 0 && int(t) < len(tokenText) {
		return tokenText[t]
	}
	return fmt.Sprintf("token(%d)", int(t))
}
