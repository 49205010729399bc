package eval

import (
	"fmt"
	"math"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// recurrent runs an LSTM, GRU or RNN node (mir.OpRecurrent) step by step with
// ONNX's equations, in float64 from the first step to the last; the
// results are rounded to the dtype once, at the end.
//
//	LSTM: i = σ(Xi + Hi), o = σ(Xo + Ho), f = σ(Xf + Hf), c~ = tanh(Xc + Hc),
//	      c' = f⊙c + i⊙c~, h' = o⊙tanh(c')
//	GRU:  z = σ(Xz + Hz), r = σ(Xr + Hr),
//	      n = tanh(Xh + r⊙(h·Rhᵀ + Rbh))   (linear_before_reset)
//	      n = tanh(Xh + (r⊙h)·Rhᵀ + Rbh)   (otherwise)
//	      h' = (1 - z)⊙n + z⊙h
//	RNN:  h' = f(X + H), f the activation (tanh, relu or sigmoid)
//
// where X* = x_t·W*ᵀ + Wb* and H* = h·R*ᵀ + Rb*.
func recurrent(n *mir.Node, args []*array) ([]*array, error) {
	rc, err := mir.DecodeRecurrent(n)
	if err != nil {
		return nil, err
	}
	x := args[0]
	if !x.isFloat() || len(x.shape) != 3 {
		return nil, fmt.Errorf("x is %s%s, want a float [seq, batch, in]", x.dt, tensor.ShapeString(x.shape))
	}
	S, B, I := int(x.shape[0]), int(x.shape[1]), int(x.shape[2])
	H, G := int(rc.Hidden), int(rc.Gates)
	GH := G * H
	dirs := rc.Dirs
	state := []int64{int64(dirs), int64(B), int64(H)}
	k := 1 + 3*dirs
	var h0, c0 *array
	if rc.H0 != nil {
		h0 = args[k]
		k++
	}
	if rc.C0 != nil {
		c0 = args[k]
	}
	for i, a := range args {
		if a.dt != x.dt {
			return nil, fmt.Errorf("operand %d is %s but x is %s", i, a.dt, x.dt)
		}
	}
	for d := 0; d < dirs; d++ {
		for j, want := range [][]int64{{int64(I), int64(GH)}, {int64(H), int64(GH)}, {int64(2 * GH)}} {
			if a := args[1+3*d+j]; !sameShape(a.shape, want) {
				return nil, fmt.Errorf("direction %d: operand %d is %s, want %s", d, 1+3*d+j, tensor.ShapeString(a.shape), tensor.ShapeString(want))
			}
		}
	}
	for _, a := range []*array{h0, c0} {
		if a != nil && !sameShape(a.shape, state) {
			return nil, fmt.Errorf("an initial state is %s, want %s", tensor.ShapeString(a.shape), tensor.ShapeString(state))
		}
	}
	y := newArray(x.dt, []int64{int64(S), int64(dirs), int64(B), int64(H)})
	yh, yc := newArray(x.dt, state), newArray(x.dt, state)
	gx, gh := make([]float64, GH), make([]float64, GH)
	rh := make([]float64, H)
	for d := 0; d < dirs; d++ {
		w, r, b := args[1+3*d].f, args[2+3*d].f, args[3+3*d].f
		h, c := make([]float64, B*H), make([]float64, B*H)
		if h0 != nil {
			copy(h, h0.f[d*B*H:(d+1)*B*H])
		}
		if c0 != nil {
			copy(c, c0.f[d*B*H:(d+1)*B*H])
		}
		for step := 0; step < S; step++ {
			t := step
			if rc.Reversed(d) {
				t = S - 1 - step
			}
			for bi := 0; bi < B; bi++ {
				xt := x.f[(t*B+bi)*I : (t*B+bi+1)*I]
				ht, ct := h[bi*H:(bi+1)*H], c[bi*H:(bi+1)*H]
				for j := 0; j < GH; j++ {
					sx, sh := b[j], b[GH+j]
					for q := 0; q < I; q++ {
						sx += xt[q] * w[q*GH+j]
					}
					for q := 0; q < H; q++ {
						sh += ht[q] * r[q*GH+j]
					}
					gx[j], gh[j] = sx, sh
				}
				switch rc.Cell {
				case "rnn":
					for j := 0; j < H; j++ {
						gx[j] = rnnActivation(rc.Activation, gx[j]+gh[j]) // h', written back below
					}
				case "lstm":
					for j := 0; j < H; j++ {
						i := sigmoid(gx[j] + gh[j])
						o := sigmoid(gx[H+j] + gh[H+j])
						f := sigmoid(gx[2*H+j] + gh[2*H+j])
						cc := math.Tanh(gx[3*H+j] + gh[3*H+j])
						ct[j] = f*ct[j] + i*cc
						gx[j] = o * math.Tanh(ct[j]) // h', written back below
					}
				default:
					for j := 0; j < H; j++ {
						rh[j] = sigmoid(gx[H+j]+gh[H+j]) * ht[j] // r⊙h
					}
					for j := 0; j < H; j++ {
						z := sigmoid(gx[j] + gh[j])
						var nv float64
						if rc.LinearBeforeReset {
							nv = math.Tanh(gx[2*H+j] + sigmoid(gx[H+j]+gh[H+j])*gh[2*H+j])
						} else {
							s := b[GH+2*H+j]
							for q := 0; q < H; q++ {
								s += rh[q] * r[q*GH+2*H+j]
							}
							nv = math.Tanh(gx[2*H+j] + s)
						}
						gx[j] = (1-z)*nv + z*ht[j] // h', written back below
					}
				}
				copy(ht, gx[:H])
				copy(y.f[((t*dirs+d)*B+bi)*H:], ht)
			}
		}
		copy(yh.f[d*B*H:], h)
		copy(yc.f[d*B*H:], c)
	}
	res := []*array{y.fit(), yh.fit(), yc.fit()}
	return res[:len(n.Results)], nil
}

// rnnActivation applies an RNN cell's activation.
func rnnActivation(f string, v float64) float64 {
	switch f {
	case "relu":
		return math.Max(v, 0)
	case "sigmoid":
		return sigmoid(v)
	}
	return math.Tanh(v)
}
