package onnxpb_test

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
)

func f32Raw(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// everything is a model with every attribute type Decode keeps, every
// tensor data field and every kind of dim.
func everything() *onnxpb.Model {
	known := func(v int64) onnxpb.Dim { return onnxpb.Dim{Value: v, Known: true} }
	attrs := []*onnxpb.Attr{
		{Name: "f", Type: onnxpb.AttrFloat, F: -0.25},
		{Name: "i", Type: onnxpb.AttrInt, I: -3},
		{Name: "s", Type: onnxpb.AttrString, S: []byte("SAME_UPPER")},
		{Name: "t", Type: onnxpb.AttrTensor, T: &onnxpb.Tensor{Name: "tv", DataType: onnxpb.DTInt64, Dims: []int64{2}, Int64Data: []int64{-1, 1 << 40}}},
		{Name: "g", Type: onnxpb.AttrGraph, HasGraph: true, G: &onnxpb.Graph{Name: "then",
			Nodes:   []*onnxpb.Node{{OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"y"}}},
			Outputs: []*onnxpb.ValueInfo{{Name: "y"}}}},
		{Name: "floats", Type: onnxpb.AttrFloats, Floats: []float32{1, -2.5, float32(math.Inf(1))}},
		{Name: "ints", Type: onnxpb.AttrInts, Ints: []int64{0, -1, math.MaxInt64}},
		{Name: "strings", Type: onnxpb.AttrStrings, Strings: [][]byte{[]byte("a"), {}, []byte("c")}},
		{Name: "graphs", Type: onnxpb.AttrGraphs, HasGraph: true},
		{Name: "no_ints", Type: onnxpb.AttrInts},
	}
	return &onnxpb.Model{
		IRVersion: 8, ProducerName: "rlx-test", ProducerVersion: "0.1",
		Opsets: map[string]int64{"": 17, "com.microsoft": 1},
		Graph: &onnxpb.Graph{
			Name: "all",
			Nodes: []*onnxpb.Node{
				{Name: "n", OpType: "Op", Inputs: []string{"x", "", "w"}, Outputs: []string{"y", ""}, Attrs: attrs},
				{OpType: "Custom", Domain: "com.microsoft", Inputs: []string{"y"}, Outputs: []string{"z"}},
			},
			Initializers: []*onnxpb.Tensor{
				{Name: "w", DataType: onnxpb.DTFloat, Dims: []int64{2, 2}, RawData: f32Raw(1, 2, 3, 4)},
				{Name: "empty_raw", DataType: onnxpb.DTFloat, Dims: []int64{0}, RawData: []byte{}},
				{Name: "scalar", DataType: onnxpb.DTFloat, FloatData: []float32{0.5}},
				{Name: "i32", DataType: onnxpb.DTInt32, Dims: []int64{3}, Int32Data: []int32{-7, 0, 1 << 30}},
				{Name: "d", DataType: onnxpb.DTDouble, Dims: []int64{2}, DoubleData: []float64{math.Pi, -1}},
				{Name: "u", DataType: onnxpb.DTUint64, Dims: []int64{1}, Uint64Data: []uint64{math.MaxUint64}},
				{Name: "str", DataType: onnxpb.DTString, Dims: []int64{2}, StringData: [][]byte{[]byte("x"), []byte("yz")}},
				{Name: "ext", DataType: onnxpb.DTFloat, Dims: []int64{4}, External: true,
					ExternalData: map[string]string{"location": "w.bin", "offset": "0", "length": "16"}},
			},
			Inputs: []*onnxpb.ValueInfo{
				{Name: "x", ElemType: onnxpb.DTFloat, HasShape: true, Shape: []onnxpb.Dim{{Param: "batch"}, known(3), {}}},
				{Name: "s", ElemType: onnxpb.DTBool, HasShape: true},
			},
			Outputs:   []*onnxpb.ValueInfo{{Name: "z", ElemType: onnxpb.DTFloat}},
			ValueInfo: []*onnxpb.ValueInfo{{Name: "y"}},
		},
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	m := everything()
	b, err := onnxpb.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := onnxpb.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("Decode(Encode(m)) differs:\n got %+v\nwant %+v", got.Graph, m.Graph)
		for i := range m.Graph.Nodes[0].Attrs {
			if g, w := got.Graph.Nodes[0].Attrs[i], m.Graph.Nodes[0].Attrs[i]; !reflect.DeepEqual(g, w) {
				t.Errorf("attribute %s: got %+v, want %+v", w.Name, g, w)
			}
		}
		for i := range m.Graph.Initializers {
			if g, w := got.Graph.Initializers[i], m.Graph.Initializers[i]; !reflect.DeepEqual(g, w) {
				t.Errorf("initializer %s: got %+v, want %+v", w.Name, g, w)
			}
		}
	}
	// Encoding the decoded model gives the same bytes.
	b2, err := onnxpb.Encode(got)
	if err != nil || string(b2) != string(b) {
		t.Errorf("Encode(Decode(b)) != b (err %v)", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(m *onnxpb.Model)
		want string
	}{
		{"no graph", func(m *onnxpb.Model) { m.Graph = nil }, "onnx: encode: no graph"},
		{"no op_type", func(m *onnxpb.Model) { m.Graph.Nodes[1].OpType = "" }, "onnx: encode: node 1: no op_type"},
		{"nil node", func(m *onnxpb.Model) { m.Graph.Nodes[1] = nil }, "onnx: encode: node 1: no op_type"},
		{"unnamed attribute", func(m *onnxpb.Model) { m.Graph.Nodes[0].Attrs[1].Name = "" }, "onnx: encode: node 0 (n): attribute 1: no name"},
		{"tensors", func(m *onnxpb.Model) { m.Graph.Nodes[0].Attrs[0].Type = onnxpb.AttrTensors }, "attribute 0 (f): attribute type TENSORS is not written"},
		{"no tensor", func(m *onnxpb.Model) { m.Graph.Nodes[0].Attrs[3].T = nil }, "attribute 3 (t): TENSOR attribute without a tensor"},
		{"unnamed initializer", func(m *onnxpb.Model) { m.Graph.Initializers[2].Name = "" }, "onnx: encode: initializer 2: no name"},
		{"unnamed output", func(m *onnxpb.Model) { m.Graph.Outputs[0].Name = "" }, "onnx: encode: output 0: no name"},
	} {
		m := everything()
		tc.edit(m)
		_, err := onnxpb.Encode(m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestEncodeImports: encoded single-operator models decode and import
// into the HIR operation they are.
func TestEncodeImports(t *testing.T) {
	f := func(name string, dims ...int64) *onnxpb.ValueInfo {
		vi := &onnxpb.ValueInfo{Name: name, ElemType: onnxpb.DTFloat, HasShape: true}
		for _, d := range dims {
			vi.Shape = append(vi.Shape, onnxpb.Dim{Value: d, Known: true})
		}
		return vi
	}
	ints := func(name string, v ...int64) *onnxpb.Attr {
		return &onnxpb.Attr{Name: name, Type: onnxpb.AttrInts, Ints: v}
	}
	w := make([]float32, 8*4*3*3)
	for i := range w {
		w[i] = float32(i%7) * 0.1
	}
	for _, tc := range []struct {
		name   string
		opset  int64
		node   *onnxpb.Node
		inits  []*onnxpb.Tensor
		inputs []*onnxpb.ValueInfo
		out    *onnxpb.ValueInfo
		want   string
	}{
		{"conv", 17, &onnxpb.Node{OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"y"},
			Attrs: []*onnxpb.Attr{ints("kernel_shape", 3, 3), ints("pads", 1, 1, 1, 1), ints("strides", 2, 2)}},
			[]*onnxpb.Tensor{{Name: "w", DataType: onnxpb.DTFloat, Dims: []int64{8, 4, 3, 3}, RawData: f32Raw(w...)}},
			[]*onnxpb.ValueInfo{f("x", 1, 4, 16, 16)}, f("y", 1, 8, 8, 8), "conv2d("},
		{"softmax", 13, &onnxpb.Node{OpType: "Softmax", Inputs: []string{"x"}, Outputs: []string{"y"},
			Attrs: []*onnxpb.Attr{{Name: "axis", Type: onnxpb.AttrInt, I: -1}}},
			nil, []*onnxpb.ValueInfo{f("x", 2, 10)}, f("y", 2, 10), "softmax("},
		{"add broadcast", 17, &onnxpb.Node{OpType: "Add", Inputs: []string{"a", "b"}, Outputs: []string{"y"}},
			nil, []*onnxpb.ValueInfo{f("a", 2, 3, 4), f("b", 4)}, f("y", 2, 3, 4), "add("},
		{"resize", 17, &onnxpb.Node{OpType: "Resize", Inputs: []string{"x", "", "scales"}, Outputs: []string{"y"},
			Attrs: []*onnxpb.Attr{{Name: "mode", Type: onnxpb.AttrString, S: []byte("nearest")}}},
			[]*onnxpb.Tensor{{Name: "scales", DataType: onnxpb.DTFloat, Dims: []int64{4}, RawData: f32Raw(1, 1, 2, 2)}},
			[]*onnxpb.ValueInfo{f("x", 1, 2, 4, 4)}, f("y", 1, 2, 8, 8), "resize"},
	} {
		m := &onnxpb.Model{IRVersion: 8, Opsets: map[string]int64{"": tc.opset}, Graph: &onnxpb.Graph{
			Name: tc.name, Nodes: []*onnxpb.Node{tc.node}, Initializers: tc.inits, Inputs: tc.inputs,
			Outputs: []*onnxpb.ValueInfo{tc.out}}}
		b, err := onnxpb.Encode(m)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		dm, err := onnxpb.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		res, err := onnx.Import(dm, onnx.Options{Module: "t", Source: tc.name + ".onnx"})
		if err != nil {
			t.Fatalf("%s: import: %v", tc.name, err)
		}
		if hir := string(res.HIR); !strings.Contains(hir, tc.want) {
			t.Errorf("%s: the HIR has no %q:\n%s", tc.name, tc.want, hir)
		}
	}
}
