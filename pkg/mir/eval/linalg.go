package eval

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// epilogue is the activation of a matmul or conv epilogue ("act", with
// "alpha", "min", "max"); nil when there is none.
func epilogue(attrs mir.Attrs) (func(float64) float64, error) {
	act := attrs.String("act")
	switch act {
	case "":
		return nil, nil
	case "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh", "leaky_relu", "clamp":
		return floatUnary(mir.Op(act), attrs)
	}
	return nil, fmt.Errorf("unknown epilogue activation %q", act)
}

// finish applies an epilogue to a float accumulator in place:
// res = act(res) + residual (broadcast to res's shape), or where actLast
// act(res + residual), then fits res.
func finish(res *array, act func(float64) float64, residual *array, actLast bool) (*array, error) {
	if act != nil && !actLast {
		for k, v := range res.f {
			res.f[k] = act(v)
		}
	}
	if actLast && (act == nil || residual == nil) {
		return nil, fmt.Errorf("act_last needs an activation and a residual")
	}
	if residual != nil {
		if residual.dt != res.dt {
			return nil, fmt.Errorf("residual is %s, want %s", residual.dt, res.dt)
		}
		m, err := broadcastMap(residual.shape, res.shape)
		if err != nil {
			return nil, fmt.Errorf("residual: %v", err)
		}
		for k := range res.f {
			res.f[k] += residual.f[m[k]]
		}
	}
	if act != nil && actLast {
		for k, v := range res.f {
			res.f[k] = act(v)
		}
	}
	return res.fit(), nil
}

// epilogueArgs splits a node's operands into the n main ones, an optional
// bias and an optional residual (the last operand).
func epilogueArgs(args []*array, n int, hasBias, hasResidual bool) (main []*array, bias, residual *array, err error) {
	want := n
	if hasBias {
		want++
	}
	if hasResidual {
		want++
	}
	if len(args) != want {
		return nil, nil, nil, fmt.Errorf("takes %d operands (bias %v, residual %v), found %d", want, hasBias, hasResidual, len(args))
	}
	main = args[:n]
	if hasBias {
		bias = args[n]
	}
	if hasResidual {
		residual = args[len(args)-1]
	}
	return main, bias, residual, nil
}

// matmul is NumPy matmul on operands of rank >= 2 with broadcast batch
// dims, then the epilogue: act(a·b + bias) + residual (act_last: act(a·b
// + bias + residual)). The result shape
// out comes from the node's type and is checked.
func matmul(attrs mir.Attrs, args []*array, out []int64) (*array, error) {
	main, bias, residual, err := epilogueArgs(args, 2, attrs.Bool("bias"), attrs.Bool("residual"))
	if err != nil {
		return nil, err
	}
	a, b := main[0], main[1]
	if a.dt != b.dt {
		return nil, fmt.Errorf("operands have different dtypes %s and %s", a.dt, b.dt)
	}
	if a.dt == tensor.Bool {
		return nil, fmt.Errorf("needs numeric operands, found bool")
	}
	ra, rb := len(a.shape), len(b.shape)
	if ra < 2 || rb < 2 || len(out) < 2 {
		return nil, fmt.Errorf("needs operands of rank >= 2, found %s and %s", tensor.ShapeString(a.shape), tensor.ShapeString(b.shape))
	}
	M, K, K2, N := int(a.shape[ra-2]), int(a.shape[ra-1]), int(b.shape[rb-2]), int(b.shape[rb-1])
	if K != K2 || int(out[len(out)-2]) != M || int(out[len(out)-1]) != N {
		return nil, fmt.Errorf("%s · %s does not give %s", tensor.ShapeString(a.shape), tensor.ShapeString(b.shape), tensor.ShapeString(out))
	}
	batch := out[:len(out)-2]
	am, err := broadcastMap(a.shape[:ra-2], batch)
	if err != nil {
		return nil, fmt.Errorf("batch dims of a: %v", err)
	}
	bm, err := broadcastMap(b.shape[:rb-2], batch)
	if err != nil {
		return nil, fmt.Errorf("batch dims of b: %v", err)
	}
	act, err := epilogue(attrs)
	if err != nil {
		return nil, err
	}
	res := newArray(a.dt, out)
	if !a.isFloat() {
		if bias != nil || residual != nil || act != nil {
			return nil, fmt.Errorf("an epilogue needs float operands, found %s", a.dt)
		}
		for bi := range am {
			ao, bo, oo := am[bi]*M*K, bm[bi]*K*N, bi*M*N
			for i := 0; i < M; i++ {
				for j := 0; j < N; j++ {
					var s int64
					for k := 0; k < K; k++ {
						s += a.i[ao+i*K+k] * b.i[bo+k*N+j]
					}
					res.i[oo+i*N+j] = s
				}
			}
		}
		return res.fit(), nil
	}
	if bias != nil && (bias.dt != a.dt || len(bias.shape) != 1 || int(bias.shape[0]) != N) {
		return nil, fmt.Errorf("bias is %s%s, want %s[%d]", bias.dt, tensor.ShapeString(bias.shape), a.dt, N)
	}
	for bi := range am {
		ao, bo, oo := am[bi]*M*K, bm[bi]*K*N, bi*M*N
		gemm(M, N, K, a.f[ao:ao+M*K], K, b.f[bo:bo+K*N], N, res.f[oo:oo+M*N], N)
		if bias != nil {
			for i := 0; i < M; i++ {
				row := res.f[oo+i*N : oo+(i+1)*N]
				for j := range row {
					row[j] += bias.f[j]
				}
			}
		}
	}
	return finish(res, act, residual, attrs.Bool("act_last"))
}

// windowAttrs reads stride, pad and dilation (with their defaults).
func windowAttrs(attrs mir.Attrs) (stride, pad, dil []int64, err error) {
	get := func(name string, def []int64) ([]int64, error) {
		if !attrs.Has(name) {
			return def, nil
		}
		v := attrs.Ints(name)
		if len(v) != len(def) {
			return nil, fmt.Errorf("%s has %d values, want %d", name, len(v), len(def))
		}
		for _, e := range v {
			if e < 0 || e == 0 && name != "pad" {
				return nil, fmt.Errorf("%s has a bad value %d", name, e)
			}
		}
		return v, nil
	}
	if stride, err = get("stride", []int64{1, 1}); err != nil {
		return
	}
	if pad, err = get("pad", []int64{0, 0, 0, 0}); err != nil {
		return
	}
	dil, err = get("dilation", []int64{1, 1})
	return
}

// windowOut is the number of windows along an axis of length n:
// floor((n + padB + padE - span) / stride) + 1 with span = dil*(k-1)+1, or
// with ceil_mode the ceiling, less a last window that would start in the
// end padding.
func windowOut(n, k, padB, padE, stride, dil int64, ceil bool) int64 {
	room := n + padB + padE - (dil*(k-1) + 1)
	if room < 0 {
		return 0
	}
	if !ceil {
		return room/stride + 1
	}
	out := (room+stride-1)/stride + 1
	if (out-1)*stride >= n+padB {
		out--
	}
	return out
}

// conv2d is NCHW convolution: x [N, C, H, W], w [O, C/groups, kh, kw],
// optional bias [O], then the epilogue act(conv + bias) + residual
// (act_last: act(conv + bias + residual)).
func conv2d(attrs mir.Attrs, args []*array, out []int64) (*array, error) {
	hasResidual := attrs.Bool("residual")
	nb := len(args) - 2
	if hasResidual {
		nb--
	}
	if nb != 0 && nb != 1 || attrs.Has("bias") && attrs.Bool("bias") != (nb == 1) {
		return nil, fmt.Errorf("bad operand count %d (residual %v)", len(args), hasResidual)
	}
	main, bias, residual, err := epilogueArgs(args, 2, nb == 1, hasResidual)
	if err != nil {
		return nil, err
	}
	x, w := main[0], main[1]
	if !x.isFloat() || w.dt != x.dt {
		return nil, fmt.Errorf("needs float operands of one dtype, found %s and %s", x.dt, w.dt)
	}
	if len(x.shape) != 4 || len(w.shape) != 4 || len(out) != 4 {
		return nil, fmt.Errorf("needs x [N, C, H, W] and w [O, C/groups, kh, kw], found %s and %s", tensor.ShapeString(x.shape), tensor.ShapeString(w.shape))
	}
	stride, pad, dil, err := windowAttrs(attrs)
	if err != nil {
		return nil, err
	}
	groups := int64(1)
	if attrs.Has("groups") {
		groups = attrs.Int("groups")
	}
	N, C, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	O, Cg, KH, KW := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	if groups < 1 || Cg*groups != C || O%groups != 0 {
		return nil, fmt.Errorf("x has %d channels, w %s, groups %d do not match", C, tensor.ShapeString(w.shape), groups)
	}
	OH := windowOut(H, KH, pad[0], pad[2], stride[0], dil[0], false)
	OW := windowOut(W, KW, pad[1], pad[3], stride[1], dil[1], false)
	if want := []int64{N, O, OH, OW}; !sameShape(out, want) {
		return nil, fmt.Errorf("the result is %s but the convolution gives %s", tensor.ShapeString(out), tensor.ShapeString(want))
	}
	if bias != nil && (bias.dt != x.dt || !sameShape(bias.shape, []int64{O})) {
		return nil, fmt.Errorf("bias is %s%s, want %s[%d]", bias.dt, tensor.ShapeString(bias.shape), x.dt, O)
	}
	act, err := epilogue(attrs)
	if err != nil {
		return nil, err
	}
	res := newArray(x.dt, out)
	// As a product per image and group (im2col): the group's weights
	// [og, Cg·KH·KW] times the columns [Cg·KH·KW, OH·OW], every window
	// cell a row, zero where it falls in the padding.
	og := O / groups // output channels per group
	taps := Cg * KH * KW
	plane := OH * OW
	col := make([]float64, taps*plane)
	for n := int64(0); n < N; n++ {
		for g := int64(0); g < groups; g++ {
			for c := int64(0); c < Cg; c++ {
				xc := ((n*C + g*Cg + c) * H) * W
				for i := int64(0); i < KH; i++ {
					for j := int64(0); j < KW; j++ {
						r := col[((c*KH+i)*KW+j)*plane:][:plane]
						for oh := int64(0); oh < OH; oh++ {
							ih := oh*stride[0] - pad[0] + i*dil[0]
							for ow := int64(0); ow < OW; ow++ {
								iw := ow*stride[1] - pad[1] + j*dil[1]
								v := 0.0
								if ih >= 0 && ih < H && iw >= 0 && iw < W {
									v = x.f[xc+ih*W+iw]
								}
								r[oh*OW+ow] = v
							}
						}
					}
				}
			}
			o0 := (n*O + g*og) * plane
			gemm(int(og), int(plane), int(taps), w.f[g*og*taps:(g+1)*og*taps], int(taps), col, int(plane), res.f[o0:o0+og*plane], int(plane))
			if bias != nil {
				for o := int64(0); o < og; o++ {
					row := res.f[o0+o*plane : o0+(o+1)*plane]
					for q := range row {
						row[q] += bias.f[g*og+o]
					}
				}
			}
		}
	}
	return finish(res, act, residual, attrs.Bool("act_last"))
}

// gemm sets c (m×n, row stride ldc) to a·b for row-major a (m×k) and b
// (k×n) in float64, with gonum's BLAS: the reference's products were plain
// loops, and they dominated the end-to-end tests.
func gemm(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(c[:(m-1)*ldc+n])
		return
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: m, Cols: k, Stride: lda, Data: a},
		blas64.General{Rows: k, Cols: n, Stride: ldb, Data: b},
		0, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// pool2d is maxpool2d or avgpool2d (ONNX semantics). Max ignores padding;
// average divides by the number of window cells inside the input, or with
// count_include_pad by those inside the input and its padding (cells that
// a ceil_mode window reaches beyond the padding never count).
func pool2d(op mir.Op, attrs mir.Attrs, x *array, out []int64) (*array, error) {
	if !x.isFloat() || len(x.shape) != 4 {
		return nil, fmt.Errorf("needs a float x [N, C, H, W], found %s%s", x.dt, tensor.ShapeString(x.shape))
	}
	kernel := attrs.Ints("kernel")
	if len(kernel) != 2 || kernel[0] < 1 || kernel[1] < 1 {
		return nil, fmt.Errorf("kernel must be two positive values, found %v", kernel)
	}
	stride, pad, dil, err := windowAttrs(attrs)
	if err != nil {
		return nil, err
	}
	N, C, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	ceil := attrs.Bool("ceil_mode")
	OH := windowOut(H, kernel[0], pad[0], pad[2], stride[0], dil[0], ceil)
	OW := windowOut(W, kernel[1], pad[1], pad[3], stride[1], dil[1], ceil)
	if want := []int64{N, C, OH, OW}; !sameShape(out, want) {
		return nil, fmt.Errorf("the result is %s but the pooling gives %s", tensor.ShapeString(out), tensor.ShapeString(want))
	}
	isMax := op == mir.OpMaxPool2D
	includePad := attrs.Bool("count_include_pad")
	res := newArray(x.dt, out)
	k := 0
	for nc := int64(0); nc < N*C; nc++ {
		plane := x.f[nc*H*W : (nc+1)*H*W]
		for oh := int64(0); oh < OH; oh++ {
			for ow := int64(0); ow < OW; ow++ {
				m, s, count := math.Inf(-1), 0.0, 0
				for i := int64(0); i < kernel[0]; i++ {
					ih := oh*stride[0] - pad[0] + i*dil[0]
					for j := int64(0); j < kernel[1]; j++ {
						iw := ow*stride[1] - pad[1] + j*dil[1]
						inside := ih >= 0 && ih < H && iw >= 0 && iw < W
						inPad := ih >= -pad[0] && ih < H+pad[2] && iw >= -pad[1] && iw < W+pad[3]
						if inside {
							v := plane[ih*W+iw]
							if v > m || math.IsNaN(v) {
								m = v // NaN propagates: nothing is > NaN
							}
							s += v
						}
						if inside || includePad && inPad {
							count++
						}
					}
				}
				if isMax {
					res.f[k] = m
				} else {
					res.f[k] = s / float64(count)
				}
				k++
			}
		}
	}
	return res.fit(), nil
}

// attention is softmax(scale * q·kᵀ + mask, causal-masked) · v over
// broadcast batch dims. With causal, query i sees keys j <= i + (Sk - Sq);
// the others score -inf. A row with every key masked is NaN.
func attention(attrs mir.Attrs, args []*array, out []int64) (*array, error) {
	if len(args) != 3 && len(args) != 4 {
		return nil, fmt.Errorf("takes q, k, v and an optional mask, found %d operands", len(args))
	}
	q, k, v := args[0], args[1], args[2]
	for _, a := range args {
		if !a.isFloat() || a.dt != q.dt {
			return nil, fmt.Errorf("needs float operands of one dtype, found %s and %s", q.dt, a.dt)
		}
	}
	if len(q.shape) < 2 || len(k.shape) < 2 || len(v.shape) < 2 || len(out) < 2 {
		return nil, fmt.Errorf("q, k and v need rank >= 2")
	}
	last2 := func(s []int64) (int, int) { return int(s[len(s)-2]), int(s[len(s)-1]) }
	Sq, D := last2(q.shape)
	Sk, Dk := last2(k.shape)
	Sv, Dv := last2(v.shape)
	if D != Dk || Sk != Sv || int(out[len(out)-2]) != Sq || int(out[len(out)-1]) != Dv {
		return nil, fmt.Errorf("q %s, k %s, v %s do not give %s", tensor.ShapeString(q.shape), tensor.ShapeString(k.shape), tensor.ShapeString(v.shape), tensor.ShapeString(out))
	}
	batch := out[:len(out)-2]
	qm, err := broadcastMap(q.shape[:len(q.shape)-2], batch)
	if err != nil {
		return nil, fmt.Errorf("q: %v", err)
	}
	km, err := broadcastMap(k.shape[:len(k.shape)-2], batch)
	if err != nil {
		return nil, fmt.Errorf("k: %v", err)
	}
	vm, err := broadcastMap(v.shape[:len(v.shape)-2], batch)
	if err != nil {
		return nil, fmt.Errorf("v: %v", err)
	}
	var mask *array
	var mm []int
	if len(args) == 4 {
		mask = args[3]
		scores := append(append([]int64{}, batch...), int64(Sq), int64(Sk))
		if mm, err = broadcastMap(mask.shape, scores); err != nil {
			return nil, fmt.Errorf("mask: %v", err)
		}
	}
	scale := 1 / math.Sqrt(float64(D))
	if attrs.Has("scale") {
		scale = attrs.Float("scale")
	}
	causal := attrs.Bool("causal")
	res := newArray(q.dt, out)
	s := make([]float64, Sk)
	for bi := range qm {
		qo, ko, vo := qm[bi]*Sq*D, km[bi]*Sk*D, vm[bi]*Sk*Dv
		for i := 0; i < Sq; i++ {
			for j := 0; j < Sk; j++ {
				if causal && j > i+(Sk-Sq) {
					s[j] = math.Inf(-1)
					continue
				}
				dot := 0.0
				for d := 0; d < D; d++ {
					dot += q.f[qo+i*D+d] * k.f[ko+j*D+d]
				}
				s[j] = scale * dot
				if mask != nil {
					s[j] += mask.f[mm[(bi*Sq+i)*Sk+j]]
				}
			}
			m := math.Inf(-1)
			for _, e := range s {
				m = math.Max(m, e)
			}
			sum := 0.0
			for j, e := range s {
				s[j] = math.Exp(e - m) // all -inf: -inf - -inf is NaN
				sum += s[j]
			}
			row := res.f[(bi*Sq+i)*Dv : (bi*Sq+i+1)*Dv]
			for j, p := range s {
				p /= sum
				for d := range row {
					row[d] += p * v.f[vo+j*Dv+d]
				}
			}
			if Sk == 0 {
				for d := range row {
					row[d] = math.NaN() // no key at all: 0/0
				}
			}
		}
	}
	return res.fit(), nil
}
