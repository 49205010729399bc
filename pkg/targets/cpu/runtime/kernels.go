package runtime

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels"
	"github.com/rlx-project/rlx/pkg/tensor"
)

func ints(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func need(s *artifact.Step, nInts, nArgs int) error {
	if len(s.Ints) < nInts || len(s.Args) < nArgs {
		return fmt.Errorf("malformed %s step: %d ints and %d buffers, want %d and %d", s.Kernel, len(s.Ints), len(s.Args), nInts, nArgs)
	}
	return nil
}

// epilogue decodes [hasBias, hasResidual, act] and [alpha, min, max]; the
// bias and residual are the buffers after the first two operands.
func epilogue(s *artifact.Step, flags []int64, bufs [][]byte, first int) (kernels.Epilogue, int, error) {
	var ep kernels.Epilogue
	if len(flags) < 3 || len(s.Floats) < 3 {
		return ep, 0, fmt.Errorf("malformed %s epilogue", s.Kernel)
	}
	i := first
	if flags[0] != 0 {
		ep.Bias = tensor.AsF32(bufs[s.Args[i]])
		i++
	}
	if flags[1] != 0 {
		ep.Residual = tensor.AsF32(bufs[s.Args[i]])
		i++
	}
	ep.Act = kernels.Activation(flags[2])
	ep.Alpha, ep.Min, ep.Max = float32(s.Floats[0]), float32(s.Floats[1]), float32(s.Floats[2])
	return ep, i, nil
}

// convGeom decodes the 18 geometry ints of a conv2d or dwconv_nhwc_taps step.
func convGeom(g []int64) kernels.ConvGeom {
	return kernels.ConvGeom{N: int(g[0]), C: int(g[1]), H: int(g[2]), W: int(g[3]), O: int(g[4]), KH: int(g[5]), KW: int(g[6]),
		StrideH: int(g[7]), StrideW: int(g[8]), PadT: int(g[9]), PadL: int(g[10]), PadB: int(g[11]), PadR: int(g[12]),
		DilH: int(g[13]), DilW: int(g[14]), Groups: int(g[15]), OH: int(g[16]), OW: int(g[17])}
}

// run launches one step.
func run(pool *kernels.Pool, s *artifact.Step, bufs [][]byte) error {
	arg := func(i int) []byte { return bufs[s.Args[i]] }
	f32 := func(i int) []float32 { return tensor.AsF32(arg(i)) }
	switch s.Kernel {
	case "ew":
		return runElementwise(pool, s, bufs)
	case "matmul":
		if err := need(s, 3, 3); err != nil {
			return err
		}
		ep, o, err := epilogue(s, s.Ints, bufs, 2)
		if err != nil {
			return err
		}
		kernels.BatchMatMul(pool, f32(o), f32(0), ints(s.Shapes[0]), f32(1), ints(s.Shapes[1]), ep)
	case "matmul_packed":
		// Ints: rows, N, K, then the epilogue; Args: a, packed B, [bias], [residual], out.
		if err := need(s, 6, 3); err != nil {
			return err
		}
		ep, o, err := epilogue(s, s.Ints[3:], bufs, 2)
		if err != nil {
			return err
		}
		m, n, k := int(s.Ints[0]), int(s.Ints[1]), int(s.Ints[2])
		kernels.GemmPacked(pool, m, n, k, f32(0), k, f32(1), f32(o), n, ep)
	case "conv1x1_packed":
		// Ints: N, C, HW, O, then the epilogue; Args: x, packed Wᵀ, [bias], [residual], out.
		if err := need(s, 7, 3); err != nil {
			return err
		}
		ep, o, err := epilogue(s, s.Ints[4:], bufs, 2)
		if err != nil {
			return err
		}
		v := ints(s.Ints[:4])
		kernels.Conv1x1Packed(pool, f32(o), f32(0), f32(1), v[0], v[1], v[2], v[3], ep)
	case "conv2d":
		if err := need(s, 21, 3); err != nil {
			return err
		}
		g := s.Ints
		geom := convGeom(g)
		ep, o, err := epilogue(s, g[18:], bufs, 2)
		if err != nil {
			return err
		}
		kernels.Conv2D(pool, f32(o), f32(0), f32(1), geom, ep)
	case "dwconv_nhwc_taps":
		// conv2d's geometry and epilogue over channels-last x and out, the
		// weights tap-major [9, C].
		if err := need(s, 21, 3); err != nil {
			return err
		}
		g := s.Ints
		geom := convGeom(g)
		if !kernels.DepthwiseNHWCApplies(geom) {
			return fmt.Errorf("malformed dwconv_nhwc_taps step: geometry %+v", geom)
		}
		ep, o, err := epilogue(s, g[18:], bufs, 2)
		if err != nil {
			return err
		}
		kernels.DepthwiseNHWC(pool, f32(o), f32(0), f32(1), geom, ep)
	case "nchw_to_nhwc", "nhwc_to_nchw":
		// Ints: N, C, H·W; Args: src, dst.
		if err := need(s, 3, 2); err != nil {
			return err
		}
		n, c, hw := int(s.Ints[0]), int(s.Ints[1]), int(s.Ints[2])
		if s.Kernel == "nchw_to_nhwc" {
			kernels.ToNHWC(pool, f32(1), f32(0), n, c, hw)
		} else {
			kernels.ToNCHW(pool, f32(1), f32(0), n, c, hw)
		}
	case "maxpool2d", "avgpool2d":
		if err := need(s, 17, 2); err != nil {
			return err
		}
		g := s.Ints
		geom := kernels.PoolGeom{N: int(g[0]), C: int(g[1]), H: int(g[2]), W: int(g[3]), KH: int(g[4]), KW: int(g[5]),
			StrideH: int(g[6]), StrideW: int(g[7]), PadT: int(g[8]), PadL: int(g[9]), PadB: int(g[10]), PadR: int(g[11]),
			DilH: int(g[12]), DilW: int(g[13]), OH: int(g[14]), OW: int(g[15])}
		if s.Kernel == "maxpool2d" {
			kernels.MaxPool2D(pool, f32(1), f32(0), geom)
		} else {
			kernels.AvgPool2D(pool, f32(1), f32(0), geom, g[16] != 0)
		}
	case "reduce":
		if err := need(s, 2, 2); err != nil {
			return err
		}
		if len(s.Shapes) < 2 {
			return fmt.Errorf("malformed reduce step")
		}
		if tensor.DType(s.Ints[1]) == tensor.F32 {
			kernels.Reduce(pool, f32(1), f32(0), ints(s.Shapes[0]), ints(s.Shapes[1]), kernels.ReduceKind(s.Ints[0]))
		} else {
			reduceGeneric(arg(1), arg(0), tensor.DType(s.Ints[1]), s.Shapes[0], s.Shapes[1], s.Ints[0])
		}
	case "argreduce":
		if err := need(s, 5, 2); err != nil {
			return err
		}
		outer, axis, inner := int(s.Ints[1]), int(s.Ints[2]), int(s.Ints[3])
		if tensor.DType(s.Ints[4]) == tensor.F32 {
			kernels.ArgReduce(pool, tensor.AsI64(arg(1)), f32(0), outer, axis, inner, s.Ints[0] != 0)
		} else {
			argReduceGeneric(tensor.AsI64(arg(1)), arg(0), tensor.DType(s.Ints[4]), outer, axis, inner, s.Ints[0] != 0)
		}
	case "softmax":
		if err := need(s, 4, 2); err != nil {
			return err
		}
		kernels.Softmax(pool, f32(1), f32(0), int(s.Ints[0]), int(s.Ints[1]), int(s.Ints[2]), s.Ints[3] != 0)
	case "layernorm", "add_layernorm":
		return runLayerNorm(pool, s, bufs)
	case "attention", "attention_strided":
		return runAttention(pool, s, bufs)
	case "memcpy":
		copy(arg(1), arg(0))
	case "copy":
		if err := need(s, 3, 2); err != nil {
			return err
		}
		if len(s.Shapes) < 3 {
			return fmt.Errorf("malformed copy step")
		}
		return stridedCopy(arg(1), arg(0), int(s.Ints[0]), int(s.Ints[1]), int(s.Ints[2]), ints(s.Shapes[0]), ints(s.Shapes[1]), ints(s.Shapes[2]))
	case "fill":
		if err := need(s, 1, 1); err != nil {
			return err
		}
		one := make([]float64, 1)
		one[0] = s.Floats[0]
		dt := tensor.DType(s.Ints[0])
		n := len(arg(0)) / max(1, dt.Size())
		for i := 0; i < n; i++ {
			store(arg(0), dt, int64(i), one)
		}
	case "gather":
		if err := need(s, 5, 3); err != nil {
			return err
		}
		return runGather(pool, s, bufs)
	case "iota":
		if err := need(s, 2, 1); err != nil {
			return err
		}
		dt := tensor.DType(s.Ints[1])
		v := make([]float64, 1)
		for i := int64(0); i < s.Ints[0]; i++ {
			v[0] = float64(i)
			store(arg(0), dt, i, v)
		}
	default:
		return fmt.Errorf("unknown kernel %q (artifact built by another rlxc version: rebuild it with this release)", s.Kernel)
	}
	return nil
}

func runLayerNorm(pool *kernels.Pool, s *artifact.Step, bufs [][]byte) error {
	if err := need(s, 5, 2); err != nil {
		return err
	}
	rows, cols := int(s.Ints[0]), int(s.Ints[1])
	hasS, hasB, rms := s.Ints[2] != 0, s.Ints[3] != 0, s.Ints[4] != 0
	eps := float32(s.Floats[0])
	f32 := func(i int) []float32 { return tensor.AsF32(bufs[s.Args[i]]) }
	i := 1
	if s.Kernel == "add_layernorm" {
		i = 2
	}
	var scale, bias []float32
	if hasS {
		scale = f32(i)
		i++
	}
	if hasB {
		bias = f32(i)
		i++
	}
	if s.Kernel == "add_layernorm" {
		if rms {
			return fmt.Errorf("add_layernorm with rms is not supported")
		}
		var sum []float32
		if i+1 < len(s.Args) {
			sum = f32(i + 1)
		}
		kernels.AddLayerNorm(pool, f32(i), sum, f32(0), f32(1), scale, bias, rows, cols, eps)
		return nil
	}
	if rms {
		kernels.RMSNorm(pool, f32(i), f32(0), scale, rows, cols, eps)
	} else {
		kernels.LayerNorm(pool, f32(i), f32(0), scale, bias, rows, cols, eps)
	}
	return nil
}

func runAttention(pool *kernels.Pool, s *artifact.Step, bufs [][]byte) error {
	if err := need(s, 8, 4); err != nil {
		return err
	}
	if len(s.Shapes) < 5 || len(s.Floats) < 1 {
		return fmt.Errorf("malformed attention step")
	}
	g := kernels.AttnGeom{Batch: ints(s.Shapes[0]), QStrides: ints(s.Shapes[1]), KStrides: ints(s.Shapes[2]), VStrides: ints(s.Shapes[3]),
		Sq: int(s.Ints[0]), Sk: int(s.Ints[1]), D: int(s.Ints[2]), Dv: int(s.Ints[3]), Causal: s.Ints[4] != 0,
		MaskRowStride: int(s.Ints[5]), MaskColStride: int(s.Ints[6]), Scale: float32(s.Floats[0])}
	if s.Kernel == "attention_strided" {
		// Row strides of q, k and v (0: contiguous rows).
		if err := need(s, 11, 4); err != nil {
			return err
		}
		g.QRow, g.KRow, g.VRow = int(s.Ints[8]), int(s.Ints[9]), int(s.Ints[10])
	}
	f32 := func(i int) []float32 { return tensor.AsF32(bufs[s.Args[i]]) }
	var mask []float32
	o := 3
	if s.Ints[7] != 0 {
		g.MaskStrides = ints(s.Shapes[4])
		mask = f32(3)
		o = 4
	}
	kernels.Attention(pool, f32(o), f32(0), f32(1), f32(2), mask, g)
	return nil
}

func runGather(pool *kernels.Pool, s *artifact.Step, bufs [][]byte) error {
	outer, axisLen, inner, size := int(s.Ints[0]), int(s.Ints[1]), int(s.Ints[2]), int(s.Ints[3])
	x, idxB, out := bufs[s.Args[0]], bufs[s.Args[1]], bufs[s.Args[2]]
	var idx []int64
	if tensor.DType(s.Ints[4]) == tensor.I32 {
		for _, v := range tensor.AsI32(idxB) {
			idx = append(idx, int64(v))
		}
	} else {
		idx = tensor.AsI64(idxB)
	}
	switch size {
	case 1:
		return kernels.Gather(pool, out, x, outer, axisLen, inner, idx)
	case 2:
		return kernels.Gather(pool, tensor.AsU16(out), tensor.AsU16(x), outer, axisLen, inner, idx)
	case 4:
		return kernels.Gather(pool, tensor.AsU32(out), tensor.AsU32(x), outer, axisLen, inner, idx)
	case 8:
		return kernels.Gather(pool, tensor.AsU64(out), tensor.AsU64(x), outer, axisLen, inner, idx)
	}
	return fmt.Errorf("gather of %d-byte elements", size)
}

// stridedCopy dispatches the generic copy on the element size.
func stridedCopy(dst, src []byte, size, dstOff, srcOff int, shape, dstStrides, srcStrides []int) error {
	switch size {
	case 1:
		kernels.Copy(dst, dstOff, dstStrides, src, srcOff, srcStrides, shape)
	case 2:
		kernels.Copy(tensor.AsU16(dst), dstOff, dstStrides, tensor.AsU16(src), srcOff, srcStrides, shape)
	case 4:
		kernels.Copy(tensor.AsU32(dst), dstOff, dstStrides, tensor.AsU32(src), srcOff, srcStrides, shape)
	case 8:
		kernels.Copy(tensor.AsU64(dst), dstOff, dstStrides, tensor.AsU64(src), srcOff, srcStrides, shape)
	default:
		return fmt.Errorf("copy of %d-byte elements", size)
	}
	return nil
}

// reduceGeneric reduces non-f32 tensors (integer sums, say) in float64.
func reduceGeneric(out, x []byte, dt tensor.DType, shape, axes []int64, kind int64) {
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
		case kind == 0 || kind == 1:
			acc[o] += v
		case kind == 2:
			acc[o] = math.Max(acc[o], v)
		case kind == 3:
			acc[o] = math.Min(acc[o], v)
		case kind == 4:
			acc[o] *= v
		}
		count[o]++
	}
	for o := range acc {
		if count[o] == 0 {
			acc[o] = map[int64]float64{0: 0, 1: math.NaN(), 2: math.Inf(-1), 3: math.Inf(1), 4: 1}[kind]
		} else if kind == 1 {
			acc[o] /= float64(count[o])
		}
	}
	store(out, dt, 0, acc)
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
