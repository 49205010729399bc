package hir

import "github.com/rlx-project/rlx/pkg/dim"

// A Module is one parsed .hir file. The parser fills the syntax; Check fills
// the fields marked "set by Check" and leaves the syntax untouched, so a
// checked module still prints as it was written.
type Module struct {
	File    string // file name used in errors
	Version int
	Name    string

	HeaderDoc  Comments // comments and the trailing comment of the "hir 1" line
	ModuleDoc  Comments // of the "module NAME" line
	Decls      []Decl   // *DimDecl, *ParamDecl and *FuncDecl in source order
	EndDoc     []string // comments after the last declaration
	VersionPos Pos
	NamePos    Pos

	// Set by Check.
	Bounds      map[string]dim.Interval // every declared dim's range
	Constraints []Constraint            // dim relations left for specialization to check
}

// Comments are the comments attached to one line of source: whole-line
// comments above it and a comment at its end. Blank says whether a blank line
// preceded them, so the printer keeps the author's paragraphs.
type Comments struct {
	Blank   bool
	Doc     []string
	Trailer string
}

// Decl is a top-level declaration.
type Decl interface {
	declPos() Pos
	comments() *Comments
}

// DimDecl is `dim NAME` or `dim NAME in [LO, HI]`.
type DimDecl struct {
	Comments
	Pos       Pos // of "dim"
	Name      string
	NamePos   Pos
	HasBounds bool
	Lo, Hi    int64
	BoundsPos Pos // of '['
}

// ParamDecl is a weight: `param NAME : TYPE`, optionally with its data
// given inline (`= [[1, 2], [3, 4]]`) or by file (`= @"w.safetensors"`).
type ParamDecl struct {
	Comments
	Pos     Pos
	Name    string
	NamePos Pos
	Type    *TypeExpr
	Init    Expr     // inline literal, or nil
	File    *FileRef // file reference, or nil

	Checked Type // set by Check
}

// FileRef is `@"path"`: tensor data found by the param's name in that file,
// a path relative to the .hir file. The build resolves it, not Check.
type FileRef struct {
	Pos  Pos
	Path string
}

// FuncDecl is `func NAME(ARGS) -> (RESULTS) { BODY }`.
type FuncDecl struct {
	Comments
	Pos     Pos
	Name    string
	NamePos Pos
	Params  []*Field
	Results []*Field
	Body    []*Stmt
	Return  *ReturnStmt // nil only in malformed input
	EndDoc  []string    // comments before the closing brace
	Rbrace  Pos
}

// Field is one named, typed argument or result of a function.
type Field struct {
	Pos     Pos
	Name    string
	Type    *TypeExpr
	Checked Type // set by Check
}

// Stmt is `a, b = op(operands, attr=value)` or `a : TYPE = op(...)`.
type Stmt struct {
	Comments
	Pos     Pos // of the first result name
	Results []*Ident
	Type    *TypeExpr // declared type, or nil
	Op      string
	OpPos   Pos
	Args    []Expr // operands: *Ident value references (and for const, a literal and a *TypeExpr)
	Attrs   []*Attr
	Rparen  Pos

	// Set by Check.
	Types []Type       // one per result
	Attr  AttrValues   // every attribute of the op, defaults filled in and axes normalized
	Defs  []Definition // what each operand refers to
}

// Definition says where a value comes from.
type Definition struct {
	Kind  DefKind
	Param *ParamDecl // for DefParam
	Arg   *Field     // for DefArg
	Stmt  *Stmt      // for DefStmt
	Index int        // result index within Stmt
}

// DefKind classifies a Definition.
type DefKind uint8

// The kinds of value definitions.
const (
	DefNone  DefKind = iota // an operand that is not a value (a const literal)
	DefParam                // a module param
	DefArg                  // a function argument
	DefStmt                 // a statement result
)

// ReturnStmt is `return a, b`.
type ReturnStmt struct {
	Comments
	Pos    Pos
	Values []*Ident
	Defs   []Definition // set by Check
}

// Attr is `name=value` in an operation.
type Attr struct {
	Pos   Pos
	Name  string
	Value Expr
}

// Expr is a literal, a name, or dim arithmetic, as written in operands,
// attribute values, dims and param literals.
type Expr interface {
	exprPos() Pos
}

// Ident is a name: a value reference in an operand, a dim in a dim
// expression. Quoted names are Idents too.
type Ident struct {
	Pos  Pos
	Name string
}

// IntLit is an integer literal, sign included (-1).
type IntLit struct {
	Pos   Pos
	Value int64
}

// FloatLit is a float literal, sign included; inf and nan are FloatLits.
type FloatLit struct {
	Pos   Pos
	Value float64
}

// BoolLit is true or false.
type BoolLit struct {
	Pos   Pos
	Value bool
}

// StringLit is a double-quoted string in attribute position.
type StringLit struct {
	Pos   Pos
	Value string
}

// DTypeLit is a dtype used as a value (`to=f16`).
type DTypeLit struct {
	Pos   Pos
	DType DType
}

// ListLit is `[a, b, ...]`.
type ListLit struct {
	Pos   Pos
	Elems []Expr
}

// BinaryExpr is dim arithmetic: X Op Y with Op one of + - * / %.
type BinaryExpr struct {
	Pos  Pos // of the operator
	Op   Token
	X, Y Expr
}

// UnaryExpr is -X where X is not a number literal.
type UnaryExpr struct {
	Pos Pos
	X   Expr
}

// TypeExpr is DTYPE[DIM, ...] as written.
type TypeExpr struct {
	Pos   Pos
	DType DType
	Dims  []Expr
}

func (x *Ident) exprPos() Pos      { return x.Pos }
func (x *IntLit) exprPos() Pos     { return x.Pos }
func (x *FloatLit) exprPos() Pos   { return x.Pos }
func (x *BoolLit) exprPos() Pos    { return x.Pos }
func (x *StringLit) exprPos() Pos  { return x.Pos }
func (x *DTypeLit) exprPos() Pos   { return x.Pos }
func (x *ListLit) exprPos() Pos    { return x.Pos }
func (x *BinaryExpr) exprPos() Pos { return x.X.exprPos() }
func (x *UnaryExpr) exprPos() Pos  { return x.Pos }
func (x *TypeExpr) exprPos() Pos   { return x.Pos }

// PosOf returns where an expression starts.
func PosOf(x Expr) Pos { return x.exprPos() }

func (d *DimDecl) declPos() Pos   { return d.Pos }
func (d *ParamDecl) declPos() Pos { return d.Pos }
func (d *FuncDecl) declPos() Pos  { return d.Pos }

func (d *DimDecl) comments() *Comments   { return &d.Comments }
func (d *ParamDecl) comments() *Comments { return &d.Comments }
func (d *FuncDecl) comments() *Comments  { return &d.Comments }

// Func returns the function named name, or nil.
func (m *Module) Func(name string) *FuncDecl {
	for _, d := range m.Decls {
		if f, ok := d.(*FuncDecl); ok && f.Name == name {
			return f
		}
	}
	return nil
}
