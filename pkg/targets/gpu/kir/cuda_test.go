package kir

// The numeric cases on an NVIDIA GPU: the CUDA print, compiled to PTX by
// clang as the cuda target builds it (and by NVRTC, the runtime's
// fallback, when the machine has it), launched through the cu driver
// runtime. CI has no NVIDIA GPU, so without one this test skips, under
// CI=true too.
//
// A GPU machine may lack clang: RLX_KIR_PTX_DIR names a directory of PTX
// built elsewhere, <kernel>.ptx, used instead of compiling; run the test
// with RLX_KIR_WRITE_PTX=DIR on a machine with clang to write them.

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/gpu/cu"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// gpuJob is a kernel with its launch, buffers and a check of its outputs.
type gpuJob struct {
	k      *Kernel
	groups [3]int
	bufs   [][]byte
	check  func(t *testing.T, be backend, out [][]byte)
}

// gpuJobs are every numeric case, the golden elementwise kernel and the
// golden reduction (barriers, on real hardware), with unique kernel names.
func gpuJobs() []gpuJob {
	var jobs []gpuJob
	for i, c := range append(builderCases(), primitiveCases()...) {
		k, groups := c.kernel()
		k.Name = fmt.Sprintf("%s_%d", k.Name, i)
		var bufs [][]byte
		for j, in := range c.inputs {
			bufs = append(bufs, encode(c.in[j], in))
		}
		bufs = append(bufs, make([]byte, len(c.inputs[0])*c.out.Size()))
		jobs = append(jobs, gpuJob{k, groups, bufs, func(t *testing.T, be backend, out [][]byte) {
			c.check(t, be, decode(c.out, out[len(c.in)]))
		}})
	}
	ew, groups, bufs, check := elementwiseJob()
	jobs = append(jobs, gpuJob{ew, groups, bufs, func(t *testing.T, be backend, out [][]byte) { check(t, out) }})
	rk, groups, bufs, rcheck := reduceJob()
	jobs = append(jobs, gpuJob{rk, groups, bufs, func(t *testing.T, be backend, out [][]byte) { rcheck(t, out) }})
	return append(jobs, mmaJob(MMATF32), mmaJob(MMABF16))
}

func TestGPUCUDA(t *testing.T) {
	jobs := gpuJobs()
	if dir := os.Getenv("RLX_KIR_WRITE_PTX"); dir != "" {
		needTool(t, toolchain.Clang)
		for _, j := range jobs {
			src, err := Print(CUDA, j.k)
			if err != nil {
				t.Fatal(err)
			}
			ptx, _, err := toolchain.CUDAToPTX(j.k.Name, src)
			if err != nil {
				t.Fatalf("%s: %v", j.k.Name, err)
			}
			if err := os.WriteFile(filepath.Join(dir, j.k.Name+".ptx"), ptx, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %d PTX files to %s", len(jobs), dir)
	}
	ctx, err := cu.Open()
	if err != nil {
		t.Skipf("needs hardware: no CUDA device: %v", err)
	}
	defer ctx.Close()
	major, minor := ctx.ComputeCapability()
	t.Logf("%s, compute capability %d.%d", ctx.Name(), major, minor)

	type compiler struct {
		name string
		ptx  func(k *Kernel, src string) ([]byte, error)
	}
	var compilers []compiler
	if dir := os.Getenv("RLX_KIR_PTX_DIR"); dir != "" {
		compilers = append(compilers, compiler{"clang (prebuilt)", func(k *Kernel, _ string) ([]byte, error) {
			return os.ReadFile(filepath.Join(dir, k.Name+".ptx"))
		}})
	} else if _, err := toolchain.Clang.Path(); err == nil {
		compilers = append(compilers, compiler{"clang", func(k *Kernel, src string) ([]byte, error) {
			ptx, _, err := toolchain.CUDAToPTX(k.Name, src)
			return ptx, err
		}})
	}
	if _, err := cu.CompileCUDA("extern \"C\" __global__ void probe() {}", "probe.cu", []string{ctx.ArchOption()}); err == nil {
		compilers = append(compilers, compiler{"nvrtc", func(k *Kernel, src string) ([]byte, error) {
			return cu.CompileCUDA(src, k.Name+".cu", []string{ctx.ArchOption()})
		}})
	} else {
		t.Logf("no NVRTC: %v", err)
	}
	if len(compilers) == 0 {
		t.Skip("neither clang, prebuilt PTX (RLX_KIR_PTX_DIR) nor NVRTC")
	}
	for _, cc := range compilers {
		t.Run(cc.name, func(t *testing.T) {
			be := backend{name: "cuda/" + cc.name, fusedFMA: true}
			for _, j := range jobs {
				t.Run(j.k.Name, func(t *testing.T) {
					src, err := Print(CUDA, j.k)
					if err != nil {
						t.Fatal(err)
					}
					ptx, err := cc.ptx(j.k, src)
					if err != nil {
						t.Fatalf("%v\n%s", err, numbered(src))
					}
					j.check(t, be, runCUDA(t, ctx, j.k, ptx, j.groups, j.bufs))
				})
			}
		})
	}
}

// mmaJob is one warp's tensor-core product of kind m (mmaKernel) over
// small integer tiles, whose products and sums every rounding keeps
// exact, plus operands that the kind's rounding moves (to nearest, and
// for bf16 a tie to even): an element read from the wrong place of A or
// B, a wrong rounding, or an accumulator stored to the wrong place
// changes the result.
func mmaJob(m MMAKind) gpuJob {
	K := m.K()
	a, b := make([]float32, 16*K), make([]float32, K*8)
	for i := range a {
		a[i] = float32(i%7 - 3)
	}
	for i := range b {
		b[i] = float32((i*5)%9 - 4)
	}
	round := func(x float32) float64 {
		u := math.Float32bits(x)
		if m == MMATF32 {
			return float64(math.Float32frombits((u + 0x1000) &^ 0x1fff))
		}
		return float64(math.Float32frombits((u + 0x7fff + (u>>16)&1) &^ 0xffff))
	}
	if m == MMATF32 {
		// 1 + 2^-12 rounds to 1 in tf32, 1 + 3·2^-12 to 1 + 2^-10.
		a[0], b[9] = 1+1.0/4096, 1+3.0/4096
	} else {
		// In bf16: 1 + 2^-9 rounds to 1, 1 + 3·2^-9 to 1 + 2^-7, and
		// the tie 1 + 3·2^-8 to the even 1 + 2^-6.
		a[0], b[9], a[5] = 1+1.0/512, 1+3.0/512, 1+3.0/256
	}
	enc := func(v []float32) []byte {
		out := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
		return out
	}
	check := func(t *testing.T, _ backend, out [][]byte) {
		for r := range 16 {
			for c := range 8 {
				var want float64
				for k := range K {
					want += round(a[r*K+k]) * round(b[k*8+c])
				}
				got := math.Float32frombits(binary.LittleEndian.Uint32(out[2][4*(r*8+c):]))
				if float64(got) != want {
					t.Errorf("%s: D[%d][%d] = %v, want %v", m, r, c, got, want)
				}
			}
		}
	}
	return gpuJob{mmaKernel(m), [3]int{1, 1, 1}, [][]byte{enc(a), enc(b), make([]byte, 4*128)}, check}
}

// runCUDA loads ptx and launches kernel k once over groups blocks of
// k.Local threads, with buffers holding bufs; their contents come back.
func runCUDA(t *testing.T, ctx *cu.Context, k *Kernel, ptx []byte, groups [3]int, bufs [][]byte) [][]byte {
	t.Helper()
	mod, err := ctx.LoadPTX(ptx)
	if err != nil {
		t.Fatalf("LoadPTX: %v", err)
	}
	defer mod.Unload()
	fn, err := mod.Function(k.Name)
	if err != nil {
		t.Fatalf("Function: %v", err)
	}
	var args []any
	for _, b := range bufs {
		p, err := ctx.Alloc(int64(max(len(b), 4)))
		if err != nil {
			t.Fatalf("Alloc: %v", err)
		}
		defer ctx.Free(p)
		if err := ctx.CopyToDevice(p, b); err != nil {
			t.Fatalf("CopyToDevice: %v", err)
		}
		args = append(args, p)
	}
	u3 := func(v [3]int) [3]uint32 { return [3]uint32{uint32(v[0]), uint32(v[1]), uint32(v[2])} }
	if err := ctx.Launch(fn, u3(groups), u3(k.Local), 0, args...); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	if err := ctx.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	out := make([][]byte, len(bufs))
	for i, b := range bufs {
		out[i] = make([]byte, len(b))
		if err := ctx.CopyFromDevice(out[i], args[i].(cu.DevicePtr)); err != nil {
			t.Fatalf("CopyFromDevice: %v", err)
		}
	}
	return out
}
