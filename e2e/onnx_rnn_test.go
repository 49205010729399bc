package e2e

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// ONNX LSTM, GRU and RNN (pkg/onnx/rnn.go), checked against ONNX's equations
// written out here as plain loops, on cpu and (where there is a Vulkan
// device) vulkan, at two sequence lengths bound to the symbolic dim time.

func as(name, v string) *onnxpb.Attr {
	return &onnxpb.Attr{Name: name, Type: onnxpb.AttrString, S: []byte(v)}
}

// rnnCase is one LSTM, GRU or RNN node of the test graph.
type rnnCase struct {
	op        string // LSTM, GRU or RNN
	act       string // RNN: the activations attribute's (every direction's), "" for none (Tanh)
	direction string
	lbr       int64 // GRU linear_before_reset
	bias      bool  // input B given
	initH     bool  // initial_h given (a graph input)
	initC     bool  // initial_c given (LSTM)
	outs      []bool
}

const (
	rnnBatch  = 2
	rnnIn     = 3
	rnnHidden = 4
)

func sigm(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// rnnRef is ONNX's LSTM, GRU or RNN: Y [seq, dirs, batch, H], Y_h and Y_c
// [dirs, batch, H]. w, r, b are ONNX's W [dirs, G*H, in], R [dirs, G*H, H]
// and B [dirs, 2*G*H] (nil: zeros); h0 and c0 [dirs, batch, H] (nil:
// zeros).
func rnnRef(c rnnCase, seq int, x, w, r, b, h0, c0 []float32) (y, yh, yc []float64) {
	const B, I, H = rnnBatch, rnnIn, rnnHidden
	G, dirs := rnnGates(c)
	y = make([]float64, seq*dirs*B*H)
	yh, yc = make([]float64, dirs*B*H), make([]float64, dirs*B*H)
	at := func(v []float32, i int) float64 {
		if v == nil {
			return 0
		}
		return float64(v[i])
	}
	for d := 0; d < dirs; d++ {
		rev := c.direction == "reverse" || d == 1
		for bi := 0; bi < B; bi++ {
			h, cs := make([]float64, H), make([]float64, H)
			for j := range h {
				h[j], cs[j] = at(h0, (d*B+bi)*H+j), at(c0, (d*B+bi)*H+j)
			}
			for s := 0; s < seq; s++ {
				t := s
				if rev {
					t = seq - 1 - s
				}
				// xw[g] = x_t·W[g]ᵀ + Wb[g]; hr[g] = h·R[g]ᵀ + Rb[g], g a gate row.
				xw, hr := make([]float64, G*H), make([]float64, G*H)
				for g := 0; g < G*H; g++ {
					xw[g], hr[g] = at(b, d*2*G*H+g), at(b, d*2*G*H+G*H+g)
					for k := 0; k < I; k++ {
						xw[g] += float64(x[(t*B+bi)*I+k]) * float64(w[(d*G*H+g)*I+k])
					}
					for k := 0; k < H; k++ {
						hr[g] += h[k] * float64(r[(d*G*H+g)*H+k])
					}
				}
				nh := make([]float64, H)
				switch c.op {
				case "RNN":
					for j := 0; j < H; j++ {
						switch v := xw[j] + hr[j]; c.act {
						case "Relu":
							nh[j] = math.Max(v, 0)
						case "Sigmoid":
							nh[j] = sigm(v)
						default:
							nh[j] = math.Tanh(v)
						}
					}
				case "LSTM": // gates i, o, f, c
					for j := 0; j < H; j++ {
						i := sigm(xw[j] + hr[j])
						o := sigm(xw[H+j] + hr[H+j])
						f := sigm(xw[2*H+j] + hr[2*H+j])
						cc := math.Tanh(xw[3*H+j] + hr[3*H+j])
						cs[j] = f*cs[j] + i*cc
						nh[j] = o * math.Tanh(cs[j])
					}
				default: // GRU: gates z, r, h
					rg := make([]float64, H)
					for j := range rg {
						rg[j] = sigm(xw[H+j] + hr[H+j])
					}
					for j := 0; j < H; j++ {
						z := sigm(xw[j] + hr[j])
						var n float64
						if c.lbr != 0 {
							n = math.Tanh(xw[2*H+j] + rg[j]*hr[2*H+j])
						} else {
							s := at(b, d*2*G*H+G*H+2*H+j)
							for k := 0; k < H; k++ {
								s += rg[k] * h[k] * float64(r[(d*G*H+2*H+j)*H+k])
							}
							n = math.Tanh(xw[2*H+j] + s)
						}
						nh[j] = (1-z)*n + z*h[j]
					}
				}
				h = nh
				copy(y[((t*dirs+d)*B+bi)*H:], h)
			}
			copy(yh[(d*B+bi)*H:], h)
			copy(yc[(d*B+bi)*H:], cs)
		}
	}
	return y, yh, yc
}

// rnnGates is an rnnCase's gate count and directions.
func rnnGates(c rnnCase) (gates, dirs int) {
	gates, dirs = map[string]int{"LSTM": 4, "GRU": 3, "RNN": 1}[c.op], 1
	if c.direction == "bidirectional" {
		dirs = 2
	}
	return gates, dirs
}

func nearTol(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst := 0.0
	for i := range want {
		d := math.Abs(float64(got[i]) - want[i])
		if !(d <= tol) {
			t.Fatalf("%s: element %d = %g, want %g", what, i, got[i], want[i])
		}
		worst = max(worst, d)
	}
	t.Logf("%s: max|diff| %.3g", what, worst)
}

// TestONNXRecurrent builds one graph with LSTM, GRU and RNN nodes in
// every direction, with and without B and initial states, both GRU
// linear_before_reset values, the RNN's three activations and unused
// outputs, at time = 2 and 3.
func TestONNXRecurrent(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	cases := []rnnCase{
		{op: "LSTM", direction: "forward", bias: true, outs: []bool{true}},
		{op: "LSTM", direction: "reverse", bias: true, initH: true, initC: true, outs: []bool{true, true, true}},
		{op: "LSTM", direction: "bidirectional", initC: true, outs: []bool{true, false, true}},
		{op: "GRU", direction: "forward", lbr: 0, bias: true, outs: []bool{true, true}},
		{op: "GRU", direction: "reverse", lbr: 1, bias: true, initH: true, outs: []bool{true, true}},
		{op: "GRU", direction: "bidirectional", lbr: 1, bias: true, outs: []bool{false, true}},
		{op: "GRU", direction: "bidirectional", lbr: 0, initH: true, outs: []bool{true, false}},
		{op: "RNN", direction: "forward", bias: true, outs: []bool{true, true}},
		{op: "RNN", act: "Relu", direction: "bidirectional", initH: true, outs: []bool{true, true}},
		{op: "RNN", act: "Sigmoid", direction: "reverse", bias: true, outs: []bool{false, true}},
	}
	const B, I, H = rnnBatch, rnnIn, rnnHidden
	for _, seq := range []int{2, 3} {
		t.Run(fmt.Sprintf("time=%d", seq), func(t *testing.T) {
			g := &graph{}
			g.input("x", "time", B, I)
			x := seq1(seq*B*I, 0.9, 0)
			inputs := map[string]*tensor.Tensor{"x": tensor.FromF32([]int64{int64(seq), B, I}, x)}
			type check struct {
				name string
				want []float64
			}
			var checks []check
			for k, c := range cases {
				G, dirs := rnnGates(c)
				p := fmt.Sprintf("n%d_", k)
				w := seq1(dirs*G*H*I, 0.6, k+1)
				r := seq1(dirs*G*H*H, 0.5, k+2)
				g.init(p+"W", []int64{int64(dirs), int64(G * H), I}, w)
				g.init(p+"R", []int64{int64(dirs), int64(G * H), H}, r)
				in := []string{"x", p + "W", p + "R", "", "", "", ""}
				var b, h0, c0 []float32
				if c.bias {
					b = seq1(dirs*2*G*H, 0.4, k+3)
					g.init(p+"B", []int64{int64(dirs), int64(2 * G * H)}, b)
					in[3] = p + "B"
				}
				if c.initH {
					h0 = seq1(dirs*B*H, 0.7, k+4)
					g.input(p+"h0", dirs, B, H)
					inputs[p+"h0"] = tensor.FromF32([]int64{int64(dirs), B, H}, h0)
					in[5] = p + "h0"
				}
				if c.initC {
					c0 = seq1(dirs*B*H, 0.8, k+5)
					g.input(p+"c0", dirs, B, H)
					inputs[p+"c0"] = tensor.FromF32([]int64{int64(dirs), B, H}, c0)
					in[6] = p + "c0"
				}
				for len(in) > 3 && in[len(in)-1] == "" {
					in = in[:len(in)-1]
				}
				y, yh, yc := rnnRef(c, seq, x, w, r, b, h0, c0)
				want := [][]float64{y, yh, yc}
				var outs []string
				for i, used := range c.outs {
					o := ""
					if used {
						o = fmt.Sprintf("%sY%d", p, i)
						g.outs = append(g.outs, o)
						checks = append(checks, check{fmt.Sprintf("%s%s %s lbr=%d output %d", c.op, c.act, c.direction, c.lbr, i), want[i]})
					}
					outs = append(outs, o)
				}
				attrs := []*onnxpb.Attr{ai("hidden_size", H), as("direction", c.direction)}
				if c.op == "GRU" {
					attrs = append(attrs, ai("linear_before_reset", c.lbr))
				}
				if k == 0 {
					attrs = append(attrs, &onnxpb.Attr{Name: "activations", Type: onnxpb.AttrStrings, Strings: [][]byte{[]byte("Sigmoid"), []byte("Tanh"), []byte("Tanh")}})
				}
				if c.act != "" {
					acts := [][]byte{[]byte(c.act)}
					if dirs == 2 {
						acts = append(acts, []byte(c.act))
					}
					attrs = append(attrs, &onnxpb.Attr{Name: "activations", Type: onnxpb.AttrStrings, Strings: acts})
				}
				g.nodes = append(g.nodes, &onnxpb.Node{Name: fmt.Sprintf("/rnn%d", k), OpType: c.op, Inputs: in, Outputs: outs, Attrs: attrs})
			}
			// Vulkan at the longer sequence only: every unrolled step is a
			// few kernels of its own there (offsets are compiled in), and
			// glslang takes seconds for each dozen; cpu runs both.
			hir := loweredOn(t, gpuRun && seq == 3, g, 15, specialize.Binding{"time": int64(seq)}, inputs, func(t *testing.T, out []*tensor.Tensor) {
				for i, c := range checks {
					nearTol(t, c.name, out[i].F32(), c.want, 2e-5)
				}
			})
			if !strings.Contains(hir, "lstm(") || !strings.Contains(hir, "gru(") || !strings.Contains(hir, `activation="relu"`) {
				t.Fatalf("the import has no lstm, gru or relu rnn:\n%s", hir)
			}
		})
	}
}

// seq1 is a deterministic pattern of n values in [-scale, scale].
func seq1(n int, scale float32, phase int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Sin(float64(i)*1.3+float64(phase)*0.7)) * scale
	}
	return v
}

// TestONNXRecurrentErrors: what rlx does not support fails at import,
// naming the node, the operator and what is wrong.
func TestONNXRecurrentErrors(t *testing.T) {
	for _, tc := range []struct {
		edit func(n *onnxpb.Node)
		want string
	}{
		{func(n *onnxpb.Node) { n.Attrs = append(n.Attrs, af("clip", 3)) }, "LSTM attribute clip is not supported"},
		{func(n *onnxpb.Node) { n.Inputs = append(n.Inputs, "", "", "", "", "p") }, "LSTM input P (peepholes) is not supported"},
		{func(n *onnxpb.Node) { n.Inputs = append(n.Inputs, "", "lens") }, "LSTM input sequence_lens is not supported"},
		{func(n *onnxpb.Node) {
			n.Attrs = append(n.Attrs, &onnxpb.Attr{Name: "activations", Type: onnxpb.AttrStrings, Strings: [][]byte{[]byte("Relu"), []byte("Tanh"), []byte("Tanh")}})
		}, "LSTM activations [Relu Tanh Tanh] are not supported"},
		{func(n *onnxpb.Node) { n.Attrs = append(n.Attrs, ai("layout", 1)) }, "LSTM layout=1 is not supported"},
		{func(n *onnxpb.Node) {
			n.OpType = "RNN"
			n.Attrs = append(n.Attrs, &onnxpb.Attr{Name: "activations", Type: onnxpb.AttrStrings, Strings: [][]byte{[]byte("Relu"), []byte("Tanh")}})
		}, "RNN activations [Relu Tanh] are not supported (one of Tanh, Relu or Sigmoid, the same for every direction)"},
		{func(n *onnxpb.Node) {
			n.OpType = "RNN"
			n.Attrs = append(n.Attrs, &onnxpb.Attr{Name: "activations", Type: onnxpb.AttrStrings, Strings: [][]byte{[]byte("LeakyRelu")}})
		}, "RNN activations [LeakyRelu] are not supported"},
	} {
		g := &graph{outs: []string{"y"}}
		g.input("x", "time", 1, 2)
		g.init("w", []int64{1, 4, 2}, seq1(8, 1, 0))
		g.init("r", []int64{1, 4, 1}, seq1(4, 1, 1))
		g.init("p", []int64{1, 3}, seq1(3, 1, 2))
		g.initI64("lens", []int64{1}, []int64{1})
		n := &onnxpb.Node{Name: "/lstm/LSTM", OpType: "LSTM", Inputs: []string{"x", "w", "r"}, Outputs: []string{"y"}, Attrs: []*onnxpb.Attr{ai("hidden_size", 1)}}
		tc.edit(n)
		g.nodes = append(g.nodes, n)
		if got := importErr(g, 15); !strings.Contains(got, tc.want) || !strings.Contains(got, fmt.Sprintf(`"/lstm/LSTM" (%s, opset 15)`, n.OpType)) {
			t.Errorf("got %q, want it to contain %q", got, tc.want)
		}
	}
}
