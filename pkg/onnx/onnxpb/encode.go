package onnxpb

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Encode writes m as a serialized onnx.ModelProto: the subset of
// onnx.proto that Decode reads (opsets, the main graph, its nodes and
// attributes, initializers, inputs, outputs and value infos), so that
// Decode(Encode(m)) gives m back. Repeated numbers are written packed,
// tensors' data in the fields they are held in (RawData as raw_data).
// A GRAPH attribute's graph is written when it has one (G), GRAPHS as
// empty graphs, and
// TENSORS, SPARSE_TENSOR(S) and TYPE_PROTO(S) are refused: Decode keeps
// no more of them. Encode checks what Decode checks: a graph, nodes with
// an op_type, and names on initializers, value infos and attributes.
func Encode(m *Model) ([]byte, error) {
	b, err := encodeModel(m)
	if err != nil {
		return nil, fmt.Errorf("onnx: encode: %w", err)
	}
	return b, nil
}

// msg builds a protobuf message field by field (the tests' writer adds
// the wire forms Encode never writes: unpacked fields, groups).
type msg []byte

func (m msg) varint(num protowire.Number, v uint64) msg {
	m = protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

func (m msg) int(num protowire.Number, v int64) msg { return m.varint(num, uint64(v)) }

func (m msg) fixed32(num protowire.Number, v uint32) msg {
	m = protowire.AppendTag(m, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(m, v)
}

func (m msg) float(num protowire.Number, v float32) msg {
	return m.fixed32(num, math.Float32bits(v))
}

func (m msg) bytes(num protowire.Number, b []byte) msg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(m, b)
}

func (m msg) str(num protowire.Number, s string) msg { return m.bytes(num, []byte(s)) }

func (m msg) sub(num protowire.Number, sub msg) msg { return m.bytes(num, sub) }

// packedInts appends a packed repeated varint field.
func (m msg) packedInts(num protowire.Number, vs ...int64) msg {
	var p []byte
	for _, v := range vs {
		p = protowire.AppendVarint(p, uint64(v))
	}
	return m.bytes(num, p)
}

func (m msg) packedFloats(num protowire.Number, vs ...float32) msg {
	p := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		p = protowire.AppendFixed32(p, math.Float32bits(v))
	}
	return m.bytes(num, p)
}

func (m msg) packedDoubles(num protowire.Number, vs ...float64) msg {
	p := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		p = protowire.AppendFixed64(p, math.Float64bits(v))
	}
	return m.bytes(num, p)
}

func encodeModel(m *Model) (msg, error) {
	if m == nil || m.Graph == nil {
		return nil, errors.New("no graph")
	}
	var b msg
	if m.IRVersion != 0 {
		b = b.int(1, m.IRVersion)
	}
	if m.ProducerName != "" {
		b = b.str(2, m.ProducerName)
	}
	if m.ProducerVersion != "" {
		b = b.str(3, m.ProducerVersion)
	}
	domains := make([]string, 0, len(m.Opsets))
	for d := range m.Opsets {
		domains = append(domains, d)
	}
	slices.Sort(domains)
	for _, d := range domains {
		b = b.sub(8, msg(nil).str(1, d).int(2, m.Opsets[d]))
	}
	g, err := encodeGraph(m.Graph)
	if err != nil {
		return nil, err
	}
	return b.sub(7, g), nil
}

func encodeGraph(g *Graph) (msg, error) {
	var b msg
	for i, n := range g.Nodes {
		nb, err := encodeNode(n)
		if err != nil {
			name := ""
			if n != nil {
				name = quoteName(n.Name)
			}
			return nil, fmt.Errorf("node %d%s: %w", i, name, err)
		}
		b = b.sub(1, nb)
	}
	if g.Name != "" {
		b = b.str(2, g.Name)
	}
	for i, t := range g.Initializers {
		if t == nil || t.Name == "" {
			return nil, fmt.Errorf("initializer %d: no name", i)
		}
		b = b.sub(5, encodeTensor(t))
	}
	for _, list := range []struct {
		num  protowire.Number
		what string
		vis  []*ValueInfo
	}{{11, "input", g.Inputs}, {12, "output", g.Outputs}, {13, "value_info", g.ValueInfo}} {
		for i, vi := range list.vis {
			if vi == nil || vi.Name == "" {
				return nil, fmt.Errorf("%s %d: no name", list.what, i)
			}
			b = b.sub(list.num, encodeValueInfo(vi))
		}
	}
	return b, nil
}

func encodeNode(n *Node) (msg, error) {
	if n == nil || n.OpType == "" {
		return nil, errors.New("no op_type")
	}
	var b msg
	for _, in := range n.Inputs {
		b = b.str(1, in)
	}
	for _, out := range n.Outputs {
		b = b.str(2, out)
	}
	if n.Name != "" {
		b = b.str(3, n.Name)
	}
	b = b.str(4, n.OpType)
	for i, a := range n.Attrs {
		ab, err := encodeAttr(a)
		if err != nil {
			name := ""
			if a != nil {
				name = quoteName(a.Name)
			}
			return nil, fmt.Errorf("attribute %d%s: %w", i, name, err)
		}
		b = b.sub(5, ab)
	}
	if n.Domain != "" {
		b = b.str(7, n.Domain)
	}
	return b, nil
}

// encodeAttr writes the value field of a.Type (and the type: every
// writer since IR version 2 does).
func encodeAttr(a *Attr) (msg, error) {
	if a == nil || a.Name == "" {
		return nil, errors.New("no name")
	}
	b := msg(nil).str(1, a.Name)
	switch a.Type {
	case AttrFloat:
		b = b.float(2, a.F)
	case AttrInt:
		b = b.int(3, a.I)
	case AttrString:
		b = b.bytes(4, a.S)
	case AttrTensor:
		if a.T == nil {
			return nil, errors.New("TENSOR attribute without a tensor")
		}
		b = b.sub(5, encodeTensor(a.T))
	case AttrGraph:
		var g msg
		if a.G != nil {
			var err error
			if g, err = encodeGraph(a.G); err != nil {
				return nil, fmt.Errorf("graph: %w", err)
			}
		}
		b = b.sub(6, g)
	case AttrFloats:
		if len(a.Floats) > 0 {
			b = b.packedFloats(7, a.Floats...)
		}
	case AttrInts:
		if len(a.Ints) > 0 {
			b = b.packedInts(8, a.Ints...)
		}
	case AttrStrings:
		for _, s := range a.Strings {
			b = b.bytes(9, s)
		}
	case AttrGraphs:
		b = b.sub(11, nil)
	default:
		return nil, fmt.Errorf("attribute type %s is not written", a.Type)
	}
	return b.int(20, int64(a.Type)), nil
}

func encodeTensor(t *Tensor) msg {
	var b msg
	if len(t.Dims) > 0 {
		b = b.packedInts(1, t.Dims...)
	}
	b = b.int(2, int64(t.DataType))
	if len(t.FloatData) > 0 {
		b = b.packedFloats(4, t.FloatData...)
	}
	if len(t.Int32Data) > 0 {
		p := make([]byte, 0, len(t.Int32Data))
		for _, v := range t.Int32Data {
			p = protowire.AppendVarint(p, uint64(int64(v))) // int32 sign-extends
		}
		b = b.bytes(5, p)
	}
	for _, s := range t.StringData {
		b = b.bytes(6, s)
	}
	if len(t.Int64Data) > 0 {
		b = b.packedInts(7, t.Int64Data...)
	}
	b = b.str(8, t.Name)
	if t.RawData != nil {
		b = b.bytes(9, t.RawData)
	}
	if len(t.DoubleData) > 0 {
		b = b.packedDoubles(10, t.DoubleData...)
	}
	if len(t.Uint64Data) > 0 {
		p := make([]byte, 0, len(t.Uint64Data))
		for _, v := range t.Uint64Data {
			p = protowire.AppendVarint(p, v)
		}
		b = b.bytes(11, p)
	}
	keys := make([]string, 0, len(t.ExternalData))
	for k := range t.ExternalData {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = b.sub(13, msg(nil).str(1, k).str(2, t.ExternalData[k]))
	}
	if t.External {
		b = b.int(14, 1)
	}
	return b
}

// encodeValueInfo writes a tensor type; a value with neither an element
// type nor a shape gets no type.
func encodeValueInfo(vi *ValueInfo) msg {
	b := msg(nil).str(1, vi.Name)
	if vi.ElemType == 0 && !vi.HasShape {
		return b
	}
	tt := msg(nil).int(1, int64(vi.ElemType))
	if vi.HasShape {
		shape := msg(nil)
		for _, d := range vi.Shape {
			var dm msg
			switch {
			case d.Known:
				dm = dm.int(1, d.Value)
			case d.Param != "":
				dm = dm.str(2, d.Param)
			}
			shape = shape.sub(1, dm)
		}
		tt = tt.sub(2, shape)
	}
	return b.sub(2, msg(nil).sub(1, tt))
}
