// Package irtype holds the value types the HIR checker and MIR share: a
// tensor type with symbolic dims, and checked attribute values.
//
// It is a leaf: it imports only pkg/dim, pkg/tensor and the standard library,
// so that pkg/mir need not depend on the front end (pkg/hir).
package irtype

import (
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Type is the checked type of a value: an element type and a shape whose dims
// are canonical symbolic expressions. A scalar has an empty shape.
type Type struct {
	DType tensor.DType
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

// Attrs holds an operation's checked attributes: every attribute the op
// takes that was written or has a default, with values of Go types int64,
// float64, bool, string, tensor.DType, []int64, dim.Expr or []dim.Expr.
// Axis attributes are normalized to non-negative axes.
type Attrs map[string]any

// Has reports whether the attribute has a value.
func (a Attrs) Has(name string) bool { _, ok := a[name]; return ok }

// Int returns an integer attribute (0 when absent).
func (a Attrs) Int(name string) int64 { v, _ := a[name].(int64); return v }

// Float returns a number attribute (0 when absent).
func (a Attrs) Float(name string) float64 { v, _ := a[name].(float64); return v }

// Bool returns a boolean attribute (false when absent).
func (a Attrs) Bool(name string) bool { v, _ := a[name].(bool); return v }

// String returns a string attribute ("" when absent).
func (a Attrs) String(name string) string { v, _ := a[name].(string); return v }

// DType returns a dtype attribute (tensor.InvalidDType when absent).
func (a Attrs) DType(name string) tensor.DType { v, _ := a[name].(tensor.DType); return v }

// Ints returns an integer-list attribute (nil when absent).
func (a Attrs) Ints(name string) []int64 { v, _ := a[name].([]int64); return v }

// Dim returns a dim attribute (the constant 0 when absent).
func (a Attrs) Dim(name string) dim.Expr { v, _ := a[name].(dim.Expr); return v }

// Dims returns a dim-list attribute (nil when absent).
func (a Attrs) Dims(name string) []dim.Expr { v, _ := a[name].([]dim.Expr); return v }
