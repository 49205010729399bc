package eval

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// array is the interpreter's working form of a tensor: a dtype, a concrete
// shape and the elements in row-major order. Float dtypes keep their
// elements as float64 in f; integer dtypes and bool keep them as int64 in i
// (bool as 0 or 1), so integer arithmetic is exact. Every element is always
// a value of the dtype: after each node the results are rounded (floats) or
// wrapped (integers) to their dtype by fit.
type array struct {
	dt    tensor.DType
	shape []int64
	f     []float64 // float dtypes
	i     []int64   // integer dtypes and bool
}

func (a *array) isFloat() bool { return a.dt.IsFloat() }

// size is the number of elements.
func (a *array) size() int {
	if a.isFloat() {
		return len(a.f)
	}
	return len(a.i)
}

// newArray allocates a zero-filled array.
func newArray(dt tensor.DType, shape []int64) *array {
	a := &array{dt: dt, shape: append([]int64{}, shape...)}
	n := numel(shape)
	if dt.IsFloat() {
		a.f = make([]float64, n)
	} else {
		a.i = make([]int64, n)
	}
	return a
}

// numel is the product of the dims (1 for a scalar).
func numel(shape []int64) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// strides are the row-major element strides of shape.
func strides(shape []int64) []int {
	st := make([]int, len(shape))
	s := 1
	for k := len(shape) - 1; k >= 0; k-- {
		st[k] = s
		s *= int(shape[k])
	}
	return st
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// float reads element k as a float64, whatever the dtype.
func (a *array) float(k int) float64 {
	if a.isFloat() {
		return a.f[k]
	}
	return float64(a.i[k])
}

// fit rounds every element to the array's dtype in place and returns a.
func (a *array) fit() *array {
	if a.isFloat() {
		for k, v := range a.f {
			a.f[k] = roundFloat(v, a.dt)
		}
	} else {
		for k, v := range a.i {
			a.i[k] = a.dt.Wrap(v)
		}
	}
	return a
}

// roundFloat rounds v to the nearest value of float dtype dt, ties to even;
// a value beyond the largest finite one becomes an infinity (IEEE 754).
func roundFloat(v float64, dt tensor.DType) float64 {
	switch dt {
	case tensor.F32:
		return roundToFormat(v, 23, -126, 127)
	case tensor.F16:
		return roundToFormat(v, 10, -14, 15)
	case tensor.BF16:
		return roundToFormat(v, 7, -126, 127)
	}
	return v
}

// roundToFormat rounds v to a binary floating-point format with mant
// fraction bits, minimum normal exponent emin and maximum exponent emax
// (subnormals included), rounding to nearest with ties to even.
func roundToFormat(v float64, mant, emin, emax int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	_, e := math.Frexp(v) // |v| in [2^(e-1), 2^e)
	lead := max(e-1, emin)
	q := lead - mant // exponent of one unit in the last place
	r := math.Ldexp(math.RoundToEven(math.Ldexp(v, -q)), q)
	maxFinite := math.Ldexp(2-math.Ldexp(1, -mant), emax)
	if math.Abs(r) > maxFinite {
		return math.Copysign(math.Inf(1), v)
	}
	return r
}

// intRange is the range of integer dtype dt.
func intRange(dt tensor.DType) (int64, int64) {
	switch dt {
	case tensor.I8:
		return math.MinInt8, math.MaxInt8
	case tensor.I16:
		return math.MinInt16, math.MaxInt16
	case tensor.I32:
		return math.MinInt32, math.MaxInt32
	case tensor.U8:
		return 0, math.MaxUint8
	case tensor.Bool:
		return 0, 1
	}
	return math.MinInt64, math.MaxInt64
}

// floatToInt converts a float to integer dtype dt: truncation toward zero,
// saturating at the dtype's range, NaN as 0. To bool it is v != 0 (NaN is
// true, as in C and NumPy).
func floatToInt(v float64, dt tensor.DType) int64 {
	if dt == tensor.Bool {
		if v != 0 {
			return 1
		}
		return 0
	}
	if math.IsNaN(v) {
		return 0
	}
	lo, hi := intRange(dt)
	t := math.Trunc(v)
	// float64(hi) may round up (2^63 for MaxInt64), so compare with >=.
	if t >= float64(hi) {
		return hi
	}
	if t <= float64(lo) {
		return lo
	}
	return int64(t)
}

// intToFloat converts an integer to float dtype dt with one rounding.
func intToFloat(v int64, dt tensor.DType) float64 {
	if dt == tensor.F32 {
		return float64(float32(v)) // Go rounds an integer to float32 directly, to nearest even
	}
	return roundFloat(float64(v), dt)
}

// fromTensor decodes tensor data (little-endian) into an array.
func fromTensor(t *tensor.Tensor) (*array, error) {
	if t.DType.Size() == 0 {
		return nil, fmt.Errorf("tensor has invalid dtype %s", t.DType)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return nil, fmt.Errorf("tensor has a negative dim in shape %s", tensor.ShapeString(t.Shape))
		}
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	a := newArray(t.DType, t.Shape)
	b := t.Data
	le := binary.LittleEndian
	n := numel(t.Shape)
	for k := 0; k < n; k++ {
		switch t.DType {
		case tensor.F32:
			a.f[k] = float64(math.Float32frombits(le.Uint32(b[4*k:])))
		case tensor.F64:
			a.f[k] = math.Float64frombits(le.Uint64(b[8*k:]))
		case tensor.F16:
			a.f[k] = f16ToFloat(le.Uint16(b[2*k:]))
		case tensor.BF16:
			a.f[k] = float64(math.Float32frombits(uint32(le.Uint16(b[2*k:])) << 16))
		case tensor.I8:
			a.i[k] = int64(int8(b[k]))
		case tensor.I16:
			a.i[k] = int64(int16(le.Uint16(b[2*k:])))
		case tensor.I32:
			a.i[k] = int64(int32(le.Uint32(b[4*k:])))
		case tensor.I64:
			a.i[k] = int64(le.Uint64(b[8*k:]))
		case tensor.U8:
			a.i[k] = int64(b[k])
		case tensor.Bool:
			a.i[k] = tensor.Bool.Wrap(int64(b[k]))
		}
	}
	return a, nil
}

// toTensor encodes an array (already fitted to its dtype) as tensor data.
func toTensor(a *array) *tensor.Tensor {
	t := tensor.New(a.dt, a.shape...)
	b := t.Data
	le := binary.LittleEndian
	n := a.size()
	for k := 0; k < n; k++ {
		switch a.dt {
		case tensor.F32:
			le.PutUint32(b[4*k:], math.Float32bits(float32(a.f[k])))
		case tensor.F64:
			le.PutUint64(b[8*k:], math.Float64bits(a.f[k]))
		case tensor.F16:
			le.PutUint16(b[2*k:], floatToF16(a.f[k]))
		case tensor.BF16:
			le.PutUint16(b[2*k:], uint16(math.Float32bits(float32(a.f[k]))>>16))
		case tensor.I8, tensor.U8, tensor.Bool:
			b[k] = byte(a.i[k])
		case tensor.I16:
			le.PutUint16(b[2*k:], uint16(a.i[k]))
		case tensor.I32:
			le.PutUint32(b[4*k:], uint32(a.i[k]))
		case tensor.I64:
			le.PutUint64(b[8*k:], uint64(a.i[k]))
		}
	}
	return t
}

// f16ToFloat decodes an IEEE half float.
func f16ToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0: // zero or subnormal: mant * 2^-24
		return sign * math.Ldexp(mant, -24)
	case 0x1f:
		if mant != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+mant, exp-15-10)
}

// floatToF16 encodes a value that is exactly a half float (see roundFloat);
// NaN becomes the quiet NaN 0x7e00.
func floatToF16(v float64) uint16 {
	var sign uint16
	if math.Signbit(v) {
		sign = 0x8000
		v = -v
	}
	switch {
	case math.IsNaN(v):
		return 0x7e00
	case math.IsInf(v, 0):
		return sign | 0x7c00
	case v < math.Ldexp(1, -14): // zero or subnormal
		return sign | uint16(math.Ldexp(v, 24))
	}
	frac, e := math.Frexp(v) // v = frac * 2^e, frac in [0.5, 1)
	mant := uint16(math.Ldexp(frac, 11) - 1024)
	return sign | uint16(e-1+15)<<10 | mant
}
