package onnx

import (
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// QDQ groups.
//
// ONNX Runtime's static quantizer writes QDQ models by default: float
// operators between DequantizeLinear and QuantizeLinear, with the weights
// and bias dequantized initializers. ONNX Runtime runs each group around
// a Conv or MatMul as its integer operator (QLinearConv, QLinearMatMul),
// and so does fuseQDQ, which rewrites such a group into that node before
// import: QuantizeLinear(Conv(DQ(x), DQ(w)[, DQ(b)])) where the
// convolution's result has no other reader, x and the result quantized
// per tensor, the weights an initializer quantized per tensor or per
// output channel, the bias (if any) int32 with no zero point and, element
// for element, the product of the input's and the weights' scales (as
// the quantizer writes it: the integer bias then adds as it is), every
// scale and zero point an initializer. MatMul the same, its weights per
// tensor or per column. Then the product sums integers and requantizes
// with the one multiplier a_scale·b_scale/y_scale, as ONNX Runtime does
// (the float group rounds the dequantized product, then divides: one
// quantum apart at some outputs), and runs as an integer product where
// the CPU has one (docs/native.md). The DequantizeLinear nodes stay; what
// nothing else reads is dead code.

// fuseQDQ returns g's nodes with the QDQ groups around Conv and MatMul
// rewritten into QLinearConv and QLinearMatMul nodes, and the zero points
// it adds where a group has none (initializers by name; nil when it
// rewrote nothing).
func fuseQDQ(g *onnxpb.Graph, consts map[string]*tensor.Tensor) ([]*onnxpb.Node, map[string]*tensor.Tensor) {
	producer := map[string]*onnxpb.Node{}
	readers := map[string]int{}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			producer[o] = n
		}
		for _, in := range n.Inputs {
			readers[in]++
		}
	}
	for _, o := range g.Outputs {
		readers[o.Name]++
	}
	var added map[string]*tensor.Tensor
	replaced := map[*onnxpb.Node]*onnxpb.Node{} // a QuantizeLinear by its fused node
	dropped := map[*onnxpb.Node]bool{}          // the Conv or MatMul it absorbed
	for _, q := range g.Nodes {
		if q.OpType != "QuantizeLinear" || len(q.Inputs) < 2 || len(q.Outputs) != 1 || !plainQDQ(q) {
			continue
		}
		p := producer[q.Inputs[0]]
		if p == nil || p.OpType != "Conv" && p.OpType != "MatMul" && p.OpType != "Gemm" || len(p.Outputs) != 1 || readers[p.Outputs[0]] != 1 || len(p.Inputs) < 2 {
			continue
		}
		gemm := p.OpType == "Gemm"
		transB := gemm && attrInt(p, "transB", 0) != 0
		if gemm && (attrFloat(p, "alpha", 1) != 1 || attrFloat(p, "beta", 1) != 1 || attrInt(p, "transA", 0) != 0) {
			continue
		}
		dx, dw := dequantizer(producer, p.Inputs[0]), dequantizer(producer, p.Inputs[1])
		if dx == nil || dw == nil {
			continue
		}
		xs, ok1 := scalarConst(consts, dx.Inputs[1])
		ys, ok2 := scalarConst(consts, q.Inputs[1])
		wq, ws := consts[dw.Inputs[0]], consts[dw.Inputs[1]]
		if !ok1 || !ok2 || wq == nil || ws == nil || ws.DType != tensor.F32 || ys == 0 {
			continue
		}
		// the weights' scale per tensor, or along the output channels
		// (Conv: axis 0) or columns (MatMul: axis 1 of [K, N]; Gemm the
		// same, or axis 0 of [N, K] where transB)
		axis := int64(0)
		if p.OpType == "MatMul" || gemm && !transB {
			axis = 1
		}
		if int64(len(wq.Shape)) <= axis || gemm && len(wq.Shape) != 2 || ws.Len() != 1 && (len(wq.Shape) != 2 && p.OpType == "MatMul" || normAxis(attrInt(dw, "axis", 1), len(wq.Shape)) != axis || int64(ws.Len()) != wq.Shape[axis]) {
			continue
		}
		zx, okx := zeroPoint(consts, dx, inputType(g, consts, dx.Inputs[0]))
		zw, okw := zeroPoint(consts, dw, wq.DType)
		zy, oky := zeroPoint(consts, q, quantizeType(q, consts))
		if !okx || !okw || !oky {
			continue
		}
		inputs := []string{dx.Inputs[0], dx.Inputs[1], zx.name, dw.Inputs[0], dw.Inputs[1], zw.name, q.Inputs[1], zy.name}
		bq := ""
		if p.OpType != "MatMul" && len(p.Inputs) > 2 && p.Inputs[2] != "" {
			var ok bool
			if bq, ok = convBias(producer, consts, p.Inputs[2], xs, ws); !ok || gemm && consts[bq].Shape[0] != wq.Shape[axis] {
				continue
			}
		}
		switch {
		case gemm:
			// QGemm's order: C before y's scale and zero point
			inputs = append(inputs[:6], bq, q.Inputs[1], zy.name)
		case bq != "":
			inputs = append(inputs, bq)
		}
		for _, z := range []zeroName{zx, zw, zy} {
			if z.t != nil {
				if added == nil {
					added = map[string]*tensor.Tensor{}
				}
				added[z.name] = z.t
			}
		}
		fused := &onnxpb.Node{Name: q.Name, OpType: "QLinearConv", Inputs: inputs, Outputs: q.Outputs, Attrs: p.Attrs}
		switch p.OpType {
		case "MatMul":
			fused.OpType = "QLinearMatMul"
		case "Gemm":
			fused.OpType, fused.Domain = "QGemm", msDomain
			fused.Attrs = nil
			if transB {
				fused.Attrs = []*onnxpb.Attr{{Name: "transB", Type: 2, I: 1}}
			}
		}
		replaced[q] = fused
		dropped[p] = true
	}
	if len(replaced) == 0 {
		return g.Nodes, nil
	}
	if added == nil {
		added = map[string]*tensor.Tensor{}
	}
	var out []*onnxpb.Node
	for _, n := range g.Nodes {
		switch {
		case dropped[n]:
		case replaced[n] != nil:
			out = append(out, replaced[n])
		default:
			out = append(out, n)
		}
	}
	return out, added
}

// plainQDQ reports a QuantizeLinear or DequantizeLinear without opset
// 21's blocks, output dtype or saturation attributes.
func plainQDQ(n *onnxpb.Node) bool {
	return n.Attr("block_size") == nil && n.Attr("output_dtype") == nil && n.Attr("saturate") == nil
}

// dequantizer is the DequantizeLinear computing name, nil if another node
// does.
func dequantizer(producer map[string]*onnxpb.Node, name string) *onnxpb.Node {
	d := producer[name]
	if d == nil || d.OpType != "DequantizeLinear" || len(d.Inputs) < 2 || !plainQDQ(d) {
		return nil
	}
	return d
}

// scalarConst is the one f32 value of initializer name.
func scalarConst(consts map[string]*tensor.Tensor, name string) (float32, bool) {
	t := consts[name]
	if t == nil || t.DType != tensor.F32 || t.Len() != 1 {
		return 0, false
	}
	return t.F32()[0], true
}

// normAxis is axis counted from the front of a rank-r tensor.
func normAxis(axis int64, r int) int64 {
	if axis < 0 {
		axis += int64(r)
	}
	return axis
}

// zeroName is a group's zero point: an initializer's name, and its data
// where fuseQDQ makes it (the node has none).
type zeroName struct {
	name string
	t    *tensor.Tensor
}

// zeroPoint is node n's zero point (input 2): its initializer, or a new
// zero of dtype dt where n has none; false where it is not an
// initializer or dt is not 8-bit.
func zeroPoint(consts map[string]*tensor.Tensor, n *onnxpb.Node, dt tensor.DType) (zeroName, bool) {
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		z := consts[n.Inputs[2]]
		if z == nil || z.DType != tensor.U8 && z.DType != tensor.I8 {
			return zeroName{}, false
		}
		return zeroName{name: n.Inputs[2]}, true
	}
	if dt != tensor.U8 && dt != tensor.I8 {
		return zeroName{}, false
	}
	name := n.Outputs[0] + "_qdq_zero_point"
	return zeroName{name: name, t: tensor.New(dt)}, true
}

// inputType is the dtype of value name where the graph declares it (a
// graph input) or an initializer holds it; InvalidDType elsewhere (the
// group then needs its zero point, which carries the dtype).
func inputType(g *onnxpb.Graph, consts map[string]*tensor.Tensor, name string) tensor.DType {
	if t := consts[name]; t != nil {
		return t.DType
	}
	for _, in := range g.Inputs {
		if in.Name == name {
			if dt, err := dtypeOf(in.ElemType); err == nil {
				return dt
			}
		}
	}
	return tensor.InvalidDType
}

// quantizeType is the dtype QuantizeLinear q produces: its zero point's,
// uint8 without one.
func quantizeType(q *onnxpb.Node, consts map[string]*tensor.Tensor) tensor.DType {
	if len(q.Inputs) > 2 && q.Inputs[2] != "" {
		if z := consts[q.Inputs[2]]; z != nil {
			return z.DType
		}
		return tensor.InvalidDType
	}
	return tensor.U8
}

// convBias is the int32 bias a Conv's dequantized bias name holds, where
// its scale is the input's times the weights' element for element (as
// float32 multiplies them) and it has no zero point.
func convBias(producer map[string]*onnxpb.Node, consts map[string]*tensor.Tensor, name string, xs float32, ws *tensor.Tensor) (string, bool) {
	d := dequantizer(producer, name)
	if d == nil {
		return "", false
	}
	if len(d.Inputs) > 2 && d.Inputs[2] != "" {
		if z := consts[d.Inputs[2]]; z == nil || z.DType != tensor.I32 || !allZero(z) {
			return "", false
		}
	}
	bq, bs := consts[d.Inputs[0]], consts[d.Inputs[1]]
	if bq == nil || bq.DType != tensor.I32 || bs == nil || bs.DType != tensor.F32 || len(bq.Shape) != 1 {
		return "", false
	}
	o := int(bq.Shape[0])
	w, s := ws.F32(), bs.F32()
	if len(s) != 1 && len(s) != o || len(w) != 1 && len(w) != o {
		return "", false
	}
	for i := range o {
		if s[min(i, len(s)-1)] != xs*w[min(i, len(w)-1)] {
			return "", false
		}
	}
	return d.Inputs[0], true
}

func allZero(t *tensor.Tensor) bool {
	for _, b := range t.Data {
		if b != 0 {
			return false
		}
	}
	return true
}
