package e2e

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// attnRef is ONNX's Attention over 4-D q [b, hq, sq, d], k [b, hkv, sk,
// d] (the past already concatenated), v [b, hkv, sk, dv]: query head h
// reads KV head h / (hq/hkv); bias[b][h][i][j] is added to the scores
// (nil: none); causal lets query i see keys j <= i + past.
func attnRef(q, k, v []float32, b, hq, hkv, sq, sk, d, dv int, bias func(b, h, i, j int) float64, causal bool, past int, scale float64) []float64 {
	out := make([]float64, b*hq*sq*dv)
	rep := hq / hkv
	for bi := range b {
		for h := range hq {
			kh := h / rep
			for i := range sq {
				s := make([]float64, sk)
				mx := math.Inf(-1)
				for j := range sk {
					var dot float64
					for e := range d {
						dot += float64(q[((bi*hq+h)*sq+i)*d+e]) * float64(k[((bi*hkv+kh)*sk+j)*d+e])
					}
					s[j] = dot * scale
					if bias != nil {
						s[j] += bias(bi, h, i, j)
					}
					if causal && j > i+past {
						s[j] = math.Inf(-1)
					}
					mx = max(mx, s[j])
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for e := range dv {
					var acc float64
					for j := range sk {
						acc += s[j] / sum * float64(v[((bi*hkv+kh)*sk+j)*dv+e])
					}
					out[((bi*hq+h)*sq+i)*dv+e] = acc
				}
			}
		}
	}
	return out
}

// toHeads turns [b, s, h·d] into [b, h, s, d].
func toHeads(x []float32, b, s, h, d int) []float32 {
	out := make([]float32, len(x))
	for bi := range b {
		for si := range s {
			for hi := range h {
				copy(out[((bi*h+hi)*s+si)*d:][:d], x[((bi*s+si)*h+hi)*d:][:d])
			}
		}
	}
	return out
}

// fromHeads turns [b, h, s, d] into [b, s, h·d].
func fromHeads(x []float64, b, s, h, d int) []float64 {
	out := make([]float64, len(x))
	for bi := range b {
		for si := range s {
			for hi := range h {
				copy(out[((bi*s+si)*h+hi)*d:][:d], x[((bi*h+hi)*s+si)*d:][:d])
			}
		}
	}
	return out
}

// TestONNXAttention: opset 23's Attention against its definition:
// multi-head, grouped-query and multi-query heads, 4-D and 3-D inputs,
// boolean and float masks, causal self attention, causal cross attention
// with no past (top-left), a KV cache (past_key, past_value and the
// present outputs), an explicit scale, and a symbolic sequence length.
func TestONNXAttention(t *testing.T) {
	type tc struct {
		name           string
		rank3          bool
		hq, hkv, d, dv int
		sq, sk, past   int // sq, sk < 0: the symbolic s
		causal         bool
		mask           string // "", "bool2" [sq, sk], "float4" [b, hq, sq, sk]
		scale          float32
		vulkan         bool // also run on the vulkan target
	}
	for _, c := range []tc{
		{name: "mha", hq: 2, hkv: 2, d: 8, dv: 8, sq: -1, sk: -1},
		{name: "causal self", hq: 2, hkv: 2, d: 4, dv: 6, sq: -1, sk: -1, causal: true},
		{name: "gqa bool mask", hq: 4, hkv: 2, d: 4, dv: 4, sq: 3, sk: -1, mask: "bool2"},
		{name: "gqa float mask", hq: 6, hkv: 2, d: 4, dv: 4, sq: -1, sk: 5, mask: "float4", scale: 0.3, vulkan: true},
		{name: "3-D mqa causal", rank3: true, hq: 4, hkv: 1, d: 4, dv: 4, sq: -1, sk: -1, causal: true, vulkan: true},
		{name: "kv cache causal", hq: 2, hkv: 1, d: 4, dv: 4, sq: 2, sk: 2, past: 3, causal: true},
		{name: "cross causal top-left", hq: 2, hkv: 2, d: 4, dv: 4, sq: 3, sk: 5, causal: true, mask: "float4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			const b = 2
			dimOf := func(v int) any {
				if v < 0 {
					return "s"
				}
				return v
			}
			g := &graph{outs: []string{"y"}}
			if c.rank3 {
				g.input("q", b, dimOf(c.sq), c.hq*c.d)
				g.input("k", b, dimOf(c.sk), c.hkv*c.d)
				g.input("v", b, dimOf(c.sk), c.hkv*c.dv)
			} else {
				g.input("q", b, c.hq, dimOf(c.sq), c.d)
				g.input("k", b, c.hkv, dimOf(c.sk), c.d)
				g.input("v", b, c.hkv, dimOf(c.sk), c.dv)
			}
			ins := []string{"q", "k", "v"}
			switch c.mask {
			case "bool2":
				g.inputs = append(g.inputs, &onnxpb.ValueInfo{Name: "m", ElemType: 9, HasShape: true,
					Shape: []onnxpb.Dim{{Value: int64(c.sq), Known: true}, {Param: "s"}}})
				ins = append(ins, "m")
			case "float4":
				sk := dimOf(c.sk + c.past)
				g.input("m", b, c.hq, dimOf(c.sq), sk)
				ins = append(ins, "m")
			default:
				ins = append(ins, "")
			}
			attrs := []*onnxpb.Attr{ai("is_causal", b2i(c.causal))}
			if c.rank3 {
				attrs = append(attrs, ai("q_num_heads", int64(c.hq)), ai("kv_num_heads", int64(c.hkv)))
			}
			if c.scale != 0 {
				attrs = append(attrs, af("scale", c.scale))
			}
			outs := []string{"y"}
			if c.past > 0 {
				g.input("pk", b, c.hkv, c.past, c.d)
				g.input("pv", b, c.hkv, c.past, c.dv)
				ins = append(ins, "pk", "pv")
				outs = append(outs, "present_k", "present_v")
				g.outs = outs
			}
			g.node("Attention", ins, outs, attrs...)
			for _, s := range []int{3, 5} {
				sq, sk := c.sq, c.sk
				if sq < 0 {
					sq = s
				}
				if sk < 0 {
					sk = s
				}
				skAll := sk + c.past
				q := seq(b*c.hq*sq*c.d, 1)
				k := seq(b*c.hkv*sk*c.d+7, 1.3)[7:]
				v := seq(b*c.hkv*sk*c.dv+3, 0.9)[3:]
				in := map[string]*tensor.Tensor{}
				if c.rank3 {
					in["q"] = tensor.FromF32([]int64{b, int64(sq), int64(c.hq * c.d)}, q)
					in["k"] = tensor.FromF32([]int64{b, int64(sk), int64(c.hkv * c.d)}, k)
					in["v"] = tensor.FromF32([]int64{b, int64(sk), int64(c.hkv * c.dv)}, v)
					q, k, v = toHeads(q, b, sq, c.hq, c.d), toHeads(k, b, sk, c.hkv, c.d), toHeads(v, b, sk, c.hkv, c.dv)
				} else {
					in["q"] = tensor.FromF32([]int64{b, int64(c.hq), int64(sq), int64(c.d)}, q)
					in["k"] = tensor.FromF32([]int64{b, int64(c.hkv), int64(sk), int64(c.d)}, k)
					in["v"] = tensor.FromF32([]int64{b, int64(c.hkv), int64(sk), int64(c.dv)}, v)
				}
				kAll, vAll := k, v
				var pk, pv []float32
				if c.past > 0 {
					pk, pv = seq(b*c.hkv*c.past*c.d+11, 0.7)[11:], seq(b*c.hkv*c.past*c.dv+5, 1.1)[5:]
					in["pk"] = tensor.FromF32([]int64{b, int64(c.hkv), int64(c.past), int64(c.d)}, pk)
					in["pv"] = tensor.FromF32([]int64{b, int64(c.hkv), int64(c.past), int64(c.dv)}, pv)
					cat := func(p, x []float32, w int) []float32 {
						var out []float32
						for bh := range b * c.hkv {
							out = append(out, p[bh*c.past*w:(bh+1)*c.past*w]...)
							out = append(out, x[bh*sk*w:(bh+1)*sk*w]...)
						}
						return out
					}
					kAll, vAll = cat(pk, k, c.d), cat(pv, v, c.dv)
				}
				var bias func(bi, h, i, j int) float64
				switch c.mask {
				case "bool2":
					mb := tensor.New(tensor.Bool, int64(sq), int64(skAll))
					for e := range mb.Data {
						if (e*7)%3 != 0 || e%skAll == 0 {
							mb.Data[e] = 1 // true attends; every row keeps key 0
						}
					}
					in["m"] = mb
					bias = func(_, _, i, j int) float64 {
						if mb.Data[i*skAll+j] == 0 {
							return math.Inf(-1)
						}
						return 0
					}
				case "float4":
					mf := seq(b*c.hq*sq*skAll, 2)
					in["m"] = tensor.FromF32([]int64{b, int64(c.hq), int64(sq), int64(skAll)}, mf)
					bias = func(bi, h, i, j int) float64 { return float64(mf[((bi*c.hq+h)*sq+i)*skAll+j]) }
				}
				scale := 1 / math.Sqrt(float64(c.d))
				if c.scale != 0 {
					scale = float64(c.scale)
				}
				want := attnRef(q, kAll, vAll, b, c.hq, c.hkv, sq, skAll, c.d, c.dv, bias, c.causal, c.past, scale)
				if c.rank3 {
					want = fromHeads(want, b, sq, c.hq, c.dv)
				}
				bind := specialize.Binding{"s": int64(s)}
				if c.sq >= 0 && c.sk >= 0 {
					bind = specialize.Binding{} // static: one run is enough
					if s != 3 {
						continue
					}
				}
				out := runONNXAt(t, g, 23, bind, in)
				what := fmt.Sprintf("%s s=%d", c.name, s)
				nearTol(t, what, out[0].F32(), want, 2e-5)
				if c.vulkan {
					t.Run(fmt.Sprintf("vulkan s=%d", s), func(t *testing.T) {
						needVulkan(t)
						res, err := onnx.Import(g.model(23), onnx.Options{Module: "t", Source: "t.onnx"})
						if err != nil {
							t.Fatal(err)
						}
						nearTol(t, what+" vulkan", runImported(t, res, "vulkan", bind, in)[0].F32(), want, gpuTol)
					})
				}
				if c.past > 0 {
					for i, w := range [][]float32{kAll, vAll} {
						wf := make([]float64, len(w))
						for e, x := range w {
							wf[e] = float64(x)
						}
						nearTol(t, what+" "+outs[i+1], out[i+1].F32(), wf, 0)
					}
				}
			}
		})
	}
}
