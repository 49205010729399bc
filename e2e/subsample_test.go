package e2e

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/specialize"
)

// subsampleHIR has 1x1 convolutions with strides (2, 2) and (2, 3) over
// odd and even planes, with a bias, a residual and a ReLU, and a padded
// one (left strided: its border is the bias alone), and a ResNet-50
// bottleneck whose shortcut is one, on a small plane (channels last).
const subsampleHIR = `hir 1
module subsample

dim h

param k1 : f32[16, 8, 1, 1]
param b1 : f32[16]
param k2 : f32[4, 8, 1, 1]
param k3 : f32[16, 8, 1, 1]
param e1 : f32[8, 32, 1, 1]
param e2 : f32[8, 8, 3, 3]
param e3 : f32[64, 8, 1, 1]
param d1 : f32[64, 32, 1, 1]

func main(x: f32[1, 8, h, 11], r: f32[1, 16, (h+1)/2, 6], v: f32[1, 32, h, h]) -> (y: f32[1, 16, (h+1)/2, 6], z: f32[1, 4, (h+1)/2, 4], w: f32[1, 16, (h+3)/2, 7], b: f32[1, 64, (h+1)/2, (h+1)/2]) {
  c1 = conv2d(x, k1, b1, stride=[2, 2])
  s1 = add(c1, r)
  y = relu(s1)
  z = conv2d(x, k2, stride=[2, 3])
  w = conv2d(x, k3, stride=[2, 2], pad=[1, 1, 1, 1])
  v1 = conv2d(v, e1)
  v1r = relu(v1)
  v2 = conv2d(v1r, e2, stride=[2, 2], pad=[1, 1, 1, 1])
  v2r = relu(v2)
  v3 = conv2d(v2r, e3)
  vd = conv2d(v, d1, stride=[2, 2])
  vs = add(v3, vd)
  b = relu(vs)
  return y, z, w, b
}
`

// TestSubsampledConv builds subsampleHIR for the cpu target (portable and
// each native level) at two bindings, odd and even, against the reference.
func TestSubsampledConv(t *testing.T) {
	checkHIR(t, "subsample", subsampleHIR, []specialize.Binding{{"h": 9}, {"h": 12}}, 7)
}
