package conv

import (
	"fmt"
	"math"
	"sync"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/vec"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Depthwise 3×3 convolution over small planes, channels last.
//
// In NCHW a 7×7 or 14×14 plane is too small for vectors along its rows:
// per-plane work (borders, short rows, tails) dominated: on MobileNetV2's
// 960×7×7 layers a channel took several times what ONNX Runtime
// (channels-blocked) took. Here a block of channels is transposed to [H·W][C] (8×8
// vector tiles), every output pixel is nine vector taps across the
// channels, and the result is transposed back: the same sums, in the same
// order (bias, then taps by kh, kw), as the NCHW kernels.

// The largest input planes (H·W) that go channels last: at stride 1 up to
// 14×14 (at 28×28 the NCHW kernels were as fast), at stride 2, where the
// NCHW path splits phases first, up to 28×28 (192@28x28 at stride 2 ran
// faster channels last).
const (
	dwNHWCMaxPlane   = tuning.DwNHWCMaxPlane
	dwNHWCMaxPlaneS2 = tuning.DwNHWCMaxPlaneS2
)

// dwNHWCApplies reports whether Conv2D runs g channels last (transposing
// in and out): dwNHWCShape, on a small plane.
func dwNHWCApplies(g *ConvGeom) bool {
	plane := g.H * g.W
	small := plane <= dwNHWCMaxPlane || (g.StrideH == 2 && g.StrideW == 2 && plane <= dwNHWCMaxPlaneS2)
	return dwNHWCShape(g) && small
}

// dwNHWCShape reports whether the channels-last kernels compute g: 3×3,
// dilation 1, one channel per group and multiplier 1, channels a multiple
// of 8.
func dwNHWCShape(g *ConvGeom) bool {
	return g.KH == 3 && g.KW == 3 && g.DilH == 1 && g.DilW == 1 && g.Groups == g.C && g.O == g.C &&
		g.C%8 == 0 && g.OH > 0 && g.OW > 0
}

// dwNHWCGo is the portable twin of dwNHWCAVX: for pixel p < npix and
// channel j < c, out[p*outStride+j] = clamp(bias[j] + Σ_t in[t][p*inStride+j]
// · w[t*c+j], lo, hi), taps summed in order with fused multiply-adds; NaN
// passes the clamp.
func dwNHWCGo(out []float32, outStride int, in *[9][]float32, inStride int, w, bias []float32, c, npix int, lo, hi float32) {
	for p := 0; p < npix; p++ {
		o := out[p*outStride : p*outStride+c]
		for j := range o {
			acc := bias[j]
			for t := range in {
				acc = float32(math.FMA(float64(in[t][p*inStride+j]), float64(w[t*c+j]), float64(acc)))
			}
			o[j] = clamp32(acc, lo, hi)
		}
	}
}

// dwNHWCWork is one task's buffers: the channels-last input, output,
// tap-major weights and zeros (never written).
type dwNHWCWork struct{ x, o, w, zero []float32 }

// zeros returns n zeros.
func (wk *dwNHWCWork) zeros(n int) []float32 {
	if len(wk.zero) < n {
		wk.zero = make([]float32, n)
	}
	return wk.zero[:n]
}

// dwZeroLen is how many zeros dwNHWCPlane needs: a row's worth of
// pixels ps floats apart, for the taps above or below the plane of a
// whole row of outputs.
func dwZeroLen(g *ConvGeom, ps int) int { return g.OW * g.StrideW * ps }

var dwNHWCPool = sync.Pool{New: func() any { return new(dwNHWCWork) }}

// tapMajor sets wk.w to channels [c0, c1) of the [C][9] weights w
// tap-major ([9][c1-c0]) and returns them, their bias (zeros for a nil
// one), and the zeros dwNHWCPlane needs for pixels ps floats apart.
func (wk *dwNHWCWork) tapMajor(g *ConvGeom, w, bias []float32, c0, c1, ps int) (wt, bs, zero []float32) {
	cn := c1 - c0
	wk.w = grow(wk.w, 9*cn)
	vec.Transpose(wk.w, cn, w[c0*9:], 9, cn, 9)
	bs, zero = wk.biasZeros(g, bias, c0, c1, ps)
	return wk.w[:9*cn], bs, zero
}

// biasZeros returns channels [c0, c1) of bias (zeros for a nil one) and
// the zeros dwNHWCPlane needs for pixels ps floats apart.
func (wk *dwNHWCWork) biasZeros(g *ConvGeom, bias []float32, c0, c1, ps int) (bs, zero []float32) {
	zero = wk.zeros(max(c1-c0, dwZeroLen(g, ps)))
	bs = zero[:c1-c0]
	if bias != nil {
		bs = bias[c0:c1]
	}
	return bs, zero
}

// dwNHWCBlocks runs body on every (image n, channel block [c0, c0+cn))
// of g, blocks a multiple of 8 channels split across the pool, with the
// block's weights tap-major (wt [9][cn]), its bias (zeros for a nil one), a
// zero pixel, and the task's buffers.
func dwNHWCBlocks(p *parallel.Pool, g *ConvGeom, w, bias []float32, body func(wk *dwNHWCWork, n, c0, cn int, wt, bs, zero []float32)) {
	C := g.C
	blocks := 1
	if p.Threads() > 1 {
		blocks = min(C/8, 2*p.Threads())
	}
	p.For(g.N*blocks, 1, func(tlo, thi int) {
		wk := dwNHWCPool.Get().(*dwNHWCWork)
		defer dwNHWCPool.Put(wk)
		for t := tlo; t < thi; t++ {
			n, b := t/blocks, t%blocks
			c0, c1 := b*(C/8)/blocks*8, (b+1)*(C/8)/blocks*8
			wt, bs, zero := wk.tapMajor(g, w, bias, c0, c1, c1-c0)
			body(wk, n, c0, c1-c0, wt, bs, zero)
		}
	})
}

// depthwiseNHWC computes a depthwise convolution dwNHWCApplies accepts,
// out = clamp(conv(x, w) + bias, lo, hi), NCHW in and out: each block is
// transposed channels last, computed, and transposed back. bias may be nil.
func depthwiseNHWC(p *parallel.Pool, out, x, w []float32, g *ConvGeom, bias []float32, lo, hi float32) {
	C, hw, ohw := g.C, g.H*g.W, g.OH*g.OW
	dwNHWCBlocks(p, g, w, bias, func(wk *dwNHWCWork, n, c0, cn int, wt, bs, zero []float32) {
		wk.x, wk.o = grow(wk.x, hw*cn), grow(wk.o, ohw*cn)
		vec.Transpose(wk.x, cn, x[(n*C+c0)*hw:], hw, cn, hw) // [C][H·W] -> [H·W][C]
		dwNHWCPlane(wk.o, wk.x, wt, bs, zero, g, cn, cn, 0, g.OH, lo, hi)
		vec.Transpose(out[(n*C+c0)*ohw:], ohw, wk.o, cn, ohw, cn)
	})
}

// dwNHWCPlane computes output rows [oh0, oh1) of one image's channel block
// channels last: xt in, [H·W] pixels ps floats apart, ot out, [OH·OW]
// pixels ps floats apart, each pixel's cn channels contiguous; wt [9][cn];
// zero at least dwZeroLen zeros. Each output row's interior columns (all
// three input columns inside the row) run in one call, their taps above
// or below the plane reading zero; the border columns go one pixel at a
// time (on a 7×7 plane, one call per pixel cost about as much as the
// taps).
func dwNHWCPlane(ot, xt, wt, bias, zero []float32, g *ConvGeom, cn, ps, oh0, oh1 int, lo, hi float32) {
	sh, sw := g.StrideH, g.StrideW
	owLo := min(g.OW, ceilDiv(g.PadL, sw))
	owHi := max(owLo, min(g.OW, (g.W-3+g.PadL)/sw+1))
	if g.W-3+g.PadL < 0 {
		owHi = owLo
	}
	var in [9][]float32
	// taps points in at the input pixels of output (oh, ow), zero where
	// they lie outside the input.
	taps := func(oh, ow int) {
		for kh := 0; kh < 3; kh++ {
			ih := oh*sh - g.PadT + kh
			for kw := 0; kw < 3; kw++ {
				iw := ow*sw - g.PadL + kw
				if ih < 0 || ih >= g.H || iw < 0 || iw >= g.W {
					in[kh*3+kw] = zero
				} else {
					in[kh*3+kw] = xt[(ih*g.W+iw)*ps:]
				}
			}
		}
	}
	pixel := func(oh, ow int) {
		taps(oh, ow)
		dwNHWC(ot[(oh*g.OW+ow)*ps:], ps, &in, 0, wt, bias, cn, 1, lo, hi)
	}
	for oh := oh0; oh < oh1; oh++ {
		for ow := 0; ow < owLo; ow++ {
			pixel(oh, ow)
		}
		if owLo < owHi {
			taps(oh, owLo)
			dwNHWC(ot[(oh*g.OW+owLo)*ps:], ps, &in, sw*ps, wt, bias, cn, owHi-owLo, lo, hi)
		}
		for ow := owHi; ow < g.OW; ow++ {
			pixel(oh, ow)
		}
	}
}

// DepthwiseNHWC computes a 3×3 depthwise convolution (DepthwiseNHWCApplies)
// over channels-last tensors: x [N, H, W, C], out [N, OH, OW, C], and the
// weights tap-major, wt [9, C] (DepthwiseTaps of the [C, 1, 3, 3] ones:
// a compiler does it once at build time; done per call it was a visible
// part of a 7×7 layer); ep.Bias is per channel, ep.Residual laid out like out. ReLU
// and clamps are applied with the taps, other activations and the
// residual after. out must not overlap x, wt, Bias or Residual.
func DepthwiseNHWC(p *parallel.Pool, out, x, wt []float32, g ConvGeom, ep gemm.Epilogue) {
	g.normalize()
	C, hw, ohw := g.C, g.H*g.W, g.OH*g.OW
	if !dwNHWCShape(&g) || g.N < 0 || len(x) < g.N*hw*C || len(out) < g.N*ohw*C || len(wt) < 9*C ||
		(ep.Bias != nil && len(ep.Bias) < C) || (ep.Residual != nil && len(ep.Residual) < g.N*ohw*C) {
		panic(fmt.Sprintf("kernels: DepthwiseNHWC: bad geometry %+v or slices x %d w %d out %d", g, len(x), len(wt), len(out)))
	}
	lo, hi, act := clampOf(&ep)
	// Bands of output rows across all channels split across the pool:
	// channel blocks, as depthwiseNHWC splits, repeat every block's border
	// pixels (a quarter to half of a 14×14 or 7×7 plane's, one Go call
	// each) and scaled poorly on 2 threads.
	wk := dwNHWCPool.Get().(*dwNHWCWork)
	defer dwNHWCPool.Put(wk)
	bs, zero := wk.biasZeros(&g, ep.Bias, 0, C, C)
	wt = wt[:9*C]
	p.For(g.N*g.OH, max(1, tuning.GrainWork/(9*g.OW*C)), func(t0, t1 int) {
		for t := t0; t < t1; {
			n, oh := t/g.OH, t%g.OH
			oh1 := min(g.OH, oh+t1-t)
			dwNHWCPlane(out[n*ohw*C:], x[n*hw*C:], wt, bs, zero, &g, C, C, oh, oh1, lo, hi)
			t += oh1 - oh
		}
	})
	if act != vec.ActNone || ep.Residual != nil {
		e := gemm.Epi{Act: act, Alpha: ep.Alpha, Lo: ep.Min, Hi: ep.Max, Res: ep.Residual, Ldr: C, ActLast: ep.ActLast}
		e.Apply(out, C, 0, 0, g.N*ohw, C)
	}
}

// DepthwiseTaps returns depthwise weights w [C, 1, KH, KW] tap-major, as
// [KH·KW, C], the layout DepthwiseNHWC takes.
func DepthwiseTaps(w []float32, c, taps int) []float32 {
	if c < 0 || taps < 0 || len(w) < c*taps {
		panic(fmt.Sprintf("kernels: DepthwiseTaps: %d weights for %d channels of %d taps", len(w), c, taps))
	}
	wt := make([]float32, taps*c)
	vec.Transpose(wt, c, w, taps, c, taps)
	return wt
}

// DepthwiseNHWCApplies reports whether DepthwiseNHWC computes g (any plane:
// which ones are worth keeping channels last is the caller's choice).
func DepthwiseNHWCApplies(g ConvGeom) bool {
	g.normalize()
	return dwNHWCShape(&g)
}

// clampOf splits ep's activation into the clamp the tap passes apply (ReLU
// as [0, +Inf], a clamp as itself, else none, and none where it follows
// the residual) and the activation left.
func clampOf(ep *gemm.Epilogue) (lo, hi float32, rest vec.Activation) {
	lo, hi, rest = float32(math.Inf(-1)), float32(math.Inf(1)), ep.Act
	switch {
	case ep.ActLast && ep.Residual != nil:
	case rest == vec.ActRelu:
		lo, rest = 0, vec.ActNone
	case rest == vec.ActClamp && !(ep.Min > ep.Max):
		lo, hi, rest = ep.Min, ep.Max, vec.ActNone
	}
	return lo, hi, rest
}

// ToNHWC writes src [N, C, HW] channels last into dst [N, HW, C], and
// ToNCHW the other way; channel blocks are split across the pool.
func ToNHWC(p *parallel.Pool, dst, src []float32, n, c, hw int) {
	relayout(p, dst, src, n, c, hw, true)
}

// ToNCHW writes src [N, HW, C] as dst [N, C, HW].
func ToNCHW(p *parallel.Pool, dst, src []float32, n, c, hw int) {
	relayout(p, dst, src, n, c, hw, false)
}

func relayout(p *parallel.Pool, dst, src []float32, n, c, hw int, toNHWC bool) {
	if n < 0 || c < 0 || hw < 0 || len(dst) < n*c*hw || len(src) < n*c*hw {
		panic(fmt.Sprintf("kernels: relayout: slices of %d, %d for [%d, %d, %d]", len(dst), len(src), n, c, hw))
	}
	if n*c*hw == 0 {
		return
	}
	blocks := max(1, min(ceilDiv(c, 8), 2*p.Threads()))
	p.For(n*blocks, 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			i, b := t/blocks, t%blocks
			c0, c1 := b*ceilDiv(c, 8)/blocks*8, min(c, (b+1)*ceilDiv(c, 8)/blocks*8)
			img := i * c * hw
			if toNHWC {
				vec.Transpose(dst[img+c0:], c, src[img+c0*hw:], hw, c1-c0, hw)
			} else {
				vec.Transpose(dst[img+c0*hw:], hw, src[img+c0:], c, hw, c1-c0)
			}
		}
	})
}
