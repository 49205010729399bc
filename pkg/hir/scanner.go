package hir

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Scanner splits HIR source into tokens. It reports malformed tokens to an
// ErrorList and always makes progress, so a parser driving it cannot loop.
type Scanner struct {
	file string
	src  []byte
	errs *ErrorList

	off  int // byte offset of the next character
	line int // 1-based line of the next character
	col  int // 1-based column (in characters) of the next character
}

// NewScanner returns a scanner over src; file names the source in errors.
func NewScanner(file string, src []byte, errs *ErrorList) *Scanner {
	return &Scanner{file: file, src: src, errs: errs, line: 1, col: 1}
}

func (s *Scanner) errorf(pos Pos, format string, args ...any) {
	s.errs.Add(s.file, pos, fmt.Sprintf(format, args...))
}

// peek returns the next character without consuming it (-1 at end).
func (s *Scanner) peek() rune {
	if s.off >= len(s.src) {
		return -1
	}
	r, _ := utf8.DecodeRune(s.src[s.off:])
	return r
}

func (s *Scanner) peekAt(n int) byte {
	if s.off+n >= len(s.src) {
		return 0
	}
	return s.src[s.off+n]
}

// next consumes one character.
func (s *Scanner) next() rune {
	if s.off >= len(s.src) {
		return -1
	}
	r, w := utf8.DecodeRune(s.src[s.off:])
	s.off += w
	if r == '\n' {
		s.line++
		s.col = 1
	} else {
		s.col++
	}
	return r
}

func isLetter(r rune) bool { return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }
func isDigit(r rune) bool  { return '0' <= r && r <= '9' }

// IsIdent reports whether name can be written without quotes.
func IsIdent(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if !isLetter(r) && (i == 0 || !isDigit(r) && r != '.') {
			return false
		}
	}
	return true
}

// Scan returns the next token, its position and its text. For STRING the text
// is the unquoted value; for COMMENT it is the comment including '#'.
func (s *Scanner) Scan() (Pos, Token, string) {
	// Skip blanks, but not newlines: statements end at a newline.
	for {
		r := s.peek()
		if r == ' ' || r == '\t' || r == '\r' || r == '\f' || r == '\v' {
			s.next()
			continue
		}
		break
	}
	pos := Pos{s.line, s.col}
	start := s.off
	r := s.next()
	switch {
	case r == -1:
		return pos, EOF, ""
	case r == '\n':
		return pos, NEWLINE, "\n"
	case r == '#':
		for c := s.peek(); c != '\n' && c != -1; c = s.peek() {
			s.next()
		}
		return pos, COMMENT, strings.TrimRight(string(s.src[start:s.off]), " \t\r")
	case isLetter(r):
		for c := s.peek(); isLetter(c) || isDigit(c) || c == '.'; c = s.peek() {
			s.next()
		}
		return pos, IDENT, string(s.src[start:s.off])
	case isDigit(r):
		return s.number(pos, start)
	case r == '"':
		return s.str(pos)
	}
	switch r {
	case '(':
		return pos, LPAREN, "("
	case ')':
		return pos, RPAREN, ")"
	case '[':
		return pos, LBRACK, "["
	case ']':
		return pos, RBRACK, "]"
	case '{':
		return pos, LBRACE, "{"
	case '}':
		return pos, RBRACE, "}"
	case ',':
		return pos, COMMA, ","
	case ':':
		return pos, COLON, ":"
	case '=':
		return pos, ASSIGN, "="
	case '@':
		return pos, AT, "@"
	case '+':
		return pos, ADD, "+"
	case '-':
		if s.peek() == '>' {
			s.next()
			return pos, ARROW, "->"
		}
		return pos, SUB, "-"
	case '*':
		return pos, MUL, "*"
	case '/':
		return pos, QUO, "/"
	case '%':
		return pos, REM, "%"
	}
	if r == utf8.RuneError && s.off-start == 1 {
		s.errorf(pos, "invalid UTF-8 byte 0x%02x", s.src[start])
	} else {
		s.errorf(pos, "unexpected character %q", r)
	}
	return pos, ILLEGAL, string(s.src[start:s.off])
}

// number scans an integer or a float: digits, then an optional fraction and
// exponent (1, 0.5, 1e-5, 2.5E+3). The sign is a separate token.
func (s *Scanner) number(pos Pos, start int) (Pos, Token, string) {
	tok := INT
	for isDigit(s.peek()) {
		s.next()
	}
	if s.peek() == '.' && isDigit(rune(s.peekAt(1))) {
		tok = FLOAT
		s.next()
		for isDigit(s.peek()) {
			s.next()
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		n := 1
		if c := s.peekAt(1); c == '+' || c == '-' {
			n = 2
		}
		if isDigit(rune(s.peekAt(n))) {
			tok = FLOAT
			for ; n > 0; n-- {
				s.next()
			}
			for isDigit(s.peek()) {
				s.next()
			}
		}
	}
	if c := s.peek(); isLetter(c) {
		// 12abc: report it here, where the mistake is, not as a stray name.
		for c := s.peek(); isLetter(c) || isDigit(c) || c == '.'; c = s.peek() {
			s.next()
		}
		s.errorf(pos, "malformed number %q", string(s.src[start:s.off]))
		return pos, ILLEGAL, string(s.src[start:s.off])
	}
	return pos, tok, string(s.src[start:s.off])
}

// str scans a double-quoted string with the escapes \" \\ \n \t.
func (s *Scanner) str(pos Pos) (Pos, Token, string) {
	var b strings.Builder
	for {
		r := s.peek()
		switch r {
		case -1, '\n':
			s.errorf(pos, "string not terminated")
			return pos, STRING, b.String()
		case '"':
			s.next()
			return pos, STRING, b.String()
		case '\\':
			epos := Pos{s.line, s.col}
			s.next()
			switch e := s.next(); e {
			case '"', '\\':
				b.WriteRune(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case -1, '\n':
				s.errorf(pos, "string not terminated")
				return pos, STRING, b.String()
			default:
				s.errorf(epos, "unknown escape sequence \\%c (want \\\" \\\\ \\n or \\t)", e)
			}
		default:
			s.next()
			if r == utf8.RuneError {
				s.errorf(Pos{s.line, s.col - 1}, "invalid UTF-8 in string")
			}
			b.WriteRune(r)
		}
	}
}

// Quote returns name as HIR source: bare when it is an identifier that is not
// reserved, else a double-quoted string.
func Quote(name string) string {
	if IsIdent(name) && !isReserved(name) {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range name {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isReserved reports names that mean something in value or attribute
// position, so the printer quotes them when they name a value.
func isReserved(name string) bool {
	switch name {
	case "hir", "module", "dim", "param", "func", "return", "in", "true", "false", "inf", "nan":
		return true
	}
	_, ok := ParseDType(name)
	return ok
}
