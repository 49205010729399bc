package specialize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// f32s prints a value as the f32 it rounds to, for regions' immediates
// (a QDQ model's scales are f32 constants).
func f32s(v float64) string { return strconv.FormatFloat(float64(float32(v)), 'g', -1, 64) }

// requantRegion is a region of QDQ MobileNetV2 as rlxc inspect --lir
// prints it: a QuantizeLinear of in0 by the per-channel scale in1, cast to
// the byte dt, then a DequantizeLinear, ReLU6 and QuantizeLinear of that
// byte, cast to dt and back to f32, less the next zero point. With
// byteOut the region ends at the second byte (out0 of dtype dt).
func requantRegion(dt tensor.DType, z1, s1, s2, z2, zNext float64, byteOut bool) string {
	lo, hi := 0.0, 255.0
	if dt == tensor.I8 {
		lo, hi = -128, 127
	}
	code := fmt.Sprintf("r0 = load in0; r1 = load in1; r2 = round r0; r3 = mul r2 r1; r4 = round r3; r5 = %v; r6 = add r4 r5; r7 = %v; r8 = max r6 r7; r9 = %v; r10 = min r8 r9; r11 = cast r10 to %s; "+
		"r12 = cast r11 to f32; r13 = %v; r14 = sub r12 r13; r15 = %s; r16 = mul r14 r15; r17 = 0; r18 = max r16 r17; r19 = 6; r20 = min r18 r19; r21 = %s; r22 = div r20 r21; r23 = round r22; "+
		"r24 = %v; r25 = add r23 r24; r26 = %v; r27 = max r25 r26; r28 = %v; r29 = min r27 r28; r30 = cast r29 to %s; ",
		z1, lo, hi, dt, z1, f32s(s1), f32s(s2), z2, lo, hi, dt)
	if byteOut {
		return code + "out0 = r30"
	}
	return code + fmt.Sprintf("r31 = cast r30 to f32; r32 = %v; r33 = sub r31 r32; out0 = r33", zNext)
}

// mobileNetRegion is the region of the brief, verbatim.
const mobileNetRegion = "r0 = load in0; r1 = load in1; r2 = round r0; r3 = mul r2 r1; r4 = round r3; r5 = 128; r6 = add r4 r5; r7 = 0; r8 = max r6 r7; r9 = 255; r10 = min r8 r9; r11 = cast r10 to u8; r12 = cast r11 to f32; r13 = 128; r14 = sub r12 r13; r15 = 0.055794622749090195; r16 = mul r14 r15; r17 = 0; r18 = max r16 r17; r19 = 6; r20 = min r18 r19; r21 = 0.0235294122248888; r22 = div r20 r21; r23 = round r22; r24 = 0; r25 = add r23 r24; r26 = 0; r27 = max r25 r26; r28 = 255; r29 = min r27 r28; r30 = cast r29 to u8; r31 = cast r30 to f32; r32 = 0; r33 = sub r31 r32; out0 = r33"

// parseEw reads code as lir.Instr.String prints it, "; " between
// instructions.
func parseEw(t *testing.T, src string) []lir.Instr {
	t.Helper()
	reg := func(s string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(s, "r"))
		if err != nil || !strings.HasPrefix(s, "r") {
			t.Fatalf("bad register %q", s)
		}
		return n
	}
	var code []lir.Instr
	for _, s := range strings.Split(src, "; ") {
		f := strings.Fields(s)
		if len(f) < 3 || f[1] != "=" {
			t.Fatalf("bad instruction %q", s)
		}
		if strings.HasPrefix(f[0], "out") {
			n, err := strconv.Atoi(strings.TrimPrefix(f[0], "out"))
			if err != nil {
				t.Fatalf("bad store %q", s)
			}
			code = append(code, lir.Instr{Op: lir.EwStore, A: n, Dst: reg(f[2])})
			continue
		}
		in := lir.Instr{Dst: reg(f[0])}
		if v, err := strconv.ParseFloat(f[2], 64); err == nil && len(f) == 3 {
			in.Op, in.Imm = lir.EwImm, v
			code = append(code, in)
			continue
		}
		op, ok := lir.ParseEwOp(f[2])
		if !ok {
			t.Fatalf("unknown op in %q", s)
		}
		in.Op = op
		switch op {
		case lir.EwLoad:
			n, err := strconv.Atoi(strings.TrimPrefix(f[3], "in"))
			if err != nil {
				t.Fatalf("bad load %q", s)
			}
			in.A = n
		case lir.EwCast:
			dt, ok := tensor.ParseDType(f[5])
			if !ok || len(f) != 6 {
				t.Fatalf("bad cast %q", s)
			}
			in.A, in.Imm = reg(f[3]), float64(dt)
		default:
			args := f[3:]
			if len(args) != op.Info().Arity {
				t.Fatalf("%q: %d operands", s, len(args))
			}
			ps := []*int{&in.A, &in.B, &in.C}
			for i, a := range args {
				*ps[i] = reg(a)
			}
		}
		code = append(code, in)
	}
	return code
}

func ewRegion(t *testing.T, src string, in []tensor.DType, out tensor.DType) *lir.Elementwise {
	op := &lir.Elementwise{Shape: []int64{1}, Code: parseEw(t, src), Out: []lir.EwOut{{DType: out}}}
	for _, dt := range in {
		op.In = append(op.In, lir.EwIn{DType: dt, Strides: []int64{0}})
	}
	return op
}

// interpEw evaluates the region at one element as the CPU interpreter's
// double path does, written out here as plainly as it can be: float64
// registers, each result that Narrowing names rounded to f32, casts to
// integers truncating (NaN to 0, saturating at int64) and wrapping.
func interpEw(op *lir.Elementwise, args []float64) []float64 {
	narrow := op.Narrowing()
	regs := map[int]float64{}
	out := make([]float64, len(op.Out))
	toInt := func(v float64, dt tensor.DType) float64 {
		var i int64
		switch {
		case v != v:
		case v >= 9223372036854775807:
			i = math.MaxInt64
		case v <= -9223372036854775808:
			i = math.MinInt64
		default:
			i = int64(v)
		}
		if dt == tensor.I8 {
			return float64(int8(i))
		}
		return float64(uint8(i))
	}
	for k, in := range op.Code {
		a, b := regs[in.A], regs[in.B]
		var v float64
		switch in.Op {
		case lir.EwLoad:
			v = args[in.A]
		case lir.EwStore:
			x := regs[in.Dst]
			if dt := op.Out[in.A].DType; dt == tensor.F32 {
				x = float64(float32(x))
			} else {
				x = toInt(x, dt)
			}
			out[in.A] = x
			continue
		case lir.EwImm:
			v = in.Imm
		case lir.EwCast:
			switch dt := tensor.DType(in.Imm); dt {
			case tensor.F32:
				v = float64(float32(a))
			case tensor.F64:
				v = a
			default:
				v = toInt(a, dt)
			}
		case lir.EwAdd:
			v = a + b
		case lir.EwSub:
			v = a - b
		case lir.EwMul:
			v = a * b
		case lir.EwDiv:
			v = a / b
		case lir.EwMax, lir.EwMin:
			switch {
			case a != a || b != b:
				v = math.NaN()
			case in.Op == lir.EwMax:
				v = math.Max(a, b)
			default:
				v = math.Min(a, b)
			}
		case lir.EwRound:
			v = math.RoundToEven(a)
		case lir.EwRelu:
			if a > 0 {
				v = a
			}
		case lir.EwExp:
			v = math.Exp(a)
		default:
			panic("interpEw: no " + in.Op.String())
		}
		if narrow[k] == tensor.F32 {
			v = float64(float32(v))
		}
		regs[in.Dst] = v
	}
	return out
}

// nativeEw evaluates the region at one element as native f32 code
// computes it: f32 registers and arithmetic, max and min as vmaxps and
// vminps (the second operand where they are equal, NaN propagated),
// casts to bytes as rlx_f32_byte.
func nativeEw(op *lir.Elementwise, args []float64) []float64 {
	regs := map[int]float32{}
	out := make([]float64, len(op.Out))
	toByte := func(v float32, dt tensor.DType) float32 {
		var i int32
		switch {
		case v >= -2147483648 && v < 2147483648:
			i = int32(v)
		case v >= 9223372036854775807:
			i = 255
		}
		if dt == tensor.I8 {
			return float32(int8(i))
		}
		return float32(uint8(i))
	}
	for _, in := range op.Code {
		a, b := regs[in.A], regs[in.B]
		var v float32
		switch in.Op {
		case lir.EwLoad:
			v = float32(args[in.A])
		case lir.EwStore:
			x := regs[in.Dst]
			if dt := op.Out[in.A].DType; dt != tensor.F32 {
				x = toByte(x, dt)
			}
			out[in.A] = float64(x)
			continue
		case lir.EwImm:
			v = float32(in.Imm)
		case lir.EwCast:
			v = a
			if dt := tensor.DType(in.Imm); dt != tensor.F32 {
				v = toByte(a, dt)
			}
		case lir.EwAdd:
			v = a + b
		case lir.EwSub:
			v = a - b
		case lir.EwMul:
			v = a * b
		case lir.EwDiv:
			v = a / b
		case lir.EwMax, lir.EwMin:
			switch {
			case a != a || b != b:
				v = float32(math.NaN())
			case in.Op == lir.EwMax && a > b, in.Op == lir.EwMin && a < b:
				v = a
			default:
				v = b
			}
		case lir.EwRound:
			v = float32(math.RoundToEven(float64(a)))
		case lir.EwRelu:
			if a > 0 {
				v = a
			}
		case lir.EwExp:
			v = float32(math.Exp(float64(a)))
		default:
			panic("nativeEw: no " + in.Op.String())
		}
		regs[in.Dst] = v
	}
	return out
}

// sameBits compares results bit for bit (any NaN equal to any NaN).
func sameBits(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}

// specialF32 are operand values at the edges: NaN, infinities, zeros of
// both signs, huge values, and ties of rounding (x.5) and their f32
// neighbours.
func specialF32() []float64 {
	vs := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1,
		math.MaxFloat32, -math.MaxFloat32, 1e10, -1e10, 3e9, -3e9, 1e-40, -1e-40, 1e-3}
	for _, x := range []float64{0.5, 1.5, 2.5, 126.5, 127.5, 128.5, 254.5, 255.5, 3.5} {
		for _, s := range []float64{1, -1} {
			v := float32(s * x)
			vs = append(vs, float64(v), float64(math.Nextafter32(v, 0)), float64(math.Nextafter32(v, 2*v)))
		}
	}
	return vs
}

// checkSame compares a region before and after folding over args, with
// both evaluators.
func checkSame(t *testing.T, before, after *lir.Elementwise, args []float64) {
	t.Helper()
	for _, eval := range []struct {
		name string
		f    func(*lir.Elementwise, []float64) []float64
	}{{"interpreter", interpEw}, {"native", nativeEw}} {
		want, got := eval.f(before, args), eval.f(after, args)
		if !sameBits(want, got) {
			t.Fatalf("%s at %v: folded %v, original %v", eval.name, args, got, want)
		}
	}
	// and the new code is SSA as the old was
	if _, ok := newByteRegion(after); !ok {
		t.Fatalf("folded code is not SSA")
	}
}

// foldCase folds src and checks the result against the original at the
// given arguments and random ones; it returns the counts of instructions
// other than immediates before and after.
func foldCase(t *testing.T, src string, in []tensor.DType, out tensor.DType, args [][]float64) (int, int) {
	t.Helper()
	before := ewRegion(t, src, in, out)
	after := ewRegion(t, src, in, out)
	foldByteChains(after)
	nb, na := countOps(before.Code), countOps(after.Code)
	if na >= nb {
		t.Fatalf("not folded: %d instructions, then %d:\n%s", nb, na, printEw(after.Code))
	}
	maxReg := 0
	for _, c := range [][]lir.Instr{before.Code, after.Code} {
		for _, in := range c {
			maxReg = max(maxReg, in.Dst)
		}
	}
	for _, in := range after.Code {
		if in.Dst > maxReg || in.Dst < 0 {
			t.Fatalf("register %d", in.Dst)
		}
	}
	for _, a := range args {
		checkSame(t, before, after, a)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	special := specialF32()
	for range 20000 {
		a := make([]float64, len(in))
		for i, dt := range in {
			switch {
			case dt == tensor.U8:
				a[i] = float64(rng.IntN(256))
			case dt == tensor.I8:
				a[i] = float64(rng.IntN(256) - 128)
			case rng.IntN(4) == 0:
				a[i] = special[rng.IntN(len(special))]
			case rng.IntN(2) == 0:
				// near ties: halves and their neighbours
				v := float32(float64(rng.IntN(600)-300) + 0.5)
				a[i] = float64([]float32{v, math.Nextafter32(v, 1e9), math.Nextafter32(v, -1e9)}[rng.IntN(3)])
			default:
				a[i] = float64(float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(6)-2))))
			}
		}
		checkSame(t, before, after, a)
	}
	return nb, na
}

func printEw(code []lir.Instr) string {
	var s []string
	for _, in := range code {
		s = append(s, in.String())
	}
	return strings.Join(s, "; ")
}

// byteArgs are operands making the requantRegion's first byte take each
// of its values: in0 = v − z1 with a scale of 1, for every other operand
// value of special.
func byteArgs(dt tensor.DType, z1 float64) [][]float64 {
	var args [][]float64
	for i := range 256 {
		v := byteValue(dt, i)
		args = append(args, []float64{v - z1, 1}, []float64{v - z1 + 0.25, 1}, []float64{v - z1 - 0.5, 1})
	}
	for _, x := range specialF32() {
		for _, s := range specialF32() {
			args = append(args, []float64{x, s})
		}
	}
	return args
}

func TestFoldByteChainMobileNet(t *testing.T) {
	nb, na := foldCase(t, mobileNetRegion, []tensor.DType{tensor.F32, tensor.F32}, tensor.F32, byteArgs(tensor.U8, 128))
	after := ewRegion(t, mobileNetRegion, []tensor.DType{tensor.F32, tensor.F32}, tensor.F32)
	foldByteChains(after)
	t.Logf("%d instructions but immediates, %d folded: %s", nb, na, printEw(after.Code))
	// The chain after the byte: 13 instructions (cast, sub, mul, max, min,
	// div, round, add, max, min, cast, cast, sub) become cast, sub, mul,
	// round, max, min.
	if nb-na != 7 {
		t.Errorf("%d instructions saved, want 7", nb-na)
	}
	for _, in := range after.Code {
		if in.Op == lir.EwDiv {
			t.Errorf("a division left: %s", printEw(after.Code))
		}
	}
}

func TestFoldByteChainVariants(t *testing.T) {
	f32x2 := []tensor.DType{tensor.F32, tensor.F32}
	for _, c := range []struct {
		name     string
		dt       tensor.DType
		z1, s1   float64
		s2, z2   float64
		zNext    float64
		byteOut  bool
		outDType tensor.DType
	}{
		{"u8", tensor.U8, 128, 0.055794622749090195, 0.0235294122248888, 0, 0, false, tensor.F32},
		{"u8-zero-points", tensor.U8, 117, 0.0371, 0.0213, 9, 9, false, tensor.F32},
		{"u8-byte-result", tensor.U8, 128, 0.055794622749090195, 0.0235294122248888, 0, 0, true, tensor.U8},
		{"u8-byte-result-zp", tensor.U8, 131, 0.0173, 0.031, 4, 0, true, tensor.U8},
		{"i8", tensor.I8, -3, 0.0417, 0.0235294122248888, -128, -128, false, tensor.F32},
		{"i8-byte-result", tensor.I8, 5, 0.0291, 0.0187, -100, 0, true, tensor.I8},
		// (x − 120)·0.1/(6/255) is k·4.25: ties at every other k
		{"u8-ties", tensor.U8, 120, 0.1, 6.0 / 255, 0, 0, false, tensor.F32},
		{"u8-ties-byte-result", tensor.U8, 120, 0.1, 6.0 / 255, 0, 0, true, tensor.U8},
		{"u8-near-tie", tensor.U8, nearTie.z1, nearTie.s1, nearTie.s2, nearTie.z2, 0, true, tensor.U8},
		{"u8-near-tie-f32", tensor.U8, nearTie.z1, nearTie.s1, nearTie.s2, nearTie.z2, 3, false, tensor.F32},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := requantRegion(c.dt, c.z1, c.s1, c.s2, c.z2, c.zNext, c.byteOut)
			nb, na := foldCase(t, src, f32x2, c.outDType, byteArgs(c.dt, c.z1))
			t.Logf("%d → %d", nb, na)
			// 11 instructions from the byte to the byte: 8 at most
			if nb-na < 3 {
				t.Errorf("%d instructions saved, want 3 or more", nb-na)
			}
		})
	}
}

// TestFoldByteChainLoad folds a DequantizeLinear → Relu → QuantizeLinear
// of a u8 operand, and one of an i8 operand with a second f32 operand.
func TestFoldByteChainLoad(t *testing.T) {
	src := fmt.Sprintf("r0 = load in0; r1 = cast r0 to f32; r2 = 3; r3 = sub r1 r2; r4 = %s; r5 = mul r3 r4; r6 = relu r5; r7 = %s; r8 = div r6 r7; r9 = round r8; r10 = 7; r11 = add r9 r10; r12 = 0; r13 = max r11 r12; r14 = 255; r15 = min r13 r14; r16 = cast r15 to u8; out0 = r16",
		f32s(0.05), f32s(0.03))
	var args [][]float64
	for v := range 256 {
		args = append(args, []float64{float64(v)})
	}
	nb, na := foldCase(t, src, []tensor.DType{tensor.U8}, tensor.U8, args)
	t.Logf("u8: %d → %d", nb, na)

	src = fmt.Sprintf("r0 = load in0; r1 = load in1; r2 = cast r0 to f32; r3 = -9; r4 = sub r2 r3; r5 = %s; r6 = mul r4 r5; r7 = relu r6; r8 = %s; r9 = div r7 r8; r10 = round r9; r11 = -20; r12 = add r10 r11; r13 = -128; r14 = max r12 r13; r15 = 127; r16 = min r14 r15; r17 = cast r16 to f32; r18 = add r17 r1; out0 = r18",
		f32s(0.1), f32s(0.07))
	args = nil
	for v := range 256 {
		for _, x := range specialF32() {
			args = append(args, []float64{float64(v - 128), x})
		}
	}
	nb, na = foldCase(t, src, []tensor.DType{tensor.I8, tensor.F32}, tensor.F32, args)
	t.Logf("i8: %d → %d", nb, na)
}

// TestFoldByteChainKeeps leaves alone what must not fold.
func TestFoldByteChainKeeps(t *testing.T) {
	f32x2 := []tensor.DType{tensor.F32, tensor.F32}
	mobile := requantRegion(tensor.U8, 128, 0.055794622749090195, 0.0235294122248888, 0, 0, false)
	for _, c := range []struct {
		name string
		src  string
		in   []tensor.DType
		out  tensor.DType
	}{
		{"exp", strings.Replace(mobile, "r18 = max r16 r17", "r18 = exp r16", 1), f32x2, tensor.F32},
		// r14 written twice
		{"not-ssa", strings.Replace(mobile, "r16 = mul r14 r15", "r14 = mul r14 r15; r16 = mul r14 r15", 1), f32x2, tensor.F32},
		{"read-before-write", strings.Replace(mobile, "r12 = cast r11 to f32", "r12 = cast r40 to f32", 1) + "; r40 = 1", f32x2, tensor.F32},
		{"f64", strings.Replace(mobile, "r12 = cast r11 to f32", "r12 = cast r11 to f64", 1), f32x2, tensor.F32},
		// a scale no f32 holds: the interpreter uses it as it is
		{"inexact-immediate", strings.Replace(mobile, "r21 = "+f32s(0.0235294122248888), "r21 = 0.0235294117647", 1), f32x2, tensor.F32},
		// no rounding: a dequantization is as short as it gets
		{"dequantize", "r0 = load in0; r1 = cast r0 to f32; r2 = 3; r3 = sub r1 r2; r4 = 0.5; r5 = mul r3 r4; out0 = r5", []tensor.DType{tensor.U8}, tensor.F32},
		// integer arithmetic on the byte
		{"integer", "r0 = load in0; r1 = 3; r2 = add r0 r1; r3 = 2; r4 = mul r2 r3; r5 = cast r4 to f32; r6 = round r5; out0 = r6", []tensor.DType{tensor.U8}, tensor.F32},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := ewRegion(t, c.src, c.in, c.out)
			code := slices.Clone(op.Code)
			foldByteChains(op)
			if !slices.Equal(op.Code, code) {
				t.Errorf("folded:\n%s\nto\n%s", printEw(code), printEw(op.Code))
			}
		})
	}
}

// nearTie are scales and zero points of a requantization (u8, byte
// result) that the f32 rounding of s1/s2 does not reproduce: the chain
// rounds s1·(x − z1) to f32 and then its quotient by s2, the form rounds
// one product, and at some byte the two fall on either side of a tie.
// A neighbour of the multiplier does.
var nearTie = struct{ z1, s1, s2, z2 float64 }{72, 0.02357485704123974, 0.0934421643614769, 219}

// TestFoldByteChainChecksEveryByte: the form with c's f32 rounding as
// its multiplier is refused at some byte, and the fold takes a
// neighbour, which it checked.
func TestFoldByteChainChecksEveryByte(t *testing.T) {
	src := requantRegion(tensor.U8, nearTie.z1, nearTie.s1, nearTie.s2, nearTie.z2, 0, true)
	op := ewRegion(t, src, []tensor.DType{tensor.F32, tensor.F32}, tensor.U8)
	r, ok := newByteRegion(op)
	if !ok {
		t.Fatal("not SSA")
	}
	c, ok := r.chain(11, tensor.U8, 11)
	if !ok || !slices.Equal(c.sinks, []int{30}) {
		t.Fatalf("chain of r11: %v, sinks %v", ok, c.sinks)
	}
	tab := c.table[30]
	lo, hi := slices.Min(tab), slices.Max(tab)
	m0 := float32(c.aff[30].rc)
	if m0 != float32(float32(nearTie.s1)/float32(nearTie.s2)) {
		t.Fatalf("m0 = %v", m0)
	}
	if _, ok := r.form(c, 30, tab, []formStep{{op: lir.EwSub, k: nearTie.z1}, {op: lir.EwMul, k: float64(m0)}}, lir.EwRound, lo, hi); ok {
		t.Fatalf("m = %v accepted", m0)
	}
	foldByteChains(op)
	var m float64
	for _, in := range op.Code {
		if in.Op == lir.EwImm && in.Imm != math.Trunc(in.Imm) && math.Abs(in.Imm/float64(m0)-1) < 1e-6 {
			m = in.Imm
		}
	}
	if m == 0 || m == float64(m0) {
		t.Fatalf("folded with m = %v (c's rounding %v): %s", m, m0, printEw(op.Code))
	}
	t.Logf("m = %v, not %v", m, m0)
	foldCase(t, src, []tensor.DType{tensor.F32, tensor.F32}, tensor.U8, byteArgs(tensor.U8, nearTie.z1))
}

// TestFoldByteChainTies: where scales put the chain's values exactly on
// ties of its rounding ((x − 120)·0.1/(6/255) = k·4.25), which of f32's
// rounding errors decides each, no one multiplier reproduces them all;
// the fold keeps the chain's product and quotient and drops its clamps.
func TestFoldByteChainTies(t *testing.T) {
	src := requantRegion(tensor.U8, 120, 0.1, 6.0/255, 0, 0, false)
	op := ewRegion(t, src, []tensor.DType{tensor.F32, tensor.F32}, tensor.F32)
	foldByteChains(op)
	var ops []lir.EwOp
	for _, in := range op.Code[12:] {
		if in.Op != lir.EwImm {
			ops = append(ops, in.Op)
		}
	}
	want := []lir.EwOp{lir.EwCast, lir.EwSub, lir.EwMul, lir.EwDiv, lir.EwRound, lir.EwMax, lir.EwMin, lir.EwStore}
	if !slices.Equal(ops, want) {
		t.Errorf("after the byte: %v, want %v\n%s", ops, want, printEw(op.Code))
	}
}

// TestByteChainReplaceRenumbers: the new registers take the numbers the
// dropped instructions freed, then numbers past the last, each once.
func TestByteChainReplaceRenumbers(t *testing.T) {
	src := "r0 = load in0; r1 = cast r0 to f32"
	for i := 2; i <= 9; i++ {
		src += fmt.Sprintf("; r%d = relu r%d", i, i-1)
	}
	op := ewRegion(t, src+"; out0 = r9", []tensor.DType{tensor.U8}, tensor.F32)
	r, ok := newByteRegion(op)
	if !ok || r.nregs != 10 {
		t.Fatalf("region: %v, %d registers", ok, r.nregs)
	}
	// Nine immediates (r10 to r18) and four wheres (r19 to r21, then
	// r9): twelve new registers for the eight freed (r1 to r8).
	var form []lir.Instr
	for i := range 9 {
		form = append(form, lir.Instr{Op: lir.EwImm, Dst: 10 + i, Imm: float64(i)})
	}
	form = append(form,
		lir.Instr{Op: lir.EwWhere, Dst: 19, A: 10, B: 11, C: 12},
		lir.Instr{Op: lir.EwWhere, Dst: 20, A: 13, B: 14, C: 15},
		lir.Instr{Op: lir.EwWhere, Dst: 21, A: 16, B: 17, C: 18},
		lir.Instr{Op: lir.EwWhere, Dst: 9, A: 19, B: 20, C: 21})
	code, ok := r.replace(9, form)
	if !ok {
		t.Fatal("not replaced")
	}
	after := &lir.Elementwise{Shape: op.Shape, In: op.In, Out: op.Out, Code: code}
	ra, ok := newByteRegion(after)
	if !ok {
		t.Fatalf("not SSA: %s", printEw(code))
	}
	if ra.nregs != 14 || len(code) != 15 {
		t.Errorf("%d registers, %d instructions, want 14 and 15: %s", ra.nregs, len(code), printEw(code))
	}
	// the same computation: the store reads where(r19, r20, r21) of the
	// same immediates
	want := []string{"r0 = load in0", "r1 = 0", "r2 = 1", "r3 = 2", "r4 = 3", "r5 = 4", "r6 = 5", "r7 = 6", "r8 = 7", "r10 = 8",
		"r11 = where r1 r2 r3", "r12 = where r4 r5 r6", "r13 = where r7 r8 r10", "r9 = where r11 r12 r13", "out0 = r9"}
	if got := printEw(code); got != strings.Join(want, "; ") {
		t.Errorf("got  %s\nwant %s", got, strings.Join(want, "; "))
	}
}

// FuzzFoldByteChains folds requantizations of fuzzed zero points and
// scales (any floats, the clamps' bounds among them), ending in a byte or
// in f32, and checks the folded region against the original at every byte
// of the domain and at special values, under both evaluators: a fold
// either keeps every value bit for bit or does not happen.
func FuzzFoldByteChains(f *testing.F) {
	f.Add(false, int8(0), float32(0.0558), float32(0.0235), int8(0), int8(0), false)
	f.Add(true, int8(3), float32(0.1), float32(6.0/255), int8(-128), int8(5), true)
	f.Add(false, int8(-120), float32(1e-30), float32(3e38), int8(1), int8(0), false)
	f.Add(true, int8(0), float32(-0.5), float32(0.25), int8(0), int8(-3), false)
	f.Fuzz(func(t *testing.T, signed bool, z1 int8, s1, s2 float32, z2, zNext int8, byteOut bool) {
		dt, zu := tensor.U8, float64(uint8(z1))
		if signed {
			dt, zu = tensor.I8, float64(z1)
		}
		z2v := float64(uint8(z2))
		if signed {
			z2v = float64(z2)
		}
		if math.IsNaN(float64(s1)) || math.IsNaN(float64(s2)) {
			return // a NaN immediate prints as a token the test's parser does not read
		}
		src := requantRegion(dt, zu, float64(s1), float64(s2), z2v, float64(zNext), byteOut)
		out := tensor.F32
		if byteOut {
			out = dt
		}
		in := []tensor.DType{tensor.F32, tensor.F32}
		before, after := ewRegion(t, src, in, out), ewRegion(t, src, in, out)
		foldByteChains(after)
		for _, args := range byteArgs(dt, zu) {
			checkSame(t, before, after, args)
		}
	})
}
