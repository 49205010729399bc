package hir

import (
	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/irtype"
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
// are canonical symbolic expressions. A scalar has an empty shape. It is
// defined in pkg/irtype, which MIR shares without importing the front end.
type Type = irtype.Type

// ShapeString prints just the dims: [batch, 512].
func ShapeString(shape []dim.Expr) string { return irtype.ShapeString(shape) }
