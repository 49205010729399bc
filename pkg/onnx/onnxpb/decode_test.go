package onnxpb

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/tensor"
	"google.golang.org/protobuf/encoding/protowire"
)

func mustDecode(t *testing.T, b []byte) *Model {
	t.Helper()
	m, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return m
}

func TestDecodeModel(t *testing.T) {
	unknown := msg(nil).fixed64(99, 7).group(98, msg(nil).str(1, "x")).fixed32(97, 1).int(96, 5)
	g := msg(nil).
		str(2, "g").
		sub(1, append(nodeMsg("add", "Add", []string{"a", "b"}, []string{"c"}), unknown...)).
		sub(1, msg(nil).str(1, "c").str(1, "").str(1, "d").str(2, "e").str(2, "").str(4, "Custom").str(7, "com.example")).
		sub(1, msg(nil).str(4, "Relu").str(7, "ai.onnx").str(1, "e").str(2, "f")).
		sub(11, valueInfoMsg("a", DTFloat, dimParam("batch"), dimValue(512), msg(nil))).
		sub(11, valueInfoMsg("b", DTInt64)).            // no shape
		sub(11, valueInfoMsg("s", DTBool, []msg{}...)). // scalar: a shape with no dims
		sub(12, valueInfoMsg("f", DTFloat16, dimValue(1))).
		sub(13, msg(nil).str(1, "seq").sub(2, msg(nil).sub(4, msg(nil).sub(1, msg(nil))))). // sequence type
		sub(13, msg(nil).str(1, "notype")).
		sub(13, valueInfoMsg("oneof", DTFloat, msg(nil).int(1, 4).str(2, "n"), msg(nil).str(2, "n").int(1, 4)))
	b := append(modelMsg(g, opsetMsg("", 13), opsetMsg("com.example", 2), opsetMsg("ai.onnx", 17)), unknown...)
	m := mustDecode(t, b)

	if m.IRVersion != 8 || m.ProducerName != "rlx-test" || m.ProducerVersion != "0.1" {
		t.Errorf("model header: %d %q %q", m.IRVersion, m.ProducerName, m.ProducerVersion)
	}
	if len(m.Opsets) != 2 || m.Opsets[""] != 17 || m.Opsets["com.example"] != 2 {
		t.Errorf("opsets %v, want ai.onnx 17 (the highest) and com.example 2", m.Opsets)
	}
	gr := m.Graph
	if gr.Name != "g" || len(gr.Nodes) != 3 {
		t.Fatalf("graph %q with %d nodes", gr.Name, len(gr.Nodes))
	}
	n0, n1, n2 := gr.Nodes[0], gr.Nodes[1], gr.Nodes[2]
	if n0.Name != "add" || n0.OpType != "Add" || n0.Domain != "" || !slices.Equal(n0.Inputs, []string{"a", "b"}) || !slices.Equal(n0.Outputs, []string{"c"}) {
		t.Errorf("node 0: %+v", n0)
	}
	if n1.OpType != "Custom" || n1.Domain != "com.example" || !slices.Equal(n1.Inputs, []string{"c", "", "d"}) || !slices.Equal(n1.Outputs, []string{"e", ""}) {
		t.Errorf("node 1 (omitted optional values): %+v", n1)
	}
	if n2.Domain != "" || n2.OpType != "Relu" {
		t.Errorf("node 2: domain %q, want ai.onnx as \"\"", n2.Domain)
	}

	if len(gr.Inputs) != 3 || len(gr.Outputs) != 1 || len(gr.ValueInfo) != 3 {
		t.Fatalf("%d inputs, %d outputs, %d value infos", len(gr.Inputs), len(gr.Outputs), len(gr.ValueInfo))
	}
	a := gr.Inputs[0]
	wantA := []Dim{{Param: "batch"}, {Value: 512, Known: true}, {}}
	if a.Name != "a" || a.ElemType != DTFloat || !a.HasShape || !slices.Equal(a.Shape, wantA) {
		t.Errorf("input a: %+v", a)
	}
	if bi := gr.Inputs[1]; bi.ElemType != DTInt64 || bi.HasShape || bi.Shape != nil {
		t.Errorf("input b (no shape): %+v", bi)
	}
	if s := gr.Inputs[2]; s.ElemType != DTBool || !s.HasShape || len(s.Shape) != 0 {
		t.Errorf("input s (scalar): %+v", s)
	}
	if f := gr.Outputs[0]; f.Name != "f" || f.ElemType != DTFloat16 || !slices.Equal(f.Shape, []Dim{{Value: 1, Known: true}}) {
		t.Errorf("output f: %+v", f)
	}
	if s := gr.ValueInfo[0]; s.Name != "seq" || s.ElemType != 0 || s.HasShape {
		t.Errorf("sequence value info: %+v", s)
	}
	if s := gr.ValueInfo[1]; s.Name != "notype" || s.ElemType != 0 || s.HasShape {
		t.Errorf("untyped value info: %+v", s)
	}
	if s := gr.ValueInfo[2]; !slices.Equal(s.Shape, []Dim{{Param: "n"}, {Value: 4, Known: true}}) {
		t.Errorf("dim oneof, last wins: %+v", s.Shape)
	}
}

func TestSmallModel(t *testing.T) {
	m := mustDecode(t, smallModel())
	g := m.Graph
	if m.Opsets[""] != 17 || len(g.Nodes) != 2 || len(g.Initializers) != 2 {
		t.Fatalf("opsets %v, %d nodes, %d initializers", m.Opsets, len(g.Nodes), len(g.Initializers))
	}
	w, err := g.Initializers[0].ToTensor()
	if err != nil {
		t.Fatal(err)
	}
	if w.DType != tensor.F32 || !slices.Equal(w.Shape, []int64{3, 2}) || !slices.Equal(w.F32(), []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("w: %v %v %v", w.DType, w.Shape, w.F32())
	}
	hi, err := g.Initializers[1].ToTensor()
	if err != nil {
		t.Fatal(err)
	}
	if len(hi.Shape) != 0 || !slices.Equal(hi.F32(), []float32{6}) {
		t.Errorf("scalar hi: %v %v", hi.Shape, hi.F32())
	}
	if a := g.Nodes[1].Attr("note"); a == nil || a.Type != AttrString || string(a.S) != "hi" {
		t.Errorf("Attr(note) = %+v", a)
	}
	if g.Nodes[1].Attr("absent") != nil {
		t.Error("Attr(absent) is not nil")
	}
}

func TestAttributes(t *testing.T) {
	tensorAttr := msg(nil).packedInts(1, 2).int(2, int64(DTInt64)).packedInts(7, -1, 5)
	attrs := []msg{
		msg(nil).str(1, "f").int(20, int64(AttrFloat)).float(2, 0.5),
		msg(nil).str(1, "i").int(20, int64(AttrInt)).int(3, -3),
		msg(nil).str(1, "s").int(20, int64(AttrString)).str(4, "SAME_UPPER"),
		msg(nil).str(1, "t").int(20, int64(AttrTensor)).sub(5, tensorAttr),
		msg(nil).str(1, "g").int(20, int64(AttrGraph)).sub(6, msg(nil).str(2, "body").sub(1, nodeMsg("", "Relu", nil, nil))),
		msg(nil).str(1, "floats").int(20, int64(AttrFloats)).packedFloats(7, 1, 2).floats(7, 3),
		msg(nil).str(1, "ints_packed").int(20, int64(AttrInts)).packedInts(8, 1, -2, 1<<40),
		msg(nil).str(1, "ints").int(20, int64(AttrInts)).ints(8, -1, 0, 7),
		msg(nil).str(1, "strings").int(20, int64(AttrStrings)).str(9, "a").str(9, "").str(9, "c"),
		msg(nil).str(1, "graphs").int(20, int64(AttrGraphs)).sub(11, msg(nil)).sub(11, msg(nil)),
		msg(nil).str(1, "untyped").int(3, 9), // IR version 1: type inferred
		msg(nil).str(1, "empty_ints").int(20, int64(AttrInts)),
		msg(nil).str(1, "tensors").int(20, int64(AttrTensors)).sub(10, tensorAttr),
	}
	g := msg(nil).sub(1, nodeMsg("n", "Op", []string{"x"}, []string{"y"}, attrs...))
	n := mustDecode(t, modelMsg(g, opsetMsg("", 17))).Graph.Nodes[0]
	if len(n.Attrs) != len(attrs) {
		t.Fatalf("%d attributes, want %d", len(n.Attrs), len(attrs))
	}
	check := func(name string, typ AttrType, ok func(a *Attr) bool) {
		t.Helper()
		a := n.Attr(name)
		if a == nil {
			t.Errorf("attribute %s missing", name)
			return
		}
		if a.Type != typ || !ok(a) {
			t.Errorf("attribute %s: %+v", name, a)
		}
	}
	check("f", AttrFloat, func(a *Attr) bool { return a.F == 0.5 })
	check("i", AttrInt, func(a *Attr) bool { return a.I == -3 })
	check("s", AttrString, func(a *Attr) bool { return string(a.S) == "SAME_UPPER" })
	check("t", AttrTensor, func(a *Attr) bool {
		x, err := a.T.ToTensor()
		return err == nil && x.DType == tensor.I64 && slices.Equal(x.I64(), []int64{-1, 5})
	})
	check("g", AttrGraph, func(a *Attr) bool {
		return a.HasGraph && a.G != nil && a.G.Name == "body" && len(a.G.Nodes) == 1 && a.G.Nodes[0].OpType == "Relu"
	})
	check("floats", AttrFloats, func(a *Attr) bool { return slices.Equal(a.Floats, []float32{1, 2, 3}) })
	check("ints_packed", AttrInts, func(a *Attr) bool { return slices.Equal(a.Ints, []int64{1, -2, 1 << 40}) })
	check("ints", AttrInts, func(a *Attr) bool { return slices.Equal(a.Ints, []int64{-1, 0, 7}) })
	check("strings", AttrStrings, func(a *Attr) bool {
		return len(a.Strings) == 3 && string(a.Strings[0]) == "a" && len(a.Strings[1]) == 0 && string(a.Strings[2]) == "c"
	})
	check("graphs", AttrGraphs, func(a *Attr) bool { return a.HasGraph })
	check("untyped", AttrInt, func(a *Attr) bool { return a.I == 9 })
	check("empty_ints", AttrInts, func(a *Attr) bool { return len(a.Ints) == 0 })
	check("tensors", AttrTensors, func(a *Attr) bool { return a.T == nil && !a.HasGraph })
	if AttrInts.String() != "INTS" || AttrType(99).String() != "AttributeType(99)" {
		t.Errorf("AttrType names: %v %v", AttrInts, AttrType(99))
	}
}

// tensorCase decodes one initializer and converts it.
func decodeTensorMsg(t *testing.T, tm msg) *Tensor {
	t.Helper()
	g := msg(nil).sub(5, tm)
	return mustDecode(t, modelMsg(g)).Graph.Initializers[0]
}

func TestTensorData(t *testing.T) {
	le16 := func(vs ...uint16) []byte {
		var b []byte
		for _, v := range vs {
			b = append(b, byte(v), byte(v>>8))
		}
		return b
	}
	base := func(dt int32, dims ...int64) msg {
		return msg(nil).str(8, "c").int(2, int64(dt)).packedInts(1, dims...)
	}
	h1, h2 := tensor.F32ToF16(1.5), tensor.F32ToF16(-2)
	b1, b2 := tensor.F32ToBF16(1.5), tensor.F32ToBF16(-2)
	cases := []struct {
		name string
		m    msg
		dt   tensor.DType
		want []byte // the rlx tensor's bytes
	}{
		{"float packed", base(DTFloat, 3).packedFloats(4, 1, -2, 3), tensor.F32, tensor.Bytes([]float32{1, -2, 3})},
		{"float unpacked", base(DTFloat, 3).floats(4, 1, -2).floats(4, 3), tensor.F32, tensor.Bytes([]float32{1, -2, 3})},
		{"float raw", base(DTFloat, 1, 2).bytes(9, tensor.Bytes([]float32{7, 8})), tensor.F32, tensor.Bytes([]float32{7, 8})},
		{"int64 packed", base(DTInt64, 3).packedInts(7, -1, 0, math.MaxInt64), tensor.I64, tensor.Bytes([]int64{-1, 0, math.MaxInt64})},
		{"int64 unpacked", base(DTInt64, 3).ints(7, -1, 0, math.MinInt64), tensor.I64, tensor.Bytes([]int64{-1, 0, math.MinInt64})},
		{"int64 mixed", base(DTInt64, 3).packedInts(7, 1, 2).ints(7, 3), tensor.I64, tensor.Bytes([]int64{1, 2, 3})},
		{"int32 packed", base(DTInt32, 2).packedInts(5, -7, 1<<30), tensor.I32, tensor.Bytes([]int32{-7, 1 << 30})},
		{"int32 unpacked", base(DTInt32, 2).ints(5, -7, 8), tensor.I32, tensor.Bytes([]int32{-7, 8})},
		{"int16", base(DTInt16, 2).packedInts(5, -300, 300), tensor.I16, tensor.Bytes([]int16{-300, 300})},
		{"int8", base(DTInt8, 3).packedInts(5, -128, 0, 127), tensor.I8, []byte{0x80, 0, 127}},
		{"uint8", base(DTUint8, 2).ints(5, 0, 255), tensor.U8, []byte{0, 255}},
		{"bool int32_data", base(DTBool, 3).packedInts(5, 1, 0, 1), tensor.Bool, []byte{1, 0, 1}},
		{"bool raw", base(DTBool, 3).bytes(9, []byte{0, 2, 1}), tensor.Bool, []byte{0, 1, 1}},
		{"float16 int32_data", base(DTFloat16, 2).packedInts(5, int64(h1), int64(h2)), tensor.F16, le16(h1, h2)},
		{"float16 sign-extended", base(DTFloat16, 1).packedInts(5, int64(int16(h2))), tensor.F16, le16(h2)},
		{"float16 raw", base(DTFloat16, 2).bytes(9, le16(h1, h2)), tensor.F16, le16(h1, h2)},
		{"bfloat16 int32_data", base(DTBFloat16, 2).ints(5, int64(b1), int64(b2)), tensor.BF16, le16(b1, b2)},
		{"double", base(DTDouble, 2).packedDoubles(10, 0.25, -1e300), tensor.F64, tensor.Bytes([]float64{0.25, -1e300})},
		{"double unpacked", base(DTDouble, 1).fixed64(10, math.Float64bits(3)), tensor.F64, tensor.Bytes([]float64{3})},
		{"uint64", base(DTUint64, 2).packedInts(11, 5, math.MaxInt64), tensor.I64, tensor.Bytes([]int64{5, math.MaxInt64})},
		{"uint64 raw", base(DTUint64, 1).bytes(9, tensor.Bytes([]uint64{9})), tensor.I64, tensor.Bytes([]int64{9})},
		{"scalar", base(DTInt64).packedInts(7, 42), tensor.I64, tensor.Bytes([]int64{42})},
		{"empty", base(DTFloat, 0, 3), tensor.F32, nil},
		{"empty raw", base(DTFloat, 2, 0).bytes(9, nil), tensor.F32, nil},
	}
	for _, c := range cases {
		x, err := decodeTensorMsg(t, c.m).ToTensor()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if x.DType != c.dt || !bytes.Equal(x.Data, c.want) || x.Check() != nil {
			t.Errorf("%s: %v %v % x, want %v % x", c.name, x.DType, x.Shape, x.Data, c.dt, c.want)
		}
	}
}

func TestTensorErrors(t *testing.T) {
	base := func(dt int32, dims ...int64) msg {
		return msg(nil).str(8, "w").int(2, int64(dt)).packedInts(1, dims...)
	}
	cases := []struct {
		name string
		m    msg
		want string
	}{
		{"too few floats", base(DTFloat, 2, 2).packedFloats(4, 1, 2, 3), "has 3 values in float_data, want 4 elements"},
		{"too much raw", base(DTFloat, 2).bytes(9, make([]byte, 12)), "has 12 bytes of raw_data, want 2 elements of 4 bytes"},
		{"no data", base(DTFloat, 2), "has no data; want 2 elements"},
		{"wrong field", base(DTFloat, 2).packedInts(7, 1, 2), "has no raw_data or float_data but int64_data (2 values)"},
		{"raw and typed", base(DTFloat, 1).bytes(9, make([]byte, 4)).floats(4, 1), "has both raw_data and float_data"},
		{"two typed", base(DTInt64, 1).ints(7, 1).floats(4, 1), "has both int64_data and float_data"},
		{"string", base(DTString, 1).str(6, "a"), "data type STRING is not supported"},
		{"uint32", base(DTUint32, 1).ints(11, 1), "data type UINT32 is not supported"},
		{"uint16", base(DTUint16, 1).ints(5, 1), "data type UINT16 is not supported"},
		{"complex64", base(DTComplex64, 1).floats(4, 1, 2), "data type COMPLEX64 is not supported"},
		{"float8", base(17, 1).ints(5, 1), "data type FLOAT8E4M3FN is not supported"},
		{"unknown dtype", base(99, 1), "data type DataType(99) is not supported"},
		{"undefined", base(DTUndefined, 1), "data type UNDEFINED is not supported"},
		{"uint64 too big", base(DTUint64, 1).packedInts(11, -1), "UINT64 value 18446744073709551615 (element 0) does not fit in i64"},
		{"uint64 raw too big", base(DTUint64, 1).bytes(9, tensor.Bytes([]uint64{1 << 63})), "does not fit in i64"},
		{"int8 range", base(DTInt8, 1).ints(5, 128), "int32_data value 128 (element 0) is out of range for INT8"},
		{"uint8 range", base(DTUint8, 1).ints(5, -1), "out of range for UINT8"},
		{"int16 range", base(DTInt16, 1).ints(5, 40000), "out of range for INT16"},
		{"float16 range", base(DTFloat16, 1).ints(5, 70000), "out of range for FLOAT16"},
		{"negative dim", base(DTFloat, 2, -1), "dim 1 is negative (-1)"},
		{"overflow", base(DTFloat, 1<<40, 1<<40), "element count overflows int64"},
		{"huge, no data", base(DTFloat, 1<<20, 1<<20), "has no data; want 1099511627776 elements"},
		{"huge raw", base(DTFloat, 1<<61).bytes(9, make([]byte, 8)), "has 8 bytes of raw_data, want 2305843009213693952 elements"},
		{"external", base(DTFloat, 4).sub(13, msg(nil).str(1, "location").str(2, "weights.bin")).int(14, 1), `data is in external file "weights.bin", not loaded`},
		{"external, no location", base(DTFloat, 4).int(14, 1), "external data without a location"},
	}
	for _, c := range cases {
		x, err := decodeTensorMsg(t, c.m).ToTensor()
		if err == nil {
			t.Errorf("%s: no error, got %v %v", c.name, x.DType, x.Shape)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), `onnx: tensor "w" (`) {
			t.Errorf("%s: error %q, want it to name the tensor and say %q", c.name, err, c.want)
		}
	}
	_, err := decodeTensorMsg(t, base(DTUint32, 2, 3).ints(11, 1)).ToTensor()
	if want := `onnx: tensor "w" (UINT32 [2, 3]): data type UINT32 is not supported`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestExternalData(t *testing.T) {
	tm := msg(nil).str(8, "big").int(2, int64(DTFloat)).packedInts(1, 1024, 1024).
		sub(13, msg(nil).str(1, "location").str(2, "model.onnx.data")).
		sub(13, msg(nil).str(1, "offset").str(2, "4096")).
		sub(13, msg(nil).str(1, "length").str(2, "4194304")).
		int(14, 1)
	x := decodeTensorMsg(t, tm)
	if !x.External || x.ExternalData["location"] != "model.onnx.data" || x.ExternalData["offset"] != "4096" || x.ExternalData["length"] != "4194304" {
		t.Errorf("external tensor: %+v", x)
	}
	y := decodeTensorMsg(t, msg(nil).str(8, "inline").int(2, int64(DTFloat)).int(14, 0).floats(4, 1))
	if y.External {
		t.Error("data_location DEFAULT decoded as external")
	}
}

func TestDecodeErrors(t *testing.T) {
	// A node whose fourth attribute is cut inside its float value.
	attrs := []msg{
		msg(nil).str(1, "a").int(20, 2).int(3, 1),
		msg(nil).str(1, "b").int(20, 2).int(3, 1),
		msg(nil).str(1, "c").int(20, 2).int(3, 1),
		append(msg(nil).str(1, "alpha").int(20, 1), protowire.AppendTag(nil, 2, protowire.Fixed32Type)[0], 0, 0),
	}
	nodes := msg(nil)
	for i := range 12 {
		nodes = nodes.sub(1, nodeMsg("n"+string(rune('a'+i)), "Relu", []string{"x"}, []string{"y"}))
	}
	nodes = nodes.sub(1, nodeMsg("/encoder/Add", "Add", []string{"x", "y"}, []string{"z"}, attrs...))
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"attribute", modelMsg(nodes), "onnx: node 12 (/encoder/Add): attribute 3 (alpha): truncated field 2"},
		{"empty", nil, "onnx: not an ONNX model: no graph"},
		{"text", []byte("hello, world\n"), "onnx: "},
		{"no graph", msg(nil).int(1, 8).sub(8, opsetMsg("", 17)), "onnx: not an ONNX model: no graph"},
		{"huge length", protowire.AppendVarint(protowire.AppendTag(nil, 7, protowire.BytesType), 1<<62), "onnx: truncated field 7"},
		{"huge packed dims", modelMsg(msg(nil).sub(5, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), 1<<40))), "onnx: initializer 0: truncated field 1"},
		{"truncated tag", modelMsg(msg(nil).sub(1, msg{0x80})), "onnx: node 0: truncated tag"},
		{"bad varint", modelMsg(msg(nil).sub(1, msg(nil).str(3, "n").append(0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))), "onnx: node 0 (n): field 3:"},
		{"field zero", msg{0x00, 0x01}, "onnx: bad tag:"},
		{"wrong wire type", modelMsg(msg(nil).sub(1, msg(nil).int(3, 5))), "onnx: node 0: field 3: wire type varint, want length-delimited"},
		{"end group", msg{0x0c}, "onnx: field 1: unexpected end of group"},
		{"reserved wire type", msg{0x0e}, "onnx: field 1: reserved wire type 6"},
		{"bad packed floats", modelMsg(msg(nil).sub(5, msg(nil).bytes(4, make([]byte, 5)))), "onnx: initializer 0: field 4: packed fixed32 payload of 5 bytes"},
		{"bad packed doubles", modelMsg(msg(nil).sub(5, msg(nil).str(8, "d").bytes(10, make([]byte, 9)))), `onnx: initializer 0 (d): field 10: packed fixed64 payload of 9 bytes`},
		{"bad packed ints", modelMsg(msg(nil).sub(5, msg(nil).bytes(7, []byte{1, 0x80}))), "onnx: initializer 0: truncated field 7"},
		{"input dim", modelMsg(msg(nil).sub(11, msg(nil).str(1, "x").sub(2, msg(nil).sub(1, msg(nil).sub(2, msg(nil).sub(1, msg{0x08})))))), `onnx: input 0 (x): type: dim 0: truncated field 1`},
		{"no op_type", modelMsg(msg(nil).sub(1, msg(nil).str(3, "n"))), "onnx: node 0 (n): no op_type"},
		{"unnamed attribute", modelMsg(msg(nil).sub(1, nodeMsg("n", "Relu", nil, nil, msg(nil).int(20, 2).int(3, 1)))), "onnx: node 0 (n): attribute 0: no name"},
		{"unnamed initializer", modelMsg(msg(nil).sub(5, msg(nil).int(2, 1).floats(4, 1))), "onnx: initializer 0: no name"},
		{"unnamed output", modelMsg(msg(nil).sub(12, valueInfoMsg("", DTFloat))), "onnx: output 0: no name"},
		{"opset", modelMsg(msg(nil), msg{0x10}), "onnx: opset_import 0: truncated field 2"},
		{"attribute tensor", modelMsg(msg(nil).sub(1, nodeMsg("c", "Constant", nil, []string{"y"}, msg(nil).str(1, "value").sub(5, msg(nil).str(8, "v").bytes(9, nil).append(0x22))))), `onnx: node 0 (c): attribute 0 (value): tensor (v): truncated field 4`},
	}
	for _, c := range cases {
		m, err := Decode(c.b)
		if err == nil {
			t.Errorf("%s: no error, decoded %+v", c.name, m)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %q, want %q", c.name, err, c.want)
		}
	}
}

func (m msg) append(b ...byte) msg { return append(m, b...) }

// TestTruncations cuts a valid model at every length: each proper prefix is
// invalid (the graph comes last) and must give an error, not a panic.
func TestTruncations(t *testing.T) {
	b := smallModel()
	mustDecode(t, b)
	for i := range len(b) {
		if m, err := Decode(b[:i]); err == nil {
			t.Errorf("prefix of %d bytes of %d decoded: %+v", i, len(b), m)
		}
	}
}

// TestGarbage decodes random bytes and random corruptions of a valid model:
// no panic, and bounded allocation.
func TestGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	valid := smallModel()
	for i := range 5000 {
		var b []byte
		if i%2 == 0 {
			b = make([]byte, r.IntN(200))
			for j := range b {
				b[j] = byte(r.Uint32())
			}
		} else {
			b = bytes.Clone(valid)
			for range 1 + r.IntN(4) {
				b[r.IntN(len(b))] = byte(r.Uint32())
			}
		}
		checkDecode(t, b)
	}
}

// checkDecode decodes b and converts every tensor in it, checking that
// nothing panics and that allocation stays within a multiple of len(b).
func checkDecode(t testing.TB, b []byte) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := Decode(b)
	if err == nil {
		if m.Graph == nil || m.Opsets == nil {
			t.Fatalf("decoded model without graph or opsets: %+v", m)
		}
		var ts []*Tensor
		ts = append(ts, m.Graph.Initializers...)
		for _, n := range m.Graph.Nodes {
			n.Attr("value")
			for _, a := range n.Attrs {
				if a.T != nil {
					ts = append(ts, a.T)
				}
			}
		}
		for _, x := range ts {
			if y, err := x.ToTensor(); err == nil {
				if err := y.Check(); err != nil {
					t.Fatalf("tensor %q: %v", x.Name, err)
				}
			}
		}
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(allocFactor*len(b)+1<<20) {
		t.Fatalf("decoding %d bytes allocated %d bytes", len(b), alloc)
	}
}

// allocFactor bounds what decoding may allocate per input byte (the worst
// case, a stream of empty attribute strings, is about 62).
const allocFactor = 100

// TestAllocationBound decodes streams of the smallest messages that each
// allocate a struct, and checks the allocation against the input size.
func TestAllocationBound(t *testing.T) {
	const size = 1 << 20
	repeat := func(m msg) msg {
		var r msg
		for len(r) < size {
			r = append(r, m...)
		}
		return r
	}
	attrs := repeat(msg(nil).sub(5, msg(nil).str(1, "a")))
	cases := map[string]msg{
		"nodes":        repeat(msg(nil).sub(1, msg(nil).str(4, "A"))),
		"node inputs":  msg(nil).sub(1, msg(nil).str(4, "A").append(repeat(msg(nil).str(1, ""))...)),
		"attributes":   msg(nil).sub(1, msg(nil).str(4, "A").append(attrs...)),
		"attr strings": msg(nil).sub(1, nodeMsg("n", "A", nil, nil, msg(nil).str(1, "a").append(repeat(msg(nil).str(9, ""))...))),
		"initializers": repeat(msg(nil).sub(5, msg(nil).str(8, "x"))),
		"dims":         msg(nil).sub(5, msg(nil).str(8, "x").append(repeat(msg(nil).int(1, 0))...)),
		"inputs":       repeat(msg(nil).sub(11, msg(nil).str(1, "x"))),
		"shape dims":   msg(nil).sub(11, valueInfoMsg("x", DTFloat, slices.Repeat([]msg{nil}, size/2)...)),
	}
	for name, g := range cases {
		b := modelMsg(g, opsetMsg("", 17))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decode(b)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes allocated %d (%.1f per byte)", name, len(b), alloc, float64(alloc)/float64(len(b)))
		if alloc > uint64(allocFactor*len(b)) {
			t.Errorf("%s: %d bytes allocated %d", name, len(b), alloc)
		}
	}
}

func TestDTypeName(t *testing.T) {
	for dt, want := range map[int32]string{1: "FLOAT", 7: "INT64", 9: "BOOL", 10: "FLOAT16", 16: "BFLOAT16", 0: "UNDEFINED", -1: "DataType(-1)", 1000: "DataType(1000)"} {
		if got := DTypeName(dt); got != want {
			t.Errorf("DTypeName(%d) = %q, want %q", dt, got, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	valid := smallModel()
	f.Add([]byte(valid))
	f.Add([]byte(valid[:len(valid)/2]))
	attrs := msg(nil).sub(1, nodeMsg("n", "Op", []string{"x", ""}, []string{"y"},
		msg(nil).str(1, "f").int(20, 1).float(2, 1),
		msg(nil).str(1, "ints").int(20, 7).packedInts(8, 1, -1),
		msg(nil).str(1, "t").int(20, 4).sub(5, msg(nil).int(2, int64(DTInt32)).packedInts(1, 2).ints(5, 1, 2)),
		msg(nil).str(1, "strings").int(20, 8).str(9, "a")))
	f.Add([]byte(modelMsg(attrs, opsetMsg("", 17))))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
	})
}

// The models exported by the project's scripts, checked against their
// manifest.

// modelsDir finds shared/models: next to the repository (../shared) or
// inside it (shared/, as on the device machines).
func modelsDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	for _, c := range []string{filepath.Join(dir, "shared", "models"), filepath.Join(dir, "..", "shared", "models")} {
		if fi, err := os.Stat(filepath.Join(c, "manifest.json")); err == nil && !fi.IsDir() {
			return c
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("shared/models not found next to or inside the repository, and CI=true")
	}
	t.Skip("shared/models not found; skipping the exported ONNX models")
	return ""
}

type manifestValue struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape []any  `json:"shape"`
}

type manifestModel struct {
	File            string          `json:"file"`
	Opset           int64           `json:"opset"`
	IRVersion       int64           `json:"ir_version"`
	Params          int64           `json:"params"`
	Inputs          []manifestValue `json:"inputs"`
	Outputs         []manifestValue `json:"outputs"`
	NumNodes        int             `json:"num_nodes"`
	NumInitializers int             `json:"num_initializers"`
	OpDomains       []string        `json:"op_domains"`
	OpCounts        map[string]int  `json:"op_counts"`
}

var manifestDTypes = map[string]int32{
	"float32": DTFloat, "float16": DTFloat16, "bfloat16": DTBFloat16, "float64": DTDouble,
	"int64": DTInt64, "int32": DTInt32, "int8": DTInt8, "uint8": DTUint8, "bool": DTBool,
}

func TestExportedModels(t *testing.T) {
	dir := modelsDir(t)
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Models map[string]manifestModel `json:"models"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mlp", "encoder", "mobilenet_v2"} {
		t.Run(name, func(t *testing.T) {
			want, ok := manifest.Models[name]
			if !ok {
				t.Fatalf("%s is not in the manifest", name)
			}
			m, err := DecodeFile(filepath.Join(dir, want.File))
			if err != nil {
				t.Fatal(err)
			}
			checkExported(t, m, want)
		})
	}
}

func checkExported(t *testing.T, m *Model, want manifestModel) {
	if m.IRVersion != want.IRVersion || m.Opsets[""] != want.Opset {
		t.Errorf("ir_version %d, opsets %v; want %d, opset %d", m.IRVersion, m.Opsets, want.IRVersion, want.Opset)
	}
	g := m.Graph
	if len(g.Nodes) != want.NumNodes || len(g.Initializers) != want.NumInitializers {
		t.Errorf("%d nodes, %d initializers; want %d, %d", len(g.Nodes), len(g.Initializers), want.NumNodes, want.NumInitializers)
	}
	counts := map[string]int{}
	for _, n := range g.Nodes {
		counts[n.OpType]++
		if n.Domain != "" || len(n.Outputs) == 0 {
			t.Errorf("node %s (%s): domain %q, outputs %q", n.Name, n.OpType, n.Domain, n.Outputs)
		}
		if n.OpType == "Constant" {
			a := n.Attr("value")
			if a == nil || a.Type != AttrTensor || a.T == nil {
				t.Errorf("Constant %s: value attribute %+v", n.Name, a)
			} else if _, err := a.T.ToTensor(); err != nil {
				t.Error(err)
			}
		}
	}
	if len(counts) != len(want.OpCounts) {
		t.Errorf("op counts %v, want %v", counts, want.OpCounts)
	}
	for op, c := range want.OpCounts {
		if counts[op] != c {
			t.Errorf("%d %s nodes, want %d", counts[op], op, c)
		}
	}
	checkValues(t, "input", g.Inputs, want.Inputs)
	checkValues(t, "output", g.Outputs, want.Outputs)

	var elems int64
	for _, init := range g.Initializers {
		x, err := init.ToTensor()
		if err != nil {
			t.Error(err)
			continue
		}
		if err := x.Check(); err != nil || int64(x.Len()) != tensor.NumElements(init.Dims) || x.Len() == 0 {
			t.Errorf("initializer %s: %v %v (%v)", init.Name, x.DType, x.Shape, err)
		}
		elems += int64(x.Len())
	}
	// params counts the module's parameters and buffers; the exporter
	// folds some (BatchNorm statistics) away, so the initializers hold at
	// most that many elements.
	if elems == 0 || elems > want.Params {
		t.Errorf("initializers hold %d elements; the model has %d parameters", elems, want.Params)
	}
}

func checkValues(t *testing.T, what string, got []*ValueInfo, want []manifestValue) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d graph %ss, want %d", len(got), what, len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || g.ElemType != manifestDTypes[w.DType] || !g.HasShape || len(g.Shape) != len(w.Shape) {
			t.Errorf("%s %d: %+v, want %+v", what, i, g, w)
			continue
		}
		for j, d := range w.Shape {
			var ok bool
			switch d := d.(type) {
			case string:
				ok = g.Shape[j] == Dim{Param: d}
			case float64:
				ok = g.Shape[j] == Dim{Value: int64(d), Known: true}
			}
			if !ok {
				t.Errorf("%s %s: dim %d is %+v, want %v", what, w.Name, j, g.Shape[j], d)
			}
		}
	}
}

// TestDecodeSubgraphDepth: If branches nested past maxGraphDepth are
// refused with a message, not decoded until the stack runs out.
func TestDecodeSubgraphDepth(t *testing.T) {
	nest := func(depth int) msg {
		g := msg(nil).sub(1, nodeMsg("leaf", "Relu", []string{"x"}, []string{"y"}))
		for range depth {
			branch := msg(nil).str(1, "then_branch").int(20, int64(AttrGraph)).sub(6, g)
			g = msg(nil).sub(1, nodeMsg("if", "If", []string{"c"}, []string{"y"}, branch))
		}
		return modelMsg(g, opsetMsg("", 17))
	}
	m := mustDecode(t, nest(maxGraphDepth))
	if a := m.Graph.Nodes[0].Attr("then_branch"); a == nil || a.G == nil || len(a.G.Nodes) != 1 {
		t.Fatalf("a branch %d deep was not decoded", maxGraphDepth)
	}
	if _, err := Decode(nest(maxGraphDepth + 1)); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("a branch %d deep: got %v", maxGraphDepth+1, err)
	}
}
