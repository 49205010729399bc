package targets

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
)

// TestCPUCaps checks the CPU's answers at the edges of its tuning rules.
func TestCPUCaps(t *testing.T) {
	conv := func(c, o, hw, k, stride, pad, groups int64) lir.ConvGeom {
		oh := (hw+2*pad-k)/stride + 1
		return lir.ConvGeom{N: 1, C: c, H: hw, W: hw, O: o, KH: k, KW: k, StrideH: stride, StrideW: stride,
			PadT: pad, PadL: pad, PadB: pad, PadR: pad, DilH: 1, DilW: 1, Groups: groups, OH: oh, OW: oh}
	}
	c := cpuCaps()
	if !c.StridedAttention || c.Packer == nil || c.Packer.Layout() != cpuLayout() {
		t.Errorf("cpu caps: strided attention %v, packer %v", c.StridedAttention, c.Packer)
	}
	for _, tc := range []struct {
		name         string
		g            lir.ConvGeom
		packed, nhwc bool
	}{
		{"1x1 at 7x7", conv(32, 64, 7, 1, 1, 0, 1), true, true},
		{"1x1 at 10x10", conv(32, 64, 10, 1, 1, 0, 1), true, true},
		{"1x1 at 11x11", conv(32, 64, 11, 1, 1, 0, 1), false, true},
		{"1x1 at 28x28", conv(32, 64, 28, 1, 1, 0, 1), false, true},
		{"1x1 at 29x29", conv(32, 64, 29, 1, 1, 0, 1), false, false},
		{"1x1 stride 2 at 14x14", conv(32, 64, 14, 1, 2, 0, 1), false, false},
		{"depthwise 3x3 at 14x14", conv(32, 32, 14, 3, 1, 1, 32), false, true},
		{"depthwise 3x3 stride 2 at 28x28", conv(32, 32, 28, 3, 2, 1, 32), false, true},
		{"depthwise 3x3 at 56x56", conv(32, 32, 56, 3, 1, 1, 32), false, false},
		{"dense 3x3 at 14x14", conv(32, 32, 14, 3, 1, 1, 1), false, false},
	} {
		if got := c.PackedConv1x1(tc.g); got != tc.packed {
			t.Errorf("%s: packed 1x1 %v, want %v", tc.name, got, tc.packed)
		}
		if got := c.ChannelsLast(tc.g); got != tc.nhwc {
			t.Errorf("%s: channels last %v, want %v", tc.name, got, tc.nhwc)
		}
	}
}
