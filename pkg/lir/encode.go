package lir

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// kinds maps each tag to a constructor of its operation: the decoder's one
// table. A kind whose tag depends on a field (Pool2D, Relayout) is listed
// under each tag; the decoder checks the decoded operation's tag.
var kinds = map[Kind]func() Op{
	"matmul":                func() Op { return new(MatMul) },
	"matmul_packed":         func() Op { return new(PackedMatMul) },
	"conv1x1_packed":        func() Op { return new(PackedConv1x1) },
	"matmul_i8":             func() Op { return &QMatMul{Scratch: NoBuf, Bias: NoBuf} }, // neither in artifacts from before them
	"conv2d_i8":             func() Op { return new(QConv2D) },
	"conv2d_i8_nhwc":        func() Op { return new(QConv2D) },
	"conv2d":                func() Op { return new(Conv2D) },
	"dwconv_nhwc_taps":      func() Op { return new(DepthwiseNHWC) },
	"conv2d_taps":           func() Op { return new(TapConv2D) },
	"winograd_input":        func() Op { return new(WinogradInput) },
	"winograd_product":      func() Op { return new(WinogradProduct) },
	"winograd_output":       func() Op { return new(WinogradOutput) },
	"winograd_input_part":   func() Op { return new(WinogradInput) },
	"winograd_product_part": func() Op { return new(WinogradProduct) },
	"winograd_output_part":  func() Op { return new(WinogradOutput) },
	"nchw_to_nhwc":          func() Op { return new(Relayout) },
	"nhwc_to_nchw":          func() Op { return new(Relayout) },
	"maxpool2d":             func() Op { return new(Pool2D) },
	"avgpool2d":             func() Op { return new(Pool2D) },
	"reduce":                func() Op { return new(Reduce) },
	"argreduce":             func() Op { return new(ArgReduce) },
	"topk":                  func() Op { return new(TopK) },
	"scatter":               func() Op { return new(Scatter) },
	"softmax":               func() Op { return new(Softmax) },
	"layernorm":             func() Op { return new(LayerNorm) },
	"add_layernorm":         func() Op { return new(AddLayerNorm) },
	"attention":             func() Op { return new(Attention) },
	"memcpy":                func() Op { return new(Memcpy) },
	"copy":                  func() Op { return new(Copy) },
	"fill":                  func() Op { return new(Fill) },
	"gather":                func() Op { return new(Gather) },
	"iota":                  func() Op { return new(Iota) },
	"dispatch":              func() Op { return new(Dispatch) },
	"dispatch_offsets":      func() Op { return new(Dispatch) },
	"ew":                    func() Op { return new(Elementwise) },
	"native":                func() Op { return new(NativeCall) },
	"native_part":           func() Op { return new(NativeCall) },
}

// Kinds lists every operation tag, for tests and reports.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	return out
}

// New returns an empty operation of kind k, or nil for an unknown kind.
func New(k Kind) Op {
	if f, ok := kinds[k]; ok {
		return f()
	}
	return nil
}

// EncodeMsgpack writes a step as a map: kind, src and the operation's
// fields under "op".
func (s *Step) EncodeMsgpack(enc *msgpack.Encoder) error {
	if s.Op == nil {
		return fmt.Errorf("lir: step %q has no operation", s.Src)
	}
	if err := enc.EncodeMapLen(3); err != nil {
		return err
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"kind", string(s.Op.Kind())}, {"op", s.Op}, {"src", s.Src}} {
		if err := enc.EncodeString(kv.k); err != nil {
			return err
		}
		if err := enc.Encode(kv.v); err != nil {
			return err
		}
	}
	return nil
}

// DecodeMsgpack reads a step written by EncodeMsgpack. An unknown kind is
// an error that says the artifact comes from another compiler version.
func (s *Step) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return err
	}
	var kind string
	var raw msgpack.RawMessage
	*s = Step{}
	for i := 0; i < n; i++ {
		key, err := dec.DecodeString()
		if err != nil {
			return err
		}
		switch key {
		case "kind":
			if kind, err = dec.DecodeString(); err != nil {
				return err
			}
		case "src":
			if s.Src, err = dec.DecodeString(); err != nil {
				return err
			}
		case "op":
			if raw, err = dec.DecodeRaw(); err != nil {
				return err
			}
		default:
			if err := dec.Skip(); err != nil {
				return err
			}
		}
	}
	op := New(Kind(kind))
	if op == nil {
		return fmt.Errorf("unknown kernel %q (artifact built by another rlxc version: rebuild it with this release)", kind)
	}
	if raw == nil {
		return fmt.Errorf("step %q (%s) has no operation", s.Src, kind)
	}
	if err := msgpack.Unmarshal(raw, op); err != nil {
		return fmt.Errorf("step %q (%s): %v", s.Src, kind, err)
	}
	if got := op.Kind(); got != Kind(kind) {
		return fmt.Errorf("step %q: tagged %s but its fields make it %s", s.Src, kind, got)
	}
	s.Op = op
	return nil
}
