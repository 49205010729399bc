// Package cgen generates freestanding C for a CPU program's kernels: it
// rewrites the steps it can compile (fused elementwise regions) into
// lir.NativeCall steps and writes one C function per distinct kernel, with
// the binding's shapes and strides as constants. Compiling the C is the
// clang package's job; running it is the runtime's.
package cgen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Options are the rules that decide how generated code is split among the
// runtime's workers (pkg/targets/cpu/tuning holds the values), the CPU
// levels it is compiled for, and the constants it may read at build time.
type Options struct {
	// EwGrain is the fewest elements of an elementwise region worth a
	// chunk of their own.
	EwGrain int64
	// Levels are the CPU levels the program's native code is compiled
	// for. One program serves them all, so a rule that depends on the
	// level takes what every one of them has; none means nothing is
	// known, and such rules take the weakest level.
	Levels []native.Level
	// Weights are the data of the program's weight buffers, by weight
	// index (specialize.Weights.Data: nil for one the loader derives).
	// Code that depends on a constant's values (a gather's indices)
	// reads them here and embeds them; without them such steps stay on
	// the runtime's kernels.
	Weights []*tensor.Tensor
}

// AllHave reports whether every level of o has the CPU feature (a name of
// native.Level.Features), false where o has no levels.
func (o Options) AllHave(feature string) bool {
	for _, l := range o.Levels {
		if !slices.Contains(l.Features, feature) {
			return false
		}
	}
	return len(o.Levels) > 0
}

// Generate returns prog with every step it compiles replaced by a
// NativeCall, and prog.Native holding the functions (their C source; no
// compiled objects yet). Steps it does not compile stay as they are; a
// program with none to compile comes back unchanged, Native nil.
func Generate(prog *lir.Program, opts Options) (*lir.Program, error) {
	if prog.Native != nil {
		return nil, fmt.Errorf("cgen: program already has native code")
	}
	out := *prog
	out.Steps = make([]lir.Step, 0, len(prog.Steps))
	native := &lir.Native{}
	index := map[string]int{}
	emit := func(s lir.Step) {
		f, ok := kernelFor(prog, s.Op, opts)
		if !ok {
			out.Steps = append(out.Steps, s)
			return
		}
		// A function is named by what it computes, so equal steps share
		// one function.
		body := guard(f.fn) + f.body
		sum := sha256.Sum256([]byte(body))
		f.fn.Name = "rlx_" + string(s.Op.Kind()) + "_" + hex.EncodeToString(sum[:8])
		fi, seen := index[f.fn.Name]
		if !seen {
			fi = len(native.Funcs)
			index[f.fn.Name] = fi
			f.fn.Source = "RLX_EXPORT int64_t " + f.fn.Name + "(void *const *args, const int64_t *bytes, int64_t lo, int64_t hi)\n{\n" +
				body + "\treturn 0;\n}\n"
			native.Funcs = append(native.Funcs, f.fn)
		}
		out.Steps = append(out.Steps, lir.Step{Op: &lir.NativeCall{Func: fi, In: f.in, Out: f.out, Lo: f.lo, Hi: f.hi}, Src: s.Src})
	}
	for _, s := range prog.Steps {
		if op, act, ok := splitActivation(prog, s.Op, opts); ok {
			emit(lir.Step{Op: op, Src: s.Src})
			if !earlierPart(s.Op) { // the activation once, after the last part
				emit(lir.Step{Op: act, Src: s.Src})
			}
			continue
		}
		emit(s)
	}
	if len(native.Funcs) > 0 {
		out.Native = native
	}
	return &out, nil
}

// earlierPart reports a Winograd output transform of a part of the tiles
// before the last: one whose activation, split off into its own pass
// over the whole output, runs after the last part.
func earlierPart(op lir.Op) bool {
	o, ok := op.(*lir.WinogradOutput)
	if !ok || o.Part.Whole() {
		return false
	}
	_, _, _, tp := o.Geom.WinogradTiles(o.Tile)
	return o.Part.T1 < tp
}

// levelCond is the preprocessor line that opens CPU level i of a
// function's per-level code: #if for the first, #elif cond for the next,
// #else for the last (cond ""), which every machine compiles.
func levelCond(i int, cond string) string {
	switch {
	case i == 0:
		return "#if " + cond + "\n"
	case cond != "":
		return "#elif " + cond + "\n"
	}
	return "#else\n"
}

// guard is what every function does first: refuse buffers smaller than
// it was compiled for (bytes holds each argument's size, inputs then
// outputs), so a program whose tables disagree with its code cannot make
// it read or write out of bounds, and clamp the range to [0, N).
func guard(f lir.NativeFunc) string {
	var b strings.Builder
	var conds []string
	for i, n := range append(append([]int64(nil), f.In...), f.Out...) {
		conds = append(conds, fmt.Sprintf("bytes[%d] < %d", i, n))
	}
	if len(conds) > 0 {
		fmt.Fprintf(&b, "\tif (%s) return 1;\n", strings.Join(conds, " || "))
	}
	fmt.Fprintf(&b, "\tif (lo < 0) lo = 0;\n\tif (hi > %d) hi = %d;\n\tif (lo >= hi) return 0;\n", f.N, f.N)
	return b.String()
}

// kernelFor generates the function of one step, false when the step
// stays on the runtime's kernels (a kind or a case cgen does not handle,
// or one where the runtime's kernel is the faster by the tuning rules).
func kernelFor(prog *lir.Program, op lir.Op, opts Options) (function, bool) {
	switch op := op.(type) {
	case *lir.Elementwise:
		return elementwise(prog, op, opts)
	case *lir.Pool2D:
		return pool2d(prog, op, opts)
	case *lir.Conv2D:
		return conv2d(prog, op, opts)
	case *lir.TapConv2D:
		return tapConv(prog, op)
	case *lir.Softmax:
		return softmax(prog, op)
	case *lir.Reduce:
		return reduce(prog, op)
	case *lir.ArgReduce:
		return argReduce(prog, op)
	case *lir.WinogradInput:
		return winogradInput(prog, op)
	case *lir.WinogradProduct:
		return winogradProduct(prog, op)
	case *lir.WinogradOutput:
		return winogradOutput(prog, op)
	case *lir.Copy:
		return copyFunc(prog, op)
	case *lir.Gather:
		return gatherFunc(prog, op, opts)
	case *lir.MatMul:
		return smallMatMul(prog, op)
	}
	return function{}, false
}

// Source is the translation unit of a program's native functions: the
// shared math header, then every function.
func Source(n *lir.Native) string {
	var b strings.Builder
	b.WriteString(prelude)
	b.WriteString(mathHeader)
	for _, f := range n.Funcs {
		b.WriteString("\n")
		b.WriteString(f.Source)
	}
	return b.String()
}

// unitBytes is the least C source of a unit of Units, but for the last:
// consecutive functions go to one unit until it holds this much, so that
// small functions share a compiler process (each process's start and the
// math header cost about as much as a small function) while the large
// convolutions (100-190 KB of C each) compile side by side.
const unitBytes = 64 << 10

// Units splits a program's native functions into translation units that
// compile separately and link into one object: each the prelude and the
// math header, then consecutive functions (in the program's order) up to
// unitBytes of source. The split depends on the functions alone, so each
// unit is the same text, and hits the same cache entry, in every build
// that generates its functions; a program's whole unit (Source) in one
// process took ResNet-18's build twice as long as two halves side by side
// (docs/perf/native.md, Build time).
func Units(n *lir.Native) []string {
	var units []string
	var b strings.Builder
	size := 0
	flush := func() {
		if size > 0 {
			units = append(units, prelude+mathHeader+b.String())
			b.Reset()
			size = 0
		}
	}
	for _, f := range n.Funcs {
		b.WriteString("\n")
		b.WriteString(f.Source)
		size += len(f.Source)
		if size >= unitBytes {
			flush()
		}
	}
	flush()
	return units
}

// prelude is what every unit starts with: fixed-width integers from the
// compiler's own freestanding header, and the export marker (the unit is
// compiled with hidden visibility, so only kernels are exported).
const prelude = `/* Generated by rlxc: native CPU kernels of one variant. */
#include <stdint.h>
#define RLX_EXPORT __attribute__((visibility("default")))

/* Conversions as the runtime's interpreter makes them: toward zero,
   saturating at int64's range, NaN to 0. */
static inline int64_t rlx_trunc_i64(double v) {
	return v != v ? 0 : v >= 9223372036854775807.0 ? INT64_MAX : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
}

/* The low byte of rlx_trunc_i64(v) for a float v, in a form clang
   vectorizes: floats of magnitude 2^31 and above are multiples of 256, so
   their low byte is 0 but at int64's saturation, INT64_MAX's 255. */
static inline int32_t rlx_f32_byte(float v) {
	return (v >= -2147483648.0f && v < 2147483648.0f) ? (int32_t)v : v >= 9223372036854775807.0f ? 255 : 0;
}

/* IEEE half floats as the runtime's interpreter converts them
   (tensor.F16ToF32, tensor.F32ToF16: exact widening, NaNs quiet;
   rounding to the nearest half, ties to even, NaN to 0x7e00). Where the
   CPU converts them (F16C on x86-64-v3 and v4, every arm64) through
   __fp16, which clang vectorizes to vcvtps2ph/vcvtph2ps or fcvtn/fcvtl
   (the hardware rounds to nearest even as the interpreter does, and
   quiets a NaN keeping its payload, so a NaN is made payload-free before
   it narrows, to the interpreter's 0x7e00); elsewhere in selects and shifts
   (clang 14 has no _Float16 on x86-64, and __fp16 there would call
   compiler-rt, which freestanding code does not link). */
#if defined(__F16C__) || defined(__aarch64__)
static inline float rlx_f16_f32(uint16_t h) {
	__fp16 v;
	__builtin_memcpy(&v, &h, 2);
	return (float)v;
}

static inline uint16_t rlx_f32_f16(float f) {
	/* a NaN first made the float NaN with no payload (its sign kept),
	   which narrows to 0x7e00: in 32-bit lanes, as the rest is */
	uint32_t b;
	__builtin_memcpy(&b, &f, 4);
	b = (b & 0x7fffffffu) > 0x7f800000u ? (b & 0x80000000u) | 0x7fc00000u : b;
	__builtin_memcpy(&f, &b, 4);
	__fp16 v = (__fp16)f;
	uint16_t h;
	__builtin_memcpy(&h, &v, 2);
	return h;
}
#else
static inline float rlx_f16_f32(uint16_t h) {
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (uint32_t)(h >> 10) & 0x1fu, m = (uint32_t)h & 0x3ffu;
	float sub = (float)m * 0x1p-24f;
	sub = sign ? -sub : sub;
	/* a NaN quiet, as the interpreter's float64 registers make it */
	uint32_t bits = e == 0x1fu ? (sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u)) : (sign | ((e + 112u) << 23) | (m << 13));
	float f;
	__builtin_memcpy(&f, &bits, 4);
	return e == 0 ? sub : f;
}

static inline uint16_t rlx_f32_f16(float f) {
	uint32_t b;
	__builtin_memcpy(&b, &f, 4);
	uint32_t sign = (b >> 16) & 0x8000u, be = (b >> 23) & 0xffu, mant = b & 0x7fffffu;
	int32_t exp = (int32_t)be - 127 + 15;
	uint32_t h = ((uint32_t)exp << 10) + (mant >> 13), rem = mant & 0x1fffu;
	h += rem > 0x1000u || (rem == 0x1000u && (h & 1u));
	int32_t shift = 14 - exp; /* 14..24 where a subnormal half */
	uint32_t sh = (uint32_t)(shift < 14 ? 14 : shift > 24 ? 24 : shift);
	uint32_t mm = mant | 0x800000u, half = mm >> sh, r2 = mm & ((1u << sh) - 1u), tie = 1u << (sh - 1u);
	half += r2 > tie || (r2 == tie && (half & 1u));
	uint32_t out = be == 0xffu ? (mant ? 0x7e00u : 0x7c00u) : exp >= 0x1f ? 0x7c00u : exp <= 0 ? (exp < -10 ? 0u : half) : h;
	return (uint16_t)(sign | out);
}
#endif

/* bfloat16 the same way (tensor.BF16ToF32, tensor.F32ToBF16): the high
   half of a float, NaNs quiet; rounded to nearest, ties to even, a NaN
   kept a NaN with the quiet bit set. */
static inline float rlx_bf16_f32(uint16_t h) {
	uint32_t bits = (uint32_t)h << 16;
	bits |= (bits & 0x7fffffffu) > 0x7f800000u ? 0x400000u : 0u;
	float f;
	__builtin_memcpy(&f, &bits, 4);
	return f;
}

static inline uint16_t rlx_f32_bf16(float f) {
	uint32_t b;
	__builtin_memcpy(&b, &f, 4);
	uint32_t r = b + 0x7fffu + ((b >> 16) & 1u);
	return (uint16_t)((b & 0x7fffffffu) > 0x7f800000u ? (b >> 16) | 0x40u : r >> 16);
}

/* Integer floor modulo (the divisor's sign); 0 for a zero divisor. */
static inline double rlx_imod(double a, double b) {
	int64_t x = rlx_trunc_i64(a), y = rlx_trunc_i64(b);
	if (y == 0 || y == -1) return 0;
	int64_t r = x % y;
	if (r != 0 && ((r < 0) != (y < 0))) r += y;
	return (double)r;
}
`

// function is one generated function before naming: its body, its table
// entry and the buffers a call binds.
type function struct {
	body    string
	fn      lir.NativeFunc
	in, out []lir.Buf
	lo, hi  int64 // the part of fn's range the step computes, when hi > 0
}

// epilogueOut adds a convolution's epilogue operands to f's inputs (the
// bias of o channels, then the residual of n floats, where ep has them)
// and out, of n floats, as its output: the order the convolution
// functions take their arguments in (convHeader).
func (f *function) epilogueOut(ep lir.Epilogue, out lir.Buf, o, n int64) {
	if ep.Bias != lir.NoBuf {
		f.in = append(f.in, ep.Bias)
		f.fn.In = append(f.fn.In, o*4)
	}
	if ep.Residual != lir.NoBuf {
		f.in = append(f.in, ep.Residual)
		f.fn.In = append(f.fn.In, n*4)
	}
	f.out = []lir.Buf{out}
	f.fn.Out = []int64{n * 4}
}

// compute is the type a region computes in: float for regions whose
// operands and results are all f32 and whose instructions all have a
// float form (as PyTorch computes them), double otherwise — the two
// paths of the runtime's interpreter, so both give the same values.
type compute int

const (
	computeFloat compute = iota
	computeDouble
)

// floatOps are the instructions a float region may use.
var floatOps = [lir.NumEwOps]bool{
	lir.EwLoad: true, lir.EwStore: true, lir.EwImm: true, lir.EwLeakyRelu: true,
	lir.EwNeg: true, lir.EwAbs: true, lir.EwExp: true, lir.EwLog: true, lir.EwSqrt: true, lir.EwRsqrt: true, lir.EwRecip: true,
	lir.EwTanh: true, lir.EwSigmoid: true, lir.EwRelu: true, lir.EwGelu: true, lir.EwGeluTanh: true, lir.EwSilu: true,
	lir.EwErf: true, lir.EwSin: true, lir.EwCos: true, lir.EwFloor: true, lir.EwCeil: true, lir.EwRound: true,
	lir.EwAdd: true, lir.EwSub: true, lir.EwMul: true, lir.EwDiv: true, lir.EwPow: true, lir.EwMax: true, lir.EwMin: true,
	lir.EwMod: true, lir.EwSoftsign: true, lir.EwHardSwish: true, lir.EwMish: true,
	// exact at any precision, as the runtime's float32 path takes them
	lir.EwEq: true, lir.EwNe: true, lir.EwLt: true, lir.EwLe: true, lir.EwGt: true, lir.EwGe: true, lir.EwWhere: true,
}

// doubleOps are the instructions a double region may use: exact
// arithmetic, comparisons, selection and conversions, which need no math
// library. A region with a transcendental function in double stays on
// the interpreter.
var doubleOps = [lir.NumEwOps]bool{
	lir.EwLoad: true, lir.EwStore: true, lir.EwImm: true, lir.EwCast: true, lir.EwLeakyRelu: true, lir.EwWhere: true,
	lir.EwNeg: true, lir.EwAbs: true, lir.EwSqrt: true, lir.EwRsqrt: true, lir.EwRecip: true, lir.EwRelu: true,
	lir.EwFloor: true, lir.EwCeil: true, lir.EwRound: true, lir.EwSign: true, lir.EwNot: true,
	lir.EwAdd: true, lir.EwSub: true, lir.EwMul: true, lir.EwDiv: true, lir.EwIDiv: true, lir.EwMax: true, lir.EwMin: true,
	lir.EwIMod: true, lir.EwEq: true, lir.EwNe: true, lir.EwLt: true, lir.EwLe: true, lir.EwGt: true, lir.EwGe: true,
	lir.EwAnd: true, lir.EwOr: true, lir.EwXor: true, lir.EwSoftsign: true, lir.EwHardSwish: true,
}

// floatExact are the dtypes a float region may load, store and cast to:
// f32, the small integers (u8, i8, i16, bool) and the half floats, whose
// every value a float holds exactly (a cast to f16 rounds a float to a
// float).
var floatExact = map[tensor.DType]bool{tensor.F32: true, tensor.F16: true, tensor.BF16: true,
	tensor.U8: true, tensor.I8: true, tensor.I16: true, tensor.Bool: true}

// floatWithCasts reports a region that computes in float up to casts
// from and to small integers and half floats (a QuantizeLinear's round,
// clamp and cast to uint8, a DequantizeLinear's cast from uint8, a mixed
// precision model's casts to f16 and back): inputs and results of the
// floatExact dtypes, float instructions on f32 values alone, other
// values only cast or stored, casts to a floatExact dtype. The interpreter
// computes it in double with every f32 step rounded to f32
// (lir.Elementwise.Narrowing), which is float arithmetic; a cast's
// integer is exact in a float register and converts as the double path
// converts, so both give the same values.
func floatWithCasts(ew *lir.Elementwise) bool {
	for _, in := range ew.In {
		if !floatExact[in.DType] {
			return false
		}
	}
	for _, out := range ew.Out {
		if !floatExact[out.DType] {
			return false
		}
	}
	// The register types, as Narrowing types them: f32 from loads and
	// float instructions, the target of a cast, none for an immediate.
	regs := map[int]tensor.DType{}
	f32 := func(r int) bool { t, ok := regs[r]; return !ok || t == tensor.F32 }
	for _, in := range ew.Code {
		switch {
		case in.Op == lir.EwLoad:
			if in.A < 0 || in.A >= len(ew.In) {
				return false
			}
			regs[in.Dst] = ew.In[in.A].DType
		case in.Op == lir.EwImm:
			delete(regs, in.Dst)
		case in.Op == lir.EwStore:
		case in.Op == lir.EwCast:
			to := tensor.DType(in.Imm)
			if !floatExact[to] {
				return false
			}
			regs[in.Dst] = to
		case floatOps[in.Op]:
			info := in.Op.Info()
			if !f32(in.A) || info.Arity > 1 && !f32(in.B) || info.Arity > 2 && !f32(in.C) {
				return false
			}
			regs[in.Dst] = tensor.F32
		default:
			return false
		}
	}
	return true
}

// cTypes are the C element types of the dtypes a region may load and
// store (f16's and bf16's bits, converted by the prelude's rlx_f16_f32,
// rlx_f32_f16, rlx_bf16_f32 and rlx_f32_bf16).
var cTypes = map[tensor.DType]string{
	tensor.F32: "float", tensor.F64: "double", tensor.F16: "uint16_t", tensor.BF16: "uint16_t", tensor.I64: "int64_t", tensor.I32: "int32_t",
	tensor.I16: "int16_t", tensor.I8: "int8_t", tensor.U8: "uint8_t", tensor.Bool: "uint8_t",
}

// regionCompute says which type a region computes in, false when it has
// an operand, result or instruction native code does not handle.
func regionCompute(ew *lir.Elementwise) (compute, bool) {
	allF32 := true
	for _, in := range ew.In {
		if _, ok := cTypes[in.DType]; !ok {
			return 0, false
		}
		allF32 = allF32 && in.DType == tensor.F32
	}
	for _, out := range ew.Out {
		if _, ok := cTypes[out.DType]; !ok {
			return 0, false
		}
		allF32 = allF32 && out.DType == tensor.F32
	}
	float := allF32
	for _, in := range ew.Code {
		if !in.Op.Valid() {
			return 0, false
		}
		float = float && floatOps[in.Op]
	}
	if float || floatWithCasts(ew) {
		return computeFloat, true
	}
	for _, in := range ew.Code {
		if !doubleOps[in.Op] {
			return 0, false
		}
		if in.Op == lir.EwCast {
			if _, ok := cTypes[tensor.DType(in.Imm)]; !ok {
				return 0, false
			}
		}
	}
	return computeDouble, true
}

// coalesce merges adjacent dims that every operand walks as one (a
// contiguous or broadcast run) and drops dims of size 1, so the inner
// loop is as long as it can be. It returns the shape and each operand's
// strides.
func coalesce(shape []int64, strides [][]int64) ([]int64, [][]int64) {
	var sh []int64
	st := make([][]int64, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		if k := len(sh) - 1; k >= 0 {
			merge := true
			for i := range strides {
				if st[i][k] != strides[i][d]*n {
					merge = false
					break
				}
			}
			if merge {
				sh[k] *= n
				for i := range strides {
					st[i][k] = strides[i][d]
				}
				continue
			}
		}
		sh = append(sh, n)
		for i := range strides {
			st[i] = append(st[i], strides[i][d])
		}
	}
	if len(sh) == 0 {
		sh = []int64{1}
		for i := range st {
			st[i] = []int64{0}
		}
	}
	return sh, st
}

// elementwise generates the function of one region, false when the
// region stays on the interpreter.
func elementwise(prog *lir.Program, ew *lir.Elementwise, opts Options) (function, bool) {
	ct, ok := regionCompute(ew)
	if !ok || len(ew.Shape) == 0 || len(ew.Out) == 0 {
		return function{}, false
	}
	total, ok := product(ew.Shape)
	if !ok || total == 0 {
		return function{}, false
	}
	strides := make([][]int64, len(ew.In))
	for i, in := range ew.In {
		if len(in.Strides) != len(ew.Shape) {
			return function{}, false
		}
		for _, s := range in.Strides {
			if s < 0 {
				return function{}, false
			}
		}
		strides[i] = in.Strides
	}
	shape, strides := coalesce(ew.Shape, strides)
	rank := len(shape)
	inner := shape[rank-1]

	f := function{fn: lir.NativeFunc{N: total, Grain: max(1, opts.EwGrain)}}
	var b strings.Builder
	b.WriteString("{\n")
	// Operands and results never alias unless they share bytes of one
	// buffer: restrict where they share none lets clang vectorize
	// without run-time overlap checks.
	noAlias := !overlaps(prog, ew)
	restrict := ""
	if noAlias {
		restrict = "restrict "
	}
	for i, in := range ew.In {
		ctype := cTypes[in.DType]
		fmt.Fprintf(&b, "\tconst %s *%sin%d = (const %s *)args[%d];\n", ctype, restrict, i, ctype, i)
		reach := int64(0)
		for d := range shape {
			reach += (shape[d] - 1) * strides[i][d]
		}
		f.in = append(f.in, in.Buf)
		f.fn.In = append(f.fn.In, (reach+1)*int64(in.DType.Size()))
	}
	for i, out := range ew.Out {
		ctype := cTypes[out.DType]
		fmt.Fprintf(&b, "\t%s *%sout%d = (%s *)args[%d];\n", ctype, restrict, i, ctype, len(ew.In)+i)
		f.out = append(f.out, out.Buf)
		f.fn.Out = append(f.fn.Out, total*int64(out.DType.Size()))
	}
	reg := "float"
	if ct == computeDouble {
		reg = "double"
	}
	nregs := 0
	for _, in := range ew.Code {
		nregs = max(nregs, in.Dst+1, in.A+1, in.B+1, in.C+1)
	}
	// The walk: [lo, hi) in runs along the inner dim; each run starts at
	// the offsets its row's multi-index gives each operand.
	fmt.Fprintf(&b, "\tfor (int64_t i = lo; i < hi;) {\n")
	fmt.Fprintf(&b, "\t\tint64_t row = i / %d, c = i - row * %d;\n", inner, inner)
	fmt.Fprintf(&b, "\t\tint64_t n = %d - c;\n\t\tif (n > hi - i) n = hi - i;\n", inner)
	for i := range ew.In {
		fmt.Fprintf(&b, "\t\tint64_t o%d = c * %d;\n", i, strides[i][rank-1])
	}
	if rank > 1 {
		b.WriteString("\t\tint64_t r = row, k;\n")
		for d := rank - 2; d >= 0; d-- {
			fmt.Fprintf(&b, "\t\tk = r %% %d; r /= %d;\n", shape[d], shape[d])
			for i := range ew.In {
				if st := strides[i][d]; st != 0 {
					fmt.Fprintf(&b, "\t\to%d += k * %d;\n", i, st)
				}
			}
		}
	}
	if !noAlias && exactAliases(prog, ew, shape, strides) {
		// Results written over their own operands, element for element
		// (an activation applied in place): every iteration reads what it
		// then writes, so vectors are safe; clang's run-time overlap check
		// would see the overlap and take the scalar loop.
		b.WriteString("\t\t#pragma clang loop vectorize(assume_safety)\n")
	}
	fmt.Fprintf(&b, "\t\tfor (int64_t j = 0; j < n; j++) {\n")
	if nregs > 0 {
		fmt.Fprintf(&b, "\t\t\t%s ", reg)
		for r := 0; r < nregs; r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "r%d = 0", r)
		}
		b.WriteString(";\n")
	}
	imms := map[int]float64{}  // registers holding a constant, for pow
	facts := map[int]regFact{} // what is known of registers' values, for casts to bytes
	narrow := ew.Narrowing()
	for k, in := range ew.Code {
		line, ok := instr(ew, in, ct, imms, facts, strides, rank)
		if !ok {
			return function{}, false
		}
		if ct == computeDouble && narrow[k] == tensor.F32 {
			// an f32 result in a double region: rounded as f32 math
			// rounds it (lir.Elementwise.Narrowing)
			line += fmt.Sprintf(" r%d = (double)(float)r%d;", in.Dst, in.Dst)
		}
		fmt.Fprintf(&b, "\t\t\t%s\n", line)
		if in.Op == lir.EwImm {
			imms[in.Dst] = in.Imm
		} else if in.Op != lir.EwStore {
			delete(imms, in.Dst)
		}
		if in.Op != lir.EwStore {
			facts[in.Dst] = factOf(ew, in, ct, facts)
		}
	}
	b.WriteString("\t\t}\n\t\ti += n;\n\t}\n}\n")
	f.body = b.String()
	return f, true
}

// regFact is what the code generator knows of a register's value in a
// float region: an integer (or NaN, or infinite) where integral, never NaN
// where noNaN, and within [lo, hi] (infinite bounds: none). Requantization
// clamps a rounded value into a byte's range before casting it; knowing
// so, the cast (and a store of bytes) needs no range checks:
// rlx_f32_byte's for NaN and for int32's and int64's edges are a third
// of a QuantizeLinear region's vector operations.
type regFact struct {
	integral, noNaN bool
	lo, hi          float64
	// notNegZero: never -0 (a sum is -0 only where both terms are),
	// so that a max or min against a constant zero may compare the
	// constant first (instr).
	notNegZero bool
}

// unknown is the fact of a register nothing is known of.
var unknown = regFact{lo: math.Inf(-1), hi: math.Inf(1)}

// factAt is what facts know of register r (unknown where they have
// nothing).
func factAt(facts map[int]regFact, r int) regFact {
	if f, ok := facts[r]; ok {
		return f
	}
	return unknown
}

// boundedLimit is the magnitude below which facts' arithmetic stays
// finite in f32 whatever the rounding (far below MaxFloat32).
const boundedLimit = 1e30

// bounded reports a register known to hold a number (not NaN) within
// ±boundedLimit: sums, products and quotients by constants of such
// registers are numbers too, so max and min of them need no NaN checks
// (requantization's clamps after a dequantization, a ReLU6's).
func (f regFact) bounded() bool {
	return f.noNaN && f.lo >= -boundedLimit && f.hi <= boundedLimit
}

// factOf is what instruction in (not a store) makes known of its
// destination, from facts of its operands (a register missing from facts:
// unknown).
func factOf(ew *lir.Elementwise, in lir.Instr, ct compute, facts map[int]regFact) regFact {
	if ct != computeFloat {
		return unknown
	}
	a, b := factAt(facts, in.A), factAt(facts, in.B)
	f := unknown
	switch in.Op {
	case lir.EwImm:
		if v := float64(float32(in.Imm)); !math.IsInf(v, 0) && !math.IsNaN(v) {
			return regFact{integral: v == math.Trunc(v), noNaN: true, lo: v, hi: v, notNegZero: !(v == 0 && math.Signbit(v))}
		}
	case lir.EwLoad:
		if lo, hi, ok := byteRange(ew.In[in.A].DType); ok {
			return regFact{integral: true, noNaN: true, lo: lo, hi: hi, notNegZero: true}
		}
	case lir.EwCast:
		if lo, hi, ok := byteRange(tensor.DType(in.Imm)); ok {
			return regFact{integral: true, noNaN: true, lo: lo, hi: hi, notNegZero: true}
		}
		if tensor.DType(in.Imm) == tensor.F32 {
			return a
		}
	case lir.EwRound, lir.EwFloor, lir.EwCeil:
		f.integral = true
		if a.bounded() {
			// rounding moves a value by less than 1, to an integer
			f.noNaN, f.lo, f.hi = true, math.Floor(a.lo), math.Ceil(a.hi)
		}
		// -0 comes from -0 or from negative numbers only
		f.notNegZero = a.notNegZero && a.lo >= 0
	case lir.EwAdd, lir.EwSub, lir.EwMul:
		// integers stay integers (past 2^24 every float is one)
		f.integral = a.integral && b.integral
		if a.bounded() && b.bounded() {
			// finite operands of bounded size: no NaN, and bounds by
			// interval arithmetic (widened by each f32 rounding's
			// relative error, 2^-24, which the margin of bounded covers)
			var lo, hi float64
			switch in.Op {
			case lir.EwAdd:
				lo, hi = a.lo+b.lo, a.hi+b.hi
			case lir.EwSub:
				lo, hi = a.lo-b.hi, a.hi-b.lo
			default:
				ps := []float64{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}
				lo, hi = slices.Min(ps), slices.Max(ps)
			}
			f.noNaN, f.lo, f.hi = true, lo-math.Abs(lo)*0x1p-20, hi+math.Abs(hi)*0x1p-20
		}
		// rounding to nearest, x+y is -0 only where x and y are, x-y
		// only where x is -0 and y +0
		switch in.Op {
		case lir.EwAdd:
			f.notNegZero = a.notNegZero || b.notNegZero
		case lir.EwSub:
			f.notNegZero = a.notNegZero || (b.noNaN && (b.lo > 0 || b.hi < 0))
		}
	case lir.EwDiv:
		if a.bounded() && b.bounded() && b.lo == b.hi && math.Abs(b.lo) >= 1 {
			// by a constant of magnitude 1 or more: no larger than a
			m := max(math.Abs(a.lo), math.Abs(a.hi))
			f.noNaN, f.lo, f.hi = true, -m, m
		} else if a.bounded() && b.bounded() && b.lo == b.hi && b.lo != 0 {
			m := max(math.Abs(a.lo), math.Abs(a.hi)) / math.Abs(b.lo)
			if m < boundedLimit {
				f.noNaN, f.lo, f.hi = true, -m*(1+0x1p-20), m*(1+0x1p-20)
			}
		}
	case lir.EwMax:
		// NaN propagates (instr's max and min); otherwise monotone
		f = regFact{integral: a.integral && b.integral, noNaN: a.noNaN && b.noNaN, lo: max(a.lo, b.lo), hi: max(a.hi, b.hi), notNegZero: a.notNegZero && b.notNegZero}
	case lir.EwMin:
		f = regFact{integral: a.integral && b.integral, noNaN: a.noNaN && b.noNaN, lo: min(a.lo, b.lo), hi: min(a.hi, b.hi), notNegZero: a.notNegZero && b.notNegZero}
	}
	return f
}

// byteRange is the range of the byte dtypes, false for others.
func byteRange(dt tensor.DType) (lo, hi float64, ok bool) {
	switch dt {
	case tensor.U8:
		return 0, 255, true
	case tensor.I8:
		return -128, 127, true
	}
	return 0, 0, false
}

// fitsByte reports a register (its fact f, present) known to hold an
// integer in dt's range, or NaN: its byte is the value itself (NaN's 0),
// no range checks needed.
func fitsByte(f regFact, present bool, dt tensor.DType) bool {
	lo, hi, ok := byteRange(dt)
	return ok && present && f.integral && f.lo >= lo && f.hi <= hi
}

// instr is one instruction as a C statement over registers rN.
func instr(ew *lir.Elementwise, in lir.Instr, ct compute, imms map[int]float64, facts map[int]regFact, strides [][]int64, rank int) (string, bool) {
	d := fmt.Sprintf("r%d", in.Dst)
	a, b, c := fmt.Sprintf("r%d", in.A), fmt.Sprintf("r%d", in.B), fmt.Sprintf("r%d", in.C)
	reg := "float"
	f := "f" // the suffix of float builtins
	if ct == computeDouble {
		reg, f = "double", ""
	}
	set := func(expr string) (string, bool) { return d + " = " + expr + ";", true }
	switch in.Op {
	case lir.EwLoad:
		st := strides[in.A][rank-1]
		idx := fmt.Sprintf("o%d + j * %d", in.A, st)
		switch st {
		case 0:
			idx = fmt.Sprintf("o%d", in.A)
		case 1:
			idx = fmt.Sprintf("o%d + j", in.A)
		}
		switch ew.In[in.A].DType {
		case tensor.F16:
			return set(fmt.Sprintf("(%s)rlx_f16_f32(in%d[%s])", reg, in.A, idx))
		case tensor.BF16:
			return set(fmt.Sprintf("(%s)rlx_bf16_f32(in%d[%s])", reg, in.A, idx))
		}
		return set(fmt.Sprintf("(%s)in%d[%s]", reg, in.A, idx))
	case lir.EwStore:
		if f, present := facts[in.Dst]; ct == computeFloat && fitsByte(f, present, ew.Out[in.A].DType) {
			dt := ew.Out[in.A].DType
			v := d
			switch {
			case f.noNaN:
			case f.lo >= 0:
				v = fmt.Sprintf("(%s > 0 ? %s : 0)", d, d)
			default:
				v = fmt.Sprintf("(%s != %s ? 0 : %s)", d, d, d)
			}
			return fmt.Sprintf("out%d[i + j] = (%s)(int32_t)%s;", in.A, cTypes[dt], v), true
		}
		return fmt.Sprintf("out%d[i + j] = %s;", in.A, convert(d, ct, ew.Out[in.A].DType)), true
	case lir.EwImm:
		return set(literal(in.Imm, ct))
	case lir.EwCast:
		to := tensor.DType(in.Imm)
		if ct == computeFloat {
			// floatWithCasts: to f32, a half float or a small integer,
			// exact in float
			switch to {
			case tensor.F32:
				return set(a)
			case tensor.F16:
				return set("rlx_f16_f32(rlx_f32_f16(" + a + "))")
			case tensor.BF16:
				return set("rlx_bf16_f32(rlx_f32_bf16(" + a + "))")
			case tensor.Bool:
				return set("(float)(" + a + " != 0)")
			}
			if f, present := facts[in.A]; fitsByte(f, present, to) {
				// the value itself, NaN as 0, -0 as 0
				switch {
				case f.noNaN:
					return set(a + " + 0")
				case f.lo >= 0:
					// NaN, -0 and +0 fail the comparison: one vmaxps
					return set(fmt.Sprintf("%s > 0 ? %s : 0", a, a))
				}
				return set(fmt.Sprintf("%s != %s ? 0 : %s + 0", a, a, a))
			}
			return set("(float)" + convert(a, computeFloat, to))
		}
		switch {
		case to == tensor.F32:
			return set("(double)(float)" + a)
		case to == tensor.F16:
			return set("(double)rlx_f16_f32(rlx_f32_f16((float)" + a + "))")
		case to == tensor.BF16:
			return set("(double)rlx_bf16_f32(rlx_f32_bf16((float)" + a + "))")
		case to == tensor.F64:
			return set(a)
		case to == tensor.Bool:
			return set("(double)(" + a + " != 0)")
		}
		return set("(double)" + convert(a, computeDouble, to))
	case lir.EwLeakyRelu:
		return set(fmt.Sprintf("%s < 0 ? %s * %s : %s", a, a, literal(in.Imm, ct), a))
	case lir.EwWhere:
		return set(fmt.Sprintf("%s != 0 ? %s : %s", a, b, c))
	case lir.EwNeg:
		return set("-" + a)
	case lir.EwAbs:
		return set("__builtin_fabs" + f + "(" + a + ")")
	case lir.EwSqrt:
		return set("__builtin_sqrt" + f + "(" + a + ")")
	case lir.EwRsqrt:
		return set(fmt.Sprintf("(%s)1 / __builtin_sqrt%s(%s)", reg, f, a))
	case lir.EwRecip:
		return set(fmt.Sprintf("(%s)1 / %s", reg, a))
	case lir.EwRelu:
		return set(fmt.Sprintf("%s > 0 ? %s : 0", a, a))
	case lir.EwFloor:
		return set("__builtin_floor" + f + "(" + a + ")")
	case lir.EwCeil:
		return set("__builtin_ceil" + f + "(" + a + ")")
	case lir.EwRound:
		return set("__builtin_rint" + f + "(" + a + ")")
	case lir.EwSign:
		return set(fmt.Sprintf("%s > 0 ? 1 : %s < 0 ? -1 : %s", a, a, a))
	case lir.EwNot:
		return set("(double)(" + a + " == 0)")
	case lir.EwSoftsign:
		return set(fmt.Sprintf("%s / (1 + __builtin_fabs%s(%s))", a, f, a))
	case lir.EwHardSwish:
		// x * clamp(x/6 + 1/2, 0, 1); a NaN x fails both tests and stays NaN.
		t := fmt.Sprintf("(%s / 6 + (%s)0.5)", a, reg)
		return set(fmt.Sprintf("%s * (%s < 0 ? 0 : %s > 1 ? 1 : %s)", a, t, t, t))
	case lir.EwMish:
		if ct != computeFloat {
			return "", false
		}
		// x * tanh(softplus(x)), softplus as max(x, 0) + log(1 + exp(-|x|)).
		return set(fmt.Sprintf("%s * rlx_tanhf((%s > 0 ? %s : 0) + rlx_logf(1 + rlx_expf(-__builtin_fabsf(%s))))", a, a, a, a))
	case lir.EwAdd:
		return set(a + " + " + b)
	case lir.EwSub:
		return set(a + " - " + b)
	case lir.EwMul:
		return set(a + " * " + b)
	case lir.EwDiv:
		return set(a + " / " + b)
	case lir.EwIDiv:
		return set(fmt.Sprintf("%s == 0 ? 0 : __builtin_trunc(%s / %s)", b, a, b))
	case lir.EwIMod:
		return set(fmt.Sprintf("rlx_imod(%s, %s)", a, b))
	case lir.EwMax, lir.EwMin:
		cmp := map[lir.EwOp]string{lir.EwMax: ">", lir.EwMin: "<"}[in.Op]
		fa, fb := factAt(facts, in.A), factAt(facts, in.B)
		switch {
		case ct == computeFloat && fa.noNaN && fb.noNaN:
			// no NaN to propagate: one vmaxps or vminps (their result
			// for equal operands, signed zeros included, is the second,
			// as here)
			return set(fmt.Sprintf("%s %s %s ? %s : %s", a, cmp, b, a, b))
		case ct == computeFloat && fb.noNaN && (fb.lo > 0 || fb.hi < 0 || fa.notNegZero && fb.notNegZero):
			// b a number that is never zero (or neither is ever -0): b
			// compared first returns a where a is NaN, and where they are
			// equal they are the same bits, so one instruction again
			return set(fmt.Sprintf("%s %s %s ? %s : %s", b, cmp, a, b, a))
		}
		return set(fmt.Sprintf("(%s != %s || %s != %s) ? %s : %s %s %s ? %s : %s", a, a, b, b, nan(ct), a, cmp, b, a, b))
	case lir.EwEq, lir.EwNe, lir.EwLt, lir.EwLe, lir.EwGt, lir.EwGe:
		op := map[lir.EwOp]string{lir.EwEq: "==", lir.EwNe: "!=", lir.EwLt: "<", lir.EwLe: "<=", lir.EwGt: ">", lir.EwGe: ">="}[in.Op]
		return set(fmt.Sprintf("(%s)(%s %s %s)", reg, a, op, b))
	case lir.EwAnd:
		return set(fmt.Sprintf("(double)(%s != 0 && %s != 0)", a, b))
	case lir.EwOr:
		return set(fmt.Sprintf("(double)(%s != 0 || %s != 0)", a, b))
	case lir.EwXor:
		return set(fmt.Sprintf("(double)((%s != 0) != (%s != 0))", a, b))
	case lir.EwPow:
		if y, ok := imms[in.B]; ok {
			if e, ok := powBy(a, y); ok {
				return set(e)
			}
		}
		return set("rlx_powf(" + a + ", " + b + ")")
	}
	// The float math functions of the shared header.
	fn := map[lir.EwOp]string{lir.EwExp: "rlx_expf", lir.EwLog: "rlx_logf", lir.EwTanh: "rlx_tanhf", lir.EwSigmoid: "rlx_sigmoidf",
		lir.EwGelu: "rlx_geluf", lir.EwGeluTanh: "rlx_gelu_tanhf", lir.EwSilu: "rlx_siluf", lir.EwErf: "rlx_erff",
		lir.EwSin: "rlx_sinf", lir.EwCos: "rlx_cosf", lir.EwMod: "rlx_modf_floor"}[in.Op]
	if fn == "" || ct != computeFloat {
		return "", false
	}
	if in.Op.Info().Arity == 2 {
		return set(fn + "(" + a + ", " + b + ")")
	}
	return set(fn + "(" + a + ")")
}

// powBy is x^y for a constant y as products and square roots where
// that is what Go's math.Pow computes (it special-cases ±0.5 as square
// roots, and y = 1 and 0), or exact for the result's precision (small
// integer powers), false for the general function.
func powBy(x string, y float64) (string, bool) {
	switch y {
	case 0:
		return "1", true
	case 1:
		return x, true
	case 2:
		return x + " * " + x, true
	case 3:
		return x + " * " + x + " * " + x, true
	case 4:
		return "(" + x + " * " + x + ") * (" + x + " * " + x + ")", true
	case 0.5:
		return "__builtin_sqrtf(" + x + ")", true
	case -0.5:
		return "1.0f / __builtin_sqrtf(" + x + ")", true
	case -1:
		return "1.0f / " + x, true
	case -2:
		return "1.0f / (" + x + " * " + x + ")", true
	}
	return "", false
}

// convert is the C expression storing register value v (of the region's
// compute type) as dtype dt: floats round to nearest, integers truncate
// toward zero, saturate at int64's range (NaN to 0) and wrap to their
// width, bool is v != 0 — the interpreter's conversions.
func convert(v string, ct compute, dt tensor.DType) string {
	switch dt {
	case tensor.F32:
		if ct == computeFloat {
			return v
		}
		return "(float)" + v
	case tensor.F64:
		return "(double)" + v
	case tensor.F16:
		return "rlx_f32_f16((float)" + v + ")"
	case tensor.BF16:
		return "rlx_f32_bf16((float)" + v + ")"
	case tensor.Bool:
		return "(uint8_t)(" + v + " != 0)"
	case tensor.U8, tensor.I8:
		if ct == computeFloat {
			return "(" + cTypes[dt] + ")rlx_f32_byte(" + v + ")"
		}
	}
	return "(" + cTypes[dt] + ")rlx_trunc_i64((double)" + v + ")"
}

// literal prints a constant exactly, in the region's compute type.
func literal(v float64, ct compute) string {
	if ct == computeFloat {
		v = float64(float32(v))
	}
	switch {
	case math.IsNaN(v):
		return nan(ct)
	case math.IsInf(v, 1):
		if ct == computeFloat {
			return "__builtin_inff()"
		}
		return "__builtin_inf()"
	case math.IsInf(v, -1):
		if ct == computeFloat {
			return "(-__builtin_inff())"
		}
		return "(-__builtin_inf())"
	}
	s := strconv.FormatFloat(v, 'x', -1, 64)
	if ct == computeFloat {
		s += "f"
	}
	if v < 0 || (v == 0 && math.Signbit(v)) {
		s = "(" + s + ")"
	}
	return s
}

func nan(ct compute) string {
	if ct == computeFloat {
		return "__builtin_nanf(\"\")"
	}
	return "__builtin_nan(\"\")"
}

// product is the product of ds, false on overflow or a negative dim.
func product(ds []int64) (int64, bool) {
	n := int64(1)
	for _, d := range ds {
		if d < 0 || d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// overlaps reports whether a result of the region shares bytes with an
// operand or another result.
func overlaps(prog *lir.Program, ew *lir.Elementwise) bool {
	var bufs []lir.Buf
	for _, in := range ew.In {
		bufs = append(bufs, in.Buf)
	}
	for _, out := range ew.Out {
		for _, o := range bufs {
			if sameBytes(prog, out.Buf, o) {
				return true
			}
		}
		bufs = append(bufs, out.Buf)
	}
	return false
}

// exactAliases reports whether every operand of ew that shares bytes
// with a result is that result element for element: the same bytes, the
// same element size, read in the result's own row-major order over the
// walk's (coalesced) shape; results share no bytes with each other.
func exactAliases(prog *lir.Program, ew *lir.Elementwise, shape []int64, strides [][]int64) bool {
	rowMajor := make([]int64, len(shape))
	st := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		rowMajor[d] = st
		st *= shape[d]
	}
	for j, out := range ew.Out {
		for _, other := range ew.Out[j+1:] {
			if sameBytes(prog, out.Buf, other.Buf) {
				return false
			}
		}
		for i, in := range ew.In {
			if !sameBytes(prog, out.Buf, in.Buf) {
				continue
			}
			if prog.Buffers[out.Buf].Offset != prog.Buffers[in.Buf].Offset || in.DType.Size() != out.DType.Size() ||
				!slices.Equal(strides[i], rowMajor) {
				return false
			}
		}
	}
	return true
}

// sameBytes reports whether buffers a and b may share bytes.
func sameBytes(prog *lir.Program, a, b lir.Buf) bool {
	x, y := prog.Buffers[a], prog.Buffers[b]
	if x.Kind != y.Kind || x.Kind != lir.BufArena && x.Index != y.Index {
		return false
	}
	return x.Offset < y.Offset+y.Bytes && y.Offset < x.Offset+x.Bytes
}
