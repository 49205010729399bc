// Package onnxpb decodes ONNX model files (the protobuf message
// onnx.ModelProto) into plain Go structs.
//
// It reads the protobuf wire format directly with protowire, for the subset
// of onnx.proto that an importer needs: the model's opsets, the main graph,
// its nodes and attributes, initializers and value infos. Fields outside that
// subset are skipped. Subgraph attributes (If/Loop bodies) are only noted
// (Attr.HasGraph), not decoded.
//
// Decode checks little beyond the wire format: nodes need an op_type, and
// initializers, graph inputs, outputs and value infos, and attributes need
// names. It never panics on malformed input, and what it allocates is bounded
// by a multiple of the input size: under 100 bytes per input byte for the
// worst crafted input, and about none for a real model, since raw_data is
// not copied: a Tensor's RawData aliases the buffer passed to Decode, which
// the caller must leave unchanged while the Model is in use (ToTensor
// copies).
package onnxpb

import "fmt"

// Model is a decoded onnx.ModelProto.
type Model struct {
	IRVersion int64
	// Opsets maps an operator-set domain to its version. The default ONNX
	// domain is "" (an opset_import written as "ai.onnx" is stored as "").
	Opsets                        map[string]int64
	ProducerName, ProducerVersion string
	Graph                         *Graph
}

// Graph is a decoded onnx.GraphProto.
type Graph struct {
	Name                       string
	Nodes                      []*Node
	Initializers               []*Tensor
	Inputs, Outputs, ValueInfo []*ValueInfo
}

// Node is a decoded onnx.NodeProto.
type Node struct {
	Name, OpType string
	// Domain is the operator set of OpType; "" is the default ONNX domain
	// (a node written with domain "ai.onnx" gets "").
	Domain string
	// Inputs and Outputs name values; "" marks an omitted optional input
	// or output.
	Inputs, Outputs []string
	Attrs           []*Attr
}

// Attr returns the node's attribute with the given name, or nil.
func (n *Node) Attr(name string) *Attr {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// AttrType is onnx.AttributeProto.AttributeType.
type AttrType int

// The attribute types, with the numbers of onnx.proto.
const (
	AttrUndefined     AttrType = 0
	AttrFloat         AttrType = 1
	AttrInt           AttrType = 2
	AttrString        AttrType = 3
	AttrTensor        AttrType = 4
	AttrGraph         AttrType = 5
	AttrFloats        AttrType = 6
	AttrInts          AttrType = 7
	AttrStrings       AttrType = 8
	AttrTensors       AttrType = 9
	AttrGraphs        AttrType = 10
	AttrSparseTensor  AttrType = 11
	AttrSparseTensors AttrType = 12
	AttrTypeProto     AttrType = 13
	AttrTypeProtos    AttrType = 14
)

var attrTypeNames = [...]string{
	AttrUndefined:     "UNDEFINED",
	AttrFloat:         "FLOAT",
	AttrInt:           "INT",
	AttrString:        "STRING",
	AttrTensor:        "TENSOR",
	AttrGraph:         "GRAPH",
	AttrFloats:        "FLOATS",
	AttrInts:          "INTS",
	AttrStrings:       "STRINGS",
	AttrTensors:       "TENSORS",
	AttrGraphs:        "GRAPHS",
	AttrSparseTensor:  "SPARSE_TENSOR",
	AttrSparseTensors: "SPARSE_TENSORS",
	AttrTypeProto:     "TYPE_PROTO",
	AttrTypeProtos:    "TYPE_PROTOS",
}

func (t AttrType) String() string {
	if t >= 0 && int(t) < len(attrTypeNames) {
		return attrTypeNames[t]
	}
	return fmt.Sprintf("AttributeType(%d)", int(t))
}

// Attr is a decoded onnx.AttributeProto. Type says which value field is
// meant; the others are zero. When a writer left type unset (IR version 1),
// it is inferred from the one value field present.
type Attr struct {
	Name    string
	Type    AttrType
	F       float32
	I       int64
	S       []byte
	T       *Tensor
	Floats  []float32
	Ints    []int64
	Strings [][]byte
	// HasGraph reports a subgraph value (g or graphs, as in If/Loop
	// bodies); G is a GRAPH attribute's graph, decoded (GRAPHS are not).
	HasGraph bool
	G        *Graph
}

// Dim is one dimension of a value's shape: a number (Known), a symbol
// (Param), or neither (unknown).
type Dim struct {
	Value int64
	Param string
	Known bool
}

// ValueInfo is a decoded onnx.ValueInfoProto. ElemType is the tensor's
// TensorProto.DataType (0 if the value is not a tensor, or untyped);
// HasShape says whether a shape was given (a scalar has HasShape and no
// dims).
type ValueInfo struct {
	Name     string
	ElemType int32
	Shape    []Dim
	HasShape bool
}

// The TensorProto.DataType numbers.
const (
	DTUndefined  int32 = 0
	DTFloat      int32 = 1
	DTUint8      int32 = 2
	DTInt8       int32 = 3
	DTUint16     int32 = 4
	DTInt16      int32 = 5
	DTInt32      int32 = 6
	DTInt64      int32 = 7
	DTString     int32 = 8
	DTBool       int32 = 9
	DTFloat16    int32 = 10
	DTDouble     int32 = 11
	DTUint32     int32 = 12
	DTUint64     int32 = 13
	DTComplex64  int32 = 14
	DTComplex128 int32 = 15
	DTBFloat16   int32 = 16
)

var dtypeNames = [...]string{
	0:  "UNDEFINED",
	1:  "FLOAT",
	2:  "UINT8",
	3:  "INT8",
	4:  "UINT16",
	5:  "INT16",
	6:  "INT32",
	7:  "INT64",
	8:  "STRING",
	9:  "BOOL",
	10: "FLOAT16",
	11: "DOUBLE",
	12: "UINT32",
	13: "UINT64",
	14: "COMPLEX64",
	15: "COMPLEX128",
	16: "BFLOAT16",
	17: "FLOAT8E4M3FN",
	18: "FLOAT8E4M3FNUZ",
	19: "FLOAT8E5M2",
	20: "FLOAT8E5M2FNUZ",
	21: "UINT4",
	22: "INT4",
	23: "FLOAT4E2M1",
}

// DTypeName names a TensorProto.DataType for messages: "FLOAT", "INT64",
// ...; an unknown number gives "DataType(99)".
func DTypeName(dt int32) string {
	if dt >= 0 && int(dt) < len(dtypeNames) {
		return dtypeNames[dt]
	}
	return fmt.Sprintf("DataType(%d)", dt)
}

// Tensor is a decoded onnx.TensorProto. The data is in at most one of the
// data fields: RawData (little-endian, fixed width) or the typed field the
// data type uses; ToTensor turns either into an rlx tensor.
type Tensor struct {
	Name     string
	DataType int32
	Dims     []int64
	// External reports data_location == EXTERNAL: the data lives in
	// another file, described by ExternalData (location, offset, length,
	// ...), and ToTensor refuses the tensor.
	External     bool
	ExternalData map[string]string

	// RawData is raw_data, nil when absent. It aliases the buffer given to
	// Decode.
	RawData []byte
	// The typed data fields, packed and unpacked encodings alike. Int32Data
	// also holds int8, int16, uint8, uint16, bool, float16 and bfloat16
	// values (half floats as their bits), as the spec says.
	FloatData  []float32
	Int32Data  []int32
	Int64Data  []int64
	DoubleData []float64
	Uint64Data []uint64
	StringData [][]byte
}
