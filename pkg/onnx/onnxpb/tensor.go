package onnxpb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// rlxDType maps an ONNX data type to the rlx dtype ToTensor gives it.
// UINT64 becomes I64 (ToTensor checks that the values fit).
func rlxDType(dt int32) (tensor.DType, bool) {
	switch dt {
	case DTFloat:
		return tensor.F32, true
	case DTUint8:
		return tensor.U8, true
	case DTInt8:
		return tensor.I8, true
	case DTInt16:
		return tensor.I16, true
	case DTInt32:
		return tensor.I32, true
	case DTInt64, DTUint64:
		return tensor.I64, true
	case DTBool:
		return tensor.Bool, true
	case DTFloat16:
		return tensor.F16, true
	case DTDouble:
		return tensor.F64, true
	case DTBFloat16:
		return tensor.BF16, true
	}
	return tensor.InvalidDType, false
}

// ToTensor converts the tensor to an rlx tensor that owns a copy of the
// data: from raw_data (little-endian) or from the typed field its data type
// uses. FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, UINT8
// and BOOL convert to the rlx dtype of the same name; UINT64 converts to
// i64 when every value fits. Other data types (STRING, UINT16, UINT32,
// complex, 8-bit and 4-bit floats, ...), external data not loaded
// (LoadExternal) and an element count that does not match the dims are
// errors.
func (t *Tensor) ToTensor() (*tensor.Tensor, error) {
	out, err := t.toTensor()
	if err != nil {
		return nil, fmt.Errorf("onnx: tensor %q (%s %s): %w", t.Name, DTypeName(t.DataType), tensor.ShapeString(t.Dims), err)
	}
	return out, nil
}

func (t *Tensor) toTensor() (*tensor.Tensor, error) {
	if t.External {
		if loc := t.ExternalData["location"]; loc != "" {
			return nil, fmt.Errorf("data is in external file %q, not loaded (DecodeFile and LoadExternal read it)", loc)
		}
		return nil, errors.New("external data without a location")
	}
	dt, ok := rlxDType(t.DataType)
	if !ok {
		return nil, fmt.Errorf("data type %s is not supported", DTypeName(t.DataType))
	}
	n, err := numElements(t.Dims)
	if err != nil {
		return nil, err
	}
	out := &tensor.Tensor{DType: dt, Shape: append([]int64(nil), t.Dims...)}
	size := int64(dt.Size())

	if t.RawData != nil {
		if typed := t.typedFields(); typed != "" {
			return nil, fmt.Errorf("has both raw_data and %s", typed)
		}
		// n <= len(raw) first, so that n*size cannot overflow.
		if n > int64(len(t.RawData)) || n*size != int64(len(t.RawData)) {
			return nil, fmt.Errorf("has %d bytes of raw_data, want %d elements of %d bytes", len(t.RawData), n, size)
		}
		out.Data = make([]byte, len(t.RawData))
		copy(out.Data, t.RawData)
		switch t.DataType {
		case DTUint64:
			for i := 0; i < len(out.Data); i += 8 {
				if v := binary.LittleEndian.Uint64(out.Data[i:]); v > math.MaxInt64 {
					return nil, fmt.Errorf("UINT64 value %d (element %d) does not fit in i64", v, i/8)
				}
			}
		case DTBool:
			for i, c := range out.Data {
				if c != 0 {
					out.Data[i] = 1
				}
			}
		}
		return out, nil
	}

	// The typed field this data type uses, and its length.
	var have int
	var field string
	switch t.DataType {
	case DTFloat:
		have, field = len(t.FloatData), "float_data"
	case DTDouble:
		have, field = len(t.DoubleData), "double_data"
	case DTInt64:
		have, field = len(t.Int64Data), "int64_data"
	case DTUint64:
		have, field = len(t.Uint64Data), "uint64_data"
	default:
		have, field = len(t.Int32Data), "int32_data"
	}
	if int64(have) != n {
		if have == 0 {
			if other := t.typedFields(); other != "" {
				return nil, fmt.Errorf("has no raw_data or %s but %s; want %d elements", field, other, n)
			}
			return nil, fmt.Errorf("has no data; want %d elements", n)
		}
		return nil, fmt.Errorf("has %d values in %s, want %d elements", have, field, n)
	}
	if other := t.typedFieldsExcept(field); other != "" {
		return nil, fmt.Errorf("has both %s and %s", field, other)
	}
	// n == have: the allocation is bounded by the decoded data.
	out.Data = make([]byte, n*size)
	switch t.DataType {
	case DTFloat:
		copy(out.F32(), t.FloatData)
	case DTDouble:
		copy(out.F64(), t.DoubleData)
	case DTInt64:
		copy(out.I64(), t.Int64Data)
	case DTUint64:
		dst := out.I64()
		for i, v := range t.Uint64Data {
			if v > math.MaxInt64 {
				return nil, fmt.Errorf("UINT64 value %d (element %d) does not fit in i64", v, i)
			}
			dst[i] = int64(v)
		}
	case DTInt32:
		copy(out.I32(), t.Int32Data)
	case DTInt16, DTFloat16, DTBFloat16:
		lo, hi := int32(math.MinInt16), int32(math.MaxInt16)
		if t.DataType != DTInt16 {
			// Half floats are stored as their bits, as uint16 (some
			// writers sign-extend them as int16).
			hi = math.MaxUint16
		}
		dst := tensor.AsU16(out.Data)
		for i, v := range t.Int32Data {
			if v < lo || v > hi {
				return nil, fmt.Errorf("int32_data value %d (element %d) is out of range for %s", v, i, DTypeName(t.DataType))
			}
			dst[i] = uint16(v)
		}
	case DTInt8, DTUint8:
		lo, hi := int32(math.MinInt8), int32(math.MaxInt8)
		if t.DataType == DTUint8 {
			lo, hi = 0, math.MaxUint8
		}
		for i, v := range t.Int32Data {
			if v < lo || v > hi {
				return nil, fmt.Errorf("int32_data value %d (element %d) is out of range for %s", v, i, DTypeName(t.DataType))
			}
			out.Data[i] = byte(v)
		}
	case DTBool:
		for i, v := range t.Int32Data {
			if v != 0 {
				out.Data[i] = 1
			}
		}
	}
	return out, nil
}

// numElements is the product of dims (1 for a scalar), checked.
func numElements(dims []int64) (int64, error) {
	zero := false
	for i, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("dim %d is negative (%d)", i, d)
		}
		zero = zero || d == 0
	}
	if zero {
		return 0, nil
	}
	n := int64(1)
	for _, d := range dims {
		if n > math.MaxInt64/d {
			return 0, errors.New("element count overflows int64")
		}
		n *= d
	}
	return n, nil
}

// typedFields lists the non-empty typed data fields, for messages.
func (t *Tensor) typedFields() string { return t.typedFieldsExcept("") }

func (t *Tensor) typedFieldsExcept(skip string) string {
	var s []string
	for _, f := range []struct {
		name string
		n    int
	}{
		{"float_data", len(t.FloatData)},
		{"int32_data", len(t.Int32Data)},
		{"int64_data", len(t.Int64Data)},
		{"double_data", len(t.DoubleData)},
		{"uint64_data", len(t.Uint64Data)},
		{"string_data", len(t.StringData)},
	} {
		if f.n > 0 && f.name != skip {
			s = append(s, fmt.Sprintf("%s (%d values)", f.name, f.n))
		}
	}
	return strings.Join(s, ", ")
}
