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
// third is one whose operands are computed into the caller's tensor.
const concatHIR = `hir 1
module concat_in_place

dim h

param k1 : f32[8, 4, 3, 3]
param k2 : f32[4, 4, 1, 1]
param m  : f32[8, 8]

func main(x: f32[1, 4, h, 8]) -> (y: f32[1, 32, h, 8], z: f32[1, 12, h, 8], s: f32[1, 4, h, 8], q: f32[1, 8, h, 8]) {
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
  return y, z, s, q
}
`

// TestConcatInPlace builds concatHIR for the cpu target (portable and
// each native level) at two bindings and matches the reference: operands
// computed in place of a concat's block must land where its copy would.
func TestConcatInPlace(t *testing.T) {
	checkHIR(t, "concat", concatHIR, []specialize.Binding{{"h": 5}, {"h": 8}}, 3)
}
