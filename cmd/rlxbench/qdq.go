package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
)

// Quantized models for --qdq: a manifest's f32 model quantized into QDQ
// form as ONNX Runtime's static quantizer writes it (which this machine
// may not have: it is Python), then timed through rlx and ORT like a grid
// point, each runtime's outputs checked against the other's. Every
// convolution gets int8 weights per output channel (symmetric: scale
// max|w|/127), an int32 bias at the input's scale times the weights', and
// uint8 activations per tensor (MinMax over one calibration run of rlx on
// the model's own b1 input): DequantizeLinear before it, QuantizeLinear
// and DequantizeLinear after it. Other operators stay f32 between them.

// qdqCase is the grid point of manifest model name quantized: its model
// built here, its input uniform in [-2, 2) of the b1 case's shape.
func (d *driver) qdqCase(name string) (*opCase, error) {
	mpath := d.cfg.manifest
	if mpath == "" {
		mpath = filepath.Join(d.cfg.benchDir, "..", "models", "manifest.json")
	}
	data, err := os.ReadFile(mpath)
	if err != nil {
		return nil, err
	}
	man, err := parseManifest(data)
	if err != nil {
		return nil, err
	}
	var e *modelSpec
	for i := range man.Models {
		if man.Models[i].Name == name {
			e = &man.Models[i]
		}
	}
	if e == nil {
		return nil, fmt.Errorf("--qdq: no model %q in %s", name, mpath)
	}
	root := filepath.Dir(mpath)
	m, err := onnxpb.DecodeFile(filepath.Join(root, e.File))
	if err != nil {
		return nil, err
	}
	var b1 *caseSpec
	for i := range e.Cases {
		if e.Cases[i].Name == "b1" {
			b1 = &e.Cases[i]
		}
	}
	if b1 == nil || len(m.Graph.Inputs) != 1 || len(b1.Inputs) != 1 {
		return nil, fmt.Errorf("--qdq %s: one input and a b1 case expected", name)
	}
	in := m.Graph.Inputs[0].Name
	spec := b1.Inputs[0]
	x, err := npy.ReadFile(filepath.Join(root, spec.File))
	if err != nil {
		return nil, err
	}
	// the input's dims fixed at the b1 case's (no binding to pass)
	vi := *m.Graph.Inputs[0]
	if len(vi.Shape) != len(x.Shape) {
		return nil, fmt.Errorf("--qdq %s: input %s has rank %d, its b1 case %d", name, in, len(vi.Shape), len(x.Shape))
	}
	vi.Shape = nil
	for _, d := range x.Shape {
		vi.Shape = append(vi.Shape, onnxpb.Dim{Value: d, Known: true})
	}
	gf := *m.Graph
	gf.Inputs = []*onnxpb.ValueInfo{&vi}
	mf := *m
	mf.Graph = &gf
	m = &mf
	ranges, err := d.calibrate(m, filepath.Join(root, spec.File), in, name)
	if err != nil {
		return nil, err
	}
	q, err := qdqModel(m, ranges)
	if err != nil {
		return nil, fmt.Errorf("--qdq %s: %v", name, err)
	}
	gen := randIn(in, -2, 2, x.Shape...)
	if x.DType == tensor.I64 {
		// token ids: below the largest of the b1 case's
		gen = tensorGen{name: in, dims: x.Shape, imax: slices.Max(x.I64()) + 1}
	}
	c := &opCase{Family: "qdq", Op: name, Shape: shapeStr(x.Shape...), Attrs: "u8 x i8 per-channel", opset: m.Opsets[""], built: q,
		node:    &onnxpb.Node{Name: name},
		inputs:  []tensorGen{gen},
		outType: onnxpb.DTFloat, flop: b1.GFLOP * 1e9}
	for _, o := range m.Graph.Outputs {
		c.node.Outputs = append(c.node.Outputs, o.Name)
	}
	return c, nil
}

// calibrate runs model m through rlxc and rlxrun on the input in the npy
// file, with every tensor qdqModel quantizes made an output, and returns
// each one's [min, max].
func (d *driver) calibrate(m *onnxpb.Model, input, inName, name string) (map[string][2]float32, error) {
	dir := filepath.Join(d.tmp, "calibrate-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	gc := *m.Graph
	mc := *m
	mc.Graph = &gc
	gc.Outputs = nil
	gc.Nodes = slices.Clone(gc.Nodes)
	names := calibrationNames(m.Graph)
	for i, n := range names {
		// outputs under plain names (rlxrun writes NAME.npy)
		o := fmt.Sprintf("calibrated%d", i)
		gc.Nodes = append(gc.Nodes, &onnxpb.Node{Name: o, OpType: "Identity", Inputs: []string{n}, Outputs: []string{o}})
		gc.Outputs = append(gc.Outputs, &onnxpb.ValueInfo{Name: o, ElemType: onnxpb.DTFloat})
	}
	b, err := onnxpb.Encode(&mc)
	if err != nil {
		return nil, err
	}
	model, art, out := filepath.Join(dir, "model.onnx"), filepath.Join(dir, "model.rlx"), filepath.Join(dir, "out")
	if err := writeFile(model, b); err != nil {
		return nil, err
	}
	if _, e, err := d.exec(dir, nil, d.rlxc, "build", model, "-o", art, "--no-cache"); err != nil {
		return nil, fmt.Errorf("calibration build: %v: %s", err, clip(e, 300))
	}
	if _, e, err := d.exec(dir, nil, d.rlxrun, art, "--input", inName+"=@"+input, "--output-dir", out); err != nil {
		return nil, fmt.Errorf("calibration run: %v: %s", err, clip(e, 300))
	}
	ranges := map[string][2]float32{}
	for i, n := range names {
		t, err := npy.ReadFile(filepath.Join(out, fmt.Sprintf("calibrated%d.npy", i)))
		if err != nil {
			return nil, fmt.Errorf("calibration output %s: %v", n, err)
		}
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range t.F32() {
			lo, hi = min(lo, v), max(hi, v)
		}
		ranges[n] = [2]float32{lo, hi}
	}
	return ranges, nil
}

// quantizable reports a Conv whose weights (and bias, if any) are f32
// initializers, a MatMul whose second operand is a 2-D f32 initializer,
// or a Gemm (alpha and beta 1, no transA) of a 2-D f32 initializer B and
// a 1-D one C, if any, over its columns.
func quantizable(n *onnxpb.Node, inits map[string]*onnxpb.Tensor) bool {
	if n.OpType == "MatMul" && len(n.Inputs) == 2 && len(n.Outputs) == 1 {
		t := inits[n.Inputs[1]]
		return t != nil && t.DataType == onnxpb.DTFloat && len(t.Dims) == 2
	}
	if n.OpType == "Gemm" && len(n.Inputs) >= 2 && len(n.Outputs) == 1 {
		if a, b := n.Attr("alpha"), n.Attr("beta"); a != nil && a.F != 1 || b != nil && b.F != 1 || n.Attr("transA") != nil && n.Attr("transA").I != 0 {
			return false
		}
		t := inits[n.Inputs[1]]
		if t == nil || t.DataType != onnxpb.DTFloat || len(t.Dims) != 2 {
			return false
		}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			cols := t.Dims[1]
			if gemmTransB(n) {
				cols = t.Dims[0]
			}
			c := inits[n.Inputs[2]]
			return c != nil && c.DataType == onnxpb.DTFloat && len(c.Dims) == 1 && c.Dims[0] == cols
		}
		return true
	}
	if n.OpType != "Conv" || len(n.Inputs) < 2 || len(n.Outputs) != 1 {
		return false
	}
	for i, in := range n.Inputs[1:] {
		if t := inits[in]; t == nil && (i == 0 || in != "") || t != nil && t.DataType != onnxpb.DTFloat {
			return false
		}
	}
	return true
}

// gemmTransB reports a Gemm whose B is transposed.
func gemmTransB(n *onnxpb.Node) bool { a := n.Attr("transB"); return a != nil && a.I != 0 }

func initializers(g *onnxpb.Graph) map[string]*onnxpb.Tensor {
	inits := map[string]*onnxpb.Tensor{}
	for _, t := range g.Initializers {
		inits[t.Name] = t
	}
	return inits
}

// calibrationNames are the inputs and outputs of g's quantizable
// convolutions and products, in order, once each.
func calibrationNames(g *onnxpb.Graph) []string {
	inits := initializers(g)
	var names []string
	for _, n := range g.Nodes {
		if !quantizable(n, inits) {
			continue
		}
		for _, v := range []string{n.Inputs[0], n.Outputs[0]} {
			if !slices.Contains(names, v) {
				names = append(names, v)
			}
		}
	}
	return names
}

// actParams are uint8 quantization parameters covering [lo, hi] and 0.
func actParams(r [2]float32) (scale float32, zero uint8) {
	lo, hi := min(r[0], 0), max(r[1], 0)
	scale = (hi - lo) / 255
	if scale == 0 {
		return 1, 0
	}
	return scale, uint8(min(255, max(0, math.RoundToEven(float64(-lo/scale)))))
}

// qdqModel is m with its quantizable convolutions in QDQ groups.
func qdqModel(m *onnxpb.Model, ranges map[string][2]float32) (*onnxpb.Model, error) {
	g := m.Graph
	inits := initializers(g)
	gc := *g
	gc.Nodes = nil
	gc.Initializers = slices.Clone(g.Initializers)
	add := func(name string, dt int32, dims []int64, raw []byte) {
		gc.Initializers = append(gc.Initializers, &onnxpb.Tensor{Name: name, DataType: dt, Dims: dims, RawData: raw})
	}
	f32 := func(name string, dims []int64, v []float32) {
		raw := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
		}
		add(name, onnxpb.DTFloat, dims, raw)
	}
	node := func(op string, in []string, out string, attrs ...*onnxpb.Attr) {
		gc.Nodes = append(gc.Nodes, &onnxpb.Node{Name: out, OpType: op, Inputs: in, Outputs: []string{out}, Attrs: attrs})
	}
	// actQ gives tensor v (at its first use) scale and zero point
	// initializers: v_s, v_z.
	params := map[string]bool{}
	actQ := func(v string) (string, string, float32, error) {
		r, ok := ranges[v]
		if !ok {
			return "", "", 0, fmt.Errorf("no calibration range for %s", v)
		}
		s, z := actParams(r)
		if !params[v] {
			params[v] = true
			f32(v+"_s", nil, []float32{s})
			add(v+"_z", onnxpb.DTUint8, nil, []byte{z})
		}
		return v + "_s", v + "_z", s, nil
	}
	dequantized := map[string]string{} // a tensor by the DequantizeLinear output standing for it
	for _, n := range g.Nodes {
		if !quantizable(n, inits) {
			gc.Nodes = append(gc.Nodes, n)
			continue
		}
		x := n.Inputs[0]
		xs, xz, xscale, err := actQ(x)
		if err != nil {
			return nil, err
		}
		xd, ok := dequantized[x]
		if !ok {
			xd = x + "_dq"
			node("QuantizeLinear", []string{x, xs, xz}, x+"_q")
			node("DequantizeLinear", []string{x + "_q", xs, xz}, xd)
			dequantized[x] = xd
		}
		wt, err := inits[n.Inputs[1]].ToTensor()
		if err != nil {
			return nil, err
		}
		// symmetric int8 per output channel: a Conv's dim 0, a MatMul's
		// columns (dim 1 of [K, N]), a Gemm's the one or the other (its
		// B [N, K] where transB)
		axis, o := int64(0), int(wt.Shape[0])
		channel := func(e int) int { return e / (wt.Len() / o) }
		if n.OpType == "MatMul" || n.OpType == "Gemm" && !gemmTransB(n) {
			axis, o = 1, int(wt.Shape[1])
			channel = func(e int) int { return e % o }
		}
		w := wt.F32()
		ws := make([]float32, o)
		for e, v := range w {
			ws[channel(e)] = max(ws[channel(e)], float32(math.Abs(float64(v)))/127)
		}
		for c := range ws {
			if ws[c] == 0 {
				ws[c] = 1
			}
		}
		wq := make([]byte, len(w))
		for e, v := range w {
			wq[e] = byte(int8(max(-127, min(127, math.RoundToEven(float64(v/ws[channel(e)]))))))
		}
		wn := n.Inputs[1]
		add(wn+"_q", onnxpb.DTInt8, wt.Shape, wq)
		f32(wn+"_s", []int64{int64(o)}, ws)
		add(wn+"_z", onnxpb.DTInt8, []int64{int64(o)}, make([]byte, o))
		node("DequantizeLinear", []string{wn + "_q", wn + "_s", wn + "_z"}, wn+"_dq", &onnxpb.Attr{Name: "axis", Type: onnxpb.AttrInt, I: axis})
		inputs := []string{xd, wn + "_dq"}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			bt, err := inits[n.Inputs[2]].ToTensor()
			if err != nil {
				return nil, err
			}
			bn := n.Inputs[2]
			bs := make([]float32, o)
			bq := make([]byte, 4*o)
			for c, v := range bt.F32() {
				bs[c] = xscale * ws[c]
				binary.LittleEndian.PutUint32(bq[4*c:], uint32(int32(math.RoundToEven(float64(v/bs[c])))))
			}
			add(bn+"_q", onnxpb.DTInt32, []int64{int64(o)}, bq)
			f32(bn+"_s", []int64{int64(o)}, bs)
			node("DequantizeLinear", []string{bn + "_q", bn + "_s"}, bn+"_dq", &onnxpb.Attr{Name: "axis", Type: onnxpb.AttrInt, I: 0})
			inputs = append(inputs, bn+"_dq")
		}
		y := n.Outputs[0]
		conv := *n
		conv.Inputs, conv.Outputs = inputs, []string{y + "_f"}
		gc.Nodes = append(gc.Nodes, &conv)
		ys, yz, _, err := actQ(y)
		if err != nil {
			return nil, err
		}
		node("QuantizeLinear", []string{y + "_f", ys, yz}, y+"_q")
		node("DequantizeLinear", []string{y + "_q", ys, yz}, y)
		dequantized[y] = y
	}
	mc := *m
	mc.Graph = &gc
	if mc.Opsets[""] < 13 {
		// per-axis QuantizeLinear and DequantizeLinear are opset 13's
		mc.Opsets = map[string]int64{"": 13}
	}
	if !strings.Contains(mc.ProducerName, "rlxbench") {
		mc.ProducerName = "rlxbench --qdq (" + mc.ProducerName + ")"
	}
	return &mc, nil
}
