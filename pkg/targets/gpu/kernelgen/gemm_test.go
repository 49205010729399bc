package kernelgen

// The GEMM kernels (matmul and implicit-GEMM convolution, and the direct
// depthwise convolution) run on the Vulkan device at awkward shapes, in
// every tiling of the table, against a float64 reference.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/internal/testenv"
	"github.com/rlx-project/rlx/internal/vktest"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/vk"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// vulkan is the package's Vulkan device, opened once, closed by TestMain.
var vulkan vktest.Shared

func TestMain(m *testing.M) { vulkan.Main(m) }

func device(t testing.TB) *vk.Device { return vulkan.Device(t) }

// gemmPlan is how a test lowers products: the tiling and K split, and
// how the tiles multiply.
type gemmPlan struct {
	plan func(m, n, k, batch int64) (gemmTiling, int64)
	gemmVariant
}

// gemmVariant is how the tiles multiply: in f32, or on tensor cores of a
// kind (emulated, or as PTX).
type gemmVariant struct {
	mma  mmaMode
	kind kir.MMAKind
}

var (
	f32Tiles      = gemmVariant{mmaOff, 0}
	tf32Tiles     = gemmVariant{mmaPTX, kir.MMATF32}
	bf16Tiles     = gemmVariant{mmaPTX, kir.MMABF16}
	tf32Emulation = gemmVariant{mmaEmulated, kir.MMATF32}
	bf16Emulation = gemmVariant{mmaEmulated, kir.MMABF16}
)

// runF32 lowers the one-step program p (every buffer its own device
// buffer of f32s, data[b] the content of buffer b) as plan says, runs its
// launches on the Vulkan device, and returns the content of buffer out
// afterwards, and what the product rounded its operands to ("" for
// nothing). A tensor-core plan whose product takes no tensor cores runs
// nothing and returns nil.
func runF32(t *testing.T, p *lir.Program, plan gemmPlan, data [][]float32, out lir.Buf) ([]float32, string) {
	t.Helper()
	d := device(t)
	ls, lp, err := lower(p, plan.plan, plan.mma, plan.kind)
	if err != nil {
		t.Fatal(err)
	}
	precision := ""
	for _, l := range ls {
		if l.Precision != "" {
			precision = l.Precision
		}
	}
	if plan.mma != mmaOff && precision == "" {
		// No tile of this product takes tensor cores (a GEMV, the 16x16
		// tile): the f32 plans run these kernels already.
		return nil, ""
	}
	// Buffers the lowering added (scratch) get device buffers of their
	// own, poisoned: a partial sum read before it is written shows.
	for _, b := range lp.Buffers[len(data):] {
		poison := make([]float32, b.Bytes/4)
		for i := range poison {
			poison[i] = float32(math.NaN())
		}
		data = append(data, poison)
	}
	vb := make([]*vk.Buffer, len(data))
	for i, v := range data {
		b := make([]byte, 4*len(v))
		for j, x := range v {
			binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
		}
		if vb[i], err = d.NewBuffer(int64(len(b))); err != nil {
			t.Fatal(err)
		}
		defer vb[i].Free()
		if err := vb[i].Write(0, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range ls {
		src, err := kir.Print(kir.GLSL, l.Kernel)
		if err != nil {
			t.Fatal(err)
		}
		spv, _, err := toolchain.GLSLToSPIRV(l.Kernel.Name, src)
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		var push []byte
		for _, o := range l.Offsets {
			push = binary.LittleEndian.AppendUint32(push, uint32(o))
		}
		pl, err := d.NewPipeline(spv, kir.GLSL.Entry(l.Kernel), len(l.Args), len(push))
		if err != nil {
			t.Fatal(err)
		}
		defer pl.Free()
		bufs := make([]*vk.Buffer, len(l.Args))
		for i, a := range l.Args {
			bufs[i] = vb[a]
		}
		c, err := d.Record([]vk.Dispatch{{Pipeline: pl, Buffers: bufs, Push: push,
			Groups: [3]uint32{uint32(l.Groups[0]), uint32(l.Groups[1]), uint32(l.Groups[2])}}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
	}
	b := make([]byte, 4*len(data[out]))
	if err := vb[out].Read(0, b); err != nil {
		t.Fatal(err)
	}
	res := make([]float32, len(data[out]))
	for j := range res {
		res[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
	}
	return res, precision
}

// refOperand is x as a product's reference reads it: rounded to tf32
// (nearest, ties away from zero: PTX's cvt.rna) or bf16 (nearest, ties
// to even: cvt.rn) where the product's tiles multiply so, else as it is.
func refOperand(x float32, precision string) float64 {
	u := math.Float32bits(x)
	switch precision {
	case "tf32":
		return float64(math.Float32frombits((u + 0x1000) &^ 0x1fff))
	case "bf16":
		return float64(math.Float32frombits((u + 0x7fff + (u>>16)&1) &^ 0xffff))
	}
	return float64(x)
}

// f32Program is a one-step program whose buffers are the given numbers of
// f32s, each at the start of its own device buffer; the last is written.
func f32Program(op lir.Op, sizes ...int64) *lir.Program {
	p := &lir.Program{}
	for i, n := range sizes {
		kind := lir.BufWeight
		if i == len(sizes)-1 {
			kind = lir.BufOutput
		}
		p.Buffers = append(p.Buffers, lir.Buffer{Kind: kind, Index: i, Bytes: 4 * n})
	}
	p.Steps = []lir.Step{{Op: op, Src: "t.hir:1:1 " + string(op.Kind())}}
	return p
}

func randF32(r *rand.Rand, n int64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// epilogueRef is the epilogue of a test step on a float64 sum: bias,
// then the activation (none or relu), then the residual.
func epilogueRef(acc float64, bias []float32, bi int, relu bool, res []float32, ri int) float64 {
	if bias != nil {
		acc += float64(bias[bi])
	}
	if relu {
		acc = max(acc, 0)
	}
	if res != nil {
		acc += float64(res[ri])
	}
	return acc
}

func checkClose(t *testing.T, got []float32, want []float64) {
	t.Helper()
	bad := 0
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-4*(1+math.Abs(want[i]))) {
			if bad < 5 {
				t.Errorf("element %d: got %g, want %g", i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d elements differ", bad, len(want))
	}
}

// tilings are the plans the numeric tests run, for each way the tiles
// multiply given: the one Lower uses, and each tiling of the table (for
// tensor cores, each that takes them), K split by gemmSplits where its
// grid is small and K long enough.
func tilings(variants ...gemmVariant) map[string]gemmPlan {
	fs := map[string]gemmPlan{}
	for _, v := range variants {
		prefix := ""
		if v.mma != mmaOff {
			prefix = v.kind.String() + map[mmaMode]string{mmaPTX: "/", mmaEmulated: "-emulated/"}[v.mma]
		}
		fs[prefix+"picked"] = gemmPlan{planGemm, v}
		for _, r := range gemmTilings() {
			t := r.gemmTiling
			if v.mma != mmaOff && !t.mmaFits(v.kind) {
				continue
			}
			fs[fmt.Sprintf("%s%dx%dx%d", prefix, t.bm, t.bn, t.bk)] = gemmPlan{func(m, n, k, batch int64) (gemmTiling, int64) {
				return t, max(gemmSplits(gemmGroups(t, m, n, batch), k), 1)
			}, v}
		}
	}
	return fs
}

// TestPlanGemm: which products split K, and how. The shapes are
// ResNet-18's 3×3 layers at batch 1 (O × pixels × C·9), a transformer's
// projections over 128 tokens, and small products that must not split.
func TestPlanGemm(t *testing.T) {
	for _, c := range []struct {
		m, n, k, batch int64
		bm, splits     int64
	}{
		{64, 3136, 576, 1, 32, 1},  // stage 1: the table's 32×32 fills the GPU
		{128, 784, 1152, 1, 64, 5}, // stage 2
		{256, 196, 2304, 1, 64, 8}, // stage 3
		{512, 49, 4608, 1, 32, 4},  // stage 4: 49 columns fill no 64×64 tile
		{128, 256, 1024, 1, 32, 4}, // an MLP's down projection
		{128, 768, 256, 1, 32, 2},  // a QKV projection
		{16, 16, 4096, 1, 16, 1},   // fills only the 1×1 tile
		{64, 64, 100, 1, 16, 1},    // K too short to split
		{1024, 1024, 1024, 1, 64, 1},
	} {
		tl, s := planGemm(c.m, c.n, c.k, c.batch)
		if tl.bm != c.bm || s != c.splits {
			t.Errorf("%dx%dx%d: %dx%d tiles split %d ways, want %dx.. split %d", c.m, c.n, c.k, tl.bm, tl.bn, s, c.bm, c.splits)
		}
		if s > 1 && (gemmGroups(tl, c.m, c.n, c.batch)*s < gemmMinGroups || c.k/s < gemmSplitMinK) {
			t.Errorf("%dx%dx%d: split %d ways leaves %d workgroups, runs of %d", c.m, c.n, c.k, s, gemmGroups(tl, c.m, c.n, c.batch)*s, c.k/s)
		}
	}
}

// TestGemvSplits: which GEMVs split K. An MLP's layers at batch 1
// (columns × K) and the narrow, long products the numeric tests run.
func TestGemvSplits(t *testing.T) {
	for _, c := range []struct{ n, k, batch, want int64 }{
		{2048, 512, 1, 2},   // K allows two runs of 256
		{2048, 2048, 1, 4},  // 128 workgroups, 4 runs reach 512
		{512, 2048, 1, 8},   // 32 workgroups: runs of 256 bound it
		{64, 4096, 1, 16},   // at most 16 runs
		{1024, 64, 4, 1},    // K too short
		{16384, 4096, 1, 1}, // 512 workgroups already
	} {
		if got := gemvSplits(c.n, c.k, c.batch); got != c.want {
			t.Errorf("%d columns, K %d, %d batches: %d runs, want %d", c.n, c.k, c.batch, got, c.want)
		}
	}
}

// TestGemmTilings checks every tiling of the table fits the kernel's
// 256 invocations and its staging loops.
func TestGemmTilings(t *testing.T) {
	for _, r := range gemmTilings() {
		tl := r.gemmTiling
		if (tl.bm/tl.tm)*(tl.bn/tl.tn) != gemmThreads || gemmThreads%tl.bk != 0 || gemmThreads%tl.bn != 0 ||
			tl.bm*tl.bk%gemmThreads != 0 || tl.bk*tl.bn%gemmThreads != 0 || tl.bm%tl.tm != 0 || tl.bn%tl.tn != 0 {
			t.Errorf("tiling %+v (%s) does not fit %d invocations", tl, r.why, gemmThreads)
		}
	}
	for _, c := range []struct {
		m, n, batch int64
		bm          int64
	}{{1, 1000, 1, 16}, {4096, 4096, 1, 64}, {64, 64, 1, 16}, {1024, 1024, 1, 64}, {512, 512, 1, 32}, {128, 128, 8, 32}, {64, 3136, 1, 32}, {512, 49, 1, 16}} {
		if got := pickGemmTiling(c.m, c.n, c.batch); got.bm != c.bm {
			t.Errorf("%d×%d×%d: tiling %+v, want BM %d", c.m, c.n, c.batch, got, c.bm)
		}
	}
}

// TestMatMulNumeric runs batched, broadcast matmuls with epilogues at
// shapes that are and are not multiples of every tile.
func TestMatMulNumeric(t *testing.T) {
	device(t)
	type mm struct {
		ab, bb  []int64 // batch dims of A and B
		m, k, n int64
		epi     bool
	}
	cases := []mm{
		{nil, nil, 1, 1, 1, false},
		{nil, nil, 3, 17, 5, true},
		{nil, nil, 17, 3, 65, false},
		{nil, nil, 64, 64, 64, true},
		{nil, nil, 65, 130, 17, false},
		{nil, nil, 130, 65, 130, true},
		{nil, nil, 1, 130, 64, true},
		{nil, nil, 130, 1, 3, false},
		{[]int64{2, 1}, []int64{3}, 17, 16, 33, true},
		{[]int64{3}, nil, 5, 7, 65, true},
		// The GEMV kernel (M ≤ 8): a K its unrolled slices do not divide,
		// 32 columns per workgroup (enough workgroups), and a long K.
		{nil, nil, 8, 1000, 100, true},
		{[]int64{4}, []int64{4}, 2, 64, 1024, false},
		{nil, nil, 4, 4096, 64, true},
		// Split K: a small grid over a long K, ragged, batched.
		{nil, nil, 64, 1024, 49, true},
		{nil, nil, 40, 1000, 33, false},
		{[]int64{2}, []int64{2}, 32, 600, 32, true},
	}
	for name, tiling := range tilings(f32Tiles, tf32Emulation, bf16Emulation) {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%v·%v/%dx%dx%d", name, c.ab, c.bb, c.m, c.k, c.n), func(t *testing.T) {
				batch, _ := broadcast(c.ab, c.bb)
				nb, na, nbb := tensor.NumElements(batch), tensor.NumElements(c.ab), tensor.NumElements(c.bb)
				r := rand.New(rand.NewSource(c.m*1000 + c.k*10 + c.n))
				a, b := randF32(r, na*c.m*c.k), randF32(r, nbb*c.k*c.n)
				op := &lir.MatMul{A: 0, B: 1, Out: 2, AShape: append(append([]int64{}, c.ab...), c.m, c.k),
					BShape: append(append([]int64{}, c.bb...), c.k, c.n), Epilogue: lir.NoEpilogue()}
				data := [][]float32{a, b}
				sizes := []int64{int64(len(a)), int64(len(b))}
				var bias, res []float32
				if c.epi {
					bias, res = randF32(r, c.n), randF32(r, nb*c.m*c.n)
					op.Epilogue = lir.Epilogue{Bias: 2, Residual: 3, Act: lir.ActRelu}
					op.Out = 4
					data = append(data, bias, res)
					sizes = append(sizes, c.n, nb*c.m*c.n)
				}
				data = append(data, make([]float32, nb*c.m*c.n))
				sizes = append(sizes, nb*c.m*c.n)
				got, precision := runF32(t, f32Program(op, sizes...), tiling, data, op.Out)
				if got == nil {
					return
				}
				sa := matStrides(c.ab, batch, c.m*c.k)
				sb := matStrides(c.bb, batch, c.k*c.n)
				want := make([]float64, nb*c.m*c.n)
				for bi := range nb {
					ao, bo := int64(0), int64(0)
					rem := bi
					for d := len(batch) - 1; d >= 0; d-- {
						ao += rem % batch[d] * sa[d]
						bo += rem % batch[d] * sb[d]
						rem /= batch[d]
					}
					for i := range c.m {
						for j := range c.n {
							s := 0.0
							for kk := range c.k {
								s += refOperand(a[ao+i*c.k+kk], precision) * refOperand(b[bo+kk*c.n+j], precision)
							}
							o := (bi*c.m+i)*c.n + j
							want[o] = epilogueRef(s, bias, int(j), c.epi, res, int(o))
						}
					}
				}
				checkClose(t, got, want)
			})
		}
	}
}

// TestConv2DNumeric runs convolutions (strided, padded, dilated, grouped,
// depthwise; 1×1, 3×3, 7×7) with epilogues.
func TestConv2DNumeric(t *testing.T) {
	device(t)
	type cv struct {
		n, c, h, w, o, kh, kw, s, pad, dil, groups int64
		epi                                        bool
	}
	cases := []cv{
		{2, 17, 5, 6, 65, 1, 1, 1, 0, 1, 1, true},
		{1, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1, false},
		{2, 3, 11, 10, 5, 3, 3, 2, 1, 1, 1, true},
		{1, 3, 17, 17, 64, 7, 7, 2, 3, 1, 1, true},
		{1, 4, 9, 8, 6, 3, 3, 1, 2, 2, 1, false},
		{1, 8, 7, 7, 6, 3, 3, 1, 1, 1, 2, true},
		{2, 6, 9, 9, 6, 3, 3, 2, 1, 1, 6, true},
		{1, 3, 8, 8, 6, 3, 3, 1, 1, 1, 3, false},
		{1, 64, 8, 8, 130, 1, 1, 2, 0, 1, 1, false},
		// Few output tiles over a long K: split (a deep layer at batch
		// 1), grouped too, and a K the runs do not divide.
		{1, 128, 7, 7, 64, 3, 3, 1, 1, 1, 1, true},
		{1, 128, 7, 7, 64, 3, 3, 1, 1, 1, 2, true},
		{1, 111, 6, 6, 40, 3, 3, 1, 1, 1, 1, false},
		// Depthwise, staged tiles (depthwise.go): a plane in one tile,
		// several tiles across and down with partial ones at the edges,
		// stride 2, dilation, a 7x7 kernel and a 5x5 with padding 2.
		{1, 16, 7, 7, 16, 3, 3, 1, 1, 1, 16, true},
		{2, 8, 40, 37, 8, 3, 3, 1, 1, 1, 8, true},
		{1, 5, 33, 70, 5, 3, 3, 2, 1, 1, 5, false},
		{1, 4, 19, 21, 4, 3, 3, 1, 2, 2, 4, true},
		{1, 3, 30, 30, 3, 7, 7, 1, 3, 1, 3, false},
		{2, 6, 12, 12, 6, 5, 5, 2, 2, 1, 6, true},
	}
	for name, tiling := range tilings(f32Tiles, tf32Emulation, bf16Emulation) {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%+v", name, c), func(t *testing.T) {
				oh := (c.h+2*c.pad-c.dil*(c.kh-1)-1)/c.s + 1
				ow := (c.w+2*c.pad-c.dil*(c.kw-1)-1)/c.s + 1
				cg, og := c.c/c.groups, c.o/c.groups
				geom := lir.ConvGeom{N: c.n, C: c.c, H: c.h, W: c.w, O: c.o, KH: c.kh, KW: c.kw, StrideH: c.s, StrideW: c.s,
					PadT: c.pad, PadL: c.pad, PadB: c.pad, PadR: c.pad, DilH: c.dil, DilW: c.dil, Groups: c.groups, OH: oh, OW: ow}
				r := rand.New(rand.NewSource(c.c*100 + c.o))
				x, w := randF32(r, c.n*c.c*c.h*c.w), randF32(r, c.o*cg*c.kh*c.kw)
				nout := c.n * c.o * oh * ow
				op := &lir.Conv2D{X: 0, W: 1, Out: 2, Geom: geom, Epilogue: lir.NoEpilogue()}
				data := [][]float32{x, w}
				sizes := []int64{int64(len(x)), int64(len(w))}
				var bias, res []float32
				if c.epi {
					bias, res = randF32(r, c.o), randF32(r, nout)
					op.Epilogue = lir.Epilogue{Bias: 2, Residual: 3, Act: lir.ActRelu}
					op.Out = 4
					data = append(data, bias, res)
					sizes = append(sizes, c.o, nout)
				}
				data = append(data, make([]float32, nout))
				sizes = append(sizes, nout)
				got, precision := runF32(t, f32Program(op, sizes...), tiling, data, op.Out)
				if got == nil {
					return
				}
				want := make([]float64, nout)
				for n := range c.n {
					for o := range c.o {
						gi := o / og
						for y := range oh {
							for xx := range ow {
								s := 0.0
								for ci := range cg {
									for ky := range c.kh {
										for kx := range c.kw {
											iy, ix := y*c.s-c.pad+ky*c.dil, xx*c.s-c.pad+kx*c.dil
											if iy < 0 || iy >= c.h || ix < 0 || ix >= c.w {
												continue
											}
											s += refOperand(x[((n*c.c+gi*cg+ci)*c.h+iy)*c.w+ix], precision) * refOperand(w[((o*cg+ci)*c.kh+ky)*c.kw+kx], precision)
										}
									}
								}
								idx := ((n*c.o+o)*oh+y)*ow + xx
								want[idx] = epilogueRef(s, bias, int(o), c.epi, res, int(idx))
							}
						}
					}
				}
				checkClose(t, got, want)
			})
		}
	}
}

// TestGemmCompiles compiles the GEMM kernels of every tiling, at shapes
// with and without edges, as CUDA C (clang, to PTX) and as MSL (clang++
// syntax check against kir's Metal stub header, there being no Metal
// compiler here).
func TestGemmCompiles(t *testing.T) {
	conv := func(c, h, o, k, s, pad, groups int64) lir.Op {
		oh := (h+2*pad-k)/s + 1
		return &lir.Conv2D{X: 0, W: 8, Out: 1, Epilogue: lir.Epilogue{Bias: 2, Residual: 3, Act: lir.ActGelu},
			Geom: lir.ConvGeom{N: 1, C: c, H: h, W: h, O: o, KH: k, KW: k, StrideH: s, StrideW: s, PadT: pad, PadL: pad, PadB: pad, PadR: pad,
				DilH: 1, DilW: 1, Groups: groups, OH: oh, OW: oh}}
	}
	ops := []lir.Op{
		&lir.MatMul{A: 0, B: 8, Out: 1, AShape: []int64{2, 17, 5}, BShape: []int64{5, 33}, Epilogue: lir.Epilogue{Bias: 2, Residual: 3, Act: lir.ActRelu}},
		&lir.MatMul{A: 0, B: 8, Out: 1, AShape: []int64{16, 16}, BShape: []int64{16, 16}, Epilogue: lir.NoEpilogue()},
		&lir.MatMul{A: 0, B: 8, Out: 1, AShape: []int64{3, 100}, BShape: []int64{100, 40}, Epilogue: lir.Epilogue{Bias: 2, Residual: 3, Act: lir.ActRelu}},
		conv(4, 5, 8, 3, 2, 1, 2),
		conv(4, 5, 8, 1, 1, 0, 1),
		conv(4, 5, 4, 3, 1, 1, 4),
	}
	clang, cerr := toolchain.Clang.Path()
	stub := "../kir/testdata/metal_stub.h"
	for name, tiling := range tilings(f32Tiles, tf32Tiles, bf16Tiles) {
		for _, op := range ops {
			ls, _, err := lower(program(8, op), tiling.plan, tiling.mma, tiling.kind)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				t.Run(name+"/"+l.Kernel.Name, func(t *testing.T) {
					if cerr != nil {
						testenv.SkipOrFail(t, "%v", cerr)
					}
					cu, err := kir.Print(kir.CUDA, l.Kernel)
					if err != nil {
						t.Fatal(err)
					}
					ptx, _, err := toolchain.CUDAToPTX(l.Kernel.Name, cu)
					if err != nil {
						t.Errorf("CUDA: %v\n%s", err, cu)
					}
					inst := map[string]string{"tf32": "mma.sync.aligned.m16n8k8.row.col.f32.tf32", "bf16": "mma.sync.aligned.m16n8k16.row.col.f32.bf16"}[l.Precision]
					if tc := l.Precision != ""; kir.HasMMA(l.Kernel) != tc || tc != (inst != "" && strings.Contains(string(ptx), inst)) {
						t.Errorf("tensor-core products: launch %q, kernel %v, PTX without %q", l.Precision, kir.HasMMA(l.Kernel), inst)
					}
					if l.Precision != "" {
						return // MSL has no tensor-core form
					}
					msl, err := kir.Print(kir.MSL, l.Kernel)
					if err != nil {
						t.Fatal(err)
					}
					cmd := exec.Command(clang, "-x", "c++", "-std=c++17", "-fsyntax-only", "-Wno-unknown-attributes", "-include", stub, "-")
					cmd.Stdin = strings.NewReader(strings.Replace(msl, "#include <metal_stdlib>\n", "", 1))
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("MSL: %v\n%s\n%s", err, out, msl)
					}
				})
			}
		}
	}
}
