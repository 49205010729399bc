package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/specialize"
)

// atrousHIR is DeepLabV3's atrous pyramid in small: 3x3 convolutions at
// dilations 6 and 12 over an h x h plane (most of their taps read the
// padding at h = 14; at h = 9 the dilation-12 one reads the input through
// its centre tap alone and is cropped to 1x1), one with a bias, a ReLU
// and a residual, one at stride 2 with output channels that fill no
// vector.
const atrousHIR = `hir 1
module atrous

dim h

param k6 : f32[24, 16, 3, 3]
param b6 : f32[24]
param k12 : f32[24, 16, 3, 3]
param k2 : f32[5, 16, 3, 3]

func main(x: f32[1, 16, h, h], r: f32[1, 24, h, h]) -> (y: f32[1, 24, h, h], z: f32[1, 5, (h+1)/2, (h+1)/2]) {
  a = conv2d(x, k6, b6, pad=[6, 6, 6, 6], dilation=[6, 6])
  ar = relu(a)
  c = conv2d(x, k12, pad=[12, 12, 12, 12], dilation=[12, 12])
  s = add(ar, c)
  y = add(s, r)
  z = conv2d(x, k2, stride=[2, 2], pad=[8, 8, 8, 8], dilation=[8, 8])
  return y, z
}
`

// TestAtrousConv builds atrousHIR for the cpu target (portable, where the
// sparse convolutions split into rectangles of the same live taps, and
// each native level, where they run tap-major) at two bindings against the
// reference, and checks that the native builds do run conv2d_taps.
func TestAtrousConv(t *testing.T) {
	bindings := []specialize.Binding{{"h": 14}, {"h": 9}}
	checkHIR(t, "atrous", atrousHIR, bindings, 11)
	configs := cpuConfigs(t)
	if len(configs) < 2 {
		return // no native code here: cpuConfigs said why
	}
	taps := 0
	for _, p := range nativePrograms(t, "atrous", atrousHIR, configs[1], bindings, 11) {
		if p.Native == nil {
			continue
		}
		for _, fn := range p.Native.Funcs {
			if strings.HasPrefix(fn.Name, "rlx_conv2d_taps_") {
				taps++
			}
		}
	}
	// h = 14: all three convolutions; h = 9: the dilation-6 one (31%
	// live) and the stride-2 one (the dilation-12 one is cropped to 1x1).
	if taps < 3 {
		t.Errorf("the native build runs %d tap-major convolutions, want at least 3", taps)
	}
}

// nativePrograms builds a HIR module written for a test for the cpu
// target at CPU level cpu (random weights from seed) and returns the
// program of each variant, by its section's name.
func nativePrograms(t *testing.T, name, src string, cpu []string, bindings []specialize.Binding, seed uint64) map[string]*lir.Program {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, name+".hir")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "native.rlx")
	if _, err := build(t, file, []byte(src), out, driver.Options{Target: "cpu", CPU: cpu, Bindings: bindings, RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	f, err := artifact.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	progs := map[string]*lir.Program{}
	for _, s := range f.Sections() {
		if !strings.HasPrefix(s.Name, "program/") {
			continue
		}
		data, err := f.Section(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		var p lir.Program
		if err := artifact.UnmarshalManifest(data, &p); err != nil {
			t.Fatal(err)
		}
		progs[s.Name] = &p
	}
	return progs
}
