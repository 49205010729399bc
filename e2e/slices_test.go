package e2e

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/specialize"
)

// slicesHIR slices a product's columns into gates (strided at batch 3),
// takes every second column (a step of 2), slices an input and a weight,
// each read only by elementwise regions (read in place); one slice that a
// product reads too (copied, or at batch 1 a run read in place), and a
// product of a slice of a slice (at batch 1 a run of a run).
const slicesHIR = `hir 1
module slices_in_place

dim batch

param w : f32[8, 24]
param b : f32[24]

func main(x: f32[batch, 8]) -> (h: f32[batch, 6], e: f32[batch, 4], r: f32[batch, 6], m: f32[batch, 6]) {
  g = matmul(x, w)
  gi = slice(g, starts=[0], ends=[6], axes=[1])
  gf = slice(g, starts=[6], ends=[12], axes=[1])
  go = slice(g, starts=[12], ends=[18], axes=[1])
  gc = slice(g, starts=[18], ends=[24], axes=[1])
  bi = slice(b, starts=[6], ends=[12], axes=[0])
  sf = sigmoid(gf)
  tc = tanh(gc)
  fc = mul(sf, tc)
  c = add(fc, bi)
  so = sigmoid(go)
  ci = add(c, gi)
  tci = tanh(ci)
  h = mul(so, tci)
  ev = slice(g, starts=[1], ends=[9], axes=[1], steps=[2])
  xs = slice(x, starts=[2], ends=[6], axes=[1])
  re = relu(ev)
  e = add(re, xs)
  r = neg(gi)
  ws = slice(w, starts=[0, 0], ends=[6, 6], axes=[0, 1])
  mm = matmul(gi, ws)
  g1 = slice(g, starts=[4], ends=[20], axes=[1])
  g2 = slice(g1, starts=[2], ends=[8], axes=[1])
  m2 = matmul(g2, ws)
  m = add(mm, m2)
  return h, e, r, m
}
`

// TestSlicesReadInPlace builds slicesHIR for the cpu target (portable and
// each native level) at two bindings against the reference.
func TestSlicesReadInPlace(t *testing.T) {
	checkHIR(t, "slices", slicesHIR, []specialize.Binding{{"batch": 1}, {"batch": 3}}, 5)
}
