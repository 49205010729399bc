package targets

// The CPU backend's capabilities: the one file of the compiler that calls
// pkg/targets/cpu/kernels (its layouts and which geometries its kernels
// compute), with the thresholds from pkg/targets/cpu/tuning.

import (
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/conv"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/qgemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/winograd"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// cpuLayout names the panel layout the build machine's micro-kernel
// reads packed weights in.
func cpuLayout() string { return gemm.PackedLayout() }

// cpuCaps are the CPU kernels' capabilities: strided attention operands,
// weights packed for the build machine, packed 1x1 convolutions,
// channels-last stretches on small planes (integer convolutions joining
// them), concats in place and slices read in place by elementwise
// regions.
func cpuCaps() specialize.Caps {
	return specialize.Caps{
		StridedAttention:   true,
		InPlaceConcat:      true,
		StridedElementwise: true,
		SubsampleStrided:   tuning.SubsampleStrided1x1,
		SparseTaps:         tuning.SplitSparseTaps,
		Packer:             cpuPacker{layout: cpuLayout()},
		PackedConv1x1: func(g lir.ConvGeom) bool {
			return specialize.Pointwise(g) && g.H*g.W <= tuning.Conv1x1PackedMaxHW
		},
		ChannelsLast: func(g lir.ConvGeom) bool {
			if g.H*g.W > tuning.ChannelsLastMaxPlane {
				return false
			}
			if g.KH == 1 && g.KW == 1 {
				return specialize.Pointwise(g)
			}
			return conv.DepthwiseNHWCApplies(conv.GeomOf(g))
		},
		Int8ChannelsLast: true,
	}
}

// cpuPacker packs weights with the kernels' packing for one layout.
type cpuPacker struct{ layout string }

func (p cpuPacker) Layout() string { return p.layout }

func (p cpuPacker) PackB(k, n int, b []float32) ([]float32, error) {
	return gemm.PackBLayout(p.layout, k, n, b, n)
}

func (cpuPacker) PackInt8(k, n int, b []int8) []byte { return qgemm.Pack(k, n, b, n) }

func (cpuPacker) PackInt8Conv(w []int8, g lir.ConvGeom) []byte {
	return qgemm.PackConv(w, conv.GeomOf(g))
}

func (cpuPacker) WinogradLen(o, c, m int) (int, error) {
	t, err := winograd.For(m)
	if err != nil {
		return 0, err
	}
	return winograd.ULen(t.Points(), o, c), nil
}

func (cpuPacker) DepthwiseTaps(w []float32, c, taps int) []float32 {
	return conv.DepthwiseTaps(w, c, taps)
}
