package eval

import (
	"math"
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

func TestMatMul(t *testing.T) {
	a := mk(tensor.F32, sh(2, 2), 1, 2, 3, 4)
	b := mk(tensor.F32, sh(2, 2), 5, 6, 7, 8)
	check(t, "2x2", eval1(t, mir.OpMatMul, nil, ty(tensor.F32, 2, 2), a, b), sh(2, 2), []float64{19, 22, 43, 50}, 0)
	// [2, 3] · [3, 1]
	c := mk(tensor.F32, sh(2, 3), 1, 2, 3, 4, 5, 6)
	d := mk(tensor.F32, sh(3, 1), 1, 0, -1)
	check(t, "2x3·3x1", eval1(t, mir.OpMatMul, nil, ty(tensor.F32, 2, 1), c, d), sh(2, 1), []float64{-2, -2}, 0)
	// batch broadcast: [2, 1, 2, 2] · [3, 2, 2] -> [2, 3, 2, 2]; b[k] = k * I.
	ab := mk(tensor.F32, sh(2, 1, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8)
	bb := mk(tensor.F32, sh(3, 2, 2), 0, 0, 0, 0, 1, 0, 0, 1, 2, 0, 0, 2)
	var want []float64
	for i := 0; i < 2; i++ {
		for k := 0; k < 3; k++ {
			for e := 1; e <= 4; e++ {
				want = append(want, float64(k*(4*i+e)))
			}
		}
	}
	check(t, "batched", eval1(t, mir.OpMatMul, nil, ty(tensor.F32, 2, 3, 2, 2), ab, bb), sh(2, 3, 2, 2), want, 0)
	// integers are exact
	ia := mk(tensor.I64, sh(1, 2), 1<<40, 3)
	ib := mk(tensor.I64, sh(2, 1), 1<<20, 5)
	if got := ints(t, eval1(t, mir.OpMatMul, nil, ty(tensor.I64, 1, 1), ia, ib)); got[0] != 1<<60+15 {
		t.Errorf("i64 matmul = %d, want %d", got[0], int64(1<<60+15))
	}
	wantErr(t, evalErr(t, mir.OpMatMul, nil, ty(tensor.F32, 2, 2), c, b), "does not give")
}

func TestMatMulEpilogue(t *testing.T) {
	a := mk(tensor.F32, sh(2, 2), 1, 2, 3, 4)
	b := mk(tensor.F32, sh(2, 2), 1, -1, 1, -1) // a·b = [[3, -3], [7, -7]]
	bias := mk(tensor.F32, sh(2), 1, 2)         // [[4, -1], [8, -5]]
	res := mk(tensor.F32, sh(2, 2), 100, 200, 300, 400)
	check(t, "bias", eval1(t, mir.OpMatMul, mir.Attrs{"bias": true}, ty(tensor.F32, 2, 2), a, b, bias), sh(2, 2), []float64{4, -1, 8, -5}, 0)
	check(t, "bias relu residual", eval1(t, mir.OpMatMul, mir.Attrs{"bias": true, "act": "relu", "residual": true}, ty(tensor.F32, 2, 2), a, b, bias, res), sh(2, 2),
		[]float64{104, 200, 308, 400}, 0)
	check(t, "leaky_relu", eval1(t, mir.OpMatMul, mir.Attrs{"act": "leaky_relu", "alpha": 0.5}, ty(tensor.F32, 2, 2), a, b), sh(2, 2),
		[]float64{3, -1.5, 7, -3.5}, 0)
	check(t, "clamp", eval1(t, mir.OpMatMul, mir.Attrs{"act": "clamp", "min": -4.0, "max": 5.0}, ty(tensor.F32, 2, 2), a, b), sh(2, 2),
		[]float64{3, -3, 5, -4}, 0)
	check(t, "residual only", eval1(t, mir.OpMatMul, mir.Attrs{"residual": true}, ty(tensor.F32, 2, 2), a, b, res), sh(2, 2),
		[]float64{103, 197, 307, 393}, 0)
	wantErr(t, evalErr(t, mir.OpMatMul, mir.Attrs{"act": "swish"}, ty(tensor.F32, 2, 2), a, b), "swish")
	wantErr(t, evalErr(t, mir.OpMatMul, mir.Attrs{"bias": true}, ty(tensor.F32, 2, 2), a, b), "operands")
}

func TestConv2D(t *testing.T) {
	// x = 1..9 as 3x3, w = [[1, 0], [0, 1]]: out[i][j] = x[i][j] + x[i+1][j+1]
	x := mk(tensor.F32, sh(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9)
	w := mk(tensor.F32, sh(1, 1, 2, 2), 1, 0, 0, 1)
	conv := func(attrs mir.Attrs, out mir.Type, ins ...*tensor.Tensor) *tensor.Tensor {
		return eval1(t, mir.OpConv2D, attrs, out, ins...)
	}
	check(t, "2x2", conv(nil, ty(tensor.F32, 1, 1, 2, 2), x, w), sh(1, 1, 2, 2), []float64{6, 8, 12, 14}, 0)
	// pad 1, stride 2: windows start at -1 and 1
	check(t, "pad stride", conv(mir.Attrs{"pad": []int64{1, 1, 1, 1}, "stride": []int64{2, 2}}, ty(tensor.F32, 1, 1, 2, 2), x, w), sh(1, 1, 2, 2),
		[]float64{1, 3, 7, 14}, 0)
	// asymmetric pad: bottom/right only keeps 3x3
	check(t, "asym pad", conv(mir.Attrs{"pad": []int64{0, 0, 1, 1}}, ty(tensor.F32, 1, 1, 3, 3), x, w), sh(1, 1, 3, 3),
		[]float64{6, 8, 3, 12, 14, 6, 7, 8, 9}, 0)
	// dilation 2 on a 2x2 kernel reaches x[i][j] + x[i+2][j+2]
	check(t, "dilation", conv(mir.Attrs{"dilation": []int64{2, 2}}, ty(tensor.F32, 1, 1, 1, 1), x, w), sh(1, 1, 1, 1), []float64{10}, 0)
	// bias and the epilogue
	bias := mk(tensor.F32, sh(1), -10)
	check(t, "bias relu residual", conv(mir.Attrs{"act": "relu", "residual": true}, ty(tensor.F32, 1, 1, 2, 2), x, w, bias, mk(tensor.F32, sh(1, 1, 2, 2), 1, 1, 1, 1)),
		sh(1, 1, 2, 2), []float64{1, 1, 3, 5}, 0)
	// two channels in, two out: O=0 sums both channels, O=1 takes the difference
	x2 := mk(tensor.F32, sh(1, 2, 1, 2), 1, 2, 10, 20)
	w2 := mk(tensor.F32, sh(2, 2, 1, 1), 1, 1, 1, -1)
	check(t, "channels", conv(nil, ty(tensor.F32, 1, 2, 1, 2), x2, w2), sh(1, 2, 1, 2), []float64{11, 22, -9, -18}, 0)
	// groups = 2 (depthwise): each output channel sees its own input channel
	wg := mk(tensor.F32, sh(2, 1, 1, 1), 3, -1)
	check(t, "depthwise", conv(mir.Attrs{"groups": int64(2)}, ty(tensor.F32, 1, 2, 1, 2), x2, wg), sh(1, 2, 1, 2), []float64{3, 6, -10, -20}, 0)
	// batch of two
	xb := mk(tensor.F32, sh(2, 1, 1, 1), 2, 3)
	wb := mk(tensor.F32, sh(1, 1, 1, 1), 5)
	check(t, "batch", conv(nil, ty(tensor.F32, 2, 1, 1, 1), xb, wb), sh(2, 1, 1, 1), []float64{10, 15}, 0)
	wantErr(t, evalErr(t, mir.OpConv2D, nil, ty(tensor.F32, 1, 1, 3, 3), x, w), "convolution gives")
}

func TestPool2D(t *testing.T) {
	// x = 0..15 as 4x4
	v := make([]float64, 16)
	for k := range v {
		v[k] = float64(k)
	}
	x := mk(tensor.F32, sh(1, 1, 4, 4), v...)
	pool := func(op mir.Op, attrs mir.Attrs, out mir.Type) *tensor.Tensor { return eval1(t, op, attrs, out, x) }
	k2 := []int64{2, 2}
	check(t, "max 2x2/2", pool(mir.OpMaxPool2D, mir.Attrs{"kernel": k2, "stride": k2}, ty(tensor.F32, 1, 1, 2, 2)), sh(1, 1, 2, 2), []float64{5, 7, 13, 15}, 0)
	check(t, "avg 2x2/2", pool(mir.OpAvgPool2D, mir.Attrs{"kernel": k2, "stride": k2}, ty(tensor.F32, 1, 1, 2, 2)), sh(1, 1, 2, 2), []float64{2.5, 4.5, 10.5, 12.5}, 0)
	// 3x3 stride 2 pad 1 with ceil_mode: 3 windows per axis, starting at -1, 1, 3.
	// Window (0, 0) covers rows/cols -1..1: input cells 0, 1, 4, 5 (sum 10),
	// 9 cells inside input+padding. Window (2, 2) covers rows/cols 3..5:
	// only cell 15 is inside the input; rows/cols 3 and 4 are inside
	// input+padding (4 cells); 5 is beyond the padding and never counts.
	k3, s2, p1 := []int64{3, 3}, []int64{2, 2}, []int64{1, 1, 1, 1}
	attrs := func(include bool) mir.Attrs {
		return mir.Attrs{"kernel": k3, "stride": s2, "pad": p1, "ceil_mode": true, "count_include_pad": include}
	}
	excl := values(t, pool(mir.OpAvgPool2D, attrs(false), ty(tensor.F32, 1, 1, 3, 3)))
	incl := values(t, pool(mir.OpAvgPool2D, attrs(true), ty(tensor.F32, 1, 1, 3, 3)))
	mx := values(t, pool(mir.OpMaxPool2D, attrs(false), ty(tensor.F32, 1, 1, 3, 3)))
	// window (0, 2): rows -1..1, cols 3..5: cells 3, 7; 3x2 cells in input+padding
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"excl (0,0)", excl[0], 10.0 / 4}, {"incl (0,0)", incl[0], 10.0 / 9},
		{"excl (2,2)", excl[8], 15}, {"incl (2,2)", incl[8], 15.0 / 4},
		{"excl (0,2)", excl[2], 5}, {"incl (0,2)", incl[2], 10.0 / 6},
		{"max (0,0)", mx[0], 5}, {"max (2,2)", mx[8], 15}, {"max (1,1)", mx[4], 15},
	} {
		if !same(c.got, c.want, 1e-7) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// ceil_mode without padding: 3x3/2 on 4x4 gives 2x2; the last window
	// reaches row/col 4, beyond the input and the (zero) padding.
	check(t, "ceil avg incl", pool(mir.OpAvgPool2D, mir.Attrs{"kernel": k3, "stride": s2, "ceil_mode": true, "count_include_pad": true}, ty(tensor.F32, 1, 1, 2, 2)),
		sh(1, 1, 2, 2), []float64{5, 6.5, 11, 12.5}, 0)
	wantErr(t, evalErr(t, mir.OpMaxPool2D, mir.Attrs{"kernel": k3, "stride": s2}, ty(tensor.F32, 1, 1, 2, 2), x), "pooling gives")
}

func TestAttention(t *testing.T) {
	// D = 1, scale 1: scores of q = 1 against k = [0, ln 2, ln 3] are
	// [0, ln 2, ln 3], weights [1, 2, 3]/6, with v = [6, 12, 18]: 14.
	q := mk(tensor.F64, sh(2, 1), 1, 1)
	k := mk(tensor.F64, sh(3, 1), 0, math.Ln2, math.Log(3))
	v := mk(tensor.F64, sh(3, 1), 6, 12, 18)
	one := mir.Attrs{"scale": 1.0}
	check(t, "plain", eval1(t, mir.OpAttention, one, ty(tensor.F64, 2, 1), q, k, v), sh(2, 1), []float64{14, 14}, 1e-14)
	// causal, Sq = 2, Sk = 3: query 0 sees keys 0 and 1 (weights 1/3, 2/3: 10),
	// query 1 sees all three.
	check(t, "causal", eval1(t, mir.OpAttention, mir.Attrs{"scale": 1.0, "causal": true}, ty(tensor.F64, 2, 1), q, k, v), sh(2, 1), []float64{10, 14}, 1e-14)
	// an additive mask hiding key 1 for both queries: weights [1, 0, 3]/4
	mask := mk(tensor.F64, sh(3), 0, -inf, 0)
	check(t, "mask", eval1(t, mir.OpAttention, one, ty(tensor.F64, 2, 1), q, k, v, mask), sh(2, 1), []float64{15, 15}, 1e-14)
	// causal and mask together: query 0 keeps only key 0
	check(t, "causal+mask", eval1(t, mir.OpAttention, mir.Attrs{"scale": 1.0, "causal": true}, ty(tensor.F64, 2, 1), q, k, v, mask), sh(2, 1), []float64{6, 15}, 1e-14)
	// every key masked: NaN
	all := mk(tensor.F64, sh(2, 3), -inf, -inf, -inf, 0, 0, 0)
	check(t, "all masked", eval1(t, mir.OpAttention, one, ty(tensor.F64, 2, 1), q, k, v, all), sh(2, 1), []float64{nan, 14}, 1e-14)
	// default scale 1/sqrt(D) with D = 4, and a batch dim on q only:
	// q·k_j / 2 = ln(j+1) again.
	q4 := mk(tensor.F64, sh(2, 1, 4), 2, 0, 0, 0, 2, 0, 0, 0)
	k4 := mk(tensor.F64, sh(3, 4), 0, 0, 0, 0, math.Ln2, 1, 0, 0, math.Log(3), 0, 5, 0)
	v2 := mk(tensor.F64, sh(3, 2), 6, 0, 12, 1, 18, 2)
	check(t, "default scale, batch", eval1(t, mir.OpAttention, nil, ty(tensor.F64, 2, 1, 2), q4, k4, v2), sh(2, 1, 2),
		[]float64{14, 8.0 / 6, 14, 8.0 / 6}, 1e-14)
}

// TestAttentionDecomposed checks attention against the same computation
// spelled with the interpreter's primitive ops: transpose, matmul, mul,
// add, a causal mask built with iota and where, softmax and matmul.
func TestAttentionDecomposed(t *testing.T) {
	const B, H, Sq, Sk, D, Dv = 2, 3, 3, 5, 4, 2
	fill := func(shape []int64, seed float64) *tensor.Tensor {
		n := numel(shape)
		v := make([]float64, n)
		for k := range v {
			v[k] = math.Sin(seed + float64(k)*0.37)
		}
		return mk(tensor.F32, shape, v...)
	}
	q := fill(sh(B, H, Sq, D), 1)
	k := fill(sh(B, 1, Sk, D), 2) // broadcast over heads
	v := fill(sh(H, Sk, Dv), 3)   // broadcast over the batch
	mask := fill(sh(B, 1, 1, Sk), 4)
	scale := 0.7

	direct, err := Run(opGraph(mir.OpAttention, mir.Attrs{"causal": true, "scale": scale}, []mir.Type{ty(tensor.F32, B, H, Sq, Dv)}, q, k, v, mask), nil,
		[]*tensor.Tensor{q, k, v, mask})
	if err != nil {
		t.Fatal(err)
	}

	g := &mir.Graph{Name: "decomposed"}
	in := func(x *tensor.Tensor) *mir.Value {
		val := g.NewValue("", ty(x.DType, x.Shape...))
		g.Inputs = append(g.Inputs, val)
		return val
	}
	qv, kv, vv, mv := in(q), in(k), in(v), in(mask)
	add := func(op mir.Op, attrs mir.Attrs, out mir.Type, args ...*mir.Value) *mir.Value {
		return g.Add(op, args, attrs, "", out).Results[0]
	}
	kt := add(mir.OpTranspose, mir.Attrs{"perm": []int64{0, 1, 3, 2}}, ty(tensor.F32, B, 1, D, Sk), kv)
	s0 := add(mir.OpMatMul, nil, ty(tensor.F32, B, H, Sq, Sk), qv, kt)
	sc := g.NewConst("scale", mk(tensor.F32, sh(), float64(float32(scale))))
	s1 := add("mul", nil, ty(tensor.F32, B, H, Sq, Sk), s0, sc)
	s2 := add("add", nil, ty(tensor.F32, B, H, Sq, Sk), s1, mv)
	// causal: key j is hidden from query i when j > i + (Sk - Sq)
	ri := add(mir.OpIota, mir.Attrs{"n": dim.Const(Sq)}, ty(tensor.I64, Sq))
	ci := add(mir.OpIota, mir.Attrs{"n": dim.Const(Sk)}, ty(tensor.I64, Sk))
	rows := add(mir.OpReshape, nil, ty(tensor.I64, Sq, 1), ri)
	off := g.NewConst("off", mk(tensor.I64, sh(), Sk-Sq))
	lim := add("add", nil, ty(tensor.I64, Sq, 1), rows, off)
	hide := add("gt", nil, ty(tensor.Bool, Sq, Sk), ci, lim)
	ninf := g.NewConst("ninf", mk(tensor.F32, sh(), -inf))
	s3 := add("where", nil, ty(tensor.F32, B, H, Sq, Sk), hide, ninf, s2)
	p := add(mir.OpSoftmax, mir.Attrs{"axis": int64(3)}, ty(tensor.F32, B, H, Sq, Sk), s3)
	o := add(mir.OpMatMul, nil, ty(tensor.F32, B, H, Sq, Dv), p, vv)
	g.Outputs = []*mir.Value{o}
	composed, err := Run(g, nil, []*tensor.Tensor{q, k, v, mask})
	if err != nil {
		t.Fatal(err)
	}
	a, b := values(t, direct[0]), values(t, composed[0])
	for i := range a {
		if !same(a[i], b[i], 1e-5) {
			t.Fatalf("element %d: attention %v, decomposed %v", i, a[i], b[i])
		}
	}
}
