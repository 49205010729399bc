package specialize_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestInt8Products: which products of quantized values become integer
// products (matmul_i8) under Caps.Int8Products, and what they read.
func TestInt8Products(t *testing.T) {
	const base = `hir 1
module q

dim batch

param w : i8[8, 4]

func main(x: %s[batch, 8]) -> (%s) {
%s
%s
%s
  return %s
}
`
	// The operands: A as a (from x), B as wc (from w), the result y.
	sub := func(name, of, op, v string) string {
		return fmt.Sprintf("  %s_c = const(%s, f32[])\n  %s = %s(%s, %s_c)", name, v, name, op, of, name)
	}
	aZero := func(z string) string { return "  xf = cast(x, to=f32)\n" + sub("a", "xf", "sub", z) }
	aRaw := "  a = cast(x, to=f32)"
	wRaw := "  wc = cast(w, to=f32)"
	wOp := func(op, v string) string { return "  wf = cast(w, to=f32)\n" + sub("wc", "wf", op, v) }
	y := "  y = matmul(a, wc)"
	one := "y: f32[batch, 4]"
	cases := []struct {
		name                          string
		dtype, outs, a, w, y, returns string
		int8                          bool
		zero                          int64
		signed                        bool
	}{
		{"u8 minus zero point", "u8", one, aZero("128.0"), wRaw, y, "y", true, 128, false},
		{"i8 without zero point", "i8", one, aRaw, wRaw, y, "y", true, 0, true},
		{"weights folded at build time", "u8", one, aZero("3.0"), wOp("mul", "1.0"), y, "y", true, 3, false},
		{"A also an output", "u8", one + ", a: f32[batch, 8]", aZero("7.0"), wRaw, y, "y, a", true, 7, false},
		{"fractional zero point", "u8", one, aZero("127.5"), wRaw, y, "y", false, 0, false},
		{"zero point outside u8", "u8", one, aZero("-1.0"), wRaw, y, "y", false, 0, false},
		{"fractional weights", "u8", one, aZero("128.0"), wOp("mul", "0.5"), y, "y", false, 0, false},
		{"weights past int8", "u8", one, aZero("128.0"), wOp("add", "200.0"), y, "y", false, 0, false},
		{"scaled A", "u8", one, "  xf = cast(x, to=f32)\n" + sub("a", "xf", "mul", "0.5"), wRaw, y, "y", false, 0, false},
		{"an epilogue", "u8", one, aZero("128.0"), wRaw, "  p = matmul(a, wc)\n  y = relu(p)", "y", false, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := fmt.Sprintf(base, c.dtype, c.outs, c.a, c.w, c.y, c.returns)
			_, g := lowerSource(t, "q.hir", []byte(src), true)
			for _, on := range []bool{false, true} {
				prog := int8Program(t, g, specialize.Binding{"batch": 3}, on)
				var q *lir.QMatMul
				for _, s := range prog.Steps {
					if op, ok := s.Op.(*lir.QMatMul); ok {
						q = op
					}
				}
				if want := on && c.int8; (q != nil) != want {
					t.Fatalf("Int8Products %v: integer product %v, want %v\n%s", on, q != nil, want, listing(prog))
				}
				if q == nil {
					continue
				}
				if q.M != 3 || q.K != 8 || q.N != 4 || q.Zero != c.zero || q.Signed != c.signed {
					t.Errorf("got %+v, want m=3 k=8 n=4 zero=%d signed=%v", *q, c.zero, c.signed)
				}
				if a := prog.Buffers[q.A]; a.Kind != lir.BufInput {
					t.Errorf("A is a %s buffer, want the 8-bit input itself", a.Kind)
				}
				// A's f32 form is computed only where something else reads it.
				if steps, want := len(prog.Steps), 1+len(prog.Outputs)-1; steps != want {
					t.Errorf("%d steps, want %d:\n%s", steps, want, listing(prog))
				}
			}
		})
	}
}

// TestInt8ProductBias: an integer bias added to a product of quantized
// values (QGemm's; fusion makes it the matmul's bias) goes into the
// integer product's sums.
func TestInt8ProductBias(t *testing.T) {
	src := `hir 1
module q

param w : i8[8, 4]
param bq : i32[4]

func main(x: u8[3, 8]) -> (y: f32[3, 4]) {
  xf = cast(x, to=f32)
  z = const(128.0, f32[])
  a = sub(xf, z)
  wc = cast(w, to=f32)
  p = matmul(a, wc)
  bf = cast(bq, to=f32)
  y = add(p, bf)
  return y
}
`
	_, g := lowerSource(t, "q.hir", []byte(src), true)
	prog := int8Program(t, g, specialize.Binding{}, true)
	var q *lir.QMatMul
	for _, s := range prog.Steps {
		if op, ok := s.Op.(*lir.QMatMul); ok {
			q = op
		}
	}
	if q == nil || q.Bias == lir.NoBuf || len(prog.Steps) != 1 {
		t.Fatalf("want one integer product with a bias:\n%s", listing(prog))
	}
	if b := prog.Buffers[q.Bias]; b.Bytes != 16 {
		t.Errorf("bias buffer of %d bytes, want 4 int32", b.Bytes)
	}
}

// TestInt8StridedPointwise: a strided 1x1 convolution of quantized values
// (ResNet's downsampling shortcut) becomes an integer convolution with its
// stride on a backend that also subsamples strided 1x1 convolutions (the
// subsampled operand would be a slice of the f32 form, no integer
// product's).
func TestInt8StridedPointwise(t *testing.T) {
	src := `hir 1
module q

param w : i8[32, 64, 1, 1]

func main(x: u8[1, 64, 8, 8]) -> (y: f32[1, 32, 4, 4]) {
  xf = cast(x, to=f32)
  z = const(128.0, f32[])
  a = sub(xf, z)
  wf = cast(w, to=f32)
  y = conv2d(a, wf, stride=[2, 2])
  return y
}
`
	_, g := lowerSource(t, "q.hir", []byte(src), true)
	prog := capsProgram(t, g, specialize.Binding{}, specialize.Caps{Packer: testPacker{}, Int8Products: true, SubsampleStrided: true})
	if len(prog.Steps) != 1 {
		t.Fatalf("%d steps, want the integer convolution alone:\n%s", len(prog.Steps), listing(prog))
	}
	if q, ok := prog.Steps[0].Op.(*lir.QConv2D); !ok || q.Geom.StrideH != 2 || q.Geom.OH != 4 {
		t.Fatalf("want a stride-2 conv2d_i8:\n%s", listing(prog))
	}
}

// TestInt8MinK: products whose sums are shorter than Caps.Int8MinK stay
// in f32; at the bound they become integer products.
func TestInt8MinK(t *testing.T) {
	src := `hir 1
module q

param w : i8[8, 4]

func main(x: u8[3, 8]) -> (y: f32[3, 4]) {
  xf = cast(x, to=f32)
  z = const(128.0, f32[])
  a = sub(xf, z)
  wc = cast(w, to=f32)
  y = matmul(a, wc)
  return y
}
`
	_, g := lowerSource(t, "q.hir", []byte(src), true)
	for _, c := range []struct {
		minK int64
		want bool
	}{{0, true}, {8, true}, {9, false}} {
		prog := capsProgram(t, g, specialize.Binding{}, specialize.Caps{Packer: testPacker{}, Int8Products: true, Int8MinK: c.minK})
		got := slices.ContainsFunc(prog.Steps, func(s lir.Step) bool { _, ok := s.Op.(*lir.QMatMul); return ok })
		if got != c.want {
			t.Errorf("Int8MinK %d: integer product %v, want %v (K = 8)\n%s", c.minK, got, c.want, listing(prog))
		}
	}
}

// listing is p as rlxc inspect --lir prints it.
func listing(p *lir.Program) string {
	var b strings.Builder
	if err := lir.Fprint(&b, p); err != nil {
		return err.Error()
	}
	return b.String()
}

// TestBundledInt8Products: the bundled models' quantized product and
// convolution (in ops_linalg.hir and ops_conv.hir, which every target's
// end-to-end tests run) become integer ones where the backend has them.
func TestBundledInt8Products(t *testing.T) {
	for _, c := range []struct {
		model string
		b     specialize.Binding
		kind  lir.Kind
	}{
		{"ops_linalg", specialize.Binding{"batch": 2, "seq": 3}, "matmul_i8"},
		{"ops_conv", specialize.Binding{"batch": 2, "h": 16, "w": 16}, "conv2d_i8"},
	} {
		g := bundled(t, c.model)
		caps := specialize.Caps{Packer: testPacker{}, Int8Products: true}
		p, err := specialize.SpecializeWith(g, c.b, caps)
		if err != nil {
			t.Fatal(err)
		}
		if n := stepKinds(t, p, caps)[c.kind]; n != 1 {
			t.Fatalf("%s: %d %s steps, want 1", c.model, n, c.kind)
		}
	}
}

// TestInt8Convolutions: which convolutions of quantized values become
// integer convolutions (conv2d_i8), with their scratch and bias.
func TestInt8Convolutions(t *testing.T) {
	const base = `hir 1
module q

param w : i8[8, %d, 3, 3]
param b : i32[8]

func main(x: u8[1, 8, 6, 6]) -> (y: f32[1, 8, 6, 6]) {
  xf = cast(x, to=f32)
  z = const(128.0, f32[])
  a = sub(xf, z)
  wf = cast(w, to=f32)
  bf = cast(b, to=f32)
  %s
  return y
}
`
	cases := []struct {
		name string
		in   int
		y    string
		int8 bool
		bias bool
	}{
		{"with a bias", 8, "y = conv2d(a, wf, bf, pad=[1, 1, 1, 1])", true, true},
		{"without", 8, "y = conv2d(a, wf, pad=[1, 1, 1, 1])", true, false},
		{"fractional bias", 8, "half = const(0.5, f32[])\n  bh = mul(bf, half)\n  y = conv2d(a, wf, bh, pad=[1, 1, 1, 1])", false, false},
		{"grouped", 4, "y = conv2d(a, wf, pad=[1, 1, 1, 1], groups=2)", false, false},
		{"an activation", 8, "c = conv2d(a, wf, bf, pad=[1, 1, 1, 1])\n  y = relu(c)", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := fmt.Sprintf(base, c.in, c.y)
			_, g := lowerSource(t, "q.hir", []byte(src), true)
			prog := int8Program(t, g, specialize.Binding{}, true)
			var q *lir.QConv2D
			for _, s := range prog.Steps {
				if op, ok := s.Op.(*lir.QConv2D); ok {
					q = op
				}
			}
			if (q != nil) != c.int8 {
				t.Fatalf("integer convolution %v, want %v\n%s", q != nil, c.int8, listing(prog))
			}
			if q == nil {
				return
			}
			if (q.Bias != lir.NoBuf) != c.bias || q.Zero != 128 || q.Signed || q.Geom.OH != 6 || q.Geom.PadT != 1 {
				t.Errorf("got %+v", *q)
			}
			if x := prog.Buffers[q.X]; x.Kind != lir.BufInput {
				t.Errorf("X is a %s buffer, want the 8-bit input itself", x.Kind)
			}
			if len(prog.Steps) != 1 {
				t.Errorf("%d steps, want the convolution alone:\n%s", len(prog.Steps), listing(prog))
			}
		})
	}
}

// TestInt8RunTimeZeroPoint: dynamic quantization's zero point, a scalar
// computed at run time, becomes the integer product's third operand, and
// its cast to f32 goes with the f32 operand.
func TestInt8RunTimeZeroPoint(t *testing.T) {
	const src = `hir 1
module q

dim batch

param w : i8[8, 4]

func main(x: u8[batch, 8], z: u8[]) -> (y: f32[batch, 4]) {
  xf = cast(x, to=f32)
  zf = cast(z, to=f32)
  a = sub(xf, zf)
  wf = cast(w, to=f32)
  y = matmul(a, wf)
  return y
}
`
	_, g := lowerSource(t, "q.hir", []byte(src), true)
	prog := int8Program(t, g, specialize.Binding{"batch": 3}, true)
	if len(prog.Steps) != 1 {
		t.Fatalf("%d steps, want the integer product alone:\n%s", len(prog.Steps), listing(prog))
	}
	q, ok := prog.Steps[0].Op.(*lir.QMatMul)
	if !ok {
		t.Fatalf("step is %s, want matmul_i8", prog.Steps[0].Op.Kind())
	}
	if b := prog.Buffers[q.ZeroAt]; q.ZeroAt == lir.NoBuf || b.Kind != lir.BufInput || b.Index != 1 {
		t.Errorf("zero point at %d (%+v), want input 1", q.ZeroAt, b)
	}
}

// TestInt8SplitsQuantizeRegion: a region that quantizes to uint8 and
// casts back to f32 before a product (DynamicQuantizeLinear's) is split
// at the uint8 value, which the integer product reads, with the zero
// point's region split the same way.
func TestInt8SplitsQuantizeRegion(t *testing.T) {
	const src = `hir 1
module q

dim batch

param w : i8[8, 4]

func main(x: f32[batch, 8], s: f32[], zp: f32[]) -> (y: f32[batch, 4]) {
  d = div(x, s)
  r = round(d)
  zr = round(zp)
  sh = add(r, zr)
  c = clamp(sh, min=0, max=255)
  q = cast(c, to=u8)
  zq = cast(zr, to=u8)
  qf = cast(q, to=f32)
  zf = cast(zq, to=f32)
  a = sub(qf, zf)
  wf = cast(w, to=f32)
  y = matmul(a, wf)
  return y
}
`
	_, g := lowerSource(t, "q.hir", []byte(src), true)
	prog := int8Program(t, g, specialize.Binding{"batch": 3}, true)
	var q *lir.QMatMul
	bytes := 0 // regions with a uint8 result
	for _, s := range prog.Steps {
		switch op := s.Op.(type) {
		case *lir.QMatMul:
			q = op
		case *lir.Elementwise:
			for _, o := range op.Out {
				if o.DType == tensor.U8 {
					bytes++
				}
			}
		}
	}
	if q == nil || q.ZeroAt == lir.NoBuf {
		t.Fatalf("no integer product with a run-time zero point:\n%s", listing(prog))
	}
	if bytes != 2 {
		t.Errorf("%d regions with a uint8 result, want 2 (the operand and its zero point):\n%s", bytes, listing(prog))
	}
	for _, s := range prog.Steps {
		if op, ok := s.Op.(*lir.Elementwise); ok && len(op.Shape) == 2 && op.Out[0].DType == tensor.F32 {
			t.Errorf("the f32 operand is still computed:\n%s", listing(prog))
		}
	}
}

// int8Program specializes g at b for a backend with integer products or
// without, and schedules and verifies its program.
func int8Program(t *testing.T, g *mir.Graph, b specialize.Binding, int8 bool) *lir.Program {
	t.Helper()
	return capsProgram(t, g, b, specialize.Caps{Packer: testPacker{}, Int8Products: int8})
}

// capsProgram specializes g at b for a backend with caps, and schedules
// and verifies its program.
func capsProgram(t *testing.T, g *mir.Graph, b specialize.Binding, caps specialize.Caps) *lir.Program {
	t.Helper()
	p, err := specialize.SpecializeWith(g, b, caps)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := specialize.Schedule(p, specialize.NewWeights("test", caps.Packer))
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Verify(); err != nil {
		t.Fatal(err)
	}
	return prog
}
