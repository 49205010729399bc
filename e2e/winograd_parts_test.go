package e2e

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/specialize"
)

// winogradPartsHIR is two 3x3 stride-1 convolutions of 32 channels over
// an h x h plane: one with a bias, a ReLU and a residual (applied in the
// output transform), one with a sigmoid (split off into a pass of its
// own, which must run once, after the last part). At h = 128 their
// Winograd scratch (9.4 MB at F(4x4)) passes tuning.WinogradPartFrom and
// the steps run in parts of the tiles; at h = 40 it stays whole.
const winogradPartsHIR = `hir 1
module wparts

dim h

param k1 : f32[32, 32, 3, 3]
param b1 : f32[32]
param k2 : f32[32, 32, 3, 3]

func main(x: f32[1, 32, h, h], r: f32[1, 32, h, h]) -> (y: f32[1, 32, h, h], z: f32[1, 32, h, h]) {
  a = conv2d(x, k1, b1, pad=[1, 1, 1, 1])
  ar = relu(a)
  y = add(ar, r)
  c = conv2d(y, k2, pad=[1, 1, 1, 1])
  z = sigmoid(c)
  return y, z
}
`

// TestWinogradParts builds winogradPartsHIR for the cpu target (portable:
// direct convolutions; each native level: Winograd) at a binding whose
// convolutions run in parts of their tiles and one where they do not,
// against the reference, and checks that the native build of the large
// binding does call its Winograd functions over parts.
func TestWinogradParts(t *testing.T) {
	bindings := []specialize.Binding{{"h": 128}, {"h": 40}}
	checkHIR(t, "wparts", winogradPartsHIR, bindings, 13)
	configs := cpuConfigs(t)
	if len(configs) < 2 {
		return // no native code here: cpuConfigs said why
	}
	parts := map[string]int{} // native_part calls per variant
	for name, p := range nativePrograms(t, "wparts", winogradPartsHIR, configs[1], bindings, 13) {
		for _, st := range p.Steps {
			if st.Op.Kind() == "native_part" {
				parts[name]++
			}
		}
	}
	// One variant in parts (two convolutions, each input and output
	// transform of every part a native_part call), the other whole.
	n := 0
	for _, c := range parts {
		if c > 0 {
			n++
		}
		if c > 0 && c < 8 {
			t.Errorf("%d native_part calls, want several parts of each convolution", c)
		}
	}
	if n != 1 {
		t.Errorf("native_part calls per variant %v, want them in one variant", parts)
	}
}
