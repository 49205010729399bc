package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// opCase is one point of the --ops grid: a single-operator ONNX model.
// Its weights and inputs are drawn from a generator seeded by the case's
// index, so every run writes the same files.
type opCase struct {
	Family, Op, Shape, Attrs string
	opset                    int64
	node                     *onnxpb.Node
	pre                      []*onnxpb.Node // nodes before node, whose results it reads
	built                    *onnxpb.Model  // a whole model (--qdq), node naming its outputs
	inits                    []tensorGen
	inputs                   []tensorGen
	outType                  int32   // the output's ONNX element type
	outTypes                 []int32 // per output, where they differ (TopK)
	flop                     float64 // multiply-adds count 2; 0 for memory-bound ops (GB/s)
}

// tensorGen makes an input or an initializer: fixed values (f32 or i64),
// or uniform random floats in [lo, hi), or random integers in [0, imax);
// with dt (u8, i8, i32) integers of that dtype, fixed (i64) or uniform in
// [ilo, ihi].
type tensorGen struct {
	name     string
	dims     []int64
	f32      []float32
	i64      []int64
	lo, hi   float32
	imax     int64 // > 0: random int64 indices
	dt       tensor.DType
	ilo, ihi int64
}

// quantIn is a quantized tensor of dtype dt, uniform over [lo, hi].
func quantIn(name string, dt tensor.DType, lo, hi int64, dims ...int64) tensorGen {
	return tensorGen{name: name, dims: dims, dt: dt, ilo: lo, ihi: hi}
}

// quantConst is a quantized tensor of dtype dt with the given values.
func quantConst(name string, dt tensor.DType, v []int64, dims ...int64) tensorGen {
	return tensorGen{name: name, dims: dims, dt: dt, i64: v}
}

func (g tensorGen) make(rng *rand.Rand) *tensor.Tensor {
	n := tensor.NumElements(g.dims)
	if g.dt == tensor.U8 || g.dt == tensor.I8 || g.dt == tensor.I32 {
		t := tensor.New(g.dt, g.dims...)
		for i := range n {
			v := g.ilo + rng.Int64N(g.ihi-g.ilo+1)
			if g.i64 != nil {
				v = g.i64[i]
			}
			switch g.dt {
			case tensor.I32:
				binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(int32(v)))
			default:
				t.Data[i] = byte(v)
			}
		}
		return t
	}
	switch {
	case g.i64 != nil:
		return tensor.FromI64(g.dims, g.i64)
	case g.imax > 0:
		v := make([]int64, n)
		for i := range v {
			v[i] = rng.Int64N(g.imax)
		}
		return tensor.FromI64(g.dims, v)
	case g.f32 != nil:
		return tensor.FromF32(g.dims, g.f32)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = g.lo + (g.hi-g.lo)*rng.Float32()
	}
	return tensor.FromF32(g.dims, v)
}

func (g tensorGen) onnxType() int32 {
	switch g.dt {
	case tensor.U8:
		return onnxpb.DTUint8
	case tensor.I8:
		return onnxpb.DTInt8
	case tensor.I32:
		return onnxpb.DTInt32
	}
	if g.i64 != nil || g.imax > 0 {
		return onnxpb.DTInt64
	}
	return onnxpb.DTFloat
}

func (g tensorGen) bytes() float64 {
	if g.dt != tensor.InvalidDType {
		return float64(tensor.NumElements(g.dims) * int64(g.dt.Size()))
	}
	return 4 * float64(tensor.NumElements(g.dims)) * float64(1+boolInt(g.onnxType() == onnxpb.DTInt64))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// model writes the case as an ONNX model and its inputs as tensors.
func (c *opCase) model(seed uint64) (*onnxpb.Model, map[string]*tensor.Tensor, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	if c.built != nil {
		ins := map[string]*tensor.Tensor{}
		for _, in := range c.inputs {
			ins[in.name] = in.make(rng)
		}
		return c.built, ins, nil
	}
	g := &onnxpb.Graph{Name: c.Op, Nodes: append(append([]*onnxpb.Node(nil), c.pre...), c.node)}
	for _, it := range c.inits {
		t := it.make(rng)
		g.Initializers = append(g.Initializers, &onnxpb.Tensor{Name: it.name, DataType: it.onnxType(), Dims: it.dims, RawData: rawLE(t)})
	}
	ins := map[string]*tensor.Tensor{}
	for _, in := range c.inputs {
		vi := &onnxpb.ValueInfo{Name: in.name, ElemType: in.onnxType(), HasShape: true}
		for _, d := range in.dims {
			vi.Shape = append(vi.Shape, onnxpb.Dim{Value: d, Known: true})
		}
		g.Inputs = append(g.Inputs, vi)
		ins[in.name] = in.make(rng)
	}
	for i, o := range c.node.Outputs {
		et := c.outType
		if i < len(c.outTypes) {
			et = c.outTypes[i]
		}
		g.Outputs = append(g.Outputs, &onnxpb.ValueInfo{Name: o, ElemType: et})
	}
	return &onnxpb.Model{IRVersion: 8, ProducerName: "rlxbench", Opsets: map[string]int64{"": c.opset}, Graph: g}, ins, nil
}

// rawLE is a tensor's data as ONNX raw_data (little-endian).
func rawLE(t *tensor.Tensor) []byte {
	switch t.DType {
	case tensor.F32:
		v := t.F32()
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	case tensor.U8, tensor.I8, tensor.I32:
		return t.Data // little-endian already
	default: // I64
		v := t.I64()
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		}
		return b
	}
}

// The attribute constructors.
func attrI(name string, v int64) *onnxpb.Attr {
	return &onnxpb.Attr{Name: name, Type: onnxpb.AttrInt, I: v}
}
func attrF(name string, v float32) *onnxpb.Attr {
	return &onnxpb.Attr{Name: name, Type: onnxpb.AttrFloat, F: v}
}
func attrS(name, v string) *onnxpb.Attr {
	return &onnxpb.Attr{Name: name, Type: onnxpb.AttrString, S: []byte(v)}
}
func attrInts(name string, v ...int64) *onnxpb.Attr {
	return &onnxpb.Attr{Name: name, Type: onnxpb.AttrInts, Ints: v}
}

func randIn(name string, lo, hi float32, dims ...int64) tensorGen {
	return tensorGen{name: name, dims: dims, lo: lo, hi: hi}
}

func x(dims ...int64) tensorGen { return randIn("x", -1, 1, dims...) }

func node(op string, inputs []string, attrs ...*onnxpb.Attr) *onnxpb.Node {
	return &onnxpb.Node{Name: op, OpType: op, Inputs: inputs, Outputs: []string{"y"}, Attrs: attrs}
}

func shapeStr(dims ...int64) string {
	var p []string
	for _, d := range dims {
		p = append(p, fmt.Sprint(d))
	}
	return strings.Join(p, "x")
}

// convCase is a Conv with bias: weights scaled by 1/sqrt(fan-in) so the
// outputs stay near 1 in magnitude.
func convCase(n, cin, cout, h, k, stride, dil, groups int64) opCase {
	pad := dil * (k - 1) / 2
	ho := (h+2*pad-dil*(k-1)-1)/stride + 1
	fan := float32(cin / groups * k * k)
	s := 1 / float32(math.Sqrt(float64(fan)))
	attrs := fmt.Sprintf("k%d s%d", k, stride) + dilGroupAttrs(cin, cout, dil, groups)
	return opCase{Family: "conv", Op: "Conv", opset: 17, outType: onnxpb.DTFloat,
		Shape: fmt.Sprintf("%s -> %d", shapeStr(n, cin, h, h), cout), Attrs: attrs,
		node: node("Conv", []string{"x", "w", "b"}, attrInts("kernel_shape", k, k), attrInts("strides", stride, stride),
			attrInts("dilations", dil, dil), attrInts("pads", pad, pad, pad, pad), attrI("group", groups)),
		inits:  []tensorGen{randIn("w", -s, s, cout, cin/groups, k, k), randIn("b", -0.1, 0.1, cout)},
		inputs: []tensorGen{x(n, cin, h, h)},
		flop:   2 * float64(n*cout*ho*ho*(cin/groups)*k*k)}
}

// dilGroupAttrs is a Conv's dilation and groups for the attributes
// column: " d2", " dw" (depthwise), " g32".
func dilGroupAttrs(cin, cout, dil, groups int64) string {
	var a string
	if dil > 1 {
		a = fmt.Sprintf(" d%d", dil)
	}
	switch {
	case groups == cin && groups == cout && groups > 1:
		a += " dw"
	case groups > 1:
		a += fmt.Sprintf(" g%d", groups)
	}
	return a
}

// conv1dCase is a 1-D Conv with bias over [n, cin, l] (audio models'
// feature extractors, depthwise and dilated temporal convolutions).
func conv1dCase(n, cin, cout, l, k, stride, dil, groups, pad int64) opCase {
	lo := (l+2*pad-dil*(k-1)-1)/stride + 1
	s := 1 / float32(math.Sqrt(float64(cin/groups*k)))
	attrs := fmt.Sprintf("1-D k%d s%d p%d", k, stride, pad) + dilGroupAttrs(cin, cout, dil, groups)
	return opCase{Family: "conv", Op: "Conv", opset: 17, outType: onnxpb.DTFloat,
		Shape: fmt.Sprintf("%s -> %d", shapeStr(n, cin, l), cout), Attrs: attrs,
		node: node("Conv", []string{"x", "w", "b"}, attrInts("kernel_shape", k), attrInts("strides", stride),
			attrInts("dilations", dil), attrInts("pads", pad, pad), attrI("group", groups)),
		inits:  []tensorGen{randIn("w", -s, s, cout, cin/groups, k), randIn("b", -0.1, 0.1, cout)},
		inputs: []tensorGen{x(n, cin, l)},
		flop:   2 * float64(n*cout*lo*(cin/groups)*k)}
}

// nhwcCase is two 3x3 Convs with a Relu between over an NHWC tensor as
// tf2onnx writes a Keras model: a Transpose to NCHW before each Conv and
// back after it, the pair between the two Convs cancelling.
func nhwcCase(n, c, h int64) opCase {
	s := 1 / float32(math.Sqrt(float64(c*9)))
	tr := func(name, in, out string, perm ...int64) *onnxpb.Node {
		return &onnxpb.Node{Name: name, OpType: "Transpose", Inputs: []string{in}, Outputs: []string{out}, Attrs: []*onnxpb.Attr{attrInts("perm", perm...)}}
	}
	conv := func(name, in, w, b, out string) *onnxpb.Node {
		return &onnxpb.Node{Name: name, OpType: "Conv", Inputs: []string{in, w, b}, Outputs: []string{out},
			Attrs: []*onnxpb.Attr{attrInts("kernel_shape", 3, 3), attrInts("pads", 1, 1, 1, 1)}}
	}
	return opCase{Family: "conv", Op: "Conv", opset: 17, outType: onnxpb.DTFloat,
		Shape: fmt.Sprintf("%s -> %d", shapeStr(n, h, h, c), c), Attrs: "k3 s1 NHWC x2 (tf2onnx)",
		pre: []*onnxpb.Node{tr("t0", "x", "a0", 0, 3, 1, 2), conv("c0", "a0", "w0", "b0", "a1"), tr("t1", "a1", "a2", 0, 2, 3, 1),
			{Name: "r", OpType: "Relu", Inputs: []string{"a2"}, Outputs: []string{"a3"}},
			tr("t2", "a3", "a4", 0, 3, 1, 2), conv("c1", "a4", "w1", "b1", "a5")},
		node: node("Transpose", []string{"a5"}, attrInts("perm", 0, 2, 3, 1)),
		inits: []tensorGen{randIn("w0", -s, s, c, c, 3, 3), randIn("b0", -0.1, 0.1, c),
			randIn("w1", -s, s, c, c, 3, 3), randIn("b1", -0.1, 0.1, c)},
		inputs: []tensorGen{x(n, h, h, c)},
		flop:   4 * float64(n*c*c*9*h*h)}
}

// siluCase is c (a Conv) followed by SiLU as PyTorch exports nn.SiLU,
// Sigmoid then Mul: Conv-BN-SiLU layers (YOLO, EfficientNet) fold the
// batch norm into the Conv, and the activation becomes the convolution's
// epilogue, which can change which kernel runs it.
func siluCase(c opCase) opCase {
	conv := *c.node
	conv.Outputs = []string{"cv"}
	c.pre = append(append([]*onnxpb.Node(nil), c.pre...), &conv,
		&onnxpb.Node{Name: "Sigmoid", OpType: "Sigmoid", Inputs: []string{"cv"}, Outputs: []string{"sg"}})
	c.node = node("Mul", []string{"cv", "sg"})
	c.Attrs += " +silu"
	return c
}

// patchCase is a patchify convolution with bias (kernel = stride, no
// padding): a ConvNeXt or ViT stem.
func patchCase(n, cin, cout, h, k int64) opCase {
	c := convCase(n, cin, cout, h, k, k, 1, 1)
	ho := h / k
	c.Attrs += " p0"
	c.node = node("Conv", []string{"x", "w", "b"}, attrInts("kernel_shape", k, k), attrInts("strides", k, k),
		attrInts("dilations", 1, 1), attrInts("pads", 0, 0, 0, 0), attrI("group", 1))
	c.flop = 2 * float64(n*cout*ho*ho*cin*k*k)
	return c
}

// rectCase is a stride-1 Conv with bias and a kh×kw kernel padded to
// keep the plane: Inception's factorized 1x7 and 7x1.
func rectCase(n, cin, cout, h, kh, kw int64) opCase {
	c := convCase(n, cin, cout, h, 1, 1, 1, 1)
	s := 1 / float32(math.Sqrt(float64(cin*kh*kw)))
	c.Attrs = fmt.Sprintf("k%dx%d s1", kh, kw)
	c.node = node("Conv", []string{"x", "w", "b"}, attrInts("kernel_shape", kh, kw), attrInts("strides", 1, 1),
		attrInts("dilations", 1, 1), attrInts("pads", kh/2, kw/2, kh/2, kw/2), attrI("group", 1))
	c.inits = []tensorGen{randIn("w", -s, s, cout, cin, kh, kw), randIn("b", -0.1, 0.1, cout)}
	c.flop = 2 * float64(n*cout*h*h*cin*kh*kw)
	return c
}

// convTCase is a ConvTranspose with bias.
func convTCase(cin, cout, h, k, stride, pad, outPad int64) opCase {
	s := 1 / float32(math.Sqrt(float64(cin*k*k/(stride*stride))))
	attrs := []*onnxpb.Attr{attrInts("kernel_shape", k, k), attrInts("strides", stride, stride), attrInts("pads", pad, pad, pad, pad)}
	desc := fmt.Sprintf("k%d s%d p%d", k, stride, pad)
	if outPad > 0 {
		attrs = append(attrs, attrInts("output_padding", outPad, outPad))
		desc += fmt.Sprintf(" op%d", outPad)
	}
	return opCase{Family: "convtranspose", Op: "ConvTranspose", opset: 17, outType: onnxpb.DTFloat,
		Shape: fmt.Sprintf("%s -> %d", shapeStr(1, cin, h, h), cout), Attrs: desc,
		node:   node("ConvTranspose", []string{"x", "w", "b"}, attrs...),
		inits:  []tensorGen{randIn("w", -s, s, cin, cout, k, k), randIn("b", -0.1, 0.1, cout)},
		inputs: []tensorGen{x(1, cin, h, h)},
		flop:   2 * float64(cin*cout*k*k*h*h)}
}

// convT1dCase is a 1-D ConvTranspose with bias over [1, cin, l] (audio
// decoders and vocoders upsample so).
func convT1dCase(cin, cout, l, k, stride, pad int64) opCase {
	s := 1 / float32(math.Sqrt(float64(cin*k/stride)))
	return opCase{Family: "convtranspose", Op: "ConvTranspose", opset: 17, outType: onnxpb.DTFloat,
		Shape: fmt.Sprintf("%s -> %d", shapeStr(1, cin, l), cout), Attrs: fmt.Sprintf("1-D k%d s%d p%d", k, stride, pad),
		node:   node("ConvTranspose", []string{"x", "w", "b"}, attrInts("kernel_shape", k), attrInts("strides", stride), attrInts("pads", pad, pad)),
		inits:  []tensorGen{randIn("w", -s, s, cin, cout, k), randIn("b", -0.1, 0.1, cout)},
		inputs: []tensorGen{x(1, cin, l)},
		flop:   2 * float64(cin*cout*k*l)}
}

func poolCase(op string, c, h, k, stride, pad int64, ceil bool) opCase {
	attrs := []*onnxpb.Attr{attrInts("kernel_shape", k, k), attrInts("strides", stride, stride), attrInts("pads", pad, pad, pad, pad)}
	desc := fmt.Sprintf("%dx%d/%d", k, k, stride)
	if pad > 0 {
		desc += fmt.Sprintf(" p%d", pad)
	}
	if ceil {
		attrs = append(attrs, attrI("ceil_mode", 1))
		desc += " ceil"
	}
	return opCase{Family: "pool", Op: op, opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(1, c, h, h), Attrs: desc,
		node: node(op, []string{"x"}, attrs...), inputs: []tensorGen{x(1, c, h, h)}}
}

// matmulCase is [M,K]·[K,N] with B a weight (packed at build time by
// rlx), or, batched, [B,M,K]·[B,K,N] with both operands inputs.
func matmulCase(batch, m, k, n int64) opCase {
	c := opCase{Family: "matmul", Op: "MatMul", opset: 17, outType: onnxpb.DTFloat,
		node: node("MatMul", []string{"a", "b"}), flop: 2 * float64(max(batch, 1)*m*k*n)}
	s := 1 / float32(math.Sqrt(float64(k)))
	if batch == 0 {
		c.Shape, c.Attrs = fmt.Sprintf("%dx%d @ %dx%d", m, k, k, n), "B weight"
		c.inputs = []tensorGen{randIn("a", -1, 1, m, k)}
		c.inits = []tensorGen{randIn("b", -s, s, k, n)}
	} else {
		c.Shape, c.Attrs = fmt.Sprintf("%dx%dx%d @ %dx%dx%d", batch, m, k, batch, k, n), "batched"
		c.inputs = []tensorGen{randIn("a", -1, 1, batch, m, k), randIn("b", -s, s, batch, k, n)}
	}
	return c
}

func gemmCase(m, k, n int64, transB bool, alpha, beta float32) opCase {
	s := 1 / float32(math.Sqrt(float64(k)))
	wdims := []int64{k, n}
	desc := fmt.Sprintf("bias alpha=%g beta=%g", alpha, beta)
	attrs := []*onnxpb.Attr{attrF("alpha", alpha), attrF("beta", beta)}
	if transB {
		wdims = []int64{n, k}
		attrs = append(attrs, attrI("transB", 1))
		desc = "transB " + desc
	}
	return opCase{Family: "matmul", Op: "Gemm", opset: 17, outType: onnxpb.DTFloat,
		Shape: fmt.Sprintf("%dx%d @ %dx%d", m, k, k, n), Attrs: desc,
		node:   node("Gemm", []string{"a", "w", "c"}, attrs...),
		inputs: []tensorGen{randIn("a", -1, 1, m, k)},
		inits:  []tensorGen{randIn("w", -s, s, wdims...), randIn("c", -1, 1, n)},
		flop:   2 * float64(m*k*n)}
}

// unaryOps are ONNX's elementwise unary operators rlx imports, with an
// input range each is defined on, the opset and the attributes.
var unaryOps = []struct {
	op     string
	lo, hi float32
	opset  int64
	attrs  []*onnxpb.Attr
}{
	{"Neg", -1, 1, 17, nil}, {"Abs", -1, 1, 17, nil}, {"Exp", -3, 3, 17, nil}, {"Log", 0.1, 4, 17, nil},
	{"Sqrt", 0.1, 4, 17, nil}, {"Reciprocal", 0.5, 4, 17, nil}, {"Tanh", -3, 3, 17, nil},
	{"Sigmoid", -4, 4, 17, nil}, {"Relu", -1, 1, 17, nil}, {"Erf", -2, 2, 17, nil}, {"Sin", -3, 3, 17, nil},
	{"Cos", -3, 3, 17, nil}, {"Floor", -4, 4, 17, nil}, {"Ceil", -4, 4, 17, nil}, {"Round", -4, 4, 17, nil},
	{"Sign", -1, 1, 17, nil}, {"Softsign", -3, 3, 17, nil},
	{"LeakyRelu", -1, 1, 17, []*onnxpb.Attr{attrF("alpha", 0.1)}},
	{"HardSigmoid", -4, 4, 17, nil}, {"HardSwish", -4, 4, 17, nil},
	{"Gelu", -3, 3, 20, nil}, {"Gelu", -3, 3, 20, []*onnxpb.Attr{attrS("approximate", "tanh")}},
	{"Clip", -2, 2, 17, nil}, // min/max inputs, below
	{"Identity", -1, 1, 17, nil},
}

func unaryCase(i int, dims ...int64) opCase {
	u := unaryOps[i]
	c := opCase{Family: "unary", Op: u.op, opset: u.opset, outType: onnxpb.DTFloat, Shape: shapeStr(dims...),
		node: node(u.op, []string{"x"}, u.attrs...), inputs: []tensorGen{randIn("x", u.lo, u.hi, dims...)}}
	var a []string
	for _, at := range u.attrs {
		switch at.Type {
		case onnxpb.AttrFloat:
			a = append(a, fmt.Sprintf("%s=%g", at.Name, at.F))
		case onnxpb.AttrString:
			a = append(a, fmt.Sprintf("%s=%s", at.Name, at.S))
		}
	}
	if u.op == "Clip" {
		c.node.Inputs = []string{"x", "lo", "hi"}
		c.inits = []tensorGen{{name: "lo", f32: []float32{-1}}, {name: "hi", f32: []float32{1}}}
		a = append(a, "[-1,1]")
	}
	c.Attrs = strings.Join(a, " ")
	return c
}

// binaryCase is op(a, b) with b of bdims (broadcast against a's dims);
// b is an input too, so neither side is a constant to fold.
func binaryCase(op, bcast string, adims, bdims []int64) opCase {
	lo, hi := float32(-1), float32(1)
	blo, bhi := lo, hi
	out := int32(onnxpb.DTFloat)
	switch op {
	case "Div":
		blo, bhi = 0.5, 2
	case "Pow":
		lo, hi, blo, bhi = 0.5, 2, -2, 2
	case "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual":
		out = onnxpb.DTBool
	}
	return opCase{Family: "binary", Op: op, opset: 17, outType: out,
		Shape: shapeStr(adims...) + " , " + shapeStr(bdims...), Attrs: bcast,
		node:   node(op, []string{"a", "b"}),
		inputs: []tensorGen{randIn("a", lo, hi, adims...), randIn("b", blo, bhi, bdims...)}}
}

// reduceCase reduces over axes, keepdims 1; opset 18, axes an input.
func reduceCase(op string, axes []int64, dims ...int64) opCase {
	c := opCase{Family: "reduce", Op: op, opset: 18, outType: onnxpb.DTFloat, Shape: shapeStr(dims...),
		Attrs: fmt.Sprintf("axes=%v", axes), inputs: []tensorGen{x(dims...)}}
	if op == "ArgMax" || op == "ArgMin" {
		c.node = node(op, []string{"x"}, attrI("axis", axes[0]))
		c.outType, c.Attrs = onnxpb.DTInt64, fmt.Sprintf("axis=%d", axes[0])
		return c
	}
	c.node = node(op, []string{"x", "axes"})
	c.inits = []tensorGen{{name: "axes", dims: []int64{int64(len(axes))}, i64: axes}}
	return c
}

// topKCase selects k along axis: a classifier's top-5, a detector's
// score cut, a middle axis.
func topKCase(k, axis int64, dims ...int64) opCase {
	return opCase{Family: "reduce", Op: "TopK", opset: 17, outType: onnxpb.DTFloat, outTypes: []int32{onnxpb.DTFloat, onnxpb.DTInt64},
		Shape: shapeStr(dims...), Attrs: fmt.Sprintf("k=%d axis=%d", k, axis),
		node:  &onnxpb.Node{Name: "TopK", OpType: "TopK", Inputs: []string{"x", "k"}, Outputs: []string{"values", "indices"}, Attrs: []*onnxpb.Attr{attrI("axis", axis)}},
		inits: []tensorGen{{name: "k", dims: []int64{1}, i64: []int64{k}}}, inputs: []tensorGen{x(dims...)}}
}

func softmaxCase(op string, axis int64, dims ...int64) opCase {
	return opCase{Family: "softmax", Op: op, opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(dims...),
		Attrs: fmt.Sprintf("axis=%d", axis), node: node(op, []string{"x"}, attrI("axis", axis)),
		inputs: []tensorGen{randIn("x", -4, 4, dims...)}}
}

func layerNormCase(dims ...int64) opCase {
	c := dims[len(dims)-1]
	return opCase{Family: "norm", Op: "LayerNormalization", opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(dims...),
		Attrs: "axis=-1", node: node("LayerNormalization", []string{"x", "scale", "bias"}, attrI("axis", -1), attrF("epsilon", 1e-5)),
		inits:  []tensorGen{randIn("scale", 0.5, 1.5, c), randIn("bias", -0.5, 0.5, c)},
		inputs: []tensorGen{x(dims...)}}
}

// rmsNormCase is opset 23's RMSNormalization over the last axis, as
// LLaMA-style models normalize their hidden states.
func rmsNormCase(dims ...int64) opCase {
	c := dims[len(dims)-1]
	return opCase{Family: "norm", Op: "RMSNormalization", opset: 23, outType: onnxpb.DTFloat, Shape: shapeStr(dims...),
		Attrs: "axis=-1", node: node("RMSNormalization", []string{"x", "scale"}, attrI("axis", -1), attrF("epsilon", 1e-6)),
		inits:  []tensorGen{randIn("scale", 0.5, 1.5, c)},
		inputs: []tensorGen{x(dims...)}}
}

func opsGrid(quick bool) []opCase {
	if quick {
		return []opCase{
			convCase(1, 16, 32, 28, 3, 1, 1, 1),
			convCase(1, 32, 32, 28, 3, 2, 1, 32),
			poolCase("MaxPool", 16, 28, 3, 2, 1, false),
			matmulCase(0, 16, 128, 128),
			gemmCase(8, 256, 100, true, 1, 1),
			unaryCase(8, 1, 32, 28, 28), // Relu
			binaryCase("Add", "channel", []int64{1, 32, 28, 28}, []int64{1, 32, 1, 1}),
			reduceCase("ReduceMean", []int64{2}, 8, 32, 64),
			softmaxCase("Softmax", -1, 16, 256),
			layerNormCase(1, 16, 128),
		}
	}
	var g []opCase
	// Conv: kernels 1, 3, 5, 7; strides 1, 2; dilation 2; groups 1, 32 and
	// depthwise; channels 3-1024; planes 7-224; batch 1 and 8.
	g = append(g,
		convCase(1, 3, 64, 224, 7, 2, 1, 1), // ResNet stem
		convCase(1, 3, 32, 224, 3, 2, 1, 1), // MobileNet stem
		convCase(1, 3, 16, 32, 3, 1, 1, 1),  // CIFAR-size stems
		convCase(1, 3, 16, 56, 3, 2, 1, 1),
		patchCase(1, 3, 96, 224, 4), // ConvNeXt's stem
		convCase(1, 64, 64, 56, 3, 1, 1, 1),
		convCase(1, 64, 64, 224, 3, 1, 1, 1), // VGG's first block: Winograd in parts
		convCase(1, 32, 32, 256, 3, 1, 1, 1), // a U-Net's or super-resolution's full-size layer
		convCase(1, 128, 128, 28, 3, 1, 1, 1),
		convCase(1, 256, 256, 14, 3, 1, 1, 1),
		convCase(1, 512, 512, 7, 3, 1, 1, 1),
		convCase(1, 64, 128, 56, 3, 2, 1, 1),
		convCase(1, 256, 512, 14, 3, 2, 1, 1),
		convCase(1, 64, 256, 56, 1, 1, 1, 1),
		convCase(1, 256, 64, 56, 1, 1, 1, 1),
		convCase(1, 512, 1024, 14, 1, 1, 1, 1),
		convCase(1, 1024, 512, 7, 1, 1, 1, 1),
		convCase(1, 256, 512, 28, 1, 2, 1, 1),
		convCase(1, 512, 1024, 28, 1, 2, 1, 1), // ResNet-50's shortcuts
		convCase(1, 1024, 2048, 14, 1, 2, 1, 1),
		convCase(1, 64, 128, 56, 1, 2, 1, 1), // ResNet-18's first
		convCase(1, 32, 32, 56, 5, 1, 1, 1),
		convCase(1, 64, 64, 28, 7, 1, 1, 1),
		convCase(1, 256, 256, 28, 3, 1, 2, 1),  // dilation 2
		convCase(1, 960, 256, 14, 3, 1, 12, 1), // DeepLabV3's ASPP
		rectCase(1, 192, 192, 17, 1, 7),        // Inception-v3's factorized 7x7
		rectCase(1, 192, 192, 17, 7, 1),
		convCase(1, 128, 128, 56, 3, 1, 1, 32), // ResNeXt
		convCase(1, 256, 256, 28, 3, 2, 1, 32),
		convCase(1, 32, 32, 112, 3, 1, 1, 32), // depthwise
		convCase(1, 144, 144, 56, 3, 2, 1, 144),
		convCase(1, 384, 384, 14, 3, 1, 1, 384),
		convCase(1, 960, 960, 7, 3, 1, 1, 960),
		convCase(1, 240, 240, 14, 5, 1, 1, 240),
		convCase(1, 96, 96, 56, 7, 1, 1, 96), // ConvNeXt
		convCase(8, 64, 64, 28, 3, 1, 1, 1),
		convCase(8, 256, 64, 28, 1, 1, 1, 1),
		convCase(8, 96, 96, 28, 3, 1, 1, 96),
		convCase(1, 208, 208, 14, 3, 1, 1, 26),  // RegNetY: groups of 8 channels
		convCase(1, 240, 240, 28, 5, 2, 1, 240), // EfficientNet: depthwise 5x5/2
		convCase(1, 3, 32, 320, 6, 2, 1, 1),     // YOLOv5's stem (6x6/2, pads 2)
		convCase(1, 32, 64, 160, 3, 2, 1, 1),
		convCase(1, 32, 32, 160, 1, 1, 1, 1), // YOLOv5's C3 1x1s: few channels, large planes
		convCase(1, 64, 64, 80, 1, 1, 1, 1),
		convCase(1, 128, 64, 80, 1, 1, 1, 1),
		// Conv-BN-SiLU: every generated kind (Winograd, direct stride 2,
		// depthwise) and a runtime product.
		siluCase(convCase(1, 64, 64, 40, 3, 1, 1, 1)),
		siluCase(convCase(1, 64, 128, 80, 3, 2, 1, 1)),
		siluCase(convCase(1, 240, 240, 28, 3, 1, 1, 240)),
		siluCase(convCase(1, 128, 128, 40, 1, 1, 1, 1)),
		// 1-D: wav2vec 2.0's feature extractor (k10 s5 over raw audio, k3
		// s2 over 512 channels) and its grouped positional convolution
		// (k128, 16 groups); Whisper's stem; a Conformer's depthwise k31;
		// Conv-TasNet's dilated depthwise k3.
		conv1dCase(1, 1, 512, 16000, 10, 5, 1, 1, 0),
		conv1dCase(1, 512, 512, 3199, 3, 2, 1, 1, 0),
		conv1dCase(1, 768, 768, 200, 128, 1, 1, 16, 64),
		conv1dCase(1, 80, 384, 3000, 3, 1, 1, 1, 1),
		conv1dCase(1, 384, 384, 3000, 3, 2, 1, 1, 1),
		conv1dCase(1, 144, 144, 200, 31, 1, 1, 144, 15),
		conv1dCase(1, 512, 512, 2000, 3, 1, 16, 512, 16),
		// Few groups: ShuffleNet v1's grouped 1x1s (3 groups), AlexNet-
		// style halves of a 3x3; ConvNeXt's last stage (depthwise 7x7
		// over 7x7); a depthwise with channel multiplier 2.
		convCase(1, 240, 240, 28, 1, 1, 1, 3),
		convCase(1, 256, 384, 13, 3, 1, 1, 2),
		convCase(1, 768, 768, 7, 7, 1, 1, 768),
		convCase(1, 32, 64, 56, 3, 1, 1, 32),
		nhwcCase(1, 64, 56),
	)
	g = append(g,
		convTCase(256, 128, 14, 2, 2, 0, 0),
		convTCase(64, 32, 28, 4, 2, 1, 0),
		convTCase(128, 64, 28, 3, 2, 1, 1),
		// A DCGAN-style generator (k4 s2 p1): a middle layer and the last
		// one onto 3 channels; a UNet decoder's k2 s2 on a larger plane; a
		// stride-1 one (a convolution by another name).
		convTCase(512, 256, 8, 4, 2, 1, 0),
		convTCase(64, 3, 32, 4, 2, 1, 0),
		convTCase(128, 64, 56, 2, 2, 0, 0),
		convTCase(64, 64, 28, 3, 1, 1, 0),
		// A HiFi-GAN-style vocoder's upsampling (k16 s8 p4), and a k4 s2
		// p1 over a longer sequence.
		convT1dCase(512, 256, 32, 16, 8, 4),
		convT1dCase(128, 64, 1000, 4, 2, 1),
	)
	for _, op := range []string{"MaxPool", "AveragePool"} {
		g = append(g,
			poolCase(op, 64, 112, 2, 2, 0, false),
			poolCase(op, 64, 112, 3, 2, 1, false),
			poolCase(op, 64, 56, 3, 2, 0, false),
			poolCase(op, 64, 56, 3, 2, 0, true),
			poolCase(op, 256, 28, 3, 1, 1, false),
			// an inception block's pool branch on a small plane (GoogLeNet)
			poolCase(op, 480, 14, 3, 1, 1, false),
			poolCase(op, 480, 14, 3, 2, 0, true), // GoogLeNet's ceil-mode pool onto 7x7
		)
	}
	// YOLOv5's SPPF: three 5x5/1 max pools on the last stage (20x20 at a
	// 640 input, 10x10 at 320).
	g = append(g, poolCase("MaxPool", 256, 20, 5, 1, 2, false), poolCase("MaxPool", 256, 10, 5, 1, 2, false))
	for _, gp := range []struct {
		op   string
		dims []int64
	}{{"GlobalAveragePool", []int64{1, 512, 7, 7}}, {"GlobalAveragePool", []int64{1, 2048, 7, 7}},
		{"GlobalAveragePool", []int64{8, 1280, 7, 7}}, {"GlobalAveragePool", []int64{1, 256, 56, 56}},
		{"GlobalMaxPool", []int64{1, 512, 7, 7}}} {
		g = append(g, opCase{Family: "globalpool", Op: gp.op, opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(gp.dims...),
			node: node(gp.op, []string{"x"}), inputs: []tensorGen{x(gp.dims...)}})
	}
	// MatMul/Gemm: M 1-4096, K and N 64-4096, batched.
	g = append(g,
		matmulCase(0, 1, 768, 768),
		matmulCase(0, 1, 4096, 4096),
		matmulCase(0, 8, 1024, 1024),
		matmulCase(0, 128, 768, 3072),
		matmulCase(0, 128, 3072, 768),
		matmulCase(0, 512, 512, 512),
		matmulCase(0, 1024, 1024, 1024),
		matmulCase(0, 2048, 2048, 2048),
		matmulCase(0, 4096, 64, 64),
		matmulCase(0, 4096, 256, 1024),
		matmulCase(0, 64, 4096, 64),
		matmulCase(12, 128, 64, 128),
		matmulCase(12, 128, 128, 64),
		matmulCase(8, 256, 256, 256),
		matmulCase(256, 9, 64, 9),  // a DLRM's pairwise interactions: many tiny products
		matmulCase(64, 16, 64, 64), // small per-item products (capsules, set or graph models)
		gemmCase(1, 2048, 1000, true, 1, 1),
		gemmCase(256, 1024, 1024, true, 1, 1),
		gemmCase(64, 512, 512, false, 0.5, 2),
	)
	// Every elementwise op rlx imports, on a feature map and on rows.
	for i := range unaryOps {
		g = append(g, unaryCase(i, 1, 256, 56, 56))
	}
	for _, i := range []int{2, 7, 8, 20} { // Exp, Sigmoid, Relu, Gelu
		g = append(g, unaryCase(i, 16, 1024))
	}
	fm, ch := []int64{1, 256, 56, 56}, []int64{1, 256, 1, 1}
	for _, op := range []string{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Greater", "Less"} {
		g = append(g, binaryCase(op, "same", fm, fm), binaryCase(op, "channel", fm, ch))
	}
	for _, op := range []string{"Add", "Mul"} {
		g = append(g,
			binaryCase(op, "row", []int64{128, 768}, []int64{768}),
			binaryCase(op, "scalar", fm, []int64{}),
			binaryCase(op, "outer", []int64{512, 1}, []int64{1, 512}),
			binaryCase(op, "middle", []int64{8, 128, 768}, []int64{8, 1, 768}),
		)
	}
	// Reductions over each axis.
	for _, op := range []string{"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"} {
		for _, axes := range [][]int64{{0}, {1}, {2}, {1, 2}} {
			g = append(g, reduceCase(op, axes, 32, 128, 256))
		}
	}
	g = append(g, reduceCase("ReduceProd", []int64{2}, 32, 128, 16),
		reduceCase("ArgMax", []int64{2}, 32, 128, 256), reduceCase("ArgMax", []int64{1}, 32, 128, 256),
		reduceCase("ArgMin", []int64{0}, 32, 128, 256),
		reduceCase("ArgMax", []int64{1}, 8, 32000), // greedy decoding over a vocabulary
		topKCase(5, -1, 64, 1000), topKCase(1000, -1, 1, 100000), topKCase(16, 1, 8, 128, 256))
	g = append(g,
		softmaxCase("Softmax", -1, 64, 1000),
		softmaxCase("Softmax", -1, 96, 128, 128),
		softmaxCase("Softmax", 1, 8, 1000, 64),
		softmaxCase("LogSoftmax", -1, 64, 1000),
		// An LLM's next-token distribution over a 32000-word vocabulary.
		softmaxCase("Softmax", -1, 1, 32000),
		softmaxCase("LogSoftmax", -1, 8, 32000),
		layerNormCase(1, 128, 768),
		layerNormCase(8, 512, 1024),
		layerNormCase(64, 3136, 96),
		rmsNormCase(1, 128, 4096),
	)
	g = append(g,
		opCase{Family: "norm", Op: "BatchNormalization", opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(1, 256, 56, 56), Attrs: "inference",
			node: node("BatchNormalization", []string{"x", "s", "b", "m", "v"}),
			inits: []tensorGen{randIn("s", 0.5, 1.5, 256), randIn("b", -0.5, 0.5, 256), randIn("m", -0.5, 0.5, 256),
				randIn("v", 0.5, 1.5, 256)},
			inputs: []tensorGen{x(1, 256, 56, 56)}},
		opCase{Family: "norm", Op: "InstanceNormalization", opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(1, 64, 112, 112),
			node:   node("InstanceNormalization", []string{"x", "s", "b"}),
			inits:  []tensorGen{randIn("s", 0.5, 1.5, 64), randIn("b", -0.5, 0.5, 64)},
			inputs: []tensorGen{x(1, 64, 112, 112)}},
	)
	// Gather: an embedding table (a weight) by input ids; rows of an input
	// by constant indices; one position.
	g = append(g,
		opCase{Family: "gather", Op: "Gather", opset: 17, outType: onnxpb.DTFloat, Shape: "32000x512 [8x128]", Attrs: "axis=0 embedding",
			node:   node("Gather", []string{"w", "ids"}, attrI("axis", 0)),
			inits:  []tensorGen{randIn("w", -1, 1, 32000, 512)},
			inputs: []tensorGen{{name: "ids", dims: []int64{8, 128}, imax: 32000}}},
		opCase{Family: "gather", Op: "Gather", opset: 17, outType: onnxpb.DTFloat, Shape: "8x256x512 [64]", Attrs: "axis=1",
			node:   node("Gather", []string{"x", "i"}, attrI("axis", 1)),
			inits:  []tensorGen{{name: "i", dims: []int64{64}, i64: seqIdx(64, 4)}},
			inputs: []tensorGen{x(8, 256, 512)}},
		opCase{Family: "gather", Op: "Gather", opset: 17, outType: onnxpb.DTFloat, Shape: "8x197x768 []", Attrs: "axis=1 scalar",
			node:   node("Gather", []string{"x", "i"}, attrI("axis", 1)),
			inits:  []tensorGen{{name: "i", dims: []int64{}, i64: []int64{0}}},
			inputs: []tensorGen{x(8, 197, 768)}},
	)
	for _, tr := range []struct {
		dims, perm []int64
	}{{[]int64{1, 64, 112, 112}, []int64{0, 2, 3, 1}}, {[]int64{8, 128, 12, 64}, []int64{0, 2, 1, 3}},
		{[]int64{1024, 1024}, []int64{1, 0}}, {[]int64{8, 12, 128, 64}, []int64{0, 1, 3, 2}},
		// YOLOv5's head: [1, 3, 85, 80, 80] with the 85 outputs moved last.
		{[]int64{1, 3, 85, 80, 80}, []int64{0, 1, 3, 4, 2}}} {
		g = append(g, opCase{Family: "transpose", Op: "Transpose", opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(tr.dims...),
			Attrs: fmt.Sprintf("perm=%v", tr.perm), node: node("Transpose", []string{"x"}, attrInts("perm", tr.perm...)),
			inputs: []tensorGen{x(tr.dims...)}})
	}
	concat := func(axis int64, dims ...[]int64) opCase {
		c := opCase{Family: "concat", Op: "Concat", opset: 17, outType: onnxpb.DTFloat, Attrs: fmt.Sprintf("axis=%d", axis)}
		var names, shapes []string
		for i, d := range dims {
			n := fmt.Sprintf("x%d", i)
			names = append(names, n)
			shapes = append(shapes, shapeStr(d...))
			c.inputs = append(c.inputs, randIn(n, -1, 1, d...))
		}
		c.Shape = strings.Join(shapes, " + ")
		c.node = node("Concat", names, attrI("axis", axis))
		return c
	}
	g = append(g,
		concat(1, []int64{1, 128, 56, 56}, []int64{1, 128, 56, 56}),
		concat(1, []int64{1, 64, 28, 28}, []int64{1, 64, 28, 28}, []int64{1, 64, 28, 28}, []int64{1, 64, 28, 28}),
		concat(-1, []int64{64, 512}, []int64{64, 512}),
		concat(0, []int64{1, 197, 768}, []int64{7, 197, 768}),
	)
	slice := func(dims, starts, ends, axes, steps []int64) opCase {
		attr := fmt.Sprintf("starts=%v ends=%v axes=%v", starts, ends, axes)
		if steps != nil {
			attr += fmt.Sprintf(" steps=%v", steps)
		}
		c := opCase{Family: "slice", Op: "Slice", opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(dims...), Attrs: attr,
			node:   node("Slice", []string{"x", "starts", "ends", "axes"}),
			inputs: []tensorGen{x(dims...)},
			inits: []tensorGen{{name: "starts", dims: []int64{int64(len(starts))}, i64: starts},
				{name: "ends", dims: []int64{int64(len(ends))}, i64: ends}, {name: "axes", dims: []int64{int64(len(axes))}, i64: axes}}}
		if steps != nil {
			c.node.Inputs = append(c.node.Inputs, "steps")
			c.inits = append(c.inits, tensorGen{name: "steps", dims: []int64{int64(len(steps))}, i64: steps})
		}
		return c
	}
	g = append(g,
		slice([]int64{1, 256, 56, 56}, []int64{0}, []int64{128}, []int64{1}, nil),
		slice([]int64{1, 64, 56, 56}, []int64{1, 1}, []int64{-1, -1}, []int64{2, 3}, nil),
		slice([]int64{8, 128, 768}, []int64{0}, []int64{1}, []int64{1}, nil),
		slice([]int64{1, 64, 112, 112}, []int64{0, 0}, []int64{112, 112}, []int64{2, 3}, []int64{2, 2}),
	)
	resize := func(mode string, dims []int64, extra ...*onnxpb.Attr) opCase {
		desc := mode
		for _, a := range extra {
			desc += fmt.Sprintf(" %s=%s", a.Name, a.S)
		}
		return opCase{Family: "resize", Op: "Resize", opset: 17, outType: onnxpb.DTFloat, Shape: shapeStr(dims...), Attrs: desc + " x2",
			node:   node("Resize", []string{"x", "", "scales"}, append([]*onnxpb.Attr{attrS("mode", mode)}, extra...)...),
			inits:  []tensorGen{{name: "scales", dims: []int64{4}, f32: []float32{1, 1, 2, 2}}},
			inputs: []tensorGen{x(dims...)}}
	}
	g = append(g,
		resize("nearest", []int64{1, 256, 28, 28}),
		resize("nearest", []int64{1, 64, 112, 112}),
		resize("linear", []int64{1, 256, 28, 28}),
		resize("linear", []int64{1, 256, 28, 28}, attrS("coordinate_transformation_mode", "align_corners")),
		resize("cubic", []int64{1, 64, 28, 28}),
	)
	g = append(g, miscCases()...)
	return append(g, quantCases()...)
}

// miscCases are operators real models use that the families above leave
// out: selects, broadcasts, paddings, tiles, running sums, group norms,
// per-channel slopes, smooth activations, einsum products, pixel
// shuffles.
func miscCases() []opCase {
	fm := []int64{1, 256, 56, 56}
	f := func(op string, opset int64, dims []int64, attrs string, n *onnxpb.Node, inits []tensorGen, inputs ...tensorGen) opCase {
		if len(inputs) == 0 {
			inputs = []tensorGen{x(dims...)}
		}
		return opCase{Family: "misc", Op: op, opset: opset, outType: onnxpb.DTFloat, Shape: shapeStr(dims...), Attrs: attrs,
			node: n, inits: inits, inputs: inputs}
	}
	i64 := func(name string, v ...int64) tensorGen {
		return tensorGen{name: name, dims: []int64{int64(len(v))}, i64: v}
	}
	where := f("Where", 17, fm, "x > 0 ? x : b", node("Where", []string{"c", "x", "b"}), nil, x(fm...), randIn("b", -1, 1, fm...))
	where.pre = []*onnxpb.Node{{Name: "gt", OpType: "Greater", Inputs: []string{"x", "zero"}, Outputs: []string{"c"}}}
	where.inits = []tensorGen{{name: "zero", f32: []float32{0}}}
	// f32 -> f16 -> f32: half-precision weights cast up, activations
	// stored in half.
	castF16 := f("Cast", 17, fm, "f32 -> f16 -> f32", node("Cast", []string{"h"}, attrI("to", int64(onnxpb.DTFloat))), nil)
	castF16.pre = []*onnxpb.Node{{Name: "half", OpType: "Cast", Inputs: []string{"x"}, Outputs: []string{"h"}, Attrs: []*onnxpb.Attr{attrI("to", int64(onnxpb.DTFloat16))}}}
	// not(x > 0) and (x < 0.5), selected: bool operators between compares.
	notAnd := f("And", 17, fm, "not(x > 0) and x < 0.5, where", node("Where", []string{"m", "x", "zero"}), []tensorGen{{name: "zero", f32: []float32{0}}, {name: "half", f32: []float32{0.5}}})
	notAnd.pre = []*onnxpb.Node{
		{Name: "gt", OpType: "Greater", Inputs: []string{"x", "zero"}, Outputs: []string{"g"}},
		{Name: "not", OpType: "Not", Inputs: []string{"g"}, Outputs: []string{"ng"}},
		{Name: "lt", OpType: "Less", Inputs: []string{"x", "half"}, Outputs: []string{"l"}},
		{Name: "and", OpType: "And", Inputs: []string{"ng", "l"}, Outputs: []string{"m"}},
	}
	return []opCase{
		where,
		f("Expand", 17, []int64{1, 256, 1, 1}, "to 8x256x28x28", node("Expand", []string{"x", "shape"}), []tensorGen{i64("shape", 8, 256, 28, 28)}),
		f("Pad", 17, []int64{1, 64, 56, 56}, "reflect 1", node("Pad", []string{"x", "pads"}, attrS("mode", "reflect")), []tensorGen{i64("pads", 0, 0, 1, 1, 0, 0, 1, 1)}),
		f("Pad", 17, []int64{1, 64, 56, 56}, "constant 2", node("Pad", []string{"x", "pads"}), []tensorGen{i64("pads", 0, 0, 2, 2, 0, 0, 2, 2)}),
		f("Tile", 17, []int64{1, 64, 28, 28}, "repeats=[2 1 2 1]", node("Tile", []string{"x", "r"}), []tensorGen{i64("r", 2, 1, 2, 1)}),
		f("CumSum", 17, []int64{8, 4096}, "axis=1", node("CumSum", []string{"x", "axis"}), []tensorGen{{name: "axis", i64: []int64{1}}}),
		f("GroupNormalization", 21, fm, "groups=32", node("GroupNormalization", []string{"x", "s", "b"}, attrI("num_groups", 32)),
			[]tensorGen{randIn("s", 0.5, 1.5, 256), randIn("b", -0.5, 0.5, 256)}),
		f("PRelu", 17, []int64{1, 64, 112, 112}, "slope per channel", node("PRelu", []string{"x", "slope"}), []tensorGen{randIn("slope", 0, 0.5, 64, 1, 1)}),
		f("Softplus", 17, fm, "", node("Softplus", []string{"x"}), nil),
		f("Elu", 17, fm, "", node("Elu", []string{"x"}), nil),
		f("Einsum", 17, []int64{1, 12, 128, 64}, "bhid,bhjd->bhij", node("Einsum", []string{"x", "k"}, attrS("equation", "bhid,bhjd->bhij")), nil,
			x(1, 12, 128, 64), randIn("k", -1, 1, 1, 12, 128, 64)),
		f("DepthToSpace", 17, []int64{1, 256, 28, 28}, "blocksize=2 DCR", node("DepthToSpace", []string{"x"}, attrI("blocksize", 2)), nil),
		// A spatial transformer's warp of an image and an optical-flow
		// model's lookup in a feature map: points anywhere in [-1.1, 1.1].
		f("GridSample", 16, []int64{1, 3, 224, 224}, "bilinear zeros, grid 224x224", node("GridSample", []string{"x", "grid"}), nil,
			x(1, 3, 224, 224), randIn("grid", -1.1, 1.1, 1, 224, 224, 2)),
		f("GridSample", 16, []int64{1, 128, 56, 56}, "bilinear border align, grid 56x56", node("GridSample", []string{"x", "grid"},
			attrS("padding_mode", "border"), attrI("align_corners", 1)), nil, x(1, 128, 56, 56), randIn("grid", -1.1, 1.1, 1, 56, 56, 2)),
		f("Mish", 18, fm, "", node("Mish", []string{"x"}), nil),
		f("LpNormalization", 17, []int64{64, 768}, "p=2 axis=-1", node("LpNormalization", []string{"x"}, attrI("axis", -1), attrI("p", 2)), nil),
		f("ReduceL2", 18, []int64{32, 128, 256}, "axes=[2]", node("ReduceL2", []string{"x", "axes"}, attrI("keepdims", 0)), []tensorGen{i64("axes", 2)}),
		f("LRN", 17, []int64{1, 64, 56, 56}, "size=5", node("LRN", []string{"x"}, attrI("size", 5), attrF("alpha", 1e-4), attrF("beta", 0.75), attrF("bias", 2)), nil),
		f("Trilu", 17, []int64{12, 128, 128}, "upper", node("Trilu", []string{"x"}), nil),
		f("Sum", 17, fm, "3 inputs", node("Sum", []string{"x", "a", "b"}), nil, x(fm...), randIn("a", -1, 1, fm...), randIn("b", -1, 1, fm...)),
		f("Conv", 17, []int64{1, 256, 1024}, "1-D k3 p1 -> 256", node("Conv", []string{"x", "w"}, attrInts("kernel_shape", 3), attrInts("pads", 1, 1)),
			[]tensorGen{randIn("w", -0.05, 0.05, 256, 256, 3)}),
		f("LSTM", 17, []int64{32, 1, 256}, "hidden 256", node("LSTM", []string{"x", "W", "R", "B"}, attrI("hidden_size", 256)),
			[]tensorGen{randIn("W", -0.06, 0.06, 1, 1024, 256), randIn("R", -0.06, 0.06, 1, 1024, 256), randIn("B", -0.06, 0.06, 1, 2048)}),
		f("GRU", 17, []int64{32, 1, 256}, "hidden 256", node("GRU", []string{"x", "W", "R", "B"}, attrI("hidden_size", 256)),
			[]tensorGen{randIn("W", -0.06, 0.06, 1, 768, 256), randIn("R", -0.06, 0.06, 1, 768, 256), randIn("B", -0.06, 0.06, 1, 1536)}),
		f("GatherElements", 17, []int64{64, 1000}, "idx 64x100 axis=1", node("GatherElements", []string{"x", "idx"}, attrI("axis", 1)), nil,
			x(64, 1000), tensorGen{name: "idx", dims: []int64{64, 100}, imax: 1000}),
		f("ScatterND", 17, []int64{1, 12, 256, 64}, "2 positions of the third axis", node("ScatterND", []string{"x", "idx", "u"}), nil,
			x(1, 12, 256, 64), tensorGen{name: "idx", dims: []int64{1, 12, 2, 3}, imax: 1}, randIn("u", -1, 1, 1, 12, 2, 64)),
		f("Selu", 17, fm, "", node("Selu", []string{"x"}), nil),
		f("ThresholdedRelu", 17, fm, "alpha=0.5", node("ThresholdedRelu", []string{"x"}, attrF("alpha", 0.5)), nil),
		f("Shrink", 17, fm, "lambd=0.5", node("Shrink", []string{"x"}, attrF("lambd", 0.5)), nil),
		f("Hardmax", 17, []int64{64, 1000}, "axis=-1", node("Hardmax", []string{"x"}), nil),
		f("Einsum", 17, []int64{1024}, "i,j->ij", node("Einsum", []string{"x", "v"}, attrS("equation", "i,j->ij")), nil, x(1024), randIn("v", -1, 1, 1024)),
		f("SpaceToDepth", 17, []int64{1, 64, 112, 112}, "blocksize=2", node("SpaceToDepth", []string{"x"}, attrI("blocksize", 2)), nil),
		f("Conv", 17, []int64{1, 64, 8, 28, 28}, "3-D k3 p1 -> 64", node("Conv", []string{"x", "w"}, attrInts("kernel_shape", 3, 3, 3), attrInts("pads", 1, 1, 1, 1, 1, 1)),
			[]tensorGen{randIn("w", -0.05, 0.05, 64, 64, 3, 3, 3)}),
		f("MaxPool", 17, []int64{1, 256, 1024}, "1-D k3 s2 p1", node("MaxPool", []string{"x"}, attrInts("kernel_shape", 3), attrInts("strides", 2), attrInts("pads", 1, 1)), nil),
		f("GlobalMaxPool", 17, fm, "", node("GlobalMaxPool", []string{"x"}), nil),
		f("ReduceLogSumExp", 18, []int64{64, 1000}, "axes=[1]", node("ReduceLogSumExp", []string{"x", "axes"}), []tensorGen{i64("axes", 1)}),
		f("ReduceProd", 18, []int64{32, 128, 256}, "axes=[2]", node("ReduceProd", []string{"x", "axes"}), []tensorGen{i64("axes", 2)}, randIn("x", 0.99, 1.01, 32, 128, 256)),
		f("Mod", 17, fm, "fmod=1 by 0.7", node("Mod", []string{"x", "m"}, attrI("fmod", 1)), []tensorGen{{name: "m", f32: []float32{0.7}}}),
		castF16,
		f("Slice", 17, fm, "flip W (step -1)", node("Slice", []string{"x", "st", "en", "ax", "sp"}),
			[]tensorGen{i64("st", -1), i64("en", -1<<62), i64("ax", 3), i64("sp", -1)}),
		notAnd,
		{Family: "misc", Op: "Split", opset: 18, outType: onnxpb.DTFloat, outTypes: []int32{onnxpb.DTFloat, onnxpb.DTFloat, onnxpb.DTFloat},
			Shape: shapeStr(8, 128, 2304), Attrs: "3 ways, last axis",
			node:   &onnxpb.Node{Name: "Split", OpType: "Split", Inputs: []string{"x"}, Outputs: []string{"q", "k", "v"}, Attrs: []*onnxpb.Attr{attrI("axis", -1), attrI("num_outputs", 3)}},
			inputs: []tensorGen{x(8, 128, 2304)}},
		f("Attention", 23, []int64{1, 12, 128, 64}, "q k v [b h s d], causal", node("Attention", []string{"x", "k", "v"}, attrI("is_causal", 1)), nil,
			x(1, 12, 128, 64), randIn("k", -1, 1, 1, 12, 128, 64), randIn("v", -1, 1, 1, 12, 128, 64)),
		// Conformer-S's attention: 4 heads of 36, an additive mask.
		f("Attention", 23, []int64{1, 4, 200, 36}, "q k v [b h s d], additive mask [s s]", node("Attention", []string{"x", "k", "v", "mask"}), nil,
			x(1, 4, 200, 36), randIn("k", -1, 1, 1, 4, 200, 36), randIn("v", -1, 1, 1, 4, 200, 36), randIn("mask", -2, 0, 200, 200)),
		// An LLM's decode step: one query per head against 512 cached
		// keys, 32 query heads of 128 over 8 key/value heads (grouped).
		f("Attention", 23, []int64{1, 32, 1, 128}, "decode: 1 query, 512 keys, 8 kv heads", node("Attention", []string{"x", "k", "v"}), nil,
			x(1, 32, 1, 128), randIn("k", -1, 1, 1, 8, 512, 128), randIn("v", -1, 1, 1, 8, 512, 128)),
		// A long causal prefill with heads of 128.
		f("Attention", 23, []int64{1, 8, 1024, 128}, "q k v [b h s d], causal", node("Attention", []string{"x", "k", "v"}, attrI("is_causal", 1)), nil,
			x(1, 8, 1024, 128), randIn("k", -1, 1, 1, 8, 1024, 128), randIn("v", -1, 1, 1, 8, 1024, 128)),
	}
}

// quantCases are quantized operators as ONNX Runtime's quantizer writes
// them: uint8 activations (zero point 128), int8 weights (zero point 0,
// per output channel for convolutions), scales that keep the outputs
// mostly inside the uint8 range. rlx runs them in float32 with the
// integer arithmetic spelled out (docs/onnx.md); ORT's integer kernels
// are the check, which for uint8 outputs passes only on equal values.
func quantCases() []opCase {
	u8, i8, i32 := tensor.U8, tensor.I8, tensor.I32
	f := func(name string, v float32) tensorGen { return tensorGen{name: name, f32: []float32{v}} }
	zp := func(name string, dt tensor.DType, v int64, n int64) tensorGen {
		if n == 0 {
			return quantConst(name, dt, []int64{v})
		}
		vs := make([]int64, n)
		for i := range vs {
			vs[i] = v
		}
		return quantConst(name, dt, vs, n)
	}
	act := func(dims ...int64) tensorGen { return quantIn("x", u8, 0, 255, dims...) }
	qconv := func(c, o, h, k int64, ys float32) opCase {
		pad := (k - 1) / 2
		return opCase{Family: "quant", Op: "QLinearConv", opset: 13, outType: onnxpb.DTUint8,
			Shape: fmt.Sprintf("%s -> %d", shapeStr(1, c, h, h), o), Attrs: fmt.Sprintf("k%d u8 x i8 per-channel", k),
			node: node("QLinearConv", []string{"x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "b"},
				attrInts("kernel_shape", k, k), attrInts("pads", pad, pad, pad, pad)),
			inits: []tensorGen{f("xs", 0.02), zp("xzp", u8, 128, 0), quantIn("w", i8, -127, 127, o, c, k, k),
				randIn("ws", 0.002, 0.004, o), zp("wzp", i8, 0, o), f("ys", ys), zp("yzp", u8, 128, 0), quantIn("b", i32, -5000, 5000, o)},
			inputs: []tensorGen{act(1, c, h, h)},
			flop:   2 * float64(o*c*k*k*h*h)}
	}
	// QDQ (ONNX Runtime's quantize_static default): float operators
	// between DequantizeLinear and QuantizeLinear, weights and bias
	// dequantized initializers, which ORT fuses into its integer kernels.
	dq := func(name, q, s, zp string, axis int64) *onnxpb.Node {
		return &onnxpb.Node{Name: name, OpType: "DequantizeLinear", Inputs: []string{q, s, zp}, Outputs: []string{name}, Attrs: []*onnxpb.Attr{attrI("axis", axis)}}
	}
	qdqConv := func(c, o, h, k int64, ys float32) opCase {
		pad := (k - 1) / 2
		// per-channel weight scales, the bias's their products with the
		// input's (as the quantizer writes them, and ORT's fusion needs)
		ws, bs := make([]float32, o), make([]float32, o)
		for i := range ws {
			ws[i] = 0.002 + 0.002*float32(i%13)/13
			bs[i] = float32(0.02) * ws[i]
		}
		conv := &onnxpb.Node{Name: "conv", OpType: "Conv", Inputs: []string{"xf", "wf", "bf"}, Outputs: []string{"yf"},
			Attrs: []*onnxpb.Attr{attrInts("kernel_shape", k, k), attrInts("pads", pad, pad, pad, pad)}}
		return opCase{Family: "quant", Op: "QDQ Conv", opset: 13, outType: onnxpb.DTUint8,
			Shape: fmt.Sprintf("%s -> %d", shapeStr(1, c, h, h), o), Attrs: fmt.Sprintf("k%d u8 x i8 per-channel", k),
			pre:  []*onnxpb.Node{dq("xf", "x", "xs", "xzp", 1), dq("wf", "w", "ws", "wzp", 0), {Name: "bf", OpType: "DequantizeLinear", Inputs: []string{"b", "bs"}, Outputs: []string{"bf"}, Attrs: []*onnxpb.Attr{attrI("axis", 0)}}, conv},
			node: node("QuantizeLinear", []string{"yf", "ys", "yzp"}),
			inits: []tensorGen{f("xs", 0.02), zp("xzp", u8, 128, 0), quantIn("w", i8, -127, 127, o, c, k, k),
				{name: "ws", dims: []int64{o}, f32: ws}, zp("wzp", i8, 0, o), quantIn("b", i32, -5000, 5000, o), {name: "bs", dims: []int64{o}, f32: bs},
				f("ys", ys), zp("yzp", u8, 128, 0)},
			inputs: []tensorGen{act(1, c, h, h)},
			flop:   2 * float64(o*c*k*k*h*h)}
	}
	// a QDQ Gemm (a classifier head, an MLP layer: B [N, K] transposed,
	// scales per output column, an int32 bias), which ORT runs as QGemm
	qdqGemm := func(m, k, n int64) opCase {
		ws, bs := make([]float32, n), make([]float32, n)
		for i := range ws {
			ws[i] = 0.002 + 0.002*float32(i%13)/13
			bs[i] = float32(0.02) * ws[i]
		}
		gemm := &onnxpb.Node{Name: "gemm", OpType: "Gemm", Inputs: []string{"af", "bf", "cf"}, Outputs: []string{"yf"}, Attrs: []*onnxpb.Attr{attrI("transB", 1)}}
		return opCase{Family: "quant", Op: "QDQ Gemm", opset: 13, outType: onnxpb.DTUint8, Shape: fmt.Sprintf("%dx%d @ %dx%d", m, k, k, n), Attrs: "u8 x i8 per-column transB bias",
			pre: []*onnxpb.Node{dq("af", "x", "as", "azp", 1), dq("bf", "b", "bs", "bzp", 0),
				{Name: "cf", OpType: "DequantizeLinear", Inputs: []string{"c", "cs"}, Outputs: []string{"cf"}, Attrs: []*onnxpb.Attr{attrI("axis", 0)}}, gemm},
			node: node("QuantizeLinear", []string{"yf", "ys", "yzp"}),
			inits: []tensorGen{f("as", 0.02), zp("azp", u8, 128, 0), quantIn("b", i8, -127, 127, n, k), {name: "bs", dims: []int64{n}, f32: ws}, zp("bzp", i8, 0, n),
				quantIn("c", i32, -5000, 5000, n), {name: "cs", dims: []int64{n}, f32: bs}, f("ys", 0.25), zp("yzp", u8, 128, 0)},
			inputs: []tensorGen{act(m, k)}, flop: float64(2 * m * k * n)}
	}
	const m, k, n = 128, 768, 768
	return []opCase{
		qdqConv(64, 64, 56, 3, 0.2),
		qdqConv(256, 64, 28, 1, 0.15),
		qdqGemm(1, 2048, 1000),
		qdqGemm(256, 1024, 1024),
		{Family: "quant", Op: "QDQ MatMul", opset: 13, outType: onnxpb.DTUint8, Shape: fmt.Sprintf("%dx%d @ %dx%d", m, k, k, n), Attrs: "u8 x i8",
			pre: []*onnxpb.Node{dq("af", "x", "as", "azp", 1), dq("bf", "b", "bs", "bzp", 1),
				{Name: "mm", OpType: "MatMul", Inputs: []string{"af", "bf"}, Outputs: []string{"yf"}}},
			node: node("QuantizeLinear", []string{"yf", "ys", "yzp"}),
			inits: []tensorGen{f("as", 0.02), zp("azp", u8, 128, 0), quantIn("b", i8, -127, 127, k, n), f("bs", 0.003), zp("bzp", i8, 0, 0),
				f("ys", 0.25), zp("yzp", u8, 128, 0)},
			inputs: []tensorGen{act(m, k)}, flop: 2 * m * k * n},
		{Family: "quant", Op: "QuantizeLinear", opset: 13, outType: onnxpb.DTUint8, Shape: shapeStr(1, 256, 56, 56), Attrs: "u8",
			node: node("QuantizeLinear", []string{"x", "s", "zp"}), inits: []tensorGen{f("s", 0.025), zp("zp", u8, 128, 0)},
			inputs: []tensorGen{randIn("x", -3, 3, 1, 256, 56, 56)}},
		{Family: "quant", Op: "DequantizeLinear", opset: 13, outType: onnxpb.DTFloat, Shape: shapeStr(1, 256, 56, 56), Attrs: "u8",
			node: node("DequantizeLinear", []string{"x", "s", "zp"}), inits: []tensorGen{f("s", 0.025), zp("zp", u8, 128, 0)},
			inputs: []tensorGen{act(1, 256, 56, 56)}},
		qconv(64, 64, 56, 3, 0.2),
		qconv(256, 64, 28, 1, 0.15),
		{Family: "quant", Op: "QLinearMatMul", opset: 13, outType: onnxpb.DTUint8, Shape: fmt.Sprintf("%dx%d @ %dx%d", m, k, k, n), Attrs: "u8 x i8",
			node: node("QLinearMatMul", []string{"x", "as", "azp", "b", "bs", "bzp", "ys", "yzp"}),
			inits: []tensorGen{f("as", 0.02), zp("azp", u8, 128, 0), quantIn("b", i8, -127, 127, k, n), f("bs", 0.003), zp("bzp", i8, 0, 0),
				f("ys", 0.25), zp("yzp", u8, 128, 0)},
			inputs: []tensorGen{act(m, k)}, flop: 2 * m * k * n},
		{Family: "quant", Op: "MatMulInteger", opset: 13, outType: onnxpb.DTInt32, Shape: fmt.Sprintf("%dx%d @ %dx%d", m, k, k, n), Attrs: "u8 x i8 -> i32",
			node:   node("MatMulInteger", []string{"x", "b", "azp", "bzp"}),
			inits:  []tensorGen{quantIn("b", i8, -127, 127, k, n), zp("azp", u8, 128, 0), zp("bzp", i8, 0, 0)},
			inputs: []tensorGen{act(m, k)}, flop: 2 * m * k * n},
		// dynamic quantization (ONNX Runtime's quantize_dynamic): the
		// activation quantized at run time, its zero point an operand
		{Family: "quant", Op: "MatMulInteger", opset: 13, outType: onnxpb.DTInt32, Shape: fmt.Sprintf("%dx%d @ %dx%d", m, k, k, n), Attrs: "dynamic u8 x i8 -> i32",
			pre:    []*onnxpb.Node{{Name: "dq", OpType: "DynamicQuantizeLinear", Inputs: []string{"x"}, Outputs: []string{"xq", "xs", "xzp"}}},
			node:   node("MatMulInteger", []string{"xq", "b", "xzp"}),
			inits:  []tensorGen{quantIn("b", i8, -127, 127, k, n)},
			inputs: []tensorGen{randIn("x", -3, 3, m, k)}, flop: 2 * m * k * n},
		{Family: "quant", Op: "ConvInteger", opset: 13, outType: onnxpb.DTInt32, Shape: fmt.Sprintf("%s -> 64", shapeStr(1, 64, 56, 56)), Attrs: "k3 u8 x u8 -> i32",
			node:   node("ConvInteger", []string{"x", "w", "xzp", "wzp"}, attrInts("kernel_shape", 3, 3), attrInts("pads", 1, 1, 1, 1)),
			inits:  []tensorGen{quantIn("w", u8, 0, 255, 64, 64, 3, 3), zp("xzp", u8, 128, 0), zp("wzp", u8, 128, 0)},
			inputs: []tensorGen{act(1, 64, 56, 56)}, flop: 2 * 64 * 64 * 9 * 56 * 56},
	}
}

// seqIdx is 0, step, 2*step, ... (n values).
func seqIdx(n, step int64) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(i) * step
	}
	return v
}
