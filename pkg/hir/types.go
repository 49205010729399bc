package hir

import (
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// DType is a tensor element type (shared with the runtime).
type DType = tensor.DType

// The element types of HIR v1.
const (
	InvalidDType = tensor.InvalidDType
	F32          = tensor.F32
	F16          = tensor.F16
	BF16         = tensor.BF16
	F64          = tensor.F64
	I8           = tensor.I8
	I16          = tensor.I16
	I32          = tensor.I32
	I64          = tensor.I64
	U8           = tensor.U8
	Bool         = tensor.Bool
)

// ParseDType maps a dtype name (f32, i64, bool, ...) to its DType.
func ParseDType(name string) (DType, bool) { return tensor.ParseDType(name) }

// Type is the checked type of a value: an element type and a shape whose dims
// are canonical symbolic expressions. A scalar has an empty shape.
type Type struct {
	DType DType
	Shape []dim.Expr
}

// Rank is the number of dims.
func (t Type) Rank() int { return len(t.Shape) }

// IsStatic reports whether every dim is a constant.
func (t Type) IsStatic() bool {
	for _, d := range t.Shape {
		if !d.IsConst() {
			return false
		}
	}
	return true
}

// String prints the type as HIR source: f32[batch*seq, 256].
func (t Type) String() string {
	return t.DType.String() + ShapeString(t.Shape)
}

// ShapeString prints just the dims: [batch, 512].
func ShapeString(shape []dim.Expr) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.String())
	}
	b.WriteByte(']')
	return b.String()
}
