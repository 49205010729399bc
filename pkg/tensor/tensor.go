package tensor

import (
	"fmt"
	"unsafe"
)

// Tensor is a dense row-major tensor. Data holds the elements in the
// machine's byte order (rlx runs on little-endian machines only), and may
// alias a mapped file or an arena: a Tensor does not own its bytes.
type Tensor struct {
	DType DType
	Shape []int64
	Data  []byte
}

// NumElements is the product of the dims (1 for a scalar).
func NumElements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// Strides are the element strides of a row-major (C-order) shape.
func Strides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	return st
}

// New allocates a zeroed tensor.
func New(dt DType, shape ...int64) *Tensor {
	return &Tensor{DType: dt, Shape: append([]int64(nil), shape...), Data: make([]byte, NumElements(shape)*int64(dt.Size()))}
}

// Len is the number of elements.
func (t *Tensor) Len() int { return int(NumElements(t.Shape)) }

// Check reports a tensor whose data length does not match its shape.
func (t *Tensor) Check() error {
	if want := NumElements(t.Shape) * int64(t.DType.Size()); int64(len(t.Data)) != want {
		return fmt.Errorf("tensor %s%v has %d bytes of data, want %d", t.DType, t.Shape, len(t.Data), want)
	}
	return nil
}

// view reinterprets b as a slice of T without copying.
func view[T any](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Bytes reinterprets a typed slice as bytes without copying.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// F32 views the data as float32 (the caller checks the dtype).
func (t *Tensor) F32() []float32 { return view[float32](t.Data) }

// F64 views the data as float64.
func (t *Tensor) F64() []float64 { return view[float64](t.Data) }

// I64 views the data as int64.
func (t *Tensor) I64() []int64 { return view[int64](t.Data) }

// I32 views the data as int32.
func (t *Tensor) I32() []int32 { return view[int32](t.Data) }

// U8 views the data as bytes (u8 and bool; bool is 0 or 1).
func (t *Tensor) U8() []uint8 { return t.Data }

// FromF32 wraps float32 values (copied) in a tensor.
func FromF32(shape []int64, v []float32) *Tensor {
	t := New(F32, shape...)
	copy(t.F32(), v)
	return t
}

// FromI64 wraps int64 values (copied) in a tensor.
func FromI64(shape []int64, v []int64) *Tensor {
	t := New(I64, shape...)
	copy(t.I64(), v)
	return t
}

// ShapeString prints a concrete shape: [2, 128].
func ShapeString(shape []int64) string {
	s := "["
	for i, d := range shape {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(d)
	}
	return s + "]"
}

// AsF32 views bytes as float32 without copying.
func AsF32(b []byte) []float32 { return view[float32](b) }

// AsI64 views bytes as int64 without copying.
func AsI64(b []byte) []int64 { return view[int64](b) }

// AsI32 views bytes as int32 without copying.
func AsI32(b []byte) []int32 { return view[int32](b) }

// AsU16 views bytes as uint16 without copying.
func AsU16(b []byte) []uint16 { return view[uint16](b) }

// AsU32 views bytes as uint32 without copying.
func AsU32(b []byte) []uint32 { return view[uint32](b) }

// AsU64 views bytes as uint64 without copying.
func AsU64(b []byte) []uint64 { return view[uint64](b) }

// Float64s returns the elements converted to float64 (bool and integers as
// their values, half floats widened), for comparisons and summaries.
func (t *Tensor) Float64s() []float64 {
	n := t.Len()
	out := make([]float64, n)
	d := t.Data
	for i := 0; i < n; i++ {
		switch t.DType {
		case F32:
			out[i] = float64(t.F32()[i])
		case F64:
			out[i] = t.F64()[i]
		case I64:
			out[i] = float64(t.I64()[i])
		case I32:
			out[i] = float64(t.I32()[i])
		case F16:
			out[i] = float64(F16ToF32(uint16(d[2*i]) | uint16(d[2*i+1])<<8))
		case BF16:
			out[i] = float64(BF16ToF32(uint16(d[2*i]) | uint16(d[2*i+1])<<8))
		case I16:
			out[i] = float64(int16(uint16(d[2*i]) | uint16(d[2*i+1])<<8))
		case I8:
			out[i] = float64(int8(d[i]))
		default:
			out[i] = float64(d[i])
		}
	}
	return out
}

// SliceRange normalizes x[start:end:step] over a dim of size d as NumPy
// and ONNX do (negative indices count from the end, then clamp) and returns
// the first index and the number of elements.
func SliceRange(start, end, step, d int64) (first, count int64) {
	norm := func(v, lo, hi int64) int64 {
		if v < 0 {
			v += d
		}
		return min(max(v, lo), hi)
	}
	if step > 0 {
		s, e := norm(start, 0, d), norm(end, 0, d)
		if e <= s {
			return s, 0
		}
		return s, (e - s + step - 1) / step
	}
	s, e := norm(start, -1, d-1), norm(end, -1, d-1)
	if s <= e {
		return s, 0
	}
	return s, (s - e - step - 1) / -step
}

// PermutedShape is shape with its dims permuted (dim i of the result is
// shape's dim perm[i]), or an error where perm is no permutation of its
// dims.
func PermutedShape(shape, perm []int64) ([]int64, error) {
	r := len(shape)
	if len(perm) != r {
		return nil, fmt.Errorf("perm %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	out := make([]int64, r)
	for i, p := range perm {
		if p < 0 || p >= int64(r) || seen[p] {
			return nil, fmt.Errorf("perm %v is no permutation of %d dims", perm, r)
		}
		seen[p] = true
		out[i] = shape[p]
	}
	return out, nil
}

// Transpose is t with its dims permuted, result dim i being t's dim
// perm[i]; the elements move as bytes (no conversion, so every dtype and
// every bit pattern comes through).
func Transpose(t *Tensor, perm []int64) (*Tensor, error) {
	r := len(t.Shape)
	shape, err := PermutedShape(t.Shape, perm)
	if err != nil {
		return nil, fmt.Errorf("tensor: %v", err)
	}
	size := int64(t.DType.Size())
	n := NumElements(t.Shape)
	if int64(len(t.Data)) != n*size {
		return nil, fmt.Errorf("tensor: %d bytes for %s%s", len(t.Data), t.DType, ShapeString(t.Shape))
	}
	in := Strides(t.Shape)
	step := make([]int64, r) // t's element stride along each result dim
	for i, p := range perm {
		step[i] = in[p]
	}
	out := &Tensor{DType: t.DType, Shape: shape, Data: make([]byte, len(t.Data))}
	idx := make([]int64, r)
	src := int64(0)
	for k := int64(0); k < n; k++ {
		copy(out.Data[k*size:(k+1)*size], t.Data[src*size:(src+1)*size])
		for i := r - 1; i >= 0; i-- {
			idx[i]++
			src += step[i]
			if idx[i] < shape[i] {
				break
			}
			src -= idx[i] * step[i]
			idx[i] = 0
		}
	}
	return out, nil
}
