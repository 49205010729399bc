package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// rnnGraph builds one recurrent node over inputs x, then per direction w,
// r, b, then h0 when given.
func rnnGraph(attrs mir.Attrs, res int, seq, dirs, h int64, ins ...*tensor.Tensor) *mir.Graph {
	outs := []mir.Type{ty(tensor.F64, seq, dirs, 1, h), ty(tensor.F64, dirs, 1, h), ty(tensor.F64, dirs, 1, h)}
	return opGraph(mir.OpRecurrent, attrs, outs[:res], ins...)
}

// TestRecurrentLSTM: one unit, one input, two steps, worked out with the
// scalar equations.
func TestRecurrentLSTM(t *testing.T) {
	sg := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	x := mk(tensor.F64, sh(2, 1, 1), 1, -2)
	w := mk(tensor.F64, sh(1, 4), 0.5, -0.25, 1, 0.75)        // i o f c
	r := mk(tensor.F64, sh(1, 4), 0.1, 0.2, -0.3, 0.4)        // i o f c
	b := mk(tensor.F64, sh(8), 0.1, 0, 0, -0.1, 0, 0.2, 0, 0) // Wb, Rb
	g := rnnGraph(mir.Attrs{"cell": "lstm", "hidden": int64(1), "direction": "forward"}, 3, 2, 1, 1, x, w, r, b)
	out, err := Run(g, nil, []*tensor.Tensor{x, w, r, b})
	if err != nil {
		t.Fatal(err)
	}
	// Step 1 (x = 1, h = c = 0).
	c1 := sg(0.5+0.1) * math.Tanh(0.75-0.1)
	h1 := sg(-0.25+0.2) * math.Tanh(c1)
	// Step 2 (x = -2).
	i := sg(-1 + 0.1 + 0.1*h1)
	o := sg(0.5 + 0.2 + 0.2*h1)
	f := sg(-2 - 0.3*h1)
	c2 := f*c1 + i*math.Tanh(-1.5-0.1+0.4*h1)
	h2 := o * math.Tanh(c2)
	check(t, "y", out[0], sh(2, 1, 1, 1), []float64{h1, h2}, 1e-12)
	check(t, "y_h", out[1], sh(1, 1, 1), []float64{h2}, 1e-12)
	check(t, "y_c", out[2], sh(1, 1, 1), []float64{c2}, 1e-12)
}

// TestRecurrentRNN: one unit, two steps from h0 = 0.5, each activation.
func TestRecurrentRNN(t *testing.T) {
	x := mk(tensor.F64, sh(2, 1, 1), 1, -2)
	w := mk(tensor.F64, sh(1, 1), 0.5)
	r := mk(tensor.F64, sh(1, 1), -0.75)
	b := mk(tensor.F64, sh(2), 0.1, 0.2) // Wb, Rb
	h0 := mk(tensor.F64, sh(1, 1, 1), 0.5)
	for _, tc := range []struct {
		act string
		f   func(float64) float64
	}{
		{"tanh", math.Tanh},
		{"relu", func(v float64) float64 { return math.Max(v, 0) }},
		{"sigmoid", func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
	} {
		g := rnnGraph(mir.Attrs{"cell": "rnn", "hidden": int64(1), "direction": "forward", "activation": tc.act, "initial_h": true}, 2, 2, 1, 1, x, w, r, b, h0)
		out, err := Run(g, nil, []*tensor.Tensor{x, w, r, b, h0})
		if err != nil {
			t.Fatal(err)
		}
		h1 := tc.f(0.5*1 + 0.1 - 0.75*0.5 + 0.2)
		h2 := tc.f(0.5*-2 + 0.1 - 0.75*h1 + 0.2)
		check(t, tc.act+" y", out[0], sh(2, 1, 1, 1), []float64{h1, h2}, 1e-12)
		check(t, tc.act+" y_h", out[1], sh(1, 1, 1), []float64{h2}, 1e-12)
	}
	g := rnnGraph(mir.Attrs{"cell": "rnn", "hidden": int64(1), "direction": "forward", "activation": "elu"}, 2, 2, 1, 1, x, w, r, b)
	if _, err := Run(g, nil, []*tensor.Tensor{x, w, r, b}); err == nil || !strings.Contains(err.Error(), `rnn activation "elu"`) {
		t.Errorf("activation elu: got %v", err)
	}
}

// TestRecurrentGRU: one unit from h0 = 0.5, both placements of the reset
// gate, and a bidirectional run whose second direction is the first one
// over the reversed sequence.
func TestRecurrentGRU(t *testing.T) {
	sg := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	x := mk(tensor.F64, sh(2, 1, 1), 1, -2)
	w := mk(tensor.F64, sh(1, 3), 0.5, -0.25, 0.75)       // z r h
	r := mk(tensor.F64, sh(1, 3), 0.1, 0.2, -0.6)         // z r h
	b := mk(tensor.F64, sh(6), 0.1, 0, -0.1, 0, 0.2, 0.3) // Wb, Rb
	h0 := mk(tensor.F64, sh(1, 1, 1), 0.5)
	for _, lbr := range []bool{false, true} {
		g := rnnGraph(mir.Attrs{"cell": "gru", "hidden": int64(1), "direction": "forward", "linear_before_reset": lbr, "initial_h": true}, 2, 2, 1, 1, x, w, r, b, h0)
		out, err := Run(g, nil, []*tensor.Tensor{x, w, r, b, h0})
		if err != nil {
			t.Fatal(err)
		}
		h := 0.5
		var want []float64
		for _, xv := range []float64{1, -2} {
			z := sg(0.5*xv + 0.1 + 0.1*h)
			rr := sg(-0.25*xv + 0.2*h + 0.2)
			var n float64
			if lbr {
				n = math.Tanh(0.75*xv - 0.1 + rr*(-0.6*h+0.3))
			} else {
				n = math.Tanh(0.75*xv - 0.1 + (rr*h)*-0.6 + 0.3)
			}
			h = (1-z)*n + z*h
			want = append(want, h)
		}
		check(t, "y", out[0], sh(2, 1, 1, 1), want, 1e-12)
		check(t, "y_h", out[1], sh(1, 1, 1), want[1:], 1e-12)
	}
	// Bidirectional without h0: direction 1 runs over x reversed.
	xr := mk(tensor.F64, sh(2, 1, 1), -2, 1)
	attrs := mir.Attrs{"cell": "gru", "hidden": int64(1), "direction": "forward", "linear_before_reset": true}
	fw, err := Run(rnnGraph(attrs, 2, 2, 1, 1, xr, w, r, b), nil, []*tensor.Tensor{xr, w, r, b})
	if err != nil {
		t.Fatal(err)
	}
	attrs["direction"] = "bidirectional"
	bi, err := Run(rnnGraph(attrs, 2, 2, 2, 1, x, w, r, b, w, r, b), nil, []*tensor.Tensor{x, w, r, b, w, r, b})
	if err != nil {
		t.Fatal(err)
	}
	f := values(t, fw[0])
	check(t, "y reverse", bi[0], sh(2, 2, 1, 1), []float64{bi[0].F64()[0], f[1], bi[0].F64()[2], f[0]}, 1e-12)
	check(t, "y_h reverse", bi[1], sh(2, 1, 1), []float64{bi[1].F64()[0], f[1]}, 1e-12)
}

func TestRecurrentErrors(t *testing.T) {
	x := mk(tensor.F64, sh(2, 1, 1), 1, -2)
	w := mk(tensor.F64, sh(1, 3), 0.5, -0.25, 0.75)
	err := evalErr(t, mir.OpRecurrent, mir.Attrs{"cell": "gru", "hidden": int64(1), "direction": "forward"}, ty(tensor.F64, 2, 1, 1, 1), x, w, w, w)
	wantErr(t, err, "gru gives 2 results")
	_, err2 := Run(rnnGraph(mir.Attrs{"cell": "gru", "hidden": int64(1), "direction": "forward"}, 2, 2, 1, 1, x, w, w, w), nil, []*tensor.Tensor{x, w, w, w})
	wantErr(t, errString(err2), "operand 3 is [1, 3], want [6]")
}
