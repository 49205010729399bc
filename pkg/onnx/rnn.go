package onnx

// LSTM, GRU and RNN, as PyTorch exports nn.LSTM, nn.GRU and nn.RNN, to
// HIR's lstm, gru and rnn (ONNX's operand layouts, passed through).

import (
	"fmt"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// convRNN converts LSTM (cell "lstm", four gates), GRU ("gru", three)
// and RNN ("rnn", one). Supported: every direction, hidden_size, GRU's
// linear_before_reset, the default activations (spelled out or not), an
// RNN's Tanh, Relu or Sigmoid (one for every direction: PyTorch's
// nonlinearity is the layer's), optional B, initial_h and
// initial_c (zeros when absent) and unused outputs. Not supported, each an
// error at import: sequence_lens, peepholes (P), clip, other
// activations, activation_alpha/beta, LSTM input_forget and layout=1.
func convRNN(cell string) converter {
	return func(im *importer, n *onnxpb.Node) error {
		gates, results, defaults := int64(4), 3, []string{"Sigmoid", "Tanh", "Tanh"}
		switch cell {
		case "gru":
			gates, results, defaults = 3, 2, []string{"Sigmoid", "Tanh"}
		case "rnn":
			gates, results, defaults = 1, 2, []string{"Tanh"}
		}
		op := n.OpType
		for _, a := range []string{"clip", "activation_alpha", "activation_beta"} {
			if n.Attr(a) != nil {
				return fmt.Errorf("%s attribute %s is not supported", op, a)
			}
		}
		if l := attrInt(n, "layout", 0); l != 0 {
			return fmt.Errorf("%s layout=%d is not supported (only layout=0, [seq, batch, ...]; PyTorch's batch_first exports transposes)", op, l)
		}
		if attrInt(n, "input_forget", 0) != 0 {
			return fmt.Errorf("%s input_forget=1 is not supported", op)
		}
		direction := attrString(n, "direction", "forward")
		dirs := hir.RNNDirections(direction)
		if dirs == 0 {
			return fmt.Errorf("%s direction %q: want forward, reverse or bidirectional", op, direction)
		}
		activation := "tanh"
		if a := n.Attr("activations"); a != nil {
			var got []string
			for _, s := range a.Strings {
				got = append(got, string(s))
			}
			if cell == "rnn" && len(got) == dirs && hir.RNNActivation(strings.ToLower(got[0])) {
				activation = strings.ToLower(got[0])
				defaults = []string{got[0]}
			}
			var want []string
			for range dirs {
				want = append(want, defaults...)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				if cell == "rnn" {
					return fmt.Errorf("%s activations %v are not supported (one of Tanh, Relu or Sigmoid, the same for every direction)", op, got)
				}
				return fmt.Errorf("%s activations %v are not supported (only the defaults, %v per direction)", op, got, defaults)
			}
		}
		present := func(i int) bool { return i < len(n.Inputs) && n.Inputs[i] != "" }
		if present(4) {
			return fmt.Errorf("%s input sequence_lens is not supported (every sequence runs the full length; export without lengths)", op)
		}
		if cell == "lstm" && present(7) {
			return fmt.Errorf("%s input P (peepholes) is not supported", op)
		}
		xt, err := im.typeOf(n.Inputs[0])
		if err != nil {
			return err
		}
		if xt.Rank() != 3 {
			return fmt.Errorf("%s input X is %s, want rank 3 [seq, batch, input]", op, xt)
		}
		h := attrInt(n, "hidden_size", 0)
		if h <= 0 {
			if !present(2) {
				return fmt.Errorf("%s needs hidden_size or R", op)
			}
			rt, err := im.typeOf(n.Inputs[2])
			if err != nil {
				return err
			}
			c, ok := dim.Const(0), false
			if rt.Rank() == 3 {
				c = rt.Shape[2]
			}
			if h, ok = c.Const(); !ok || h <= 0 {
				return fmt.Errorf("%s without hidden_size: R is %s, want [dirs, %d*hidden, hidden]", op, rt, gates)
			}
		}
		var args []string
		for i := 0; i < 3; i++ {
			a, err := im.rt(i)
			if err != nil {
				return err
			}
			args = append(args, a)
		}
		hint := n.Outputs[0]
		for _, o := range n.Outputs {
			if o != "" {
				hint = o
				break
			}
		}
		dt := xt.DType
		hasH, hasC := present(5), cell == "lstm" && present(6)
		switch {
		case present(3):
			b, err := im.rt(3)
			if err != nil {
				return err
			}
			args = append(args, b)
		case hasH || hasC:
			b, err := im.constTensor(hint+"_B", tensor.New(dt, int64(dirs), 2*gates*h))
			if err != nil {
				return err
			}
			args = append(args, b)
		}
		if hasH || hasC {
			h0 := ""
			if hasH {
				if h0, err = im.rt(5); err != nil {
					return err
				}
			} else {
				zero := im.scalar(hint+"_zero", 0, dt)
				h0 = im.emitTmp(hint+"_h0", "expand", []string{zero}, "shape="+dimList([]dim.Expr{dim.Const(int64(dirs)), xt.Shape[1], dim.Const(h)}))
			}
			args = append(args, h0)
		}
		if hasC {
			c0, err := im.rt(6)
			if err != nil {
				return err
			}
			args = append(args, c0)
		}
		outs := make([]string, results)
		for i := range outs {
			if i < len(n.Outputs) && n.Outputs[i] != "" {
				outs[i] = n.Outputs[i]
			} else {
				outs[i] = fmt.Sprintf("%s_unused%d", hint, i)
			}
		}
		attrs := []string{fmt.Sprintf("hidden=%d", h), fmt.Sprintf("direction=%q", direction)}
		switch cell {
		case "gru":
			attrs = append(attrs, fmt.Sprintf("linear_before_reset=%v", attrInt(n, "linear_before_reset", 0) != 0))
		case "rnn":
			attrs = append(attrs, fmt.Sprintf("activation=%q", activation))
		}
		return im.emit(outs, cell, args, attrs...)
	}
}
