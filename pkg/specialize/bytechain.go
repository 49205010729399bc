package specialize

import (
	"math"
	"slices"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Byte chains.
//
// A quantized model imported from ONNX's QDQ form computes in f32 with
// the quantization spelled out (docs/onnx.md), so a requantization (a
// DequantizeLinear, a ReLU6 or Relu, a QuantizeLinear, and the next
// DequantizeLinear's cast back) is a dozen vector operations of an
// elementwise region, a division among them:
//
//	cast(q, f32) − z, × s, max 0, min 6, ÷ s', round, + z', max 0, min 255,
//	cast to u8, cast to f32
//
// Everything computed from a byte q alone is a function of its 256
// values. Where that function is an affine map of q, rounded, offset and
// clamped, the short form
//
//	y = min(max(round((x − a)·m) + b, L), H)   (x = cast(q, f32))
//
// computes it (then cast to the byte type where the original ends in a
// cast to one). foldByteChains finds a, m, b, L and H at build time; where
// no one multiplier m reproduces the chain's roundings (values exactly on
// ties, decided by each step's f32 rounding), it keeps the chain's own
// steps up to its rounding and clamps once, at the end. It keeps a form
// only where it equals the original at every byte value, bit for bit,
// both evaluated as the runtimes compute them: every f32 result rounded
// to f32, round half to even, max and min propagating NaN, casts to bytes
// truncating and wrapping. Native code of these regions is bound by its
// vector operations, and its time falls with their count.
//
// The fold is skipped wherever the runtimes could disagree about the
// original's values, so that the table it is checked against is the one
// every runtime computes: an immediate no f32 holds exactly (the
// interpreter's double path uses it as it is, native f32 code rounded), a
// max or min of zeros of opposite signs (math.Max's and vmaxps's answers
// differ), a cast to a byte of a value beyond int32's range (the
// interpreter wraps its int64, native code's rlx_f32_byte does not).

// foldByteChains rewrites op.Code, where it pays, so that the values
// computed from a byte (a cast to u8 or i8, or a load of a u8 or i8
// operand) alone take the short form above. It leaves op as it is when
// nothing folds, and when the code is not in SSA form (each register
// written once, before it is read), which the analysis relies on.
func foldByteChains(op *lir.Elementwise) {
	// Each fold leaves fewer instructions than it found, so this ends
	// well within len(op.Code) rounds.
	for range len(op.Code) {
		code, ok := foldByteChain(op)
		if !ok {
			return
		}
		op.Code = code
	}
}

// foldByteChain folds the first chain that folds, returning the new code.
func foldByteChain(op *lir.Elementwise) ([]lir.Instr, bool) {
	r, ok := newByteRegion(op)
	if !ok {
		return nil, false
	}
	for k, in := range op.Code {
		dt := byteDomain(op, in)
		if dt == tensor.InvalidDType {
			continue
		}
		c, ok := r.chain(in.Dst, dt, k)
		if !ok {
			continue
		}
		for _, s := range c.sinks {
			if code, ok := r.fold(c, s); ok {
				return code, true
			}
		}
	}
	return nil, false
}

// byteDomain is the byte dtype of the register in writes when it is a
// cast to a byte or a load of a byte operand, InvalidDType otherwise.
func byteDomain(op *lir.Elementwise, in lir.Instr) tensor.DType {
	var dt tensor.DType
	switch in.Op {
	case lir.EwCast:
		dt = tensor.DType(in.Imm)
	case lir.EwLoad:
		dt = op.In[in.A].DType
	}
	if dt == tensor.U8 || dt == tensor.I8 {
		return dt
	}
	return tensor.InvalidDType
}

// byteRegion is what the fold knows of a region's code: in SSA form, each
// register's defining instruction and dtype.
type byteRegion struct {
	op    *lir.Elementwise
	nregs int            // one past the largest register
	def   []int          // per register, the index of the instruction writing it
	types []tensor.DType // per register, as lir.Elementwise.Narrowing types it
}

// ewReads lists the registers in reads: a store's source, the operands
// of the others (none for a load or an immediate).
func ewReads(in lir.Instr) []int {
	switch in.Op {
	case lir.EwLoad, lir.EwImm:
		return nil
	case lir.EwStore:
		return []int{in.Dst}
	}
	return []int{in.A, in.B, in.C}[:in.Op.Info().Arity]
}

// newByteRegion analyses op's code, false when it is not SSA or names
// something out of range.
func newByteRegion(op *lir.Elementwise) (*byteRegion, bool) {
	r := &byteRegion{op: op}
	for _, in := range op.Code {
		if !in.Op.Valid() || in.Dst < 0 || in.Dst >= lir.MaxRegisters {
			return nil, false
		}
		if in.Op == lir.EwLoad && (in.A < 0 || in.A >= len(op.In)) {
			return nil, false
		}
		r.nregs = max(r.nregs, in.Dst+1)
	}
	r.def = make([]int, r.nregs)
	for i := range r.def {
		r.def[i] = -1
	}
	for k, in := range op.Code {
		for _, a := range ewReads(in) {
			if a < 0 || a >= r.nregs || r.def[a] < 0 {
				return nil, false // read before it is written
			}
		}
		if in.Op != lir.EwStore {
			if r.def[in.Dst] >= 0 {
				return nil, false // written twice
			}
			r.def[in.Dst] = k
		}
	}
	// The types as Narrowing gives them: a load its operand's, a cast its
	// target's, an immediate none, arithmetic its first typed operand's.
	r.types = make([]tensor.DType, r.nregs)
	for _, in := range op.Code {
		var t tensor.DType
		info := in.Op.Info()
		switch {
		case in.Op == lir.EwStore:
			continue
		case in.Op == lir.EwLoad:
			t = op.In[in.A].DType
		case in.Op == lir.EwImm:
		case in.Op == lir.EwCast:
			t = tensor.DType(in.Imm)
		case info.BoolResult || info.Operands == lir.EwBool:
			t = tensor.Bool
		case in.Op == lir.EwWhere:
			if t = r.types[in.B]; t == tensor.InvalidDType {
				t = r.types[in.C]
			}
		default:
			if t = r.types[in.A]; t == tensor.InvalidDType && info.Arity > 1 {
				t = r.types[in.B]
			}
		}
		r.types[in.Dst] = t
	}
	return r, true
}

// imm reports a register set by an immediate.
func (r *byteRegion) imm(reg int) bool { return r.op.Code[r.def[reg]].Op == lir.EwImm }

// byteChain is the pure set of a domain register d: the instructions
// computing from d and immediates alone.
type byteChain struct {
	d      int
	dt     tensor.DType // d's, u8 or i8
	pure   []bool       // per register: written by an instruction of the set
	instrs []int        // the set's instructions, in order
	sinks  []int        // its registers read by instructions outside it
	aff    []byteAffine // per register of the set, d and immediates
	table  [][]float64  // per sink, its value at each byte
}

// byteAffine follows a register of a chain as an affine function of x,
// d's value, clamps and roundings aside: what the short form's a and m
// come from.
type byteAffine struct {
	ok    bool    // affine in x (false: a product of two values of x, ...)
	konst bool    // an immediate
	c, o  float64 // ≈ c·x + o
	// rounded: a round, floor or ceil lies on the way from x, the last
	// of them (writing register rreg) rounding rc·x + ro.
	rounded bool
	rc, ro  float64
	rreg    int
}

// chainOp reports the instructions a chain may contain.
func chainOp(op lir.EwOp) bool {
	switch op {
	case lir.EwCast, lir.EwAdd, lir.EwSub, lir.EwMul, lir.EwDiv, lir.EwMax, lir.EwMin,
		lir.EwRound, lir.EwFloor, lir.EwCeil, lir.EwRelu, lir.EwNeg, lir.EwAbs:
		return true
	}
	return false
}

// f32Exact reports a value an f32 holds exactly (not NaN).
func f32Exact(v float64) bool { return float64(float32(v)) == v }

// chain collects d's pure set (d written by instruction k) and evaluates
// it at every byte value, false when it has nothing to fold or the
// runtimes could disagree about its values.
func (r *byteRegion) chain(d int, dt tensor.DType, k int) (*byteChain, bool) {
	code := r.op.Code
	c := &byteChain{d: d, dt: dt, pure: make([]bool, r.nregs), aff: make([]byteAffine, r.nregs)}
	c.aff[d] = byteAffine{ok: true, c: 1}
	for j := k + 1; j < len(code); j++ {
		in := code[j]
		if !chainOp(in.Op) {
			continue
		}
		fromD := false
		ok := true
		for _, a := range ewReads(in) {
			switch {
			case a == d || c.pure[a]:
				fromD = true
				// arithmetic in f32 alone: a byte is cast first
				ok = ok && (in.Op == lir.EwCast || r.types[a] == tensor.F32)
			case r.imm(a):
				// a cast of a constant is no part of the chain; an
				// immediate no f32 holds exactly is used as it is by
				// the double path, rounded to f32 by native code
				ok = ok && in.Op != lir.EwCast && f32Exact(code[r.def[a]].Imm)
			default:
				ok = false
			}
		}
		switch t := r.types[in.Dst]; {
		case in.Op == lir.EwCast:
			ok = ok && (t == tensor.F32 || t == tensor.U8 || t == tensor.I8)
		default:
			ok = ok && t == tensor.F32
		}
		if !ok || !fromD {
			continue
		}
		c.pure[in.Dst] = true
		c.instrs = append(c.instrs, j)
		c.aff[in.Dst] = r.affine(c, in)
	}
	for j, in := range code {
		if in.Op != lir.EwStore && c.pure[in.Dst] && r.def[in.Dst] == j {
			continue // an instruction of the set
		}
		for _, a := range ewReads(in) {
			if c.pure[a] && !slices.Contains(c.sinks, a) {
				c.sinks = append(c.sinks, a)
			}
		}
	}
	if len(c.sinks) == 0 {
		return nil, false
	}
	// The values of the set at each byte.
	val := make([]float64, r.nregs)
	for j, in := range code {
		if in.Op == lir.EwImm && j == r.def[in.Dst] {
			val[in.Dst] = in.Imm
		}
	}
	c.table = make([][]float64, r.nregs)
	for _, s := range c.sinks {
		c.table[s] = make([]float64, 256)
	}
	for i := range 256 {
		val[d] = byteValue(dt, i)
		for _, j := range c.instrs {
			v, ok := byteStep(code[j], val)
			if !ok {
				return nil, false
			}
			val[code[j].Dst] = v
			if t := c.table[code[j].Dst]; t != nil {
				t[i] = v
			}
		}
	}
	return c, true
}

// byteValue is the i-th value of a byte dtype: 0 to 255 for u8, −128 to
// 127 for i8.
func byteValue(dt tensor.DType, i int) float64 {
	if dt == tensor.I8 {
		return float64(i - 128)
	}
	return float64(i)
}

// affine is what instruction in of chain c computes, as an affine
// function of x (byteAffine).
func (r *byteRegion) affine(c *byteChain, in lir.Instr) byteAffine {
	at := func(reg int) byteAffine {
		if c.pure[reg] || reg == c.d {
			return c.aff[reg]
		}
		return byteAffine{ok: true, konst: true, o: r.op.Code[r.def[reg]].Imm}
	}
	a := at(in.A)
	if !a.ok {
		return byteAffine{}
	}
	switch in.Op {
	case lir.EwCast, lir.EwRelu:
		// a byte's truncation and a ReLU's clamp set aside
		return a
	case lir.EwNeg:
		a.c, a.o = -a.c, -a.o
		return a
	case lir.EwRound, lir.EwFloor, lir.EwCeil:
		a.rounded, a.rc, a.ro, a.rreg = true, a.c, a.o, in.Dst
		return a
	case lir.EwAbs:
		return byteAffine{}
	}
	b := at(in.B)
	if !b.ok {
		return byteAffine{}
	}
	// The rounding of the value that is not a constant; none where both
	// operands have one (a sum of two roundings).
	f := a
	switch {
	case a.rounded && b.rounded:
		return byteAffine{}
	case b.rounded:
		f.rounded, f.rc, f.ro, f.rreg = true, b.rc, b.ro, b.rreg
	}
	f.konst = false
	switch in.Op {
	case lir.EwAdd:
		f.c, f.o = a.c+b.c, a.o+b.o
	case lir.EwSub:
		f.c, f.o = a.c-b.c, a.o-b.o
	case lir.EwMul:
		switch {
		case b.konst:
			f.c, f.o = a.c*b.o, a.o*b.o
		case a.konst:
			f.c, f.o = b.c*a.o, b.o*a.o
		default:
			return byteAffine{}
		}
	case lir.EwDiv:
		if !b.konst {
			return byteAffine{}
		}
		f.c, f.o = a.c/b.o, a.o/b.o
	case lir.EwMax, lir.EwMin:
		// a clamp set aside: the value clamped
		switch {
		case b.konst:
			return a
		case a.konst:
			return b
		}
		return byteAffine{}
	default:
		return byteAffine{}
	}
	return f
}

// byteStep is instruction in's result from register values val, as the
// runtimes compute it (f32 results rounded to f32), false where they
// could disagree (foldByteChains).
func byteStep(in lir.Instr, val []float64) (float64, bool) {
	if in.Op == lir.EwImm {
		return in.Imm, true
	}
	x := val[in.A]
	switch in.Op {
	case lir.EwCast:
		switch to := tensor.DType(in.Imm); to {
		case tensor.F32:
			return float64(float32(x)), true
		case tensor.U8, tensor.I8:
			if math.Abs(x) >= 1<<31 && !math.IsInf(x, 0) {
				return 0, false
			}
			return byteCast(x, to), true
		}
		return 0, false
	case lir.EwMax, lir.EwMin:
		if y := val[in.B]; x == 0 && y == 0 && math.Signbit(x) != math.Signbit(y) {
			return 0, false
		}
	}
	info := in.Op.Info()
	var v float64
	switch {
	case info.Unary != nil:
		v = info.Unary(x)
	case info.Binary != nil:
		v = info.Binary(x, val[in.B])
	default:
		return 0, false
	}
	// exact f32 arithmetic: the double result of f32 operands, rounded
	// once, is f32's for + − × ÷
	return float64(float32(v)), true
}

// byteCast converts v to a byte as the runtimes' casts do (lir.TruncInt,
// tensor.DType.Wrap).
func byteCast(v float64, to tensor.DType) float64 {
	return float64(to.Wrap(lir.TruncInt(v)))
}

// maxByteChainUlps is how far from c's f32 rounding the search for m
// goes: the chain rounds at each of its steps, the form once, so the
// multiplier that reproduces the chain's ties may be a neighbour.
const maxByteChainUlps = 4

// fold replaces sink s of chain c by a short form, returning the new
// code, false when no form matches or none would be shorter.
func (r *byteRegion) fold(c *byteChain, s int) ([]lir.Instr, bool) {
	t := c.table[s]
	f := c.aff[s]
	if !f.ok || !f.rounded || f.rc == 0 || math.IsInf(f.rc, 0) || math.IsNaN(f.rc) {
		return nil, false // not a rounding: nothing to shorten
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range t {
		if math.IsInf(v, 0) || v != math.Trunc(v) || v == 0 && math.Signbit(v) {
			return nil, false // NaN, infinities, fractions, -0: no form of integers
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	// The sink is ±round(rc·x + ro), offset: the sign of m.
	sign := 1.0
	switch k := f.c / f.rc; {
	case math.Abs(k-1) < 1e-6:
	case math.Abs(k+1) < 1e-6:
		sign = -1
	default:
		return nil, false
	}
	try := func(body []formStep, round lir.EwOp) ([]lir.Instr, bool) {
		form, ok := r.form(c, s, t, body, round, lo, hi)
		if !ok {
			return nil, false
		}
		return r.replace(s, form)
	}
	// The form of one product: a the zero of rc·x + ro, m from rc.
	a := math.RoundToEven(-f.ro / f.rc)
	if a == 0 {
		a = 0 // not −0
	}
	m0 := float32(sign * f.rc)
	// x − a exact in f32 for the bytes' x
	if math.Abs(a) <= 1<<20 && m0 != 0 && !math.IsInf(float64(m0), 0) {
		tried := map[float32]bool{}
		for i := range 2*maxByteChainUlps + 1 {
			// m0, then its neighbours outward: −1, +1, −2, +2 ulps, ...
			m := m0
			for range (i + 1) / 2 {
				m = math.Nextafter32(m, float32(math.Inf(1-2*(i%2))))
			}
			if tried[m] || m == 0 || math.Signbit(float64(m)) != math.Signbit(float64(m0)) || math.IsInf(float64(m), 0) {
				continue
			}
			tried[m] = true
			var body []formStep
			if a != 0 {
				body = append(body, formStep{op: lir.EwSub, k: a})
			}
			if code, ok := try(append(body, formStep{op: lir.EwMul, k: float64(m)}), lir.EwRound); ok {
				return code, true
			}
		}
	}
	// Where no one product reproduces the chain's roundings (scales
	// whose quotient puts values exactly on ties, 0.1 and 6/255), its
	// own arithmetic without its clamps: the steps are monotone, so
	// clamping once at the end clamps the same values.
	if body, round, ok := r.unclamped(c, f.rreg); ok && sign > 0 {
		return try(body, round)
	}
	return nil, false
}

// formStep is one step of a short form's way from x to the rounding: x
// op k, or k op x.
type formStep struct {
	op     lir.EwOp
	k      float64
	kFirst bool
}

// unclamped is the chain's way from d to the operand of the rounding
// writing reg, as steps with constants: its casts to f32, ReLUs and
// clamps (max and min with a constant) left out; false where it has
// another instruction (a cast to a byte, a rounding, a product of two
// values of d).
func (r *byteRegion) unclamped(c *byteChain, reg int) ([]formStep, lir.EwOp, bool) {
	code := r.op.Code
	rounding := code[r.def[reg]]
	var steps []formStep
	for cur := rounding.A; cur != c.d; {
		in := code[r.def[cur]]
		switch in.Op {
		case lir.EwCast:
			if tensor.DType(in.Imm) != tensor.F32 {
				return nil, 0, false
			}
			cur = in.A
		case lir.EwRelu:
			cur = in.A
		case lir.EwAdd, lir.EwSub, lir.EwMul, lir.EwDiv, lir.EwMax, lir.EwMin:
			st := formStep{op: in.Op}
			switch {
			case r.imm(in.B) && !r.imm(in.A):
				st.k, cur = code[r.def[in.B]].Imm, in.A
			case r.imm(in.A) && !r.imm(in.B):
				st.k, st.kFirst, cur = code[r.def[in.A]].Imm, true, in.B
			default:
				return nil, 0, false
			}
			if in.Op != lir.EwMax && in.Op != lir.EwMin {
				steps = append(steps, st)
			}
		default:
			return nil, 0, false
		}
	}
	slices.Reverse(steps)
	return steps, rounding.Op, true
}

// form builds the short form of sink s: x, d as f32, taken through body
// and rounded by round, then offset by b, clamped to the sink's least and
// greatest values lo and hi and cast to its dtype where that is a byte,
// its result in s. It checks the form against the sink's values t, and
// returns false where it differs at some byte. The new registers are
// numbered from r.nregs.
func (r *byteRegion) form(c *byteChain, s int, t []float64, body []formStep, round lir.EwOp, lo, hi float64) ([]lir.Instr, bool) {
	code := r.op.Code
	next := r.nregs
	var form []lir.Instr
	emit := func(in lir.Instr) int {
		in.Dst = next
		next++
		form = append(form, in)
		return in.Dst
	}
	imm := func(v float64) int { return emit(lir.Instr{Op: lir.EwImm, Imm: v}) }
	// x: d as f32, an existing cast where one precedes s
	existing := -1
	for j := r.def[c.d] + 1; j < r.def[s]; j++ {
		if in := code[j]; in.Op == lir.EwCast && in.A == c.d && tensor.DType(in.Imm) == tensor.F32 {
			existing = in.Dst
			break
		}
	}
	// evaluated as a whole: an existing cast is the same instruction
	cast := emit(lir.Instr{Op: lir.EwCast, A: c.d, Imm: float64(tensor.F32)})
	x := cast
	for _, st := range body {
		if st.kFirst {
			x = emit(lir.Instr{Op: st.op, A: imm(st.k), B: x})
		} else {
			x = emit(lir.Instr{Op: st.op, A: x, B: imm(st.k)})
		}
	}
	u := emit(lir.Instr{Op: round, A: x})
	val := make([]float64, next+8) // the tail adds at most 8 registers
	us := make([]float64, 256)
	negZero := false
	for i := range 256 {
		val[c.d] = byteValue(c.dt, i)
		if !evalBytes(form, val) {
			return nil, false
		}
		us[i] = val[u]
		negZero = negZero || us[i] == 0 && math.Signbit(us[i])
	}
	// b: the offset at a value the clamps leave, or where they leave
	// none (the sink takes two values, the clamps'), at either side of a
	// step
	var bs []float64
	for i, v := range t {
		if lo < v && v < hi {
			bs = []float64{v - us[i]}
			break
		}
		if i > 0 && v != t[i-1] {
			bs = append(bs, v-us[i], t[i-1]-us[i-1])
		}
	}
	slices.Sort(bs)
	bs = slices.Compact(bs)
	prefix, regs := len(form), next
	matches := func(b float64) bool {
		form, next = form[:prefix], regs
		if !(math.Abs(b) < 1<<24) || b != math.Trunc(b) {
			return false
		}
		y := u
		if b != 0 || negZero {
			// also where b is 0: −0 + 0 is +0, as the sink's values are
			y = emit(lir.Instr{Op: lir.EwAdd, A: y, B: imm(b)})
		}
		below, above := false, false
		for _, v := range us {
			w := float64(float32(v + b))
			below, above = below || w < lo, above || w > hi
		}
		if below {
			y = emit(lir.Instr{Op: lir.EwMax, A: y, B: imm(lo)})
		}
		if above {
			y = emit(lir.Instr{Op: lir.EwMin, A: y, B: imm(hi)})
		}
		if dt := r.types[s]; dt == tensor.U8 || dt == tensor.I8 {
			y = emit(lir.Instr{Op: lir.EwCast, A: y, Imm: float64(dt)})
		}
		// The check: the form's values at every byte, the sink's bit
		// for bit.
		for i := range 256 {
			val[c.d] = byteValue(c.dt, i)
			if !evalBytes(form, val) || math.Float64bits(val[y]) != math.Float64bits(t[i]) {
				return false
			}
		}
		return true
	}
	if !slices.ContainsFunc(bs, matches) {
		return nil, false
	}
	// The result goes to s itself, so that its readers stay as they are;
	// an existing cast replaces the form's.
	form[len(form)-1].Dst = s
	if existing >= 0 {
		form = form[1:]
		for i := range form {
			if form[i].A == cast {
				form[i].A = existing
			}
			if form[i].B == cast && form[i].Op.Info().Arity > 1 {
				form[i].B = existing
			}
		}
	}
	return form, true
}

// evalBytes runs instructions over register values val, false where
// byteStep refuses one.
func evalBytes(code []lir.Instr, val []float64) bool {
	for _, in := range code {
		v, ok := byteStep(in, val)
		if !ok {
			return false
		}
		val[in.Dst] = v
	}
	return true
}

// replace puts form in place of sink s's instruction and drops what no
// longer has a reader, returning the new code when it has fewer
// instructions other than immediates than before. The form's registers
// take numbers the dropped instructions freed, then ones past the last.
func (r *byteRegion) replace(s int, form []lir.Instr) ([]lir.Instr, bool) {
	code := r.op.Code
	k := r.def[s]
	next := make([]lir.Instr, 0, len(code)+len(form))
	next = append(next, code[:k]...)
	next = append(next, form...)
	next = append(next, code[k+1:]...)
	nregs := r.nregs
	for _, in := range form {
		nregs = max(nregs, in.Dst+1)
	}
	old := liveEw(code, r.nregs)
	next = liveEw(next, nregs)
	if countOps(next) >= countOps(old) {
		return nil, false
	}
	// Renumber the form's new registers (r.nregs and up).
	defined := make([]bool, nregs)
	for _, in := range next {
		if in.Op != lir.EwStore {
			defined[in.Dst] = true
		}
	}
	renum := map[int]int{}
	free, past := 0, r.nregs
	for reg := r.nregs; reg < nregs; reg++ {
		if !defined[reg] {
			continue
		}
		for free < r.nregs && defined[free] {
			free++
		}
		to := free
		if free == r.nregs {
			// none freed: past the last (at most reg, never a register
			// still to be renumbered)
			to = past
			past++
		}
		if to >= lir.MaxRegisters {
			return nil, false
		}
		defined[to] = true
		renum[reg] = to
	}
	at := func(reg int) int {
		if to, ok := renum[reg]; ok {
			return to
		}
		return reg
	}
	for i := range next {
		in := &next[i]
		in.Dst = at(in.Dst) // a store's source, any other's result
		switch in.Op {
		case lir.EwLoad, lir.EwImm, lir.EwStore:
			continue // A: an operand's, a result's number
		}
		regs := []*int{&in.A, &in.B, &in.C}
		for _, p := range regs[:in.Op.Info().Arity] {
			*p = at(*p)
		}
	}
	return next, true
}

// liveEw is code without the instructions whose results nothing reads
// (stores and loads stay).
func liveEw(code []lir.Instr, nregs int) []lir.Instr {
	read := make([]bool, nregs)
	keep := make([]bool, len(code))
	for k := len(code) - 1; k >= 0; k-- {
		in := code[k]
		keep[k] = in.Op == lir.EwStore || in.Op == lir.EwLoad || read[in.Dst]
		if keep[k] {
			for _, a := range ewReads(in) {
				read[a] = true
			}
		}
	}
	var out []lir.Instr
	for k, in := range code {
		if keep[k] {
			out = append(out, in)
		}
	}
	return out
}

// countOps counts the instructions other than immediates.
func countOps(code []lir.Instr) int {
	n := 0
	for _, in := range code {
		if in.Op != lir.EwImm {
			n++
		}
	}
	return n
}
