package eval

import (
	"math"
	"math/rand"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

func TestUnaryFloat(t *testing.T) {
	ln2 := math.Ln2
	cases := []struct {
		op    mir.Op
		attrs mir.Attrs
		in    []float64
		want  []float64
	}{
		{"neg", nil, []float64{1.5, -2, 0}, []float64{-1.5, 2, 0}},
		{"abs", nil, []float64{-3, 3, -0.25}, []float64{3, 3, 0.25}},
		{"exp", nil, []float64{0, ln2, -inf}, []float64{1, 2, 0}},
		{"log", nil, []float64{1, math.E, 0}, []float64{0, 1, -inf}},
		{"sqrt", nil, []float64{4, 2.25, -1}, []float64{2, 1.5, nan}},
		{"rsqrt", nil, []float64{4, 0.25, 0}, []float64{0.5, 2, inf}},
		{"recip", nil, []float64{4, -0.5, 0}, []float64{0.25, -2, inf}},
		{"tanh", nil, []float64{0, math.Log(3)}, []float64{0, 0.8}}, // tanh(ln 3) = (9-1)/(9+1)
		{"sigmoid", nil, []float64{0, ln2, -ln2, -1000}, []float64{0.5, 2.0 / 3, 1.0 / 3, 0}},
		{"relu", nil, []float64{-2, 3, nan}, []float64{0, 3, nan}},
		// gelu(x) = x·Φ(x): Φ(0) = 1/2, Φ(1) = 0.8413447460685429 (normal table).
		{"gelu", nil, []float64{0, 1, -1}, []float64{0, 0.8413447460685429, -(1 - 0.8413447460685429)}},
		// 0.5·(1+tanh(√(2/π)·1.044715))
		{"gelu_tanh", nil, []float64{0, 1}, []float64{0, 0.8411919906082768}},
		{"silu", nil, []float64{0, ln2}, []float64{0, ln2 * 2 / 3}},
		{"erf", nil, []float64{0, 1, -1}, []float64{0, 0.8427007929497149, -0.8427007929497149}},
		{"sin", nil, []float64{0, math.Pi / 2, math.Pi / 6}, []float64{0, 1, 0.5}},
		{"cos", nil, []float64{0, math.Pi, math.Pi / 3}, []float64{1, -1, 0.5}},
		{"floor", nil, []float64{1.5, -1.5, -2, 2.9}, []float64{1, -2, -2, 2}},
		{"ceil", nil, []float64{1.5, -1.5, -2, 2.1}, []float64{2, -1, -2, 3}},
		// half to even
		{"round", nil, []float64{0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6}, []float64{0, 2, 2, 0, -2, -2, 2, 3}},
		{"sign", nil, []float64{-3, 0, 7, nan}, []float64{-1, 0, 1, nan}},
		{"leaky_relu", mir.Attrs{"alpha": 0.2}, []float64{-5, 5}, []float64{-1, 5}},
		{"leaky_relu", nil, []float64{-100}, []float64{-1}}, // alpha defaults to 0.01
		{"clamp", mir.Attrs{"min": 0.0, "max": 6.0}, []float64{-1, 3, 7, nan}, []float64{0, 3, 6, nan}},
		{"clamp", mir.Attrs{"min": -1.5}, []float64{-2, 100}, []float64{-1.5, 100}},
		{"clamp", mir.Attrs{"max": 2.0}, []float64{-200, 3}, []float64{-200, 2}},
	}
	for _, c := range cases {
		n := int64(len(c.in))
		got := eval1(t, c.op, c.attrs, ty(tensor.F64, n), mk(tensor.F64, sh(n), c.in...))
		check(t, string(c.op), got, sh(n), c.want, 1e-15)
	}
}

func TestUnaryF32Rounding(t *testing.T) {
	// exp(1) rounded once to f32.
	got := eval1(t, "exp", nil, ty(tensor.F32, 1), mk(tensor.F32, sh(1), 1))
	if v := values(t, got)[0]; v != float64(float32(math.E)) {
		t.Errorf("f32 exp(1) = %v, want %v", v, float32(math.E))
	}
}

func TestUnaryInt(t *testing.T) {
	in := mk(tensor.I8, sh(5), -128, -3, 0, 4, 127)
	check(t, "neg i8", eval1(t, "neg", nil, ty(tensor.I8, 5), in), sh(5), []float64{-128, 3, 0, -4, -127}, 0) // -(-128) wraps
	check(t, "abs i8", eval1(t, "abs", nil, ty(tensor.I8, 5), in), sh(5), []float64{-128, 3, 0, 4, 127}, 0)
	check(t, "sign i8", eval1(t, "sign", nil, ty(tensor.I8, 5), in), sh(5), []float64{-1, -1, 0, 1, 1}, 0)
	check(t, "relu i8", eval1(t, "relu", nil, ty(tensor.I8, 5), in), sh(5), []float64{0, 0, 0, 4, 127}, 0)
	check(t, "clamp i8", eval1(t, "clamp", mir.Attrs{"min": -2.5, "max": 3.5}, ty(tensor.I8, 5), in), sh(5), []float64{-2, -2, 0, 3, 3}, 0)
	b := mk(tensor.Bool, sh(2), 0, 1)
	check(t, "not", eval1(t, "not", nil, ty(tensor.Bool, 2), b), sh(2), []float64{1, 0}, 0)
	wantErr(t, evalErr(t, "exp", nil, ty(tensor.I32, 1), mk(tensor.I32, sh(1), 1)), "exp", "i32")
	wantErr(t, evalErr(t, "not", nil, ty(tensor.I32, 1), mk(tensor.I32, sh(1), 1)), "bool")
}

func TestBinaryBroadcast(t *testing.T) {
	// [2, 1] + [3] -> [2, 3]
	a := mk(tensor.F32, sh(2, 1), 10, 20)
	b := mk(tensor.F32, sh(3), 1, 2, 3)
	check(t, "add", eval1(t, "add", nil, ty(tensor.F32, 2, 3), a, b), sh(2, 3), []float64{11, 12, 13, 21, 22, 23}, 0)
	check(t, "sub", eval1(t, "sub", nil, ty(tensor.F32, 2, 3), a, b), sh(2, 3), []float64{9, 8, 7, 19, 18, 17}, 0)
	// scalar with a matrix
	s := mk(tensor.F32, sh(), 2)
	check(t, "mul", eval1(t, "mul", nil, ty(tensor.F32, 3), b, s), sh(3), []float64{2, 4, 6}, 0)
	check(t, "div", eval1(t, "div", nil, ty(tensor.F32, 3), b, s), sh(3), []float64{0.5, 1, 1.5}, 0)
	check(t, "pow", eval1(t, "pow", nil, ty(tensor.F32, 3), b, s), sh(3), []float64{1, 4, 9}, 0)
	x := mk(tensor.F64, sh(3), 1, nan, -1)
	y := mk(tensor.F64, sh(3), 2, 0, -5)
	check(t, "max", eval1(t, "max", nil, ty(tensor.F64, 3), x, y), sh(3), []float64{2, nan, -1}, 0)
	check(t, "min", eval1(t, "min", nil, ty(tensor.F64, 3), x, y), sh(3), []float64{1, nan, -5}, 0)
	// [2,1,3] with [4,1] -> [2,4,3]
	p := mk(tensor.I64, sh(2, 1, 3), 0, 1, 2, 3, 4, 5)
	q := mk(tensor.I64, sh(4, 1), 0, 10, 20, 30)
	want := []float64{}
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			for k := 0; k < 3; k++ {
				want = append(want, float64(3*i+k+10*j))
			}
		}
	}
	check(t, "add 3-d", eval1(t, "add", nil, ty(tensor.I64, 2, 4, 3), p, q), sh(2, 4, 3), want, 0)
	wantErr(t, evalErr(t, "add", nil, ty(tensor.F32, 2, 3), mk(tensor.F32, sh(2), 1, 2), b), "broadcast")
}

func TestModAndIntDiv(t *testing.T) {
	a := []float64{7, -7, 7, -7, 6, -6}
	b := []float64{3, 3, -3, -3, 3, -3}
	// floored: the divisor's sign (NumPy mod)
	wantMod := []float64{1, 2, -2, -1, 0, 0}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.I32, tensor.I64} {
		got := eval1(t, "mod", nil, ty(dt, 6), mk(dt, sh(6), a...), mk(dt, sh(6), b...))
		check(t, "mod "+dt.String(), got, sh(6), wantMod, 0)
	}
	// A float zero result takes the divisor's sign; x mod 0 is NaN.
	got := values(t, eval1(t, "mod", nil, ty(tensor.F64, 3), mk(tensor.F64, sh(3), 6, 5.5, 1), mk(tensor.F64, sh(3), -3, 2, 0)))
	if !math.Signbit(got[0]) || got[1] != 1.5 || !math.IsNaN(got[2]) {
		t.Errorf("float mod edge cases: %v", got)
	}
	// Integer div truncates toward zero.
	check(t, "div i32", eval1(t, "div", nil, ty(tensor.I32, 6), mk(tensor.I32, sh(6), a...), mk(tensor.I32, sh(6), b...)), sh(6),
		[]float64{2, -2, -2, 2, 2, 2}, 0)
	wantErr(t, evalErr(t, "div", nil, ty(tensor.I32, 1), mk(tensor.I32, sh(1), 1), mk(tensor.I32, sh(1), 0)), "division by zero")
	wantErr(t, evalErr(t, "mod", nil, ty(tensor.I64, 1), mk(tensor.I64, sh(1), 1), mk(tensor.I64, sh(1), 0)), "division by zero")
	// Integer pow, wrapping in the dtype, and negative exponents.
	check(t, "pow i64", eval1(t, "pow", nil, ty(tensor.I64, 5), mk(tensor.I64, sh(5), 2, 3, 2, -1, -2), mk(tensor.I64, sh(5), 10, 0, -1, -3, 3)), sh(5),
		[]float64{1024, 1, 0, -1, -8}, 0)
	check(t, "pow i8 wraps", eval1(t, "pow", nil, ty(tensor.I8, 1), mk(tensor.I8, sh(1), 2), mk(tensor.I8, sh(1), 7)), sh(1), []float64{-128}, 0)
	check(t, "add u8 wraps", eval1(t, "add", nil, ty(tensor.U8, 1), mk(tensor.U8, sh(1), 250), mk(tensor.U8, sh(1), 10)), sh(1), []float64{4}, 0)
}

func TestCompareLogicWhere(t *testing.T) {
	a := mk(tensor.F32, sh(4), 1, 2, 3, nan)
	b := mk(tensor.F32, sh(4), 2, 2, 2, nan)
	want := map[mir.Op][]float64{
		"eq": {0, 1, 0, 0}, "ne": {1, 0, 1, 1}, "lt": {1, 0, 0, 0},
		"le": {1, 1, 0, 0}, "gt": {0, 0, 1, 0}, "ge": {0, 1, 1, 0},
	}
	for op, w := range want {
		check(t, string(op), eval1(t, op, nil, ty(tensor.Bool, 4), a, b), sh(4), w, 0)
	}
	i := mk(tensor.I64, sh(3), -1, 5, 9)
	j := mk(tensor.I64, sh(), 5)
	check(t, "ge i64", eval1(t, "ge", nil, ty(tensor.Bool, 3), i, j), sh(3), []float64{0, 1, 1}, 0)
	p := mk(tensor.Bool, sh(4), 0, 0, 1, 1)
	q := mk(tensor.Bool, sh(4), 0, 1, 0, 1)
	check(t, "and", eval1(t, "and", nil, ty(tensor.Bool, 4), p, q), sh(4), []float64{0, 0, 0, 1}, 0)
	check(t, "or", eval1(t, "or", nil, ty(tensor.Bool, 4), p, q), sh(4), []float64{0, 1, 1, 1}, 0)
	check(t, "xor", eval1(t, "xor", nil, ty(tensor.Bool, 4), p, q), sh(4), []float64{0, 1, 1, 0}, 0)
	check(t, "eq bool", eval1(t, "eq", nil, ty(tensor.Bool, 4), p, q), sh(4), []float64{1, 0, 0, 1}, 0)
	wantErr(t, evalErr(t, "add", nil, ty(tensor.Bool, 4), p, q), "numeric")
	// where with a [2,1] condition, a [2,2] branch and a scalar branch
	c := mk(tensor.Bool, sh(2, 1), 1, 0)
	x := mk(tensor.F32, sh(2, 2), 1, 2, 3, 4)
	z := mk(tensor.F32, sh(), -1)
	check(t, "where", eval1(t, "where", nil, ty(tensor.F32, 2, 2), c, x, z), sh(2, 2), []float64{1, 2, -1, -1}, 0)
}

func TestCast(t *testing.T) {
	x := mk(tensor.F32, sh(6), -2.7, 2.7, 1e10, -1e10, nan, 0.5)
	check(t, "f32->i32", eval1(t, "cast", mir.Attrs{"to": tensor.I32}, ty(tensor.I32, 6), x), sh(6),
		[]float64{-2, 2, math.MaxInt32, math.MinInt32, 0, 0}, 0)
	check(t, "f32->u8", eval1(t, "cast", mir.Attrs{"to": tensor.U8}, ty(tensor.U8, 6), x), sh(6), []float64{0, 2, 255, 0, 0, 0}, 0)
	check(t, "f32->bool", eval1(t, "cast", mir.Attrs{"to": tensor.Bool}, ty(tensor.Bool, 6), x), sh(6), []float64{1, 1, 1, 1, 1, 1}, 0)
	i := mk(tensor.I32, sh(4), 300, -1, 0, 128)
	check(t, "i32->i8", eval1(t, "cast", mir.Attrs{"to": tensor.I8}, ty(tensor.I8, 4), i), sh(4), []float64{44, -1, 0, -128}, 0)
	check(t, "i32->u8", eval1(t, "cast", mir.Attrs{"to": tensor.U8}, ty(tensor.U8, 4), i), sh(4), []float64{44, 255, 0, 128}, 0)
	check(t, "i32->bool", eval1(t, "cast", mir.Attrs{"to": tensor.Bool}, ty(tensor.Bool, 4), i), sh(4), []float64{1, 1, 0, 1}, 0)
	check(t, "i32->f16", eval1(t, "cast", mir.Attrs{"to": tensor.F16}, ty(tensor.F16, 4), i), sh(4), []float64{300, -1, 0, 128}, 0)
	b := mk(tensor.Bool, sh(2), 1, 0)
	check(t, "bool->f32", eval1(t, "cast", mir.Attrs{"to": tensor.F32}, ty(tensor.F32, 2), b), sh(2), []float64{1, 0}, 0)
	check(t, "bool->i64", eval1(t, "cast", mir.Attrs{"to": tensor.I64}, ty(tensor.I64, 2), b), sh(2), []float64{1, 0}, 0)
	// 2^24+1 is not an f32: ties to even gives 2^24.
	big := mk(tensor.I64, sh(2), 1<<24+1, 1<<24+3)
	check(t, "i64->f32", eval1(t, "cast", mir.Attrs{"to": tensor.F32}, ty(tensor.F32, 2), big), sh(2), []float64{1 << 24, 1<<24 + 4}, 0)
	// f32 -> f16 rounds once, to nearest even; overflow is inf.
	h := mk(tensor.F32, sh(6), 1+math.Ldexp(1, -11), 1+3*math.Ldexp(1, -11), 65519, 65520, math.Ldexp(1, -25), 3*math.Ldexp(1, -26))
	check(t, "f32->f16", eval1(t, "cast", mir.Attrs{"to": tensor.F16}, ty(tensor.F16, 6), h), sh(6),
		[]float64{1, 1 + math.Ldexp(1, -9), 65504, inf, 0, math.Ldexp(1, -24)}, 0)
	bf := mk(tensor.F32, sh(3), 1+math.Ldexp(1, -8), 1+3*math.Ldexp(1, -8), -3)
	check(t, "f32->bf16", eval1(t, "cast", mir.Attrs{"to": tensor.BF16}, ty(tensor.BF16, 3), bf), sh(3),
		[]float64{1, 1 + math.Ldexp(1, -6), -3}, 0)
	wantErr(t, evalErr(t, "cast", mir.Attrs{"to": tensor.I8}, ty(tensor.I16, 1), mk(tensor.F32, sh(1), 1)), "i8", "i16")
}

func TestF16Arithmetic(t *testing.T) {
	// 1 + 2^-11 is a tie between 1 and 1 + 2^-10 in f16: even wins.
	one := mk(tensor.F16, sh(2), 1, 1)
	d := mk(tensor.F16, sh(2), math.Ldexp(1, -11), math.Ldexp(3, -11))
	check(t, "f16 add", eval1(t, "add", nil, ty(tensor.F16, 2), one, d), sh(2), []float64{1, 1 + math.Ldexp(1, -9)}, 0)
	bf := mk(tensor.BF16, sh(1), 256)
	check(t, "bf16 add", eval1(t, "add", nil, ty(tensor.BF16, 1), bf, mk(tensor.BF16, sh(1), 1)), sh(1), []float64{256}, 0)
}

func TestFloatEncoding(t *testing.T) {
	for _, c := range []struct {
		v    float64
		bits uint16
	}{{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {math.Ldexp(1, -24), 0x0001}, {math.Ldexp(1, -14), 0x0400},
		{math.Ldexp(1023, -24), 0x03ff}, {inf, 0x7c00}, {-inf, 0xfc00}, {0.5, 0x3800}, {0.1, 0x2e66}} {
		r := roundFloat(c.v, tensor.F16)
		if b := floatToF16(r); b != c.bits {
			t.Errorf("f16(%v) = %#04x, want %#04x", c.v, b, c.bits)
		}
		if c.v != 0.1 && f16ToFloat(c.bits) != c.v {
			t.Errorf("f16 %#04x decodes to %v, want %v", c.bits, f16ToFloat(c.bits), c.v)
		}
	}
	if b := floatToF16(nan); b&0x7c00 != 0x7c00 || b&0x3ff == 0 {
		t.Errorf("f16 NaN is %#04x", b)
	}
	// Every f16 bit pattern decodes and encodes back.
	for b := 0; b < 1<<16; b++ {
		v := f16ToFloat(uint16(b))
		if math.IsNaN(v) {
			continue
		}
		if roundFloat(v, tensor.F16) != v || floatToF16(v) != uint16(b) {
			t.Fatalf("f16 %#04x (%v) does not round-trip", b, v)
		}
	}
	// roundFloat to f32 agrees with Go's conversion, subnormals and
	// overflow included.
	r := rand.New(rand.NewSource(1))
	for k := 0; k < 200000; k++ {
		v := math.Float64frombits(r.Uint64())
		if math.IsNaN(v) {
			continue
		}
		v = math.Ldexp(v, -int(math.Round(math.Log2(math.Abs(v)+1e-300)))) // into [0.5, 2)
		v = math.Ldexp(v, r.Intn(300)-160)                                 // around the f32 range
		want := float64(float32(v))                                        // Go: round to nearest even
		got := roundFloat(v, tensor.F32)
		if got != want && !(math.IsInf(want, 0) && math.IsInf(got, 0)) {
			t.Fatalf("roundFloat(%v, f32) = %v, want %v", v, got, want)
		}
	}
	// bf16 of an f32 value: round the low 16 bits to nearest even.
	for k := 0; k < 200000; k++ {
		f := math.Float32frombits(r.Uint32())
		if f != f {
			continue
		}
		if got, want := roundFloat(float64(f), tensor.BF16), float64(bf16Ref(f)); got != want {
			t.Fatalf("roundFloat(%v, bf16) = %v, want %v", f, got, want)
		}
	}
}

// bf16Ref rounds an f32 to bf16 by bit manipulation (nearest, ties to even).
func bf16Ref(f float32) float32 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}

// TestEveryElementwiseOp runs every elementwise op of the MIR op table
// (each instruction of lir.EwOps that is an op) on one element of a dtype
// its operand class admits: an op the interpreter has no definition of
// fails here, by name. Its values are checked by the tests above and, for
// every op, by the bundled models the runtimes are compared on.
func TestEveryElementwiseOp(t *testing.T) {
	for _, info := range mir.Ops() {
		if info.Class != mir.ClassElementwise || info.Ew == lir.EwInvalid {
			continue
		}
		ew := info.Ew.Info()
		for _, dt := range []tensor.DType{tensor.F64, tensor.I32, tensor.Bool} {
			if !ew.Operands.Admits(dt) {
				continue
			}
			var attrs mir.Attrs
			ins := make([]*tensor.Tensor, ew.Arity)
			for i := range ins {
				ins[i] = mk(dt, sh(1), 1)
			}
			res := dt
			switch {
			case info.Ew == lir.EwWhere:
				ins[0] = mk(tensor.Bool, sh(1), 1)
			case info.Ew == lir.EwCast:
				attrs = mir.Attrs{"to": tensor.F32}
				res = tensor.F32
			case ew.BoolResult:
				res = tensor.Bool
			}
			if _, err := Run(opGraph(info.Op, attrs, []mir.Type{ty(res, 1)}, ins...), nil, ins); err != nil {
				t.Errorf("%s on %s: %v (pkg/mir/eval/elementwise.go has no definition of it)", info.Op, dt, err)
			}
		}
	}
}
