package e2e

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/specialize"
)

// concatHIR concatenates, at batch 1, a convolution's, an elementwise
// region's, a product's and a pool's results (each computed in place
// of its operand), an input (copied) and one value twice (copied
// both times); the concat's operands are read again afterwards. The
// second concat is a graph output whose operands are the first's; the
// third is one whose operands are computed into the caller's tensor. A
// dense block's concats, each the one before and one more, are runs of
// the last.
const concatHIR = `hir 1
module concat_in_place

dim h

param k1 : f32[8, 4, 3, 3]
param k2 : f32[4, 4, 1, 1]
param m  : f32[8, 8]
param kd1 : f32[2, 4, 3, 3]
param kd2 : f32[2, 6, 3, 3]
param kd3 : f32[2, 8, 3, 3]

func main(x: f32[1, 4, h, 8]) -> (y: f32[1, 32, h, 8], z: f32[1, 12, h, 8], s: f32[1, 4, h, 8], q: f32[1, 8, h, 8], dz: f32[1, 10, h, 8]) {
  a = conv2d(x, k1, pad=[1, 1, 1, 1])
  b = sigmoid(x)
  c = matmul(x, m)
  d = maxpool2d(x, kernel=[3, 3], pad=[1, 1, 1, 1])
  e = conv2d(x, k2)
  cat = concat(a, b, c, d, x, e, e, axis=1)
  y = relu(cat)
  z = concat(a, x, axis=1)
  s = add(b, d)
  t1 = tanh(x)
  t2 = conv2d(x, k2)
  q = concat(t1, t2, axis=1)
  x0 = sigmoid(x)
  d1 = conv2d(x0, kd1, pad=[1, 1, 1, 1])
  cat1 = concat(x0, d1, axis=1)
  r1 = relu(cat1)
  d2 = conv2d(r1, kd2, pad=[1, 1, 1, 1])
  cat2 = concat(x0, d1, d2, axis=1)
  r2 = relu(cat2)
  d3 = conv2d(r2, kd3, pad=[1, 1, 1, 1])
  cat3 = concat(x0, d1, d2, d3, axis=1)
  dz = relu(cat3)
  return y, z, s, q, dz
}
`

// TestConcatInPlace builds concatHIR for the cpu target (portable and
// each native level) at two bindings and matches the reference: operands
// computed in place of a concat's block must land where its copy would.
func TestConcatInPlace(t *testing.T) {
	checkHIR(t, "concat", concatHIR, []specialize.Binding{{"h": 5}, {"h": 8}}, 3)
}
