package onnxpb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Decode decodes an ONNX model (a serialized onnx.ModelProto). Tensors'
// RawData alias b.
func Decode(b []byte) (*Model, error) {
	m, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return m, nil
}

// DecodeFile reads and decodes an ONNX model file, and the data of
// tensors stored in external files beside it (LoadExternal).
func DecodeFile(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	m, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	if err := m.LoadExternal(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	return m, nil
}

func decode(b []byte) (*Model, error) {
	m := &Model{Opsets: map[string]int64{}}
	if err := decodeModel(b, m); err != nil {
		return nil, err
	}
	if m.Graph == nil {
		return nil, errors.New("not an ONNX model: no graph")
	}
	return m, nil
}

// field is one decoded protobuf field: its number, wire type and value
// (v for varint and fixed types, b for length-delimited ones).
type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64
	b   []byte
}

// next decodes the field at the start of b and returns the rest of b.
// Groups (unused by ONNX) are skipped whole.
func next(b []byte) (field, []byte, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, nil, wireErr(0, n)
	}
	b = b[n:]
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		f.v, n = protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		f.v = uint64(v)
	case protowire.Fixed64Type:
		f.v, n = protowire.ConsumeFixed64(b)
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(b)
	case protowire.StartGroupType:
		n = protowire.ConsumeFieldValue(num, typ, b)
	case protowire.EndGroupType:
		return field{}, nil, fmt.Errorf("field %d: unexpected end of group", num)
	default:
		return field{}, nil, fmt.Errorf("field %d: reserved wire type %d", num, typ)
	}
	if n < 0 {
		return field{}, nil, wireErr(num, n)
	}
	return f, b[n:], nil
}

// wireErr describes a protowire parse failure (n < 0) of field num (0: of
// a tag).
func wireErr(num protowire.Number, n int) error {
	err := protowire.ParseError(n)
	switch {
	case num == 0 && errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("truncated tag")
	case num == 0:
		return fmt.Errorf("bad tag: %v", err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("truncated field %d", num)
	}
	return fmt.Errorf("field %d: %v", num, err)
}

var wireNames = map[protowire.Type]string{
	protowire.VarintType:     "varint",
	protowire.Fixed32Type:    "fixed32",
	protowire.Fixed64Type:    "fixed64",
	protowire.BytesType:      "length-delimited",
	protowire.StartGroupType: "group",
}

func (f field) wrongType(want protowire.Type) error {
	return fmt.Errorf("field %d: wire type %s, want %s", f.num, wireNames[f.typ], wireNames[want])
}

func (f field) varint() (uint64, error) {
	if f.typ != protowire.VarintType {
		return 0, f.wrongType(protowire.VarintType)
	}
	return f.v, nil
}

func (f field) int64() (int64, error) {
	v, err := f.varint()
	return int64(v), err
}

// int32 decodes an int32 or enum field (negative values are sign-extended
// to ten bytes on the wire).
func (f field) int32() (int32, error) {
	v, err := f.varint()
	return int32(v), err
}

func (f field) float32() (float32, error) {
	if f.typ != protowire.Fixed32Type {
		return 0, f.wrongType(protowire.Fixed32Type)
	}
	return math.Float32frombits(uint32(f.v)), nil
}

// bytes returns a length-delimited value (aliasing the input), never nil.
func (f field) bytes() ([]byte, error) {
	if f.typ != protowire.BytesType {
		return nil, f.wrongType(protowire.BytesType)
	}
	if f.b == nil {
		return []byte{}, nil
	}
	return f.b, nil
}

func (f field) string() (string, error) {
	b, err := f.bytes()
	return string(b), err
}

// appendVarints appends a repeated varint field, packed or not.
func appendVarints[T any](dst []T, f field, conv func(uint64) T) ([]T, error) {
	switch f.typ {
	case protowire.VarintType:
		return append(dst, conv(f.v)), nil
	case protowire.BytesType:
		// Each varint ends in one byte below 0x80: counting those bounds
		// the allocation by the payload size.
		count := 0
		for _, c := range f.b {
			if c < 0x80 {
				count++
			}
		}
		dst = slices.Grow(dst, count)
		for b := f.b; len(b) > 0; {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return dst, wireErr(f.num, n)
			}
			dst = append(dst, conv(v))
			b = b[n:]
		}
		return dst, nil
	}
	return dst, f.wrongType(protowire.VarintType)
}

// appendFixed32s appends a repeated fixed32 field (float), packed or not.
func appendFixed32s(dst []float32, f field) ([]float32, error) {
	switch f.typ {
	case protowire.Fixed32Type:
		return append(dst, math.Float32frombits(uint32(f.v))), nil
	case protowire.BytesType:
		if len(f.b)%4 != 0 {
			return dst, fmt.Errorf("field %d: packed fixed32 payload of %d bytes", f.num, len(f.b))
		}
		dst = slices.Grow(dst, len(f.b)/4)
		for b := f.b; len(b) > 0; b = b[4:] {
			v, _ := protowire.ConsumeFixed32(b)
			dst = append(dst, math.Float32frombits(v))
		}
		return dst, nil
	}
	return dst, f.wrongType(protowire.Fixed32Type)
}

// appendFixed64s appends a repeated fixed64 field (double), packed or not.
func appendFixed64s(dst []float64, f field) ([]float64, error) {
	switch f.typ {
	case protowire.Fixed64Type:
		return append(dst, math.Float64frombits(f.v)), nil
	case protowire.BytesType:
		if len(f.b)%8 != 0 {
			return dst, fmt.Errorf("field %d: packed fixed64 payload of %d bytes", f.num, len(f.b))
		}
		dst = slices.Grow(dst, len(f.b)/8)
		for b := f.b; len(b) > 0; b = b[8:] {
			v, _ := protowire.ConsumeFixed64(b)
			dst = append(dst, math.Float64frombits(v))
		}
		return dst, nil
	}
	return dst, f.wrongType(protowire.Fixed64Type)
}

func toInt64(v uint64) int64   { return int64(v) }
func toInt32(v uint64) int32   { return int32(v) }
func toUint64(v uint64) uint64 { return v }

// eachField calls fn for every field of message b.
func eachField(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		f, rest, err := next(b)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// normDomain maps the default ONNX domain's long name to "".
func normDomain(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

// ModelProto fields.
func decodeModel(b []byte, m *Model) error {
	opsets := 0
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case 1: // ir_version
			m.IRVersion, err = f.int64()
		case 2: // producer_name
			m.ProducerName, err = f.string()
		case 3: // producer_version
			m.ProducerVersion, err = f.string()
		case 7: // graph
			var p []byte
			if p, err = f.bytes(); err != nil {
				return err
			}
			if m.Graph == nil {
				m.Graph = &Graph{}
			}
			return decodeGraph(p, m.Graph, 0)
		case 8: // opset_import
			var p []byte
			if p, err = f.bytes(); err != nil {
				return err
			}
			domain, version, err := decodeOpset(p)
			if err != nil {
				return fmt.Errorf("opset_import %d: %w", opsets, err)
			}
			opsets++
			domain = normDomain(domain)
			if old, ok := m.Opsets[domain]; !ok || version > old {
				m.Opsets[domain] = version
			}
		}
		return err
	})
}

// OperatorSetIdProto fields.
func decodeOpset(b []byte) (domain string, version int64, err error) {
	err = eachField(b, func(f field) (err error) {
		switch f.num {
		case 1:
			domain, err = f.string()
		case 2:
			version, err = f.int64()
		}
		return err
	})
	return domain, version, err
}

// GraphProto fields. Decoding into an existing Graph merges, as protobuf
// does for a repeated occurrence of a message field. A node needs an
// op_type, and initializers, value infos and attributes need names (as
// onnx.proto requires): this also keeps a crafted stream of empty messages
// from allocating much more than its size.
// maxGraphDepth bounds subgraph nesting (If inside If...), so a crafted
// file cannot exhaust the stack.
const maxGraphDepth = 32

func decodeGraph(b []byte, g *Graph, depth int) error {
	if depth > maxGraphDepth {
		return fmt.Errorf("subgraphs nested more than %d deep", maxGraphDepth)
	}
	return eachField(b, func(f field) error {
		switch f.num {
		case 1: // node
			p, err := f.bytes()
			if err != nil {
				return err
			}
			n := &Node{}
			err = decodeNode(p, n, depth)
			if err == nil && n.OpType == "" {
				err = errors.New("no op_type")
			}
			if err != nil {
				return fmt.Errorf("node %d%s: %w", len(g.Nodes), quoteName(n.Name), err)
			}
			g.Nodes = append(g.Nodes, n)
		case 2: // name
			s, err := f.string()
			if err != nil {
				return err
			}
			g.Name = s
		case 5: // initializer
			p, err := f.bytes()
			if err != nil {
				return err
			}
			t := &Tensor{}
			err = decodeTensor(p, t)
			if err == nil && t.Name == "" {
				err = errors.New("no name")
			}
			if err != nil {
				return fmt.Errorf("initializer %d%s: %w", len(g.Initializers), quoteName(t.Name), err)
			}
			g.Initializers = append(g.Initializers, t)
		case 11, 12, 13: // input, output, value_info
			p, err := f.bytes()
			if err != nil {
				return err
			}
			dst, what := &g.Inputs, "input"
			switch f.num {
			case 12:
				dst, what = &g.Outputs, "output"
			case 13:
				dst, what = &g.ValueInfo, "value_info"
			}
			vi := &ValueInfo{}
			err = decodeValueInfo(p, vi)
			if err == nil && vi.Name == "" {
				err = errors.New("no name")
			}
			if err != nil {
				return fmt.Errorf("%s %d%s: %w", what, len(*dst), quoteName(vi.Name), err)
			}
			*dst = append(*dst, vi)
		}
		return nil
	})
}

// quoteName formats an optional name for an error message: " (name)".
func quoteName(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

// NodeProto fields.
func decodeNode(b []byte, n *Node, depth int) error {
	return eachField(b, func(f field) (err error) {
		var s string
		switch f.num {
		case 1: // input
			if s, err = f.string(); err == nil {
				n.Inputs = append(n.Inputs, s)
			}
		case 2: // output
			if s, err = f.string(); err == nil {
				n.Outputs = append(n.Outputs, s)
			}
		case 3: // name
			n.Name, err = f.string()
		case 4: // op_type
			n.OpType, err = f.string()
		case 7: // domain
			if s, err = f.string(); err == nil {
				n.Domain = normDomain(s)
			}
		case 5: // attribute
			var p []byte
			if p, err = f.bytes(); err != nil {
				return err
			}
			a := &Attr{}
			err = decodeAttr(p, a, depth)
			if err == nil && a.Name == "" {
				err = errors.New("no name")
			}
			if err != nil {
				return fmt.Errorf("attribute %d%s: %w", len(n.Attrs), quoteName(a.Name), err)
			}
			n.Attrs = append(n.Attrs, a)
		}
		return err
	})
}

// AttributeProto fields.
func decodeAttr(b []byte, a *Attr, depth int) error {
	var seen AttrType // the last value field present, for an untyped attribute
	err := eachField(b, func(f field) (err error) {
		switch f.num {
		case 1: // name
			a.Name, err = f.string()
		case 20: // type
			var v int32
			v, err = f.int32()
			a.Type = AttrType(v)
		case 2: // f
			a.F, err = f.float32()
			seen = AttrFloat
		case 3: // i
			a.I, err = f.int64()
			seen = AttrInt
		case 4: // s
			var p []byte
			p, err = f.bytes()
			a.S = bytes.Clone(p)
			seen = AttrString
		case 5: // t
			var p []byte
			if p, err = f.bytes(); err != nil {
				return err
			}
			if a.T == nil {
				a.T = &Tensor{}
			}
			if err := decodeTensor(p, a.T); err != nil {
				return fmt.Errorf("tensor%s: %w", quoteName(a.T.Name), err)
			}
			seen = AttrTensor
		case 6: // g
			var p []byte
			if p, err = f.bytes(); err != nil {
				return err
			}
			a.HasGraph = true
			a.G = &Graph{}
			if err := decodeGraph(p, a.G, depth+1); err != nil {
				return fmt.Errorf("graph%s: %w", quoteName(a.G.Name), err)
			}
			seen = AttrGraph
		case 7: // floats
			a.Floats, err = appendFixed32s(a.Floats, f)
			seen = AttrFloats
		case 8: // ints
			a.Ints, err = appendVarints(a.Ints, f, toInt64)
			seen = AttrInts
		case 9: // strings
			var p []byte
			p, err = f.bytes()
			a.Strings = append(a.Strings, bytes.Clone(p))
			seen = AttrStrings
		case 10: // tensors (not decoded)
			_, err = f.bytes()
			seen = AttrTensors
		case 11: // graphs
			_, err = f.bytes()
			a.HasGraph = true
			seen = AttrGraphs
		}
		return err
	})
	if a.Type == AttrUndefined {
		a.Type = seen
	}
	return err
}

// TensorProto fields. Decoding into an existing Tensor merges.
func decodeTensor(b []byte, t *Tensor) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case 1: // dims
			t.Dims, err = appendVarints(t.Dims, f, toInt64)
		case 2: // data_type
			t.DataType, err = f.int32()
		case 4: // float_data
			t.FloatData, err = appendFixed32s(t.FloatData, f)
		case 5: // int32_data
			t.Int32Data, err = appendVarints(t.Int32Data, f, toInt32)
		case 6: // string_data
			var p []byte
			p, err = f.bytes()
			t.StringData = append(t.StringData, bytes.Clone(p))
		case 7: // int64_data
			t.Int64Data, err = appendVarints(t.Int64Data, f, toInt64)
		case 8: // name
			t.Name, err = f.string()
		case 9: // raw_data
			t.RawData, err = f.bytes()
		case 10: // double_data
			t.DoubleData, err = appendFixed64s(t.DoubleData, f)
		case 11: // uint64_data
			t.Uint64Data, err = appendVarints(t.Uint64Data, f, toUint64)
		case 13: // external_data
			var p []byte
			if p, err = f.bytes(); err != nil {
				return err
			}
			var k, v string
			if err := decodeStringPair(p, &k, &v); err != nil {
				return fmt.Errorf("external_data: %w", err)
			}
			if t.ExternalData == nil {
				t.ExternalData = map[string]string{}
			}
			t.ExternalData[k] = v
		case 14: // data_location
			var v int32
			v, err = f.int32()
			t.External = v == 1
		}
		return err
	})
}

// StringStringEntryProto fields.
func decodeStringPair(b []byte, k, v *string) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case 1:
			*k, err = f.string()
		case 2:
			*v, err = f.string()
		}
		return err
	})
}

// ValueInfoProto fields.
func decodeValueInfo(b []byte, vi *ValueInfo) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case 1: // name
			vi.Name, err = f.string()
		case 2: // type
			var p []byte
			if p, err = f.bytes(); err != nil {
				return err
			}
			if err := decodeType(p, vi); err != nil {
				return fmt.Errorf("type: %w", err)
			}
		}
		return err
	})
}

// TypeProto fields: only tensor_type is decoded; the other members of its
// oneof (sequence, map, optional, sparse tensor) leave ElemType 0.
func decodeType(b []byte, vi *ValueInfo) error {
	return eachField(b, func(f field) error {
		switch f.num {
		case 1: // tensor_type
			p, err := f.bytes()
			if err != nil {
				return err
			}
			return decodeTensorType(p, vi)
		case 4, 5, 8, 9: // sequence_type, map_type, sparse_tensor_type, optional_type
			if _, err := f.bytes(); err != nil {
				return err
			}
			vi.ElemType, vi.Shape, vi.HasShape = 0, nil, false
		}
		return nil
	})
}

// TypeProto.Tensor fields.
func decodeTensorType(b []byte, vi *ValueInfo) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case 1: // elem_type
			vi.ElemType, err = f.int32()
		case 2: // shape
			var p []byte
			if p, err = f.bytes(); err != nil {
				return err
			}
			vi.HasShape = true
			return decodeShape(p, vi)
		}
		return err
	})
}

// TensorShapeProto fields.
func decodeShape(b []byte, vi *ValueInfo) error {
	// Size the dims up front: growing a slice of 40-byte Dims by
	// appending costs several times the 2 bytes of an empty dim message.
	count := 0
	for p := b; len(p) > 0; {
		f, rest, err := next(p)
		if err != nil {
			break
		}
		if f.num == 1 {
			count++
		}
		p = rest
	}
	vi.Shape = slices.Grow(vi.Shape, count)
	return eachField(b, func(f field) error {
		if f.num != 1 { // dim
			return nil
		}
		p, err := f.bytes()
		if err != nil {
			return err
		}
		var d Dim
		if err := decodeDim(p, &d); err != nil {
			return fmt.Errorf("dim %d: %w", len(vi.Shape), err)
		}
		vi.Shape = append(vi.Shape, d)
		return nil
	})
}

// TensorShapeProto.Dimension fields: dim_value and dim_param are a oneof,
// the last one present wins.
func decodeDim(b []byte, d *Dim) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case 1: // dim_value
			var v int64
			if v, err = f.int64(); err == nil {
				*d = Dim{Value: v, Known: true}
			}
		case 2: // dim_param
			var s string
			if s, err = f.string(); err == nil {
				*d = Dim{Param: s}
			}
		}
		return err
	})
}
