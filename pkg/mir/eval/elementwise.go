package eval

import (
	"errors"
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// strideMap lists, for each element of an array of shape out (row-major),
// the flat index base + sum(index[k] * st[k]) of the element it reads. It is
// how every data movement is written: broadcasting (stride 0 on a broadcast
// axis), transposes (permuted strides) and slices (scaled strides, offset
// base).
func strideMap(out []int64, st []int, base int) []int {
	n := numel(out)
	m := make([]int, n)
	idx := make([]int, len(out))
	off := base
	for k := 0; k < n; k++ {
		m[k] = off
		for d := len(out) - 1; d >= 0; d-- {
			idx[d]++
			off += st[d]
			if idx[d] < int(out[d]) {
				break
			}
			off -= st[d] * idx[d]
			idx[d] = 0
		}
	}
	return m
}

// broadcastMap maps each element of shape out to the element of shape in
// that NumPy broadcasting reads: shapes align on the right and an in dim of
// 1 repeats.
func broadcastMap(in, out []int64) ([]int, error) {
	if len(in) > len(out) {
		return nil, fmt.Errorf("shape %s does not broadcast to %s (more dims)", tensor.ShapeString(in), tensor.ShapeString(out))
	}
	inSt := strides(in)
	st := make([]int, len(out))
	off := len(out) - len(in)
	for k := range in {
		switch in[k] {
		case out[off+k]:
			st[off+k] = inSt[k]
		case 1:
			st[off+k] = 0
		default:
			return nil, fmt.Errorf("shape %s does not broadcast to %s (axis %d)", tensor.ShapeString(in), tensor.ShapeString(out), off+k)
		}
	}
	return strideMap(out, st, 0), nil
}

// take builds an array of shape out whose element k is src's element m[k].
func take(src *array, m []int, out []int64) *array {
	r := newArray(src.dt, out)
	if src.isFloat() {
		for k, j := range m {
			r.f[k] = src.f[j]
		}
	} else {
		for k, j := range m {
			r.i[k] = src.i[j]
		}
	}
	return r
}

var errDivZero = errors.New("integer division by zero")

// arity is the number of operands of each elementwise op.
func arity(op mir.Op) int {
	switch op {
	case "add", "sub", "mul", "div", "pow", "max", "min", "mod",
		"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor":
		return 2
	case "where":
		return 3
	}
	return 1
}

func isCompare(op mir.Op) bool {
	switch op {
	case "eq", "ne", "lt", "le", "gt", "ge":
		return true
	}
	return false
}

func isLogic(op mir.Op) bool {
	switch op {
	case "not", "and", "or", "xor":
		return true
	}
	return false
}

// elementwise evaluates one elementwise op with NumPy broadcasting to the
// result shape out and result dtype dt.
func elementwise(op mir.Op, attrs mir.Attrs, args []*array, dt tensor.DType, out []int64) (*array, error) {
	if len(args) != arity(op) {
		return nil, fmt.Errorf("takes %d operands, found %d", arity(op), len(args))
	}
	maps := make([][]int, len(args))
	for i, a := range args {
		m, err := broadcastMap(a.shape, out)
		if err != nil {
			return nil, fmt.Errorf("operand %d: %v", i, err)
		}
		maps[i] = m
	}
	res := newArray(dt, out)
	n := numel(out)
	x := args[0]
	switch {
	case op == "cast":
		if dt != attrs.DType("to") {
			return nil, fmt.Errorf("casts to %s but the result is %s", attrs.DType("to"), dt)
		}
		for k := 0; k < n; k++ {
			j := maps[0][k]
			switch {
			case x.isFloat() && dt.IsFloat():
				res.f[k] = roundFloat(x.f[j], dt)
			case x.isFloat():
				res.i[k] = floatToInt(x.f[j], dt)
			case dt.IsFloat():
				res.f[k] = intToFloat(x.i[j], dt)
			default:
				res.i[k] = dt.Wrap(x.i[j])
			}
		}
		return res, nil

	case op == "where":
		a, b := args[1], args[2]
		if args[0].dt != tensor.Bool {
			return nil, fmt.Errorf("the condition is %s, want bool", args[0].dt)
		}
		if a.dt != dt || b.dt != dt {
			return nil, fmt.Errorf("operands are %s and %s but the result is %s", a.dt, b.dt, dt)
		}
		for k := 0; k < n; k++ {
			src, j := b, maps[2][k]
			if args[0].i[maps[0][k]] != 0 {
				src, j = a, maps[1][k]
			}
			if dt.IsFloat() {
				res.f[k] = src.f[j]
			} else {
				res.i[k] = src.i[j]
			}
		}
		return res, nil
	}

	if len(args) == 2 && args[1].dt != x.dt {
		return nil, fmt.Errorf("operands have different dtypes %s and %s", x.dt, args[1].dt)
	}
	want := x.dt
	if isCompare(op) {
		want = tensor.Bool
	}
	if dt != want {
		return nil, fmt.Errorf("the result is %s, want %s for %s operands", dt, want, x.dt)
	}
	if isLogic(op) != (x.dt == tensor.Bool) && !isCompare(op) {
		if isLogic(op) {
			return nil, fmt.Errorf("needs bool operands, found %s", x.dt)
		}
		return nil, fmt.Errorf("needs numeric operands, found %s", x.dt)
	}

	if isCompare(op) {
		cmp := compareFunc(op)
		for k := 0; k < n; k++ {
			var c int
			if x.isFloat() {
				a, b := x.f[maps[0][k]], args[1].f[maps[1][k]]
				switch {
				case math.IsNaN(a) || math.IsNaN(b):
					c = unordered
				case a < b:
					c = -1
				case a > b:
					c = 1
				}
			} else {
				a, b := x.i[maps[0][k]], args[1].i[maps[1][k]]
				switch {
				case a < b:
					c = -1
				case a > b:
					c = 1
				}
			}
			if cmp(c) {
				res.i[k] = 1
			}
		}
		return res, nil
	}

	if len(args) == 1 {
		if x.isFloat() {
			f, err := floatUnary(op, attrs)
			if err != nil {
				return nil, err
			}
			for k := 0; k < n; k++ {
				res.f[k] = f(x.f[maps[0][k]])
			}
		} else {
			f, err := intUnary(op, attrs, x.dt)
			if err != nil {
				return nil, err
			}
			for k := 0; k < n; k++ {
				res.i[k] = f(x.i[maps[0][k]])
			}
		}
		return res.fit(), nil
	}

	y := args[1]
	if x.isFloat() {
		f, err := floatBinary(op)
		if err != nil {
			return nil, err
		}
		for k := 0; k < n; k++ {
			res.f[k] = f(x.f[maps[0][k]], y.f[maps[1][k]])
		}
	} else {
		f, err := intBinary(op)
		if err != nil {
			return nil, err
		}
		for k := 0; k < n; k++ {
			v, err := f(x.i[maps[0][k]], y.i[maps[1][k]])
			if err != nil {
				return nil, fmt.Errorf("%v (element %d)", err, k)
			}
			res.i[k] = v
		}
	}
	return res.fit(), nil
}

// unordered is the comparison result of a NaN operand: only ne holds.
const unordered = 2

func compareFunc(op mir.Op) func(c int) bool {
	switch op {
	case "eq":
		return func(c int) bool { return c == 0 }
	case "ne":
		return func(c int) bool { return c != 0 }
	case "lt":
		return func(c int) bool { return c == -1 }
	case "le":
		return func(c int) bool { return c == -1 || c == 0 }
	case "gt":
		return func(c int) bool { return c == 1 }
	}
	return func(c int) bool { return c == 1 || c == 0 } // ge
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// floatUnary is the float64 function of a unary op (also the activations of
// matmul and conv epilogues).
func floatUnary(op mir.Op, attrs mir.Attrs) (func(float64) float64, error) {
	switch op {
	case "neg":
		return func(x float64) float64 { return -x }, nil
	case "abs":
		return math.Abs, nil
	case "exp":
		return math.Exp, nil
	case "log":
		return math.Log, nil
	case "sqrt":
		return math.Sqrt, nil
	case "rsqrt":
		return func(x float64) float64 { return 1 / math.Sqrt(x) }, nil
	case "recip":
		return func(x float64) float64 { return 1 / x }, nil
	case "tanh":
		return math.Tanh, nil
	case "sigmoid":
		return sigmoid, nil
	case "relu":
		return func(x float64) float64 {
			if x < 0 {
				return 0
			}
			return x // NaN stays NaN
		}, nil
	case "gelu":
		return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, nil
	case "gelu_tanh":
		c := math.Sqrt(2 / math.Pi)
		return func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x))) }, nil
	case "silu":
		return func(x float64) float64 { return x * sigmoid(x) }, nil
	case "softsign":
		return func(x float64) float64 { return x / (1 + math.Abs(x)) }, nil
	case "hardswish": // x * HardSigmoid(x) with alpha 1/6, beta 1/2 (ONNX HardSwish)
		return func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }, nil
	case "mish": // x * tanh(softplus(x))
		return func(x float64) float64 { return x * math.Tanh(math.Log1p(math.Exp(x))) }, nil
	case "erf":
		return math.Erf, nil
	case "sin":
		return math.Sin, nil
	case "cos":
		return math.Cos, nil
	case "floor":
		return math.Floor, nil
	case "ceil":
		return math.Ceil, nil
	case "round":
		return math.RoundToEven, nil
	case "sign":
		return func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x // zeros and NaN
		}, nil
	case "leaky_relu":
		alpha := 0.01
		if attrs.Has("alpha") {
			alpha = attrs.Float("alpha")
		}
		return func(x float64) float64 {
			if x < 0 {
				return alpha * x
			}
			return x
		}, nil
	case "clamp":
		lo, hi := math.Inf(-1), math.Inf(1)
		if attrs.Has("min") {
			lo = attrs.Float("min")
		}
		if attrs.Has("max") {
			hi = attrs.Float("max")
		}
		return func(x float64) float64 {
			switch {
			case x < lo:
				return lo
			case x > hi:
				return hi
			}
			return x // NaN stays NaN
		}, nil
	}
	if mir.IsElementwise(op) {
		return nil, fmt.Errorf("%s is not defined on float operands", op)
	}
	return nil, fmt.Errorf("unknown activation %q", op)
}

// intUnary is the int64 function of a unary op on integer dtype dt; results
// are wrapped to dt afterwards.
func intUnary(op mir.Op, attrs mir.Attrs, dt tensor.DType) (func(int64) int64, error) {
	switch op {
	case "neg":
		return func(x int64) int64 { return -x }, nil
	case "abs":
		return func(x int64) int64 {
			if x < 0 {
				return -x
			}
			return x
		}, nil
	case "relu":
		return func(x int64) int64 { return max(x, 0) }, nil
	case "sign":
		return func(x int64) int64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}, nil
	case "not":
		return func(x int64) int64 { return 1 - x }, nil
	case "clamp":
		// The bounds are floats: x < min means min's ceiling is the nearest
		// integer at or above min, saturated to the dtype.
		hasLo, hasHi := attrs.Has("min"), attrs.Has("max")
		lo, hi := attrs.Float("min"), attrs.Float("max")
		return func(x int64) int64 {
			v := float64(x)
			switch {
			case hasLo && v < lo:
				return floatToInt(math.Ceil(lo), dt)
			case hasHi && v > hi:
				return floatToInt(math.Floor(hi), dt)
			}
			return x
		}, nil
	}
	return nil, fmt.Errorf("%s is not defined on %s operands", op, dt)
}

// floatBinary is the float64 function of a binary arithmetic op.
func floatBinary(op mir.Op) (func(a, b float64) float64, error) {
	switch op {
	case "add":
		return func(a, b float64) float64 { return a + b }, nil
	case "sub":
		return func(a, b float64) float64 { return a - b }, nil
	case "mul":
		return func(a, b float64) float64 { return a * b }, nil
	case "div":
		return func(a, b float64) float64 { return a / b }, nil
	case "pow":
		return math.Pow, nil
	case "max":
		return math.Max, nil // NaN propagates, as NumPy maximum
	case "min":
		return math.Min, nil
	case "mod":
		return floatMod, nil
	}
	return nil, fmt.Errorf("%s is not defined on float operands", op)
}

// floatMod is NumPy's mod: the remainder of floored division, with the
// divisor's sign (a zero result takes the divisor's sign too); x mod 0 is
// NaN.
func floatMod(a, b float64) float64 {
	r := math.Mod(a, b)
	if r == 0 {
		return math.Copysign(0, b)
	}
	if (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// intBinary is the int64 function of a binary op on integers (or bools for
// and, or, xor). Arithmetic wraps; results are wrapped to the dtype after.
func intBinary(op mir.Op) (func(a, b int64) (int64, error), error) {
	switch op {
	case "add":
		return func(a, b int64) (int64, error) { return a + b, nil }, nil
	case "sub":
		return func(a, b int64) (int64, error) { return a - b, nil }, nil
	case "mul":
		return func(a, b int64) (int64, error) { return a * b, nil }, nil
	case "div":
		// Truncates toward zero, as C and ONNX Div (not NumPy's //).
		return func(a, b int64) (int64, error) {
			if b == 0 {
				return 0, errDivZero
			}
			return a / b, nil
		}, nil
	case "mod":
		return intMod, nil
	case "pow":
		return intPow, nil
	case "max":
		return func(a, b int64) (int64, error) { return max(a, b), nil }, nil
	case "min":
		return func(a, b int64) (int64, error) { return min(a, b), nil }, nil
	case "and":
		return func(a, b int64) (int64, error) { return a & b, nil }, nil
	case "or":
		return func(a, b int64) (int64, error) { return a | b, nil }, nil
	case "xor":
		return func(a, b int64) (int64, error) { return a ^ b, nil }, nil
	}
	return nil, fmt.Errorf("%s is not defined on integer operands", op)
}

// intMod is floored: the result has the divisor's sign (NumPy mod).
func intMod(a, b int64) (int64, error) {
	if b == 0 {
		return 0, errDivZero
	}
	r := a % b
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r, nil
}

// intPow is a**b with wrapping multiplication. A negative exponent gives
// the truncation of the real result: 1 for a = 1, ±1 for a = -1, 0 for
// |a| > 1, and a division-by-zero error for a = 0.
func intPow(a, b int64) (int64, error) {
	if b < 0 {
		switch a {
		case 0:
			return 0, errDivZero
		case 1:
			return 1, nil
		case -1:
			if b%2 == 0 {
				return 1, nil
			}
			return -1, nil
		}
		return 0, nil
	}
	r := int64(1)
	for b > 0 {
		if b&1 == 1 {
			r *= a
		}
		a *= a
		b >>= 1
	}
	return r, nil
}
