package kernelgen

import (
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
)

// Depthwise convolutions (one input and one output channel a group): a
// workgroup computes a tile of one channel's output plane, one output an
// invocation. It first stages the input patch the tile reads (zeros
// where it falls in the padding) and the channel's taps in workgroup
// memory, so each input element is read from device memory once a tile
// instead of once a tap (KH·KW times), and the taps' bounds are tested
// once, while staging.
const (
	// dwThreads is the most invocations of a workgroup.
	dwThreads = 256
	// dwMaxTileW is the widest tile: a row of 32 outputs reads 32
	// consecutive input floats at stride 1 (whole transactions).
	dwMaxTileW = 32
	// dwShared is the most workgroup memory a tile's patch and taps
	// take, in floats (16 KiB, within every Vulkan device's minimum).
	dwShared = 4096
)

// dwTile is the tile of a depthwise convolution onto an oh×ow plane: tw
// columns, a power of two from 8 up to dwMaxTileW that covers the width
// where it can, and th rows, a power of two up to the plane's height
// rounded up, at most dwThreads/tw: a 7x7 plane takes one 8x8 tile, not a
// quarter-empty 16x16.
func dwTile(oh, ow int64) (th, tw int64) {
	tw = 8
	for tw < ow && tw < dwMaxTileW {
		tw *= 2
	}
	th = 1
	for th < oh && th*2*tw <= dwThreads {
		th *= 2
	}
	return th, tw
}

// dwPatch is the input patch of a th×tw output tile: its rows and
// columns.
func dwPatch(v *lir.ConvGeom, th, tw int64) (ph, pw int64) {
	return (th-1)*v.StrideH + (v.KH-1)*v.DilH + 1, (tw-1)*v.StrideW + (v.KW-1)*v.DilW + 1
}

// conv2dDepthwise lowers a depthwise convolution with a staged tile, or
// reports false where its patch does not fit dwShared or its grid the
// workgroup counts (the direct kernel takes it).
func (g *gen) conv2dDepthwise(op *lir.Conv2D) (bool, error) {
	v := &op.Geom
	N, C, H, W, KH, KW := v.N, v.C, v.H, v.W, v.KH, v.KW
	sh, sw, pt, pl, dh, dw, OH, OW := v.StrideH, v.StrideW, v.PadT, v.PadL, v.DilH, v.DilW, v.OH, v.OW
	th, tw := dwTile(OH, OW)
	ph, pw := dwPatch(v, th, tw)
	gx, gy := ceilDiv(OW, tw), ceilDiv(OH, th)
	if ph*pw+KH*KW > dwShared || gx > maxGroups || gy > maxGroups || N*C > maxGroups {
		return false, nil
	}
	threads := th * tw
	g.begin([3]int{int(threads), 1, 1})
	x, w, ep, out, err := g.productParams(op.X, op.W, &op.Epilogue, op.Out, "x", "w")
	if err != nil {
		return false, err
	}
	const sX, sW = 0, 1
	g.k.Shared = []kir.Shared{
		{Name: "patch", Elem: kir.F32, Len: int(ph * pw)},
		{Name: "taps", Elem: kir.F32, Len: int(KH * KW)},
	}
	I := kir.Int
	V := func(n string) *kir.Expr { return kir.Var(n, kir.I32) }
	body := []*kir.Stmt{
		kir.Decl("tid", kir.LocalID(0)),
		kir.Decl("nc", kir.GroupID(2)),
		kir.Decl("oh0", kir.Mul(kir.GroupID(1), I(th))),
		kir.Decl("ow0", kir.Mul(kir.GroupID(0), I(tw))),
		kir.Decl("ih0", addC(mulC(V("oh0"), sh), -pt)),
		kir.Decl("iw0", addC(mulC(V("ow0"), sw), -pl)),
		kir.Decl("xbase", kir.Mul(V("nc"), I(H*W))),
		// Stage the patch, zeros in the padding and past the plane.
		kir.For("i", V("tid"), I(ph*pw), I(threads),
			kir.Decl("pr", divC(V("i"), pw)),
			kir.Decl("ih", kir.Add(V("ih0"), V("pr"))),
			kir.Decl("iw", kir.Add(V("iw0"), kir.Sub(V("i"), mulC(V("pr"), pw)))),
			kir.Decl("inb", and(and(kir.Ge(V("ih"), I(0)), kir.Lt(V("ih"), I(H))), and(kir.Ge(V("iw"), I(0)), kir.Lt(V("iw"), I(W))))),
			kir.Decl("xv", kir.Float(0)),
			kir.If(kir.Var("inb", kir.Bool), []*kir.Stmt{
				kir.Assign("xv", x.load(kir.Add(V("xbase"), kir.Add(mulC(V("ih"), W), V("iw"))))),
			}),
			kir.StoreShared(sX, V("i"), kir.Var("xv", kir.F32))),
		kir.For("i", V("tid"), I(KH*KW), I(threads),
			kir.StoreShared(sW, V("i"), w.load(kir.Add(mulC(remC(V("nc"), C), KH*KW), V("i"))))),
		kir.Barrier(),
		kir.Decl("ty", divC(V("tid"), tw)),
		kir.Decl("tx", remC(V("tid"), tw)),
		kir.Decl("oh", kir.Add(V("oh0"), V("ty"))),
		kir.Decl("ow", kir.Add(V("ow0"), V("tx"))),
	}
	// The taps, unrolled: each a load of the patch and of a tap.
	var acc *kir.Expr
	for kh := range KH {
		for kw := range KW {
			p := kir.Add(mulC(addC(mulC(V("ty"), sh), kh*dh), pw), addC(mulC(V("tx"), sw), kw*dw))
			t := kir.Mul(kir.LoadShared(sX, kir.F32, p), kir.LoadShared(sW, kir.F32, I(kh*KW+kw)))
			if acc == nil {
				acc = t
			} else {
				acc = kir.Add(acc, t)
			}
		}
	}
	idx := kir.Add(mulC(V("nc"), OH*OW), kir.Add(mulC(V("oh"), OW), V("ow")))
	body = append(body, kir.If(and(kir.Lt(V("oh"), I(OH)), kir.Lt(V("ow"), I(OW))),
		append([]*kir.Stmt{kir.Decl("acc", acc)}, g.finish(ep, out, kir.Var("acc", kir.F32), idx, remC(V("nc"), C))...)))
	g.end([3]int{int(gx), int(gy), int(N * C)}, body...)
	return true, nil
}
