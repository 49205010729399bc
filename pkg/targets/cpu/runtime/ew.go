package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// ewChunk is how many elements of a row the elementwise interpreter works
// on at once: long enough to amortize dispatch, short enough for L1.
const ewChunk = 512

// runElementwise interprets an elementwise step. Registers hold float64
// chunks: exact for f32 math and for integers below 2^53; values are
// converted to the result dtype on store.
func runElementwise(pool *parallel.Pool, op *lir.Elementwise, bufs [][]byte) error {
	shape := op.Shape
	rank := len(shape)
	for i, in := range op.In {
		if len(in.Strides) != rank || rank == 0 {
			return fmt.Errorf("malformed elementwise step: operand %d has %d strides for %d dims", i, len(in.Strides), rank)
		}
	}
	inner := int64(1)
	if rank > 0 {
		inner = shape[rank-1]
	}
	total := tensor.NumElements(shape)
	if total == 0 {
		return nil
	}
	rows := total / inner
	nregs := 0
	for _, ins := range op.Code {
		nregs = max(nregs, ins.Dst+1)
	}
	ins := make([][]byte, len(op.In))
	outs := make([][]byte, len(op.Out))
	for i, in := range op.In {
		ins[i] = bufs[in.Buf]
	}
	for i, out := range op.Out {
		outs[i] = bufs[out.Buf]
	}
	grain := max(1, int(16384/inner))
	if allF32(op) {
		runElementwise32(pool, op, ins, outs, rows, inner, nregs, grain)
		return nil
	}
	narrow := op.Narrowing() // the float64 path only: f32 math rounds itself
	// Chunks run on several threads: the first error is kept under a lock
	// (an erroring program raced on a plain variable).
	var (
		mu       sync.Mutex
		firstErr error
	)
	pool.For(int(rows), grain, func(lo, hi int) {
		regs := make([][]float64, nregs)
		for i := range regs {
			regs[i] = make([]float64, min(inner, ewChunk))
		}
		idx := make([]int64, rank)
		for row := int64(lo); row < int64(hi); row++ {
			// The row's multi-index over all dims but the last.
			r := row
			for d := rank - 2; d >= 0; d-- {
				idx[d] = r % shape[d]
				r /= shape[d]
			}
			for c0 := int64(0); c0 < inner; c0 += ewChunk {
				n := min(inner-c0, ewChunk)
				if err := evalChunk(op.Code, narrow, regs, n, func(i int, dst []float64) {
					in := &op.In[i]
					st := in.Strides
					off := c0 * st[rank-1]
					for d := 0; d < rank-1; d++ {
						off += idx[d] * st[d]
					}
					load(dst, ins[i], in.DType, off, st[rank-1])
				}, func(o int, src []float64) {
					store(outs[o], op.Out[o].DType, row*inner+c0, src)
				}); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		}
	})
	return firstErr
}

// evalChunk runs the bytecode over n elements, rounding each result that
// narrow names to its dtype (lir.Elementwise.Narrowing).
func evalChunk(code []lir.Instr, narrow []tensor.DType, regs [][]float64, n int64, loadOp func(int, []float64), storeOp func(int, []float64)) error {
	for k, in := range code {
		d := regs[in.Dst][:n]
		a := func() []float64 { return regs[in.A][:n] }
		switch in.Op {
		case lir.EwLoad:
			loadOp(in.A, d)
		case lir.EwStore:
			storeOp(in.A, regs[in.Dst][:n])
		case lir.EwImm:
			for i := range d {
				d[i] = in.Imm
			}
		case lir.EwCast:
			castTo(d, a(), tensor.DType(in.Imm))
		case lir.EwLeakyRelu:
			x := a()
			for i := range d {
				if x[i] < 0 {
					d[i] = x[i] * in.Imm
				} else {
					d[i] = x[i]
				}
			}
		case lir.EwWhere:
			c, x, y := regs[in.A][:n], regs[in.B][:n], regs[in.C][:n]
			for i := range d {
				if c[i] != 0 {
					d[i] = x[i]
				} else {
					d[i] = y[i]
				}
			}
		default:
			info := in.Op.Info()
			switch {
			case info.Unary != nil:
				x := a()
				for i := range d {
					d[i] = info.Unary(x[i])
				}
			case info.Binary != nil:
				x, y := a(), regs[in.B][:n]
				for i := range d {
					d[i] = info.Binary(x[i], y[i])
				}
			default:
				return fmt.Errorf("unknown elementwise instruction %s", in.Op)
			}
		}
		if k < len(narrow) && narrow[k] != tensor.InvalidDType {
			castTo(d, d, narrow[k])
		}
	}
	return nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// castTo converts values to what dtype to can hold: floats round to the
// type's precision, integers truncate toward zero (and wrap to the width),
// bool is x != 0.
func castTo(d, x []float64, to tensor.DType) {
	for i, v := range x {
		switch to {
		case tensor.F32:
			d[i] = float64(float32(v))
		case tensor.F16:
			d[i] = float64(tensor.F16ToF32(tensor.F32ToF16(float32(v))))
		case tensor.BF16:
			d[i] = float64(tensor.BF16ToF32(tensor.F32ToBF16(float32(v))))
		case tensor.F64:
			d[i] = v
		case tensor.Bool:
			d[i] = b2f(v != 0)
		default:
			d[i] = float64(to.Wrap(lir.TruncInt(v)))
		}
	}
}

// load reads n elements of dtype dt starting at element off with stride st.
func load(dst []float64, b []byte, dt tensor.DType, off, st int64) {
	for i := range dst {
		e := off + int64(i)*st
		dst[i] = elemAt(b, dt, e)
	}
}

func elemAt(b []byte, dt tensor.DType, e int64) float64 {
	switch dt {
	case tensor.F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*e:])))
	case tensor.F64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*e:]))
	case tensor.I64:
		return float64(int64(binary.LittleEndian.Uint64(b[8*e:])))
	case tensor.I32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*e:])))
	case tensor.I16:
		return float64(int16(binary.LittleEndian.Uint16(b[2*e:])))
	case tensor.I8:
		return float64(int8(b[e]))
	case tensor.U8, tensor.Bool:
		return float64(b[e])
	case tensor.F16:
		return float64(tensor.F16ToF32(binary.LittleEndian.Uint16(b[2*e:])))
	case tensor.BF16:
		return float64(tensor.BF16ToF32(binary.LittleEndian.Uint16(b[2*e:])))
	}
	return 0
}

// store writes src as dtype dt at element off onward (contiguous).
func store(b []byte, dt tensor.DType, off int64, src []float64) {
	for i, v := range src {
		e := off + int64(i)
		switch dt {
		case tensor.F32:
			binary.LittleEndian.PutUint32(b[4*e:], math.Float32bits(float32(v)))
		case tensor.F64:
			binary.LittleEndian.PutUint64(b[8*e:], math.Float64bits(v))
		case tensor.I64:
			binary.LittleEndian.PutUint64(b[8*e:], uint64(lir.TruncInt(v)))
		case tensor.I32:
			binary.LittleEndian.PutUint32(b[4*e:], uint32(int32(lir.TruncInt(v))))
		case tensor.I16:
			binary.LittleEndian.PutUint16(b[2*e:], uint16(int16(lir.TruncInt(v))))
		case tensor.I8, tensor.U8:
			b[e] = byte(lir.TruncInt(v))
		case tensor.Bool:
			b[e] = byte(b2f(v != 0))
		case tensor.F16:
			binary.LittleEndian.PutUint16(b[2*e:], tensor.F32ToF16(float32(v)))
		case tensor.BF16:
			binary.LittleEndian.PutUint16(b[2*e:], tensor.F32ToBF16(float32(v)))
		}
	}
}

// runElementwise32 is runElementwise for all-f32 programs.
func runElementwise32(pool *parallel.Pool, op *lir.Elementwise, ins, outs [][]byte, rows, inner int64, nregs, grain int) {
	shape := op.Shape
	rank := len(shape)
	in32 := make([][]float32, len(ins))
	for i, b := range ins {
		in32[i] = tensor.AsF32(b)
	}
	out32 := make([][]float32, len(outs))
	for i, b := range outs {
		out32[i] = tensor.AsF32(b)
	}
	pool.For(int(rows), grain, func(lo, hi int) {
		buf := make([][]float32, nregs) // scratch per register
		regs := make([][]float32, nregs)
		for i := range buf {
			buf[i] = make([]float32, min(inner, ewChunk))
		}
		idx := make([]int64, rank)
		for row := int64(lo); row < int64(hi); row++ {
			r := row
			for d := rank - 2; d >= 0; d-- {
				idx[d] = r % shape[d]
				r /= shape[d]
			}
			for c0 := int64(0); c0 < inner; c0 += ewChunk {
				n := min(inner-c0, ewChunk)
				copy(regs, buf)
				evalChunk32(op.Code, regs, buf, n, func(i int, dst []float32) []float32 {
					st := op.In[i].Strides
					inner := st[rank-1]
					off := c0 * inner
					for d := 0; d < rank-1; d++ {
						off += idx[d] * st[d]
					}
					src := in32[i]
					switch inner {
					case 1:
						return src[off : off+n]
					case 0:
						v := src[off]
						for i := range dst {
							dst[i] = v
						}
					default:
						for i := range dst {
							dst[i] = src[off+int64(i)*inner]
						}
					}
					return dst
				}, func(o int, src []float32) {
					copy(out32[o][row*inner+c0:], src)
				})
			}
		}
	})
}
