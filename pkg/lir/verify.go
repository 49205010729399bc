package lir

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// This file checks that a program is sane before anything runs it: an
// artifact whose digests check out proves only that its bytes are the ones
// written, not that the program in them reads and writes inside its
// buffers. Each kind checks its own fields (verify); the arithmetic is
// overflow-safe, so a crafted size cannot wrap a check around.

// MaxRegisters bounds an elementwise region's registers: a runtime
// allocates a chunk per register, so the count is a memory demand.
const MaxRegisters = 1 << 12

// MaxRank bounds the rank of any shape in a program.
const MaxRank = 64

// VerifyError is a program that is not sane: which step, which field, why.
type VerifyError struct {
	Step  int // -1: not a step (a slot, a buffer)
	Kind  Kind
	Src   string
	Field string
	Why   string
}

func (e *VerifyError) Error() string {
	if e.Step < 0 {
		return fmt.Sprintf("%s: %s", e.Field, e.Why)
	}
	return fmt.Sprintf("step %d (%s, %s): %s: %s", e.Step, e.Kind, e.Src, e.Field, e.Why)
}

// Verify checks the whole program: every buffer inside its kind's limits
// (the arena's size; weights, inputs and outputs are checked against their
// real sizes by the runtime that binds them), every slot consistent with
// its buffer, every step's buffer references (CheckRefs) and every step's
// own fields: shapes, strides, element counts and the sizes of the buffers
// they imply, register and operand indices, dtypes, kernel indices.
func (p *Program) Verify() error {
	if p.ArenaBytes < 0 {
		return &VerifyError{Step: -1, Field: "arena", Why: fmt.Sprintf("negative size %d", p.ArenaBytes)}
	}
	for i, b := range p.Buffers {
		field := fmt.Sprintf("buffer %d", i)
		if b.Offset < 0 || b.Bytes < 0 {
			return &VerifyError{Step: -1, Field: field, Why: "negative offset or size"}
		}
		end, ok := add(b.Offset, b.Bytes)
		if !ok {
			return &VerifyError{Step: -1, Field: field, Why: "offset + size overflows"}
		}
		switch b.Kind {
		case BufArena:
			if end > p.ArenaBytes {
				return &VerifyError{Step: -1, Field: field, Why: fmt.Sprintf("runs past the arena (%d+%d > %d)", b.Offset, b.Bytes, p.ArenaBytes)}
			}
		case BufWeight, BufInput, BufOutput:
			if b.Index < 0 {
				return &VerifyError{Step: -1, Field: field, Why: fmt.Sprintf("negative %s index", b.Kind)}
			}
		default:
			return &VerifyError{Step: -1, Field: field, Why: fmt.Sprintf("unknown kind %q", b.Kind)}
		}
	}
	for _, slots := range []struct {
		what string
		kind string
		s    []Slot
	}{{"input", BufInput, p.Inputs}, {"output", BufOutput, p.Outputs}} {
		for i, s := range slots.s {
			field := fmt.Sprintf("%s %d (%s)", slots.what, i, s.Name)
			if err := p.verifySlot(s, i, slots.kind); err != "" {
				return &VerifyError{Step: -1, Field: field, Why: err}
			}
		}
	}
	if err := p.Native.verify(); err != nil {
		return err
	}
	if err := p.CheckRefs(); err != nil {
		return err
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		v := &verifier{p: p}
		if vo, ok := s.Op.(interface{ verify(*verifier) }); ok {
			vo.verify(v)
		} else {
			v.failf("op", "kind %s has no verifier", s.Op.Kind())
		}
		if v.err != nil {
			v.err.Step, v.err.Kind, v.err.Src = i, s.Op.Kind(), s.Src
			return v.err
		}
	}
	return nil
}

func (p *Program) verifySlot(s Slot, index int, kind string) string {
	if s.Buffer < 0 || s.Buffer >= len(p.Buffers) {
		return fmt.Sprintf("refers to missing buffer %d", s.Buffer)
	}
	b := p.Buffers[s.Buffer]
	if b.Kind != kind || b.Index != index {
		return fmt.Sprintf("buffer %d is %s %d, not %s %d", s.Buffer, b.Kind, b.Index, kind, index)
	}
	dt, ok := tensor.ParseDType(s.DType)
	if !ok {
		return fmt.Sprintf("unknown dtype %q", s.DType)
	}
	n, ok := elements(s.Shape)
	if !ok {
		return fmt.Sprintf("shape %v has a negative dim or too many elements", s.Shape)
	}
	if bytes, ok := mul(n, int64(dt.Size())); !ok || bytes != b.Bytes {
		return fmt.Sprintf("%s%v needs %d bytes, its buffer holds %d", s.DType, s.Shape, bytes, b.Bytes)
	}
	return ""
}

// verifier collects the first failure of one step's checks.
type verifier struct {
	p   *Program
	err *VerifyError
}

func (v *verifier) failf(field, format string, args ...any) {
	if v.err == nil {
		v.err = &VerifyError{Field: field, Why: fmt.Sprintf(format, args...)}
	}
}

// bytes checks that buffer b (present) holds at least elems elements of
// size bytes each.
func (v *verifier) bytes(field string, b Buf, elems, size int64) {
	if v.err != nil || b == NoBuf {
		return
	}
	need, ok := mul(elems, size)
	if !ok || elems < 0 {
		v.failf(field, "%d elements of %d bytes overflow", elems, size)
		return
	}
	if have := v.p.Buffers[b].Bytes; have < need {
		v.failf(field, "buffer %s holds %d bytes, needs %d", b, have, need)
	}
}

// f32 is bytes for f32 elements.
func (v *verifier) f32(field string, b Buf, elems int64) { v.bytes(field, b, elems, 4) }

// dims checks that named values are non-negative and returns their product.
func (v *verifier) dims(field string, ds ...int64) int64 {
	n, ok := elements(ds)
	if !ok {
		v.failf(field, "dims %v: negative or too many elements", ds)
		return 0
	}
	return n
}

// positive checks that named values are at least 1.
func (v *verifier) positive(field string, ds ...int64) {
	for _, d := range ds {
		if d < 1 {
			v.failf(field, "%d, want at least 1", d)
		}
	}
}

func (v *verifier) dtype(field string, dt tensor.DType) {
	if dt.Size() == 0 {
		v.failf(field, "unknown dtype %d", dt)
	}
}

func (v *verifier) shape(field string, s []int64) int64 {
	if len(s) > MaxRank {
		v.failf(field, "rank %d exceeds %d", len(s), MaxRank)
		return 0
	}
	return v.dims(field, s...)
}

// reach checks that a strided view (offset off, shape, strides) lies in
// [0, elems) elements.
func (v *verifier) reach(field string, off int64, shape, strides []int64, elems int64) {
	if v.err != nil {
		return
	}
	if len(strides) != len(shape) {
		v.failf(field, "%d strides for a rank-%d shape", len(strides), len(shape))
		return
	}
	if n := v.shape(field, shape); n == 0 || v.err != nil {
		return // an empty view reads nothing
	}
	lo, hi := off, off
	for d, st := range strides {
		span, ok := mul(shape[d]-1, st)
		if !ok {
			v.failf(field, "stride %d over %d overflows", st, shape[d])
			return
		}
		if span < 0 {
			lo, ok = add(lo, span)
		} else {
			hi, ok = add(hi, span)
		}
		if !ok {
			v.failf(field, "offsets overflow")
			return
		}
	}
	if lo < 0 || hi >= elems {
		v.failf(field, "reaches elements [%d, %d], the buffer holds %d", lo, hi, elems)
	}
}

// elems is how many elements of size bytes buffer b holds.
func (v *verifier) elems(b Buf, size int64) int64 {
	if size <= 0 {
		return 0
	}
	return v.p.Buffers[b].Bytes / size
}

func (v *verifier) epilogue(e *Epilogue, cols, out int64) {
	if e.Act > ActClamp {
		v.failf("epilogue.act", "unknown activation %d", e.Act)
	}
	if e.ActLast && (e.Act == ActNone || e.Residual == NoBuf) {
		v.failf("epilogue.act_last", "needs an activation and a residual")
	}
	v.f32("epilogue.bias", e.Bias, cols)
	v.f32("epilogue.residual", e.Residual, out)
}

func (o *MatMul) verify(v *verifier) {
	a, b := o.AShape, o.BShape
	if len(a) < 2 || len(b) < 2 || len(a) > MaxRank || len(b) > MaxRank {
		v.failf("a_shape", "ranks %d and %d, want 2 to %d", len(a), len(b), MaxRank)
		return
	}
	na, nb := v.shape("a_shape", a), v.shape("b_shape", b)
	m, k, k2, n := a[len(a)-2], a[len(a)-1], b[len(b)-2], b[len(b)-1]
	if k != k2 {
		v.failf("b_shape", "inner dims %d and %d differ", k, k2)
	}
	batch := int64(1)
	ab, bb := a[:len(a)-2], b[:len(b)-2]
	for i := 1; i <= max(len(ab), len(bb)); i++ {
		da, db := int64(1), int64(1)
		if i <= len(ab) {
			da = ab[len(ab)-i]
		}
		if i <= len(bb) {
			db = bb[len(bb)-i]
		}
		if da != db && da != 1 && db != 1 {
			v.failf("b_shape", "batch dims %d and %d do not broadcast", da, db)
		}
		batch = v.dims("a_shape", batch, max(da, db))
	}
	out := v.dims("out", batch, m, n)
	v.f32("a", o.A, na)
	v.f32("b", o.B, nb)
	v.f32("out", o.Out, out)
	v.epilogue(&o.Epilogue, n, out)
}

func (o *PackedMatMul) verify(v *verifier) {
	out := v.dims("m", o.M, o.N)
	v.f32("a", o.A, v.dims("k", o.M, o.K))
	v.f32("b", o.B, v.dims("k", o.K, o.N))
	v.f32("out", o.Out, out)
	v.epilogue(&o.Epilogue, o.N, out)
}

func (o *QMatMul) verify(v *verifier) {
	if o.Signed && (o.Zero < -128 || o.Zero > 127) || !o.Signed && (o.Zero < 0 || o.Zero > 255) {
		v.failf("zero", "%d outside the range of the operand's type", o.Zero)
	}
	if o.K > QMatMulMaxK {
		v.failf("k", "%d past %d, the longest sum exact in int32", o.K, QMatMulMaxK)
	}
	a := v.dims("k", o.M, o.K)
	v.dims("n", o.K, o.N)
	if v.err == nil {
		v.bytes("b", o.B, QMatMulPackedBytes(o.K, o.N), 1)
	}
	v.bytes("a", o.A, a, 1)
	v.bytes("zero_at", o.ZeroAt, 1, 1)
	v.bytes("bias", o.Bias, o.N, 4)
	v.f32("out", o.Out, v.dims("m", o.M, o.N))
	if v.err == nil {
		v.bytes("scratch", o.Scratch, QMatMulScratch(o.M, o.K), 1)
	}
}

func (o *QConv2D) verify(v *verifier) {
	if o.Signed && (o.Zero < -128 || o.Zero > 127) || !o.Signed && (o.Zero < 0 || o.Zero > 255) {
		v.failf("zero", "%d outside the range of the operand's type", o.Zero)
	}
	x, _, out := v.conv(&o.Geom)
	if v.err != nil {
		return
	}
	if o.Geom.Groups != 1 {
		v.failf("geom.groups", "%d: an integer convolution has one group", o.Geom.Groups)
	}
	if k := QConvTaps(o.Geom) * QConvTapBytes(o.Geom); k > QMatMulMaxK {
		v.failf("geom", "sums of %d terms: past %d, the longest exact in int32", k, QMatMulMaxK)
	}
	v.bytes("x", o.X, x, 1)
	if v.err == nil {
		v.bytes("w", o.W, QConvPackedBytes(o.Geom), 1)
	}
	v.bytes("bias", o.Bias, o.Geom.O, 4)
	v.f32("out", o.Out, out)
	if v.err == nil {
		xpad, outT := QConvScratch(o.Geom)
		v.bytes("xpad", o.XPad, xpad, 1)
		if !o.OutNHWC && o.OutT == NoBuf {
			v.failf("outt", "none: an NCHW result is transposed from it")
		}
		v.bytes("outt", o.OutT, outT, 1)
	}
}

func (o *PackedConv1x1) verify(v *verifier) {
	out := v.dims("o", o.N, o.O, o.HW)
	v.f32("x", o.X, v.dims("c", o.N, o.C, o.HW))
	v.f32("w", o.W, v.dims("c", o.C, o.O))
	v.f32("out", o.Out, out)
	v.epilogue(&o.Epilogue, o.O, out)
}

// conv checks a convolution's geometry and returns its element counts.
func (v *verifier) conv(g *ConvGeom) (x, w, out int64) {
	v.dims("geom", g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, g.PadT, g.PadL, g.PadB, g.PadR, g.OH, g.OW)
	v.positive("geom.stride", g.StrideH, g.StrideW)
	v.positive("geom.dilation", g.DilH, g.DilW)
	v.positive("geom.groups", g.Groups)
	if v.err != nil {
		return 0, 0, 0
	}
	if g.C%g.Groups != 0 || g.O%g.Groups != 0 {
		v.failf("geom.groups", "%d groups do not divide %d input and %d output channels", g.Groups, g.C, g.O)
	}
	for _, d := range []struct {
		name                       string
		in, k, pad0, pad1, st, dil int64
		out                        int64
	}{{"geom.oh", g.H, g.KH, g.PadT, g.PadB, g.StrideH, g.DilH, g.OH}, {"geom.ow", g.W, g.KW, g.PadL, g.PadR, g.StrideW, g.DilW, g.OW}} {
		span := v.dims(d.name, d.dil, max(d.k-1, 0))
		padded := v.dims(d.name, 1, d.in) + d.pad0 + d.pad1
		want := int64(0)
		if padded > span {
			want = (padded-span-1)/d.st + 1
		}
		if d.out != want {
			v.failf(d.name, "%d, the geometry gives %d", d.out, want)
		}
	}
	return v.dims("geom", g.N, g.C, g.H, g.W), v.dims("geom", g.O, g.C/g.Groups, g.KH, g.KW), v.dims("geom", g.N, g.O, g.OH, g.OW)
}

func (o *Conv2D) verify(v *verifier) {
	x, w, out := v.conv(&o.Geom)
	v.f32("x", o.X, x)
	v.f32("w", o.W, w)
	v.f32("out", o.Out, out)
	v.epilogue(&o.Epilogue, o.Geom.O, out)
}

func (o *TapConv2D) verify(v *verifier) {
	x, _, out := v.conv(&o.Geom)
	if v.err != nil {
		return
	}
	if o.Geom.Groups > 1 {
		v.failf("geom.groups", "%d groups: a tap-major convolution has one", o.Geom.Groups)
	}
	v.f32("x", o.X, x)
	v.f32("w", o.W, v.dims("geom", o.Geom.KH, o.Geom.KW, o.Geom.C, TapConvOP(o.Geom.O)))
	v.f32("out", o.Out, out)
	v.epilogue(&o.Epilogue, o.Geom.O, out)
}

// winograd checks the geometry of a Winograd step (3x3, stride 1, no
// dilation, one group; tile 2 or 4) and returns its element counts and
// P, TP.
func (v *verifier) winograd(g *ConvGeom, tile int64) (x, out, p, tp int64) {
	x, _, out = v.conv(g)
	if v.err != nil {
		return 0, 0, 0, 0
	}
	if g.KH != 3 || g.KW != 3 || g.StrideH != 1 || g.StrideW != 1 || g.DilH != 1 || g.DilW != 1 || g.Groups != 1 {
		v.failf("geom", "a %dx%d kernel of stride %dx%d, dilation %dx%d and %d groups: Winograd takes 3x3, stride 1, no dilation, one group",
			g.KH, g.KW, g.StrideH, g.StrideW, g.DilH, g.DilW, g.Groups)
	}
	if tile != 2 && tile != 4 {
		v.failf("tile", "%d, want 2 or 4", tile)
		return 0, 0, 0, 0
	}
	_, _, _, tp = g.WinogradTiles(tile)
	return x, out, (tile + 2) * (tile + 2), tp
}

// part checks a Winograd step's part of the tp tiles and returns the
// tiles its scratch holds.
func (v *verifier) part(r TileRange, tp int64) int64 {
	if r.Whole() {
		return tp
	}
	if r.T0 < 0 || r.T0 >= r.T1 || r.T1 > tp || r.LD < r.T1-r.T0 || r.T0%16 != 0 || r.T1%16 != 0 || r.LD%16 != 0 || r.T0%r.LD != 0 {
		v.failf("part", "tiles [%d, %d) in a scratch of %d: want 0 <= T0 < T1 <= %d, at most LD tiles, T0 a multiple of LD, all of 16", r.T0, r.T1, r.LD, tp)
		return 0
	}
	return r.LD
}

func (o *WinogradInput) verify(v *verifier) {
	x, _, p, tp := v.winograd(&o.Geom, o.Tile)
	ld := v.part(o.Part, tp)
	v.f32("x", o.X, x)
	v.f32("v", o.V, v.dims("geom", p, o.Geom.C, ld))
}

func (o *WinogradProduct) verify(v *verifier) {
	v.dims("p", o.P, o.C, o.O, o.TP)
	if o.P != 16 && o.P != 36 {
		v.failf("p", "%d points, want 16 or 36", o.P)
	}
	if o.TP%16 != 0 || o.Stride()%16 != 0 || o.Stride() < o.TP {
		v.failf("tp", "%d tiles in rows of %d: want multiples of 16, no more tiles than the row holds", o.TP, o.Stride())
	}
	v.f32("v", o.V, v.dims("c", o.P, o.C, o.Stride()))
	v.f32("u", o.U, v.dims("o", o.P, (o.O+3)/4*4, o.C))
	v.f32("m", o.M, v.dims("o", o.P, o.O, o.Stride()))
}

func (o *WinogradOutput) verify(v *verifier) {
	_, out, p, tp := v.winograd(&o.Geom, o.Tile)
	ld := v.part(o.Part, tp)
	v.f32("m", o.M, v.dims("geom", p, o.Geom.O, ld))
	v.f32("out", o.Out, out)
	v.epilogue(&o.Epilogue, o.Geom.O, out)
}

func (o *DepthwiseNHWC) verify(v *verifier) {
	x, _, out := v.conv(&o.Geom)
	if g := o.Geom; v.err == nil && (g.Groups != g.C || g.O != g.C) {
		v.failf("geom.groups", "%d groups of %d channels into %d: not depthwise", g.Groups, g.C, g.O)
	}
	v.f32("x", o.X, x)
	v.f32("w", o.W, v.dims("geom", o.Geom.KH, o.Geom.KW, o.Geom.C))
	v.f32("out", o.Out, out)
	v.epilogue(&o.Epilogue, o.Geom.O, out)
}

func (o *Relayout) verify(v *verifier) {
	n := v.dims("n", o.N, o.C, o.HW)
	v.f32("src", o.Src, n)
	v.f32("dst", o.Dst, n)
}

func (o *Pool2D) verify(v *verifier) {
	g := o.Geom
	v.dims("geom", g.N, g.C, g.H, g.W, g.KH, g.KW, g.PadT, g.PadL, g.PadB, g.PadR, g.OH, g.OW)
	v.positive("geom.stride", g.StrideH, g.StrideW)
	v.positive("geom.dilation", g.DilH, g.DilW)
	v.f32("x", o.X, v.dims("geom", g.N, g.C, g.H, g.W))
	v.f32("out", o.Out, v.dims("geom", g.N, g.C, g.OH, g.OW))
}

func (o *Reduce) verify(v *verifier) {
	if o.Fn > ReduceProd {
		v.failf("fn", "unknown reduction %d", o.Fn)
	}
	v.dtype("dtype", o.DType)
	n := v.shape("shape", o.Shape)
	kept := int64(1)
	seen := make([]bool, len(o.Shape))
	for _, a := range o.Axes {
		if a < 0 || a >= int64(len(o.Shape)) || seen[a] {
			v.failf("axes", "%v: an axis out of range [0, %d) or repeated", o.Axes, len(o.Shape))
			return
		}
		seen[a] = true
	}
	for d, s := range o.Shape {
		if !seen[d] {
			kept = v.dims("shape", kept, s)
		}
	}
	size := int64(o.DType.Size())
	v.bytes("x", o.X, n, size)
	v.bytes("out", o.Out, kept, size)
}

func (o *ArgReduce) verify(v *verifier) {
	v.dtype("dtype", o.DType)
	v.bytes("x", o.X, v.dims("axis", o.Outer, o.Axis, o.Inner), int64(o.DType.Size()))
	v.bytes("out", o.Out, v.dims("inner", o.Outer, o.Inner), 8)
}

func (o *TopK) verify(v *verifier) {
	v.dtype("dtype", o.DType)
	if o.K < 1 || o.K > o.Axis {
		v.failf("k", "%d outside [1, axis %d]", o.K, o.Axis)
	}
	size := int64(o.DType.Size())
	v.bytes("x", o.X, v.dims("axis", o.Outer, o.Axis, o.Inner), size)
	n := v.dims("k", o.Outer, o.K, o.Inner)
	v.bytes("values", o.Values, n, size)
	v.bytes("indices", o.Indices, n, 8)
}

func (o *Softmax) verify(v *verifier) {
	n := v.dims("axis", o.Outer, o.Axis, o.Inner)
	v.f32("x", o.X, n)
	v.f32("out", o.Out, n)
}

func (o *LayerNorm) verify(v *verifier) {
	n := v.dims("cols", o.Rows, o.Cols)
	v.f32("x", o.X, n)
	v.f32("scale", o.Scale, o.Cols)
	v.f32("bias", o.Bias, o.Cols)
	v.f32("out", o.Out, n)
}

func (o *AddLayerNorm) verify(v *verifier) {
	n := v.dims("cols", o.Rows, o.Cols)
	for _, b := range []struct {
		name string
		buf  Buf
	}{{"a", o.A}, {"b", o.B}, {"out", o.Out}, {"sum", o.Sum}} {
		v.f32(b.name, b.buf, n)
	}
	v.f32("scale", o.Scale, o.Cols)
	v.f32("bias", o.Bias, o.Cols)
}

func (o *Attention) verify(v *verifier) {
	g := &o.Geom
	v.shape("geom.batch", g.Batch)
	v.dims("geom", g.Sq, g.Sk, g.D, g.Dv, g.QRow, g.KRow, g.VRow)
	if v.err != nil {
		return
	}
	// Each operand is [batch..., rows, cols] read with its batch strides
	// and row stride (0: rows of cols elements back to back).
	operand := func(field string, b Buf, strides []int64, rows, cols, row int64) {
		if b == NoBuf || v.err != nil {
			return
		}
		if row == 0 {
			row = cols
		}
		shape := append(append([]int64(nil), g.Batch...), rows, cols)
		st := append(append([]int64(nil), strides...), row, 1)
		if len(strides) != len(g.Batch) {
			v.failf(field, "%d batch strides for %d batch dims", len(strides), len(g.Batch))
			return
		}
		v.reach(field, 0, shape, st, v.elems(b, 4))
	}
	operand("q", o.Q, g.QStrides, g.Sq, g.D, g.QRow)
	operand("k", o.K, g.KStrides, g.Sk, g.D, g.KRow)
	operand("v", o.V, g.VStrides, g.Sk, g.Dv, g.VRow)
	if o.Mask != NoBuf && v.err == nil {
		if len(g.MaskStrides) != len(g.Batch) {
			v.failf("mask", "%d batch strides for %d batch dims", len(g.MaskStrides), len(g.Batch))
			return
		}
		shape := append(append([]int64(nil), g.Batch...), g.Sq, g.Sk)
		st := append(append([]int64(nil), g.MaskStrides...), g.MaskRowStride, g.MaskColStride)
		v.reach("mask", 0, shape, st, v.elems(o.Mask, 4))
	}
	v.f32("out", o.Out, v.dims("geom", append([]int64{g.Sq, g.Dv}, g.Batch...)...))
}

func (o *Memcpy) verify(v *verifier) {}

func (o *Copy) verify(v *verifier) {
	if o.ElemSize != 1 && o.ElemSize != 2 && o.ElemSize != 4 && o.ElemSize != 8 {
		v.failf("elem_size", "%d, want 1, 2, 4 or 8", o.ElemSize)
		return
	}
	v.reach("src", o.SrcOff, o.Shape, o.SrcStrides, v.elems(o.Src, o.ElemSize))
	v.reach("dst", o.DstOff, o.Shape, o.DstStrides, v.elems(o.Dst, o.ElemSize))
}

func (o *Fill) verify(v *verifier) { v.dtype("dtype", o.DType) }

func (o *Gather) verify(v *verifier) {
	if o.ElemSize != 1 && o.ElemSize != 2 && o.ElemSize != 4 && o.ElemSize != 8 {
		v.failf("elem_size", "%d, want 1, 2, 4 or 8", o.ElemSize)
		return
	}
	if o.IdxDType != tensor.I32 && o.IdxDType != tensor.I64 {
		v.failf("idx_dtype", "%s, want i32 or i64", o.IdxDType)
		return
	}
	v.bytes("x", o.X, v.dims("axis_len", o.Outer, o.AxisLen, o.Inner), o.ElemSize)
	nIdx := v.elems(o.Idx, int64(o.IdxDType.Size()))
	v.bytes("out", o.Out, v.dims("inner", o.Outer, nIdx, o.Inner), o.ElemSize)
}

func (o *Scatter) verify(v *verifier) {
	if o.ElemSize != 1 && o.ElemSize != 2 && o.ElemSize != 4 && o.ElemSize != 8 {
		v.failf("elem_size", "%d, want 1, 2, 4 or 8", o.ElemSize)
		return
	}
	if o.IdxDType != tensor.I32 && o.IdxDType != tensor.I64 {
		v.failf("idx_dtype", "%s, want i32 or i64", o.IdxDType)
		return
	}
	v.bytes("out", o.Out, v.dims("n", o.N), o.ElemSize)
	m := v.dims("m", o.M)
	v.bytes("idx", o.Idx, m, int64(o.IdxDType.Size()))
	v.bytes("upd", o.Upd, m, o.ElemSize)
}

func (o *Iota) verify(v *verifier) {
	v.dtype("dtype", o.DType)
	v.bytes("out", o.Out, v.dims("n", o.N), int64(o.DType.Size()))
}

func (o *Dispatch) verify(v *verifier) {
	if o.Kernel < 0 || o.Kernel >= len(v.p.Kernels) {
		v.failf("kernel", "%d, the program has %d kernels", o.Kernel, len(v.p.Kernels))
		return
	}
	k := &v.p.Kernels[o.Kernel]
	if len(o.Args) != len(k.Params) {
		v.failf("args", "%d buffers for kernel %s of %d parameters", len(o.Args), k.Name, len(k.Params))
	}
	switch {
	case k.Offsets && len(o.Offsets) != len(k.Params):
		v.failf("offsets", "%d offsets for kernel %s of %d parameters", len(o.Offsets), k.Name, len(k.Params))
	case !k.Offsets && len(o.Offsets) != 0:
		v.failf("offsets", "%d offsets for kernel %s, which has its offsets compiled in", len(o.Offsets), k.Name)
	}
	for i, off := range o.Offsets {
		if off < 0 || off > math.MaxInt32 {
			v.failf("offsets", "offset %d of parameter %d is outside 0..2^31-1", off, i)
		}
	}
	for i, g := range o.Groups {
		if g < 0 || g > math.MaxUint32 {
			v.failf("groups", "%d workgroups along axis %d", g, i)
		}
	}
	for i, a := range o.Args {
		if i < len(k.Params) && k.Params[i].Write {
			if kind := v.p.Buffers[a].Kind; kind == BufWeight || kind == BufInput {
				v.failf("args", "kernel %s writes parameter %s, bound to a read-only %s", k.Name, k.Params[i].Name, kind)
			}
		}
	}
}

// verify checks the native code's tables; the objects' bytes are checked
// by the runtime's loader, which alone knows what it can map.
func (n *Native) verify() error {
	if n == nil {
		return nil
	}
	fail := func(field, format string, args ...any) error {
		return &VerifyError{Step: -1, Field: field, Why: fmt.Sprintf(format, args...)}
	}
	names := map[string]bool{}
	for i, f := range n.Funcs {
		field := fmt.Sprintf("native function %d (%s)", i, f.Name)
		switch {
		case f.Name == "" || names[f.Name]:
			return fail(field, "empty or repeated name")
		case f.N < 0 || f.Grain < 1:
			return fail(field, "range %d in chunks of %d", f.N, f.Grain)
		}
		names[f.Name] = true
		for _, b := range append(append([]int64(nil), f.In...), f.Out...) {
			if b < 0 {
				return fail(field, "negative buffer size %d", b)
			}
		}
	}
	if len(n.Objects) == 0 && len(n.Funcs) > 0 {
		return fail("native", "%d functions and no compiled object", len(n.Funcs))
	}
	levels := map[string]bool{}
	for i, o := range n.Objects {
		if o.Level == "" || levels[o.Level] {
			return fail(fmt.Sprintf("native object %d", i), "empty or repeated CPU level %q", o.Level)
		}
		levels[o.Level] = true
	}
	return nil
}

func (o *NativeCall) verify(v *verifier) {
	if v.p.Native == nil || o.Func < 0 || o.Func >= len(v.p.Native.Funcs) {
		n := 0
		if v.p.Native != nil {
			n = len(v.p.Native.Funcs)
		}
		v.failf("func", "%d, the program has %d native functions", o.Func, n)
		return
	}
	f := &v.p.Native.Funcs[o.Func]
	if len(o.In) != len(f.In) || len(o.Out) != len(f.Out) {
		v.failf("args", "%d inputs and %d outputs for function %s of %d and %d", len(o.In), len(o.Out), f.Name, len(f.In), len(f.Out))
		return
	}
	if o.Hi != 0 && (o.Lo < 0 || o.Lo >= o.Hi || o.Hi > f.N) || o.Hi == 0 && o.Lo != 0 {
		v.failf("range", "[%d, %d) of function %s's %d items", o.Lo, o.Hi, f.Name, f.N)
		return
	}
	for i, b := range o.In {
		v.bytes(fmt.Sprintf("in[%d]", i), b, f.In[i], 1)
	}
	for i, b := range o.Out {
		v.bytes(fmt.Sprintf("out[%d]", i), b, f.Out[i], 1)
	}
}

func (o *Elementwise) verify(v *verifier) {
	if len(o.Shape) == 0 && len(o.In) > 0 {
		v.failf("shape", "empty, with %d operands", len(o.In))
		return
	}
	n := v.shape("shape", o.Shape)
	for i, in := range o.In {
		field := fmt.Sprintf("in[%d]", i)
		v.dtype(field+".dtype", in.DType)
		if v.err == nil {
			v.reach(field, 0, o.Shape, in.Strides, v.elems(in.Buf, int64(in.DType.Size())))
		}
	}
	for i, out := range o.Out {
		field := fmt.Sprintf("out[%d]", i)
		v.dtype(field+".dtype", out.DType)
		v.bytes(field, out.Buf, n, int64(out.DType.Size()))
	}
	for i, in := range o.Code {
		field := fmt.Sprintf("code[%d]", i)
		if !in.Op.Valid() {
			v.failf(field, "unknown instruction %d", in.Op)
			return
		}
		regs := []int{in.Dst}
		switch in.Op {
		case EwLoad:
			if in.A < 0 || in.A >= len(o.In) {
				v.failf(field, "load of operand %d, the region has %d", in.A, len(o.In))
			}
		case EwStore:
			if in.A < 0 || in.A >= len(o.Out) {
				v.failf(field, "store to result %d, the region has %d", in.A, len(o.Out))
			}
		case EwCast:
			if tensor.DType(in.Imm).Size() == 0 || in.Imm != math.Trunc(in.Imm) {
				v.failf(field, "cast to unknown dtype %v", in.Imm)
			}
		}
		regs = append(regs, []int{in.A, in.B, in.C}[:in.Op.Info().Arity]...)
		for _, r := range regs {
			if r < 0 || r >= MaxRegisters {
				v.failf(field, "register %d outside [0, %d)", r, MaxRegisters)
			}
		}
	}
}

// elements is the product of ds, false when one is negative or the
// product overflows int64.
func elements(ds []int64) (int64, bool) {
	n := int64(1)
	for _, d := range ds {
		if d < 0 {
			return 0, false
		}
		var ok bool
		if n, ok = mul(n, d); !ok {
			return 0, false
		}
	}
	return n, true
}

// mul is a·b, false on overflow (either sign).
func mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	neg := (a < 0) != (b < 0)
	ua, ub := uint64(a), uint64(b)
	if a < 0 {
		ua = uint64(-a)
	}
	if b < 0 {
		ub = uint64(-b)
	}
	hi, lo := bits.Mul64(ua, ub)
	if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
		return 0, false
	}
	if neg {
		return -int64(lo), true
	}
	return int64(lo), true
}

// add is a+b, false on overflow.
func add(a, b int64) (int64, bool) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, false
	}
	return s, true
}
