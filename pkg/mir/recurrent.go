package mir

import "fmt"

// A recurrent node (OpRecurrent) runs an LSTM, a GRU or a plain RNN over
// a whole sequence, with ONNX's equations (gate order i, o, f, c for the
// LSTM; z, r, h for the GRU; sigmoid and tanh activations; the RNN's
// one gate through its activation, tanh, relu or sigmoid). Its operands:
//
//	x [seq, batch, in]
//	for each direction d: w_d [in, G*H] (ONNX's W[d] transposed),
//	    r_d [H, G*H] (R[d] transposed), b_d [2*G*H] (B[d]: Wb, then Rb)
//	h0 [dirs, batch, H]   when initial_h
//	c0 [dirs, batch, H]   when initial_c (lstm only)
//
// with G = 4 (lstm), 3 (gru) or 1 (rnn) and H = hidden. Its results are y [seq,
// dirs, batch, H], y_h [dirs, batch, H] and, for the LSTM, y_c [dirs,
// batch, H]. Lowering puts the weights in this form (transposes and
// slices of params, which constant folding computes once at build time).
// Direction 0 of "bidirectional" runs forward, direction 1 in reverse.

// RecurrentAttrs are the attributes of a recurrent node: cell ("lstm",
// "gru" or "rnn"), hidden (H), direction ("forward", "reverse" or
// "bidirectional"), linear_before_reset (gru), activation (rnn: "tanh",
// "relu" or "sigmoid"), initial_h and initial_c (whether h0 and c0 are
// operands).
var RecurrentAttrs = []string{"cell", "hidden", "direction", "linear_before_reset", "activation", "initial_h", "initial_c"}

// Recurrent is a recurrent node decoded: its attributes and operands.
type Recurrent struct {
	Cell              string // "lstm", "gru" or "rnn"
	Gates             int64  // 4, 3 or 1
	Hidden            int64
	Direction         string
	Dirs              int
	LinearBeforeReset bool
	Activation        string // rnn: "tanh", "relu" or "sigmoid"
	X                 *Value
	W, R, B           []*Value // one per direction
	H0, C0            *Value   // nil when absent
}

// Reversed reports whether direction d runs from the last step to the
// first.
func (r *Recurrent) Reversed(d int) bool {
	return r.Direction == "reverse" || r.Direction == "bidirectional" && d == 1
}

// DecodeRecurrent checks a recurrent node's attributes and operand count
// and returns them decoded.
func DecodeRecurrent(n *Node) (*Recurrent, error) {
	a := n.Attrs
	r := &Recurrent{Cell: a.String("cell"), Hidden: a.Int("hidden"), Direction: a.String("direction"), LinearBeforeReset: a.Bool("linear_before_reset")}
	switch r.Cell {
	case "lstm":
		r.Gates = 4
	case "gru":
		r.Gates = 3
	case "rnn":
		r.Gates = 1
		r.Activation = a.String("activation")
		if r.Activation != "tanh" && r.Activation != "relu" && r.Activation != "sigmoid" {
			return nil, fmt.Errorf("recurrent: rnn activation %q is none of tanh, relu, sigmoid", r.Activation)
		}
	default:
		return nil, fmt.Errorf("recurrent: cell %q is none of lstm, gru, rnn", r.Cell)
	}
	switch r.Direction {
	case "forward", "reverse":
		r.Dirs = 1
	case "bidirectional":
		r.Dirs = 2
	default:
		return nil, fmt.Errorf("recurrent: unknown direction %q", r.Direction)
	}
	if r.Hidden < 1 {
		return nil, fmt.Errorf("recurrent: hidden is %d", r.Hidden)
	}
	want := 1 + 3*r.Dirs
	if a.Bool("initial_h") {
		want++
	}
	if a.Bool("initial_c") {
		if r.Cell != "lstm" {
			return nil, fmt.Errorf("recurrent: a gru has no initial_c")
		}
		want++
	}
	if len(n.Args) != want {
		return nil, fmt.Errorf("recurrent: %s with %d direction(s), initial_h %v, initial_c %v takes %d operands, found %d",
			r.Cell, r.Dirs, a.Bool("initial_h"), a.Bool("initial_c"), want, len(n.Args))
	}
	want = 2
	if r.Cell == "lstm" {
		want = 3
	}
	if len(n.Results) != want {
		return nil, fmt.Errorf("recurrent: %s gives %d results, the node has %d", r.Cell, want, len(n.Results))
	}
	r.X = n.Args[0]
	k := 1
	for d := 0; d < r.Dirs; d++ {
		r.W = append(r.W, n.Args[k])
		r.R = append(r.R, n.Args[k+1])
		r.B = append(r.B, n.Args[k+2])
		k += 3
	}
	if a.Bool("initial_h") {
		r.H0 = n.Args[k]
		k++
	}
	if a.Bool("initial_c") {
		r.C0 = n.Args[k]
	}
	return r, nil
}
