package runtime

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/attention"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/conv"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/data"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/norm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/qgemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/reduce"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/winograd"
	"github.com/rlx-project/rlx/pkg/tensor"
)

func ints(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// intsIn appends v to buf as ints (on buf's array while it has room).
func intsIn(buf []int, v []int64) []int {
	for _, x := range v {
		buf = append(buf, int(x))
	}
	return buf
}

// epilogue binds an epilogue's optional operands to their bytes.
func epilogue(e lir.Epilogue, bufs [][]byte) gemm.Epilogue {
	ep := gemm.Epilogue{Act: e.Act, Alpha: float32(e.Alpha), Min: float32(e.Min), Max: float32(e.Max), ActLast: e.ActLast}
	if e.Bias != lir.NoBuf {
		ep.Bias = tensor.AsF32(bufs[e.Bias])
	}
	if e.Residual != lir.NoBuf {
		ep.Residual = tensor.AsF32(bufs[e.Residual])
	}
	return ep
}

// poolGeom is a pool's geometry in the kernels' ints.
func poolGeom(g lir.PoolGeom) reduce.PoolGeom {
	return reduce.PoolGeom{N: int(g.N), C: int(g.C), H: int(g.H), W: int(g.W), KH: int(g.KH), KW: int(g.KW),
		StrideH: int(g.StrideH), StrideW: int(g.StrideW), PadT: int(g.PadT), PadL: int(g.PadL), PadB: int(g.PadB), PadR: int(g.PadR),
		DilH: int(g.DilH), DilW: int(g.DilW), OH: int(g.OH), OW: int(g.OW)}
}

// attnGeom is attention's geometry in the kernels' ints; the mask strides
// only when there is a mask.
func attnGeom(g *lir.AttnGeom, mask bool) attention.AttnGeom {
	k := attention.AttnGeom{Batch: ints(g.Batch), QStrides: ints(g.QStrides), KStrides: ints(g.KStrides), VStrides: ints(g.VStrides),
		QRow: int(g.QRow), KRow: int(g.KRow), VRow: int(g.VRow),
		MaskRowStride: int(g.MaskRowStride), MaskColStride: int(g.MaskColStride),
		Sq: int(g.Sq), Sk: int(g.Sk), D: int(g.D), Dv: int(g.Dv), Scale: float32(g.Scale), Causal: g.Causal}
	if mask {
		k.MaskStrides = ints(g.MaskStrides)
	}
	return k
}

// run launches one step.
func run(pool *parallel.Pool, s *lir.Step, bufs [][]byte) error {
	f32 := func(b lir.Buf) []float32 { return tensor.AsF32(bufs[b]) }
	switch op := s.Op.(type) {
	case *lir.Elementwise:
		return runElementwise(pool, op, bufs)
	case *lir.MatMul:
		gemm.BatchMatMul(pool, f32(op.Out), f32(op.A), ints(op.AShape), f32(op.B), ints(op.BShape), epilogue(op.Epilogue, bufs))
	case *lir.PackedMatMul:
		m, n, k := int(op.M), int(op.N), int(op.K)
		gemm.GemmPacked(pool, m, n, k, f32(op.A), k, f32(op.B), f32(op.Out), n, epilogue(op.Epilogue, bufs))
	case *lir.QMatMul:
		m, n, k := int(op.M), int(op.N), int(op.K)
		zero := int32(op.Zero)
		if op.ZeroAt != lir.NoBuf {
			// dynamic quantization's zero point, of A's dtype
			zero = int32(bufs[op.ZeroAt][0])
			if op.Signed {
				zero = int32(int8(bufs[op.ZeroAt][0]))
			}
		}
		var scratch []byte // nil: allocated (artifacts from before the scratch)
		if op.Scratch != lir.NoBuf {
			scratch = bufs[op.Scratch][:qgemm.GemmScratch(m, k)]
		}
		var bias []int32
		if op.Bias != lir.NoBuf {
			bias = tensor.AsI32(bufs[op.Bias])[:n]
		}
		qgemm.Gemm(pool, m, n, k, bufs[op.A][:m*k], k, op.Signed, zero, bufs[op.B][:qgemm.PackedLen(k, n)], bias, f32(op.Out), n, scratch)
	case *lir.QConv2D:
		geom := conv.GeomOf(op.Geom)
		var bias []int32
		if op.Bias != lir.NoBuf {
			bias = tensor.AsI32(bufs[op.Bias])
		}
		xpad, outT := qgemm.ConvScratch(geom)
		var t []float32 // a channels-last result needs no scratch
		if !op.OutNHWC {
			t = f32(op.OutT)[:outT]
		}
		qgemm.Conv(pool, geom, qgemm.Layout{XNHWC: op.XNHWC, OutNHWC: op.OutNHWC}, bufs[op.X], op.Signed, int32(op.Zero),
			bufs[op.W][:qgemm.ConvPackedLen(geom)], bias, bufs[op.XPad][:xpad], t, f32(op.Out))
	case *lir.PackedConv1x1:
		gemm.Conv1x1Packed(pool, f32(op.Out), f32(op.X), f32(op.W), int(op.N), int(op.C), int(op.HW), int(op.O), epilogue(op.Epilogue, bufs))
	case *lir.Conv2D:
		conv.Conv2D(pool, f32(op.Out), f32(op.X), f32(op.W), conv.GeomOf(op.Geom), epilogue(op.Epilogue, bufs))
	case *lir.TapConv2D:
		conv.TapConv2D(pool, f32(op.Out), f32(op.X), f32(op.W), conv.GeomOf(op.Geom), int(lir.TapConvOP(op.Geom.O)), lir.TapConvPanel, epilogue(op.Epilogue, bufs))
	case *lir.DepthwiseNHWC:
		// conv2d's geometry and epilogue over channels-last x and out, the
		// weights tap-major [9, C].
		geom := conv.GeomOf(op.Geom)
		if !conv.DepthwiseNHWCApplies(geom) {
			return fmt.Errorf("malformed %s step: geometry %+v", op.Kind(), geom)
		}
		conv.DepthwiseNHWC(pool, f32(op.Out), f32(op.X), f32(op.W), geom, epilogue(op.Epilogue, bufs))
	case *lir.WinogradInput:
		winograd.Input(pool, f32(op.V), f32(op.X), conv.GeomOf(op.Geom), int(op.Tile), winogradPart(op.Part))
	case *lir.WinogradProduct:
		winograd.Product(pool, f32(op.M), f32(op.V), f32(op.U), int(op.P), int(op.C), int(op.O), int(op.TP), int(op.Stride()))
	case *lir.WinogradOutput:
		winograd.Output(pool, f32(op.Out), f32(op.M), conv.GeomOf(op.Geom), int(op.Tile), epilogue(op.Epilogue, bufs), winogradPart(op.Part))
	case *lir.Relayout:
		n, c, hw := int(op.N), int(op.C), int(op.HW)
		if op.ToNHWC {
			conv.ToNHWC(pool, f32(op.Dst), f32(op.Src), n, c, hw)
		} else {
			conv.ToNCHW(pool, f32(op.Dst), f32(op.Src), n, c, hw)
		}
	case *lir.Pool2D:
		geom := poolGeom(op.Geom)
		if op.Max {
			reduce.MaxPool2D(pool, f32(op.Out), f32(op.X), geom)
		} else {
			reduce.AvgPool2D(pool, f32(op.Out), f32(op.X), geom, op.CountIncludePad)
		}
	case *lir.Reduce:
		if op.DType == tensor.F32 {
			reduce.Reduce(pool, f32(op.Out), f32(op.X), ints(op.Shape), ints(op.Axes), op.Fn)
		} else {
			reduceGeneric(bufs[op.Out], bufs[op.X], op.DType, op.Shape, op.Axes, op.Fn)
		}
	case *lir.ArgReduce:
		outer, axis, inner := int(op.Outer), int(op.Axis), int(op.Inner)
		if op.DType == tensor.F32 {
			reduce.ArgReduce(pool, tensor.AsI64(bufs[op.Out]), f32(op.X), outer, axis, inner, op.Max)
		} else {
			argReduceGeneric(tensor.AsI64(bufs[op.Out]), bufs[op.X], op.DType, outer, axis, inner, op.Max)
		}
	case *lir.TopK:
		topK(pool, op, bufs)
	case *lir.Softmax:
		norm.Softmax(pool, f32(op.Out), f32(op.X), int(op.Outer), int(op.Axis), int(op.Inner), op.Log)
	case *lir.LayerNorm:
		scale, bias := optF32(op.Scale, bufs), optF32(op.Bias, bufs)
		rows, cols, eps := int(op.Rows), int(op.Cols), float32(op.Eps)
		if op.RMS {
			norm.RMSNorm(pool, f32(op.Out), f32(op.X), scale, rows, cols, eps)
		} else {
			norm.LayerNorm(pool, f32(op.Out), f32(op.X), scale, bias, rows, cols, eps)
		}
	case *lir.AddLayerNorm:
		norm.AddLayerNorm(pool, f32(op.Out), optF32(op.Sum, bufs), f32(op.A), f32(op.B), optF32(op.Scale, bufs), optF32(op.Bias, bufs),
			int(op.Rows), int(op.Cols), float32(op.Eps))
	case *lir.Attention:
		hasMask := op.Mask != lir.NoBuf
		attention.Attention(pool, f32(op.Out), f32(op.Q), f32(op.K), f32(op.V), optF32(op.Mask, bufs), attnGeom(&op.Geom, hasMask))
	case *lir.Memcpy:
		copy(bufs[op.Dst], bufs[op.Src])
	case *lir.Copy:
		// The dims on the stack: an unrolled recurrence runs thousands of
		// copies of a few elements each.
		var sh, ds, ss [8]int
		return stridedCopy(pool, bufs[op.Dst], bufs[op.Src], int(op.ElemSize), int(op.DstOff), int(op.SrcOff),
			intsIn(sh[:0], op.Shape), intsIn(ds[:0], op.DstStrides), intsIn(ss[:0], op.SrcStrides))
	case *lir.Fill:
		fill(bufs[op.Dst], op.DType, op.Value)
	case *lir.Gather:
		return runGather(pool, op, bufs)
	case *lir.Scatter:
		return runScatter(op, bufs)
	case *lir.Iota:
		v := make([]float64, 1)
		for i := int64(0); i < op.N; i++ {
			v[0] = float64(i)
			store(bufs[op.Out], op.DType, i, v)
		}
	default:
		return fmt.Errorf("operation %q does not run on the CPU (artifact built for another target, or by another rlxc version: rebuild it with this release)", s.Kind())
	}
	return nil
}

// optF32 is an optional operand's floats, nil when absent.
func optF32(b lir.Buf, bufs [][]byte) []float32 {
	if b == lir.NoBuf {
		return nil
	}
	return tensor.AsF32(bufs[b])
}

// indices reads a gather's or scatter's indices as int64.
func indices(b []byte, dt tensor.DType) []int64 {
	if dt != tensor.I32 {
		return tensor.AsI64(b)
	}
	var idx []int64
	for _, v := range tensor.AsI32(b) {
		idx = append(idx, int64(v))
	}
	return idx
}

// runScatter dispatches data.Scatter on the element size.
func runScatter(op *lir.Scatter, bufs [][]byte) error {
	n, m, size := int(op.N), int(op.M), int(op.ElemSize)
	out, upd := bufs[op.Out][:n*size], bufs[op.Upd][:m*size]
	idx := indices(bufs[op.Idx], op.IdxDType)[:m]
	switch size {
	case 1:
		return data.Scatter(out, upd, idx)
	case 2:
		return data.Scatter(tensor.AsU16(out), tensor.AsU16(upd), idx)
	case 4:
		return data.Scatter(tensor.AsU32(out), tensor.AsU32(upd), idx)
	case 8:
		return data.Scatter(tensor.AsU64(out), tensor.AsU64(upd), idx)
	}
	return fmt.Errorf("scatter of %d-byte elements", size)
}

func runGather(pool *parallel.Pool, op *lir.Gather, bufs [][]byte) error {
	outer, axisLen, inner, size := int(op.Outer), int(op.AxisLen), int(op.Inner), int(op.ElemSize)
	x, out := bufs[op.X], bufs[op.Out]
	idx := indices(bufs[op.Idx], op.IdxDType)
	switch size {
	case 1:
		return data.Gather(pool, out, x, outer, axisLen, inner, idx)
	case 2:
		return data.Gather(pool, tensor.AsU16(out), tensor.AsU16(x), outer, axisLen, inner, idx)
	case 4:
		return data.Gather(pool, tensor.AsU32(out), tensor.AsU32(x), outer, axisLen, inner, idx)
	case 8:
		return data.Gather(pool, tensor.AsU64(out), tensor.AsU64(x), outer, axisLen, inner, idx)
	}
	return fmt.Errorf("gather of %d-byte elements", size)
}

// stridedCopy dispatches the generic copy on the element size.
func stridedCopy(pool *parallel.Pool, dst, src []byte, size, dstOff, srcOff int, shape, dstStrides, srcStrides []int) error {
	switch size {
	case 1:
		data.Copy(pool, dst, dstOff, dstStrides, src, srcOff, srcStrides, shape)
	case 2:
		data.Copy(pool, tensor.AsU16(dst), dstOff, dstStrides, tensor.AsU16(src), srcOff, srcStrides, shape)
	case 4:
		data.Copy(pool, tensor.AsU32(dst), dstOff, dstStrides, tensor.AsU32(src), srcOff, srcStrides, shape)
	case 8:
		data.Copy(pool, tensor.AsU64(dst), dstOff, dstStrides, tensor.AsU64(src), srcOff, srcStrides, shape)
	default:
		return fmt.Errorf("copy of %d-byte elements", size)
	}
	return nil
}

// reduceGeneric reduces non-f32 tensors (integer sums, say) in float64.
func reduceGeneric(out, x []byte, dt tensor.DType, shape, axes []int64, kind lir.ReduceFn) {
	reduced := map[int]bool{}
	for _, a := range axes {
		reduced[int(a)] = true
	}
	var keptShape []int64
	for i, d := range shape {
		if !reduced[i] {
			keptShape = append(keptShape, d)
		}
	}
	nOut := tensor.NumElements(keptShape)
	acc := make([]float64, nOut)
	count := make([]int64, nOut)
	idx := make([]int64, len(shape))
	total := tensor.NumElements(shape)
	for e := int64(0); e < total; e++ {
		r := e
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = r % shape[d]
			r /= shape[d]
		}
		o := int64(0)
		for d := range shape {
			if !reduced[d] {
				o = o*shape[d] + idx[d]
			}
		}
		v := elemAt(x, dt, e)
		switch {
		case count[o] == 0:
			acc[o] = v
		case kind == lir.ReduceSum || kind == lir.ReduceMean:
			acc[o] += v
		case kind == lir.ReduceMax:
			acc[o] = math.Max(acc[o], v)
		case kind == lir.ReduceMin:
			acc[o] = math.Min(acc[o], v)
		case kind == lir.ReduceProd:
			acc[o] *= v
		}
		count[o]++
	}
	for o := range acc {
		if count[o] == 0 {
			acc[o] = emptyReduce(kind)
		} else if kind == lir.ReduceMean {
			acc[o] /= float64(count[o])
		}
	}
	store(out, dt, 0, acc)
}

// emptyReduce is a reduction's value over an empty set.
func emptyReduce(kind lir.ReduceFn) float64 {
	switch kind {
	case lir.ReduceMean:
		return math.NaN()
	case lir.ReduceMax:
		return math.Inf(-1)
	case lir.ReduceMin:
		return math.Inf(1)
	case lir.ReduceProd:
		return 1
	}
	return 0
}

func argReduceGeneric(out []int64, x []byte, dt tensor.DType, outer, axis, inner int, isMax bool) {
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			best, bi := 0.0, 0
			for a := 0; a < axis; a++ {
				v := elemAt(x, dt, int64((o*axis+a)*inner+in))
				if a == 0 || isMax && v > best || !isMax && v < best {
					best, bi = v, a
				}
			}
			out[o*inner+in] = int64(bi)
		}
	}
}

// topK runs a TopK step: f32, i64 and i32 in place; any other dtype
// through exact float64 copies, its values then copied as bytes by index.
func topK(pool *parallel.Pool, op *lir.TopK, bufs [][]byte) {
	outer, axis, inner, k := int(op.Outer), int(op.Axis), int(op.Inner), int(op.K)
	idx := tensor.AsI64(bufs[op.Indices])
	switch op.DType {
	case tensor.F32:
		reduce.TopK(pool, tensor.AsF32(bufs[op.Values]), idx, tensor.AsF32(bufs[op.X]), outer, axis, inner, k, op.Largest)
	case tensor.I64:
		reduce.TopK(pool, tensor.AsI64(bufs[op.Values]), idx, tensor.AsI64(bufs[op.X]), outer, axis, inner, k, op.Largest)
	case tensor.I32:
		reduce.TopK(pool, tensor.AsI32(bufs[op.Values]), idx, tensor.AsI32(bufs[op.X]), outer, axis, inner, k, op.Largest)
	default:
		n := outer * axis * inner
		x := make([]float64, n)
		for e := range x {
			x[e] = elemAt(bufs[op.X], op.DType, int64(e))
		}
		reduce.TopK(pool, make([]float64, outer*k*inner), idx, x, outer, axis, inner, k, op.Largest)
		size := op.DType.Size()
		src, dst := bufs[op.X], bufs[op.Values]
		for o := range outer {
			for r := range k {
				for in := range inner {
					out := (o*k+r)*inner + in
					from := (o*axis+int(idx[out]))*inner + in
					copy(dst[out*size:(out+1)*size], src[from*size:(from+1)*size])
				}
			}
		}
	}
}

// fill sets every element of dst to v: the first element's bytes, then
// copies of what is filled so far, doubling: at memmove speed, where a
// store per element was an order of magnitude slower. Zeros by clear.
func fill(dst []byte, dt tensor.DType, v float64) {
	size := max(1, dt.Size())
	n := len(dst) / size * size
	if n == 0 {
		return
	}
	store(dst, dt, 0, []float64{v})
	if v == 0 && !math.Signbit(v) {
		clear(dst[:n])
		return
	}
	for k := size; k < n; k *= 2 {
		copy(dst[k:n], dst[:k])
	}
}

func winogradPart(r lir.TileRange) winograd.Part {
	return winograd.Part{T0: int(r.T0), T1: int(r.T1), LD: int(r.LD)}
}
