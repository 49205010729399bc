package kir

// The numeric cases (numeric_test.go) on the Vulkan device: the GLSL
// print, compiled to SPIR-V and run by llvmpipe in CI. Plus what only a
// device shows: every storage type through the golden elementwise kernel,
// the invocation indices of a 3-D launch, and barriers.

import (
	"encoding/binary"
	"math"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/pkg/tensor"
)

var (
	fmaOnce  sync.Once
	fmaFused bool
)

// vulkanBackend describes the device; whether its fma is fused is probed
// once.
func vulkanBackend(t *testing.T) backend {
	t.Helper()
	fmaOnce.Do(func() { fmaFused = fusedFMA(t) })
	return backend{name: "vulkan", fusedFMA: fmaFused}
}

// fusedFMA reports whether the device's fma rounds once: fma(1+2^-12,
// 1+2^-12, -(1+2^-11)) is 2^-24 fused and 0 as a multiply and an add.
func fusedFMA(t *testing.T) bool {
	x, c := float32(1+0x1p-12), float32(-(1 + 0x1p-11))
	got := runMap(t, "fmaprobe", []Type{F32, F32, F32}, F32, func(e []*Expr) *Expr { return Call("fma", e[0], e[1], e[2]) },
		f32Bits([]float32{x}), f32Bits([]float32{x}), f32Bits([]float32{c}))
	return math.Float32frombits(uint32(got[0])) == 0x1p-24
}

func runCasesVulkan(t *testing.T, cases []mapCase) {
	device(t)
	be := vulkanBackend(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := runMap(t, c.name, c.in, c.out, c.f, c.inputs...)
			c.check(t, be, got)
		})
	}
}

func TestVulkanBuilders(t *testing.T)   { runCasesVulkan(t, builderCases()) }
func TestVulkanPrimitives(t *testing.T) { runCasesVulkan(t, primitiveCases()) }

// TestVulkanStorageTypes runs the golden elementwise kernel, which loads and
// stores f32, f16, bool, u8 and i64 parameters, and checks each output
// against Go.
func TestVulkanStorageTypes(t *testing.T) {
	k, groups, bufs, check := elementwiseJob()
	check(t, runVulkan(t, k, groups, bufs...))
}

// elementwiseJob is the golden elementwise kernel over 1000 elements with
// two workgroups (so each invocation loops twice), its input buffers, and
// a check of its outputs.
func elementwiseJob() (*Kernel, [3]int, [][]byte, func(t *testing.T, out [][]byte)) {
	const n = 1000
	k := elementwiseKernel(n, 2)
	var x, hx []float32
	var h, m, q, l []uint64
	for i := range n {
		xv := float32(i-500) / 8
		hv := tensor.F16ToF32(uint16(i * 61))
		if hv != hv || math.IsInf(float64(hv), 0) {
			hv = 1
		}
		x, hx = append(x, xv), append(hx, hv)
		h = append(h, uint64(tensor.F32ToF16(hv)))
		m = append(m, uint64(i%3&1))
		q = append(q, uint64(i*7%256))
		l = append(l, uint64(int64(i-500)*(1<<35)))
	}
	bufs := [][]byte{encode(F32, f32Bits(x)), encode(F16, h), encode(Bool, m), encode(U8, q), encode(I64, l),
		make([]byte, 4*n), make([]byte, 2*n), make([]byte, n), make([]byte, n), make([]byte, 8*n)}
	return k, [3]int{2, 1, 1}, bufs, func(t *testing.T, out [][]byte) {
		t.Helper()
		y, yh, ym, yq, yl := decode(F32, out[5]), decode(F16, out[6]), decode(Bool, out[7]), decode(U8, out[8]), decode(I64, out[9])
		for i := range n {
			xv, hv, mv := x[i], hx[i], m[i] != 0
			wy := -xv
			if mv {
				wy = xv * hv
			}
			wm := uint64(boolInt(!mv || xv > 0))
			wq := uint64(uint8(q[i] + 1))
			wl := uint64(int64(l[i])*2 + int64(q[i]) - 3)
			if uint32(y[i]) != bitsOf(wy) || uint16(yh[i]) != tensor.F32ToF16(xv+hv) || ym[i] != wm || yq[i] != wq || yl[i] != wl {
				t.Fatalf("element %d: got %g %#04x %d %d %d, want %g %#04x %d %d %d", i,
					math.Float32frombits(uint32(y[i])), yh[i], ym[i], yq[i], int64(yl[i]), wy, tensor.F32ToF16(xv+hv), wm, wq, int64(wl))
			}
		}
	}
}

// TestVulkanIndices: GlobalID, LocalID and GroupID on all three axes of a 3-D
// launch, each invocation writing its own (global, local, group) triple.
func TestVulkanIndices(t *testing.T) {
	local, groups := [3]int{4, 2, 2}, [3]int{3, 2, 2}
	size := [3]int{local[0] * groups[0], local[1] * groups[1], local[2] * groups[2]}
	n := size[0] * size[1] * size[2]
	lin := Add(Mul(Add(Mul(GlobalID(2), Int(int64(size[1]))), GlobalID(1)), Int(int64(size[0]))), GlobalID(0))
	var body []*Stmt
	body = append(body, Decl("at", Mul(lin, Int(9))))
	at := Var("at", I32)
	for axis := range 3 {
		for j, e := range []*Expr{GlobalID(axis), LocalID(axis), GroupID(axis)} {
			body = append(body, Store(0, Add(at, Int(int64(3*j+axis))), e))
		}
	}
	k := &Kernel{Name: "indices", Params: []Param{{Name: "out", Elem: I32, Write: true}}, Local: local, Body: body}
	out := decode(I32, runVulkan(t, k, groups, make([]byte, 4*9*n))[0])
	for z := range size[2] {
		for y := range size[1] {
			for x := range size[0] {
				g := [3]int{x, y, z}
				i := 9 * ((z*size[1]+y)*size[0] + x)
				for axis := range 3 {
					want := [3]int{g[axis], g[axis] % local[axis], g[axis] / local[axis]}
					for j := range 3 {
						if int(out[i+3*j+axis]) != want[j] {
							t.Fatalf("invocation %v: index %d of axis %d = %d, want %d", g, j, axis, out[i+3*j+axis], want[j])
						}
					}
				}
			}
		}
	}
}

// TestVulkanReduceBarriers runs the golden tree reduction: 256 invocations per
// workgroup sum a row in workgroup memory, halving the active half at
// each of 8 levels with a barrier between. The values are small integers,
// so every order of summation gives the exact sum; a missing or broken
// barrier reads a partial sum before it is written.
func TestVulkanReduceBarriers(t *testing.T) {
	k, groups, bufs, check := reduceJob()
	for range 3 { // scheduling varies between runs
		check(t, runVulkan(t, k, groups, bufs...))
	}
}

// reduceJob is the golden reduction over 16 rows of 1000, its buffers and
// a check of the row sums.
func reduceJob() (*Kernel, [3]int, [][]byte, func(t *testing.T, out [][]byte)) {
	const rows, n = 16, 1000
	x := make([]float32, rows*n)
	want := make([]float32, rows)
	for r := range rows {
		for j := range n {
			v := float32((r*131 + j*17) % 29)
			x[r*n+j] = v
			want[r] += v
		}
	}
	return reduceKernel(n), [3]int{rows, 1, 1}, [][]byte{encode(F32, f32Bits(x)), make([]byte, 4*rows)}, func(t *testing.T, out [][]byte) {
		t.Helper()
		for r, b := range decode(F32, out[1]) {
			if got := math.Float32frombits(uint32(b)); got != want[r] {
				t.Fatalf("row %d: sum %g, want %g", r, got, want[r])
			}
		}
	}
}

// TestVulkanLaunchOffsets runs the offsets golden kernel with nonzero
// launch offsets, pushed as push constants: every load and store lands
// that many elements into its buffer.
func TestVulkanLaunchOffsets(t *testing.T) {
	k := offsetsKernel()
	const n = 100
	offs := []int32{5, 3, 11, 2}
	src := make([]byte, 5+2*n)
	for i := range src {
		src[i] = byte(i * 7)
	}
	srcl := make([]byte, 8*(3+n))
	for i := 0; i < 3+n; i++ {
		binary.LittleEndian.PutUint64(srcl[8*i:], uint64(i)<<33|uint64(i))
	}
	dst, dstl := make([]byte, 11+n), make([]byte, 8*(2+7+n))
	out := runVulkanAt(t, k, [3]int{1, 1, 1}, offs, src, srcl, dst, dstl)
	for i := 0; i < n; i++ {
		if got, want := out[2][11+i], src[5+2*i]; got != want {
			t.Fatalf("dst[%d] = %d, want %d", i, got, want)
		}
		if got, want := binary.LittleEndian.Uint64(out[3][8*(2+7+i):]), binary.LittleEndian.Uint64(srcl[8*(3+i):]); got != want {
			t.Fatalf("dstl[%d] = %#x, want %#x", i, got, want)
		}
	}
	for i := 0; i < 11; i++ {
		if out[2][i] != 0 {
			t.Fatalf("dst[%d] before the offset written", i)
		}
	}
}
