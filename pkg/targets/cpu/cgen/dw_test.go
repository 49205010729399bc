package cgen

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
)

// dwGeom is a depthwise convolution's geometry: c channels times mult
// output channels each, a k x k kernel, strides sh x sw, padding top,
// left, bottom, right and dilation d, its output size computed.
func dwGeom(n, c, mult, h, w, k, sh, sw, pt, pl, pb, pr, d int64) lir.ConvGeom {
	g := geom(n, c, h, w, c*mult, k, k, sh, sw, pt, pl, pb, pr, d, d)
	g.Groups = c
	return g
}

// dwSweep is the depthwise geometries the tests compile: kernels 3, 5
// and 7, strides 1 and 2 (and a row stride of 2 or 3 with a column
// stride of 1, and the reverse), dilations 1 and 2, paddings none to
// past the kernel, symmetric and not, planes 1x1 to 112x112 with odd
// widths, 1 to 96 channels, channel multipliers 1 to 4, batch 1 and 2,
// each with an epilogue.
func dwSweep() []convCase {
	type c = convCase
	return []c{
		{dwGeom(1, 96, 1, 56, 56, 7, 1, 1, 3, 3, 3, 3, 1), epiBiasRelu},
		{dwGeom(1, 24, 1, 28, 28, 7, 1, 1, 3, 3, 3, 3, 1), epiBiasRes},
		{dwGeom(1, 48, 1, 7, 7, 7, 1, 1, 3, 3, 3, 3, 1), epiBiasRes},
		{dwGeom(1, 4, 1, 10, 70, 7, 1, 1, 3, 3, 3, 3, 1), epiBias},
		{dwGeom(1, 5, 1, 13, 13, 7, 1, 1, 3, 3, 3, 3, 2), epiBiasRelu},
		{dwGeom(2, 20, 1, 15, 31, 7, 2, 2, 3, 0, 1, 3, 1), epiBiasResRelu},
		{dwGeom(1, 7, 1, 2, 3, 7, 1, 1, 3, 3, 3, 3, 1), epiLeaky},
		{dwGeom(1, 40, 1, 14, 14, 5, 1, 1, 2, 2, 2, 2, 1), epiClamp},
		{dwGeom(2, 16, 1, 28, 28, 5, 2, 2, 2, 2, 2, 2, 1), epiBiasRelu},
		{dwGeom(1, 32, 1, 27, 27, 5, 2, 2, 1, 2, 2, 1, 1), epiBias},
		{dwGeom(1, 10, 1, 9, 40, 5, 1, 1, 0, 0, 0, 0, 1), epiNone},
		{dwGeom(1, 9, 1, 21, 21, 5, 1, 1, 4, 4, 4, 4, 1), epiBiasRes},
		{dwGeom(1, 24, 1, 28, 28, 5, 1, 1, 2, 2, 2, 2, 1), epiLeaky},
		{dwGeom(1, 6, 3, 11, 9, 5, 2, 2, 2, 2, 2, 2, 1), epiClamp},
		{dwGeom(1, 12, 1, 21, 23, 5, 2, 2, 4, 4, 4, 4, 2), epiBiasRelu},
		{dwGeom(1, 8, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1), epiBias},
		{dwGeom(1, 1, 1, 17, 19, 3, 1, 1, 1, 1, 1, 1, 1), epiNone},
		{dwGeom(1, 12, 1, 20, 20, 3, 1, 1, 2, 2, 2, 2, 2), epiBiasRelu},
		{dwGeom(1, 16, 2, 14, 14, 3, 1, 1, 1, 1, 1, 1, 1), epiBiasResRelu},
		{dwGeom(1, 64, 1, 33, 33, 3, 2, 2, 1, 1, 1, 1, 1), epiBiasRelu},
		{dwGeom(1, 32, 1, 56, 56, 3, 1, 1, 1, 1, 1, 1, 1), epiBias},
		{dwGeom(1, 3, 1, 112, 112, 3, 2, 2, 0, 0, 1, 1, 1), epiClamp},
		{dwGeom(1, 72, 1, 3, 5, 3, 2, 2, 1, 1, 1, 1, 1), epiBiasRes},
		{dwGeom(1, 8, 1, 12, 20, 3, 2, 1, 1, 1, 1, 1, 1), epiLeaky},
		{dwGeom(2, 5, 2, 16, 17, 5, 3, 1, 2, 2, 2, 2, 1), epiBiasRelu},
		{dwGeom(1, 3, 1, 9, 17, 3, 1, 2, 1, 1, 1, 1, 1), epiBiasRes},
		{dwGeom(1, 1, 4, 12, 11, 5, 1, 1, 2, 2, 2, 2, 1), epiBias},
		{dwGeom(1, 24, 1, 28, 28, 7, 1, 1, 3, 3, 3, 3, 1), epiReluLast},
		{dwGeom(1, 64, 1, 33, 33, 3, 2, 2, 1, 1, 1, 1, 1), epiClampLast},
		{dwGeom(1, 8, 1, 12, 20, 3, 2, 1, 1, 1, 1, 1, 1), epiLeakyLast},
	}
}

// TestNativeDepthwise compiles every depthwise geometry of the sweep
// (whether the rule takes it or not) for every level this CPU runs, and
// the fallback (NEON's code) on x86-64, and compares with the runtime's
// kernel on the same program (see TestNativeConv).
func TestNativeDepthwise(t *testing.T) { checkNativeConvs(t, dwSweep()) }

// BenchmarkDepthwise is the sweep behind tuning.NativeDepthwise, one
// thread, the runtime's kernel (code=go) and the generated code of each
// level this CPU runs: the operator sweep's 5x5 and 7x7 points
// (MobileNetV3, EfficientNet, ConvNeXt) at strides 1 and 2, a dilated
// 3x3, and MobileNetV2's 3x3 layers.
func BenchmarkDepthwise(b *testing.B) {
	dw := func(name string, g lir.ConvGeom) benchConv { return benchConv{name, g, epiBiasRelu} }
	benchConvs(b, []benchConv{
		dw("7x7s1_c96_56", dwGeom(1, 96, 1, 56, 56, 7, 1, 1, 3, 3, 3, 3, 1)),
		dw("7x7s1_c768_7", dwGeom(1, 768, 1, 7, 7, 7, 1, 1, 3, 3, 3, 3, 1)),
		dw("5x5s1_c240_14", dwGeom(1, 240, 1, 14, 14, 5, 1, 1, 2, 2, 2, 2, 1)),
		dw("5x5s2_c144_56", dwGeom(1, 144, 1, 56, 56, 5, 2, 2, 2, 2, 2, 2, 1)),
		dw("5x5s2_c240_28", dwGeom(1, 240, 1, 28, 28, 5, 2, 2, 2, 2, 2, 2, 1)),
		dw("3x3s1d2_c64_28", dwGeom(1, 64, 1, 28, 28, 3, 1, 1, 2, 2, 2, 2, 2)),
		dw("3x3s1_c32_112", dwGeom(1, 32, 1, 112, 112, 3, 1, 1, 1, 1, 1, 1, 1)),
		dw("3x3s2_c96_112", dwGeom(1, 96, 1, 112, 112, 3, 2, 2, 1, 1, 1, 1, 1)),
		dw("3x3s1_c144_56", dwGeom(1, 144, 1, 56, 56, 3, 1, 1, 1, 1, 1, 1, 1)),
		dw("3x3s1_c384_14", dwGeom(1, 384, 1, 14, 14, 3, 1, 1, 1, 1, 1, 1, 1)),
		dw("3x3s1_c960_7", dwGeom(1, 960, 1, 7, 7, 3, 1, 1, 1, 1, 1, 1, 1)),
	})
}
