// Package tensor holds what compiler and runtime share about tensor data:
// element types and dense row-major tensors. It depends on nothing else in
// rlx, so the runtime can use it without linking the compiler.
package tensor

// DType is a tensor element type.
type DType uint8

// The element types of HIR v1.
const (
	InvalidDType DType = iota
	F32
	F16
	BF16
	F64
	I8
	I16
	I32
	I64
	U8
	Bool
)

var dtypeNames = [...]string{
	InvalidDType: "invalid",
	F32:          "f32",
	F16:          "f16",
	BF16:         "bf16",
	F64:          "f64",
	I8:           "i8",
	I16:          "i16",
	I32:          "i32",
	I64:          "i64",
	U8:           "u8",
	Bool:         "bool",
}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return "invalid"
}

// ParseDType maps a dtype name (f32, i64, bool, ...) to its DType.
func ParseDType(name string) (DType, bool) {
	for i, n := range dtypeNames {
		if i != 0 && n == name {
			return DType(i), true
		}
	}
	return InvalidDType, false
}

// IsFloat reports a floating-point dtype.
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 || d == F64 }

// IsInt reports a signed or unsigned integer dtype.
func (d DType) IsInt() bool { return d == I8 || d == I16 || d == I32 || d == I64 || d == U8 }

// IsNumeric reports a dtype that arithmetic applies to (not bool).
func (d DType) IsNumeric() bool { return d.IsFloat() || d.IsInt() }

// Wrap reduces v to integer dtype d as two's complement does (i8 300 is
// 44), the way an integer cast stores it; bool is v != 0; 64-bit and
// non-integer dtypes keep v.
func (d DType) Wrap(v int64) int64 {
	switch d {
	case I8:
		return int64(int8(v))
	case I16:
		return int64(int16(v))
	case I32:
		return int64(int32(v))
	case U8:
		return int64(uint8(v))
	case Bool:
		if v != 0 {
			return 1
		}
		return 0
	}
	return v
}

// Size is the element size in bytes.
func (d DType) Size() int {
	switch d {
	case F64, I64:
		return 8
	case F32, I32:
		return 4
	case F16, BF16, I16:
		return 2
	case I8, U8, Bool:
		return 1
	}
	return 0
}
