package onnx

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// convAttention imports Attention (opsets 23 and 24): scaled dot-product
// attention over Q [B, Hq, Sq, D], K [B, Hkv, Sk, D] and V [B, Hkv, Sk,
// Dv] (or 3-D [B, S, H·D] with q_num_heads and kv_num_heads), as HIR's
// attention:
//   - past_key and past_value are concatenated before K and V along the
//     sequence, and present_key and present_value are the results;
//   - grouped-query heads (Hq a multiple of Hkv, query head h reading KV
//     head h / (Hq/Hkv)) split Q's heads into [Hkv, Hq/Hkv] and broadcast
//     K and V over the second, so nothing is copied;
//   - a boolean mask (true attends) becomes 0 / -inf, a float one is added;
//   - is_causal: a query attends keys j <= i + P, P the past's length.
//     Where Sk - Sq = P (with a past, or equal lengths) that is HIR's
//     causal; otherwise (cross attention with no past) the mask is
//     written out from iotas.
//
// Not supported (an error naming it): softcap, qk_matmul_output (the
// fourth output), nonpad_kv_seqlen, sliding windows. A row whose every key
// is masked gives NaN (HIR's attention, as PyTorch), where ONNX gives 0.
func convAttention(im *importer, n *onnxpb.Node) error {
	if len(n.Inputs) < 3 {
		return fmt.Errorf("Attention takes Q, K and V, found %d inputs", len(n.Inputs))
	}
	in := func(i int) bool { return i < len(n.Inputs) && n.Inputs[i] != "" }
	switch {
	case attrFloat(n, "softcap", 0) != 0:
		return fmt.Errorf("Attention with softcap is not supported")
	case len(n.Outputs) > 3 && n.Outputs[3] != "":
		return fmt.Errorf("Attention's qk_matmul_output (output 3) is not supported")
	case in(6):
		return fmt.Errorf("Attention with nonpad_kv_seqlen is not supported")
	case attrInt(n, "left_window_size", -1) >= 0 || attrInt(n, "right_window_size", -1) >= 0:
		return fmt.Errorf("Attention with a sliding window is not supported")
	case in(4) != in(5):
		return fmt.Errorf("Attention needs past_key and past_value together")
	}
	qt, err := im.typeOf(n.Inputs[0])
	if err != nil {
		return err
	}
	kt, err := im.typeOf(n.Inputs[1])
	if err != nil {
		return err
	}
	vt, err := im.typeOf(n.Inputs[2])
	if err != nil {
		return err
	}
	if !qt.DType.IsFloat() {
		return fmt.Errorf("Attention on %s: float inputs are supported", qt.DType)
	}
	r := qt.Rank()
	if r != 3 && r != 4 || kt.Rank() != r || vt.Rank() != r {
		return fmt.Errorf("Attention on Q, K, V of ranks %d, %d, %d: all 3-D or all 4-D", r, kt.Rank(), vt.Rank())
	}
	out := n.Outputs[0]
	var q, k, v string
	for i, p := range []*string{&q, &k, &v} {
		if *p, err = im.rt(i); err != nil {
			return err
		}
	}
	qs, ks, vs := qt.Shape, kt.Shape, vt.Shape
	if r == 3 {
		hq, hkv := attrInt(n, "q_num_heads", 0), attrInt(n, "kv_num_heads", 0)
		if hq < 1 || hkv < 1 {
			return fmt.Errorf("3-D Attention needs q_num_heads and kv_num_heads")
		}
		// [B, S, H·D] -> [B, H, S, D]
		heads := func(name string, s []dim.Expr, h int64, what string) (string, []dim.Expr, error) {
			hidden, ok := s[2].Const()
			if !ok || hidden%h != 0 {
				return "", nil, fmt.Errorf("Attention: %s's hidden size %s is not a multiple of its %d heads", what, s[2], h)
			}
			split := []dim.Expr{s[0], s[1], dim.Const(h), dim.Const(hidden / h)}
			x := im.emitTmp(out+"_"+what+"_heads", "reshape", []string{name}, "shape="+dimList(split))
			x = im.emitTmp(out+"_"+what+"_bhsd", "transpose", []string{x}, "perm=[0, 2, 1, 3]")
			return x, []dim.Expr{s[0], dim.Const(h), s[1], dim.Const(hidden / h)}, nil
		}
		if q, qs, err = heads(q, qs, hq, "q"); err != nil {
			return err
		}
		if k, ks, err = heads(k, ks, hkv, "k"); err != nil {
			return err
		}
		if v, vs, err = heads(v, vs, hkv, "v"); err != nil {
			return err
		}
	} else if attrInt(n, "q_num_heads", 0) != 0 || attrInt(n, "kv_num_heads", 0) != 0 {
		return fmt.Errorf("4-D Attention takes its heads from the shapes: q_num_heads and kv_num_heads must be absent")
	}
	sq, sk := qs[2], ks[2]
	if in(4) {
		pk, err := im.typeOf(n.Inputs[4])
		if err != nil {
			return err
		}
		if pk.Rank() != 4 {
			return fmt.Errorf("Attention's past_key must be 4-D [B, Hkv, P, D], found %s", pk)
		}
		past := pk.Shape[2]
		pkn, err := im.rt(4)
		if err != nil {
			return err
		}
		pvn, err := im.rt(5)
		if err != nil {
			return err
		}
		k = im.emitTmp(out+"_present_key", "concat", []string{pkn, k}, "axis=2")
		v = im.emitTmp(out+"_present_value", "concat", []string{pvn, v}, "axis=2")
		if sk, err = dim.Add(past, sk); err != nil {
			return err
		}
	}
	for i, pres := range []string{k, v} {
		if len(n.Outputs) > i+1 && n.Outputs[i+1] != "" {
			if err := im.emit(n.Outputs[i+1:i+2], "reshape", []string{pres}, "shape="+dimList([]dim.Expr{ks[0], ks[1], sk, []dim.Expr{ks[3], vs[3]}[i]})); err != nil {
				return err
			}
		}
	}

	// The additive mask, rank 4 over [.., .., Sq, Sk].
	mask, maskShape := "", []dim.Expr(nil)
	if in(3) {
		mt, err := im.typeOf(n.Inputs[3])
		if err != nil {
			return err
		}
		if mt.Rank() < 2 || mt.Rank() > 4 {
			return fmt.Errorf("Attention's attn_mask of rank %d: 2 to 4 are supported", mt.Rank())
		}
		if last := mt.Shape[mt.Rank()-1]; !dim.Equal(last, sk) && !isOne(last) {
			return fmt.Errorf("Attention's attn_mask covers %s keys, the keys are %s: a shorter mask is not supported", last, sk)
		}
		if mask, err = im.rt(3); err != nil {
			return err
		}
		switch {
		case mt.DType == tensor.Bool:
			zero, ninf := im.scalar(out+"_zero", 0, qt.DType), im.emitTmp(out+"_ninf", "const", nil, "-inf", qt.DType.String()+"[]")
			mask = im.emitTmp(out+"_bias", "where", []string{mask, zero, ninf})
		case mt.DType != qt.DType:
			return fmt.Errorf("Attention's attn_mask is %s: bool or Q's dtype %s", mt.DType, qt.DType)
		}
		maskShape = append(make([]dim.Expr, 0, 4), mt.Shape...)
		for len(maskShape) < 4 {
			maskShape = append([]dim.Expr{dim.Const(1)}, maskShape...)
		}
		mask = im.emitTmp(out+"_mask4", "reshape", []string{mask}, "shape="+dimList(maskShape))
	}
	causal := attrInt(n, "is_causal", 0) != 0
	if causal && !in(4) && !dim.Equal(sq, sk) {
		// Top-left (no past: P = 0): query i attends keys j <= i,
		// written out, since HIR's causal aligns bottom-right.
		i := im.emitTmp(out+"_qi", "iota", nil, "n="+sq.String(), "dtype=i64")
		i = im.emitTmp(out+"_qi2", "reshape", []string{i}, "shape="+dimList([]dim.Expr{sq, dim.Const(1)}))
		j := im.emitTmp(out+"_kj", "iota", nil, "n="+sk.String(), "dtype=i64")
		ok := im.emitTmp(out+"_causal_ok", "le", []string{j, i})
		zero, ninf := im.scalar(out+"_czero", 0, qt.DType), im.emitTmp(out+"_cninf", "const", nil, "-inf", qt.DType.String()+"[]")
		c := im.emitTmp(out+"_causal", "where", []string{ok, zero, ninf})
		c4 := []dim.Expr{dim.Const(1), dim.Const(1), sq, sk}
		c = im.emitTmp(out+"_causal4", "reshape", []string{c}, "shape="+dimList(c4))
		if mask == "" {
			mask, maskShape = c, c4
		} else {
			mask = im.emitTmp(out+"_masks", "add", []string{mask, c})
			maskShape = []dim.Expr{maskShape[0], maskShape[1], sq, sk}
		}
		causal = false
	}
	attrs := []string{fmt.Sprintf("causal=%v", causal)}
	if a := n.Attr("scale"); a != nil {
		attrs = append(attrs, "scale="+floatLit(float64(a.F), 32))
	}

	hq, hkv := qs[1], ks[1]
	ys := []dim.Expr{qs[0], hq, sq, vs[3]}
	var y string
	if dim.Equal(hq, hkv) {
		args := []string{q, k, v}
		if mask != "" {
			args = append(args, mask)
		}
		y = im.emitTmp(out+"_attn", "attention", args, attrs...)
	} else {
		// Grouped-query: query head h reads KV head h / rep.
		nq, ok1 := hq.Const()
		nkv, ok2 := hkv.Const()
		if !ok1 || !ok2 || nkv < 1 || nq%nkv != 0 {
			return fmt.Errorf("Attention with %s query heads and %s KV heads: the query heads must be a multiple of the KV heads", hq, hkv)
		}
		rep := dim.Const(nq / nkv)
		one := dim.Const(1)
		q = im.emitTmp(out+"_q5", "reshape", []string{q}, "shape="+dimList([]dim.Expr{qs[0], hkv, rep, sq, qs[3]}))
		k = im.emitTmp(out+"_k5", "reshape", []string{k}, "shape="+dimList([]dim.Expr{ks[0], hkv, one, sk, ks[3]}))
		v = im.emitTmp(out+"_v5", "reshape", []string{v}, "shape="+dimList([]dim.Expr{vs[0], hkv, one, sk, vs[3]}))
		args := []string{q, k, v}
		if mask != "" {
			m5 := []dim.Expr{maskShape[0], one, one, maskShape[2], maskShape[3]}
			if !isOne(maskShape[1]) {
				m5[1], m5[2] = hkv, rep
			}
			args = append(args, im.emitTmp(out+"_mask5", "reshape", []string{mask}, "shape="+dimList(m5)))
		}
		y = im.emitTmp(out+"_attn", "attention", args, attrs...)
		y = im.emitTmp(out+"_heads", "reshape", []string{y}, "shape="+dimList(ys))
	}
	if r == 4 {
		return im.emit(n.Outputs[:1], "reshape", []string{y}, "shape="+dimList(ys))
	}
	y = im.emitTmp(out+"_bshd", "transpose", []string{y}, "perm=[0, 2, 1, 3]")
	hidden, err := dim.Mul(hq, vs[3])
	if err != nil {
		return err
	}
	return im.emit(n.Outputs[:1], "reshape", []string{y}, "shape="+dimList([]dim.Expr{qs[0], sq, hidden}))
}

// isOne reports a dim that is the literal 1.
func isOne(d dim.Expr) bool {
	c, ok := d.Const()
	return ok && c == 1
}
