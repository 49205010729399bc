package onnxpb

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The test writer: Encode's msg (encode.go) and the wire forms Encode
// never writes, which the decoder must still read (unpacked repeated
// fields, fixed64 and group fields of unknown numbers).

func (m msg) fixed64(num protowire.Number, v uint64) msg {
	m = protowire.AppendTag(m, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(m, v)
}

// ints appends an unpacked repeated varint field.
func (m msg) ints(num protowire.Number, vs ...int64) msg {
	for _, v := range vs {
		m = m.int(num, v)
	}
	return m
}

func (m msg) floats(num protowire.Number, vs ...float32) msg {
	for _, v := range vs {
		m = m.float(num, v)
	}
	return m
}

// group appends a (deprecated) group field, which ONNX never uses: the
// decoder must skip it.
func (m msg) group(num protowire.Number, body msg) msg {
	m = protowire.AppendTag(m, num, protowire.StartGroupType)
	m = append(m, body...)
	return protowire.AppendTag(m, num, protowire.EndGroupType)
}

// The ONNX messages the tests build.

func opsetMsg(domain string, version int64) msg {
	return msg(nil).str(1, domain).int(2, version)
}

func modelMsg(graph msg, opsets ...msg) msg {
	m := msg(nil).int(1, 8).str(2, "rlx-test").str(3, "0.1")
	for _, o := range opsets {
		m = m.sub(8, o)
	}
	return m.sub(7, graph) // graph last: every proper prefix is invalid
}

func dimValue(v int64) msg  { return msg(nil).int(1, v) }
func dimParam(p string) msg { return msg(nil).str(2, p) }

// valueInfoMsg is a tensor value info; dims nil leaves the shape out.
func valueInfoMsg(name string, elem int32, dims ...msg) msg {
	tt := msg(nil).int(1, int64(elem))
	if dims != nil {
		var shape msg
		for _, d := range dims {
			shape = shape.sub(1, d)
		}
		tt = tt.sub(2, shape)
	}
	return msg(nil).str(1, name).sub(2, msg(nil).sub(1, tt))
}

func nodeMsg(name, op string, inputs, outputs []string, attrs ...msg) msg {
	var m msg
	for _, in := range inputs {
		m = m.str(1, in)
	}
	for _, out := range outputs {
		m = m.str(2, out)
	}
	m = m.str(3, name).str(4, op)
	for _, a := range attrs {
		m = m.sub(5, a)
	}
	return m
}

// rawTensorMsg is a tensor with raw_data.
func rawTensorMsg(name string, dt int32, dims []int64, raw []byte) msg {
	return msg(nil).packedInts(1, dims...).int(2, int64(dt)).str(8, name).bytes(9, raw)
}

// smallModel is a valid model using most of what the decoder reads.
func smallModel() msg {
	w := make([]byte, 0, 24)
	for _, v := range []float32{1, 2, 3, 4, 5, 6} {
		w = protowire.AppendFixed32(w, math.Float32bits(v))
	}
	g := msg(nil).
		str(2, "small").
		sub(1, nodeMsg("mm", "MatMul", []string{"x", "w"}, []string{"y"})).
		sub(1, nodeMsg("clip", "Clip", []string{"y", "", "hi"}, []string{"z"},
			msg(nil).str(1, "note").int(20, int64(AttrString)).str(4, "hi"))).
		sub(5, rawTensorMsg("w", DTFloat, []int64{3, 2}, w)).
		sub(5, msg(nil).int(2, int64(DTFloat)).str(8, "hi").floats(4, 6)).
		sub(11, valueInfoMsg("x", DTFloat, dimParam("batch"), dimValue(3))).
		sub(12, valueInfoMsg("z", DTFloat, dimParam("batch"), dimValue(2)))
	return modelMsg(g, opsetMsg("", 17))
}
