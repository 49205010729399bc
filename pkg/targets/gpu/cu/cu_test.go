package cu

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// The tests named TestOpen* need a GPU. Without one (CI has none) they
// skip; set RLX_CUDA_REQUIRE=1 on a GPU machine to make a missing driver or
// device a failure instead. TestMain opens one Context for all of them.

var (
	gpu    *Context
	gpuErr error
)

func TestMain(m *testing.M) {
	gpu, gpuErr = Open()
	code := m.Run()
	if gpu != nil {
		if err := gpu.Close(); err != nil && code == 0 {
			fmt.Fprintln(os.Stderr, "Close:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// needGPU returns the shared Context or skips the test.
func needGPU(t *testing.T) *Context {
	t.Helper()
	if gpuErr == nil {
		return gpu
	}
	absent := errors.Is(gpuErr, ErrNoDriver) || errors.Is(gpuErr, ErrNoDevice) || errors.Is(gpuErr, ErrUnsupported)
	if !absent || os.Getenv("RLX_CUDA_REQUIRE") != "" {
		t.Fatalf("Open: %v", gpuErr)
	}
	t.Skipf("needs hardware: no CUDA GPU here (CI machines have none; RLX_CUDA_REQUIRE=1 makes this a failure): %v", gpuErr)
	return nil
}

// testPTX is hand-written PTX (modelled on what clang's NVPTX back end
// prints for the equivalent CUDA C) with four kernels:
//
//	vadd(a, b, c *float32, n uint32)      c[i] = a[i] + b[i] for i < n
//	scale(x, y *float32, s float32, n uint32)  y[i] = x[i] * s for i < n
//	iota64(out *int64, base int64, step int32, n uint32)  out[i] = base + i*step for i < n
//	revblock(x, y *float32)                each block reverses its slice of x
//	                                       into y through dynamic shared memory
//
// where i = ctaid.x*ntid.x + tid.x.
const testPTX = `
.version 7.0
.target sm_70
.address_size 64

.extern .shared .align 4 .b8 smem[];

.visible .entry vadd(
	.param .u64 vadd_a,
	.param .u64 vadd_b,
	.param .u64 vadd_c,
	.param .u32 vadd_n
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<11>;

	ld.param.u32 	%r1, [vadd_n];
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r5, %r2, %r3, %r4;
	setp.ge.u32 	%p1, %r5, %r1;
	@%p1 bra 	VADD_DONE;
	ld.param.u64 	%rd1, [vadd_a];
	ld.param.u64 	%rd2, [vadd_b];
	ld.param.u64 	%rd3, [vadd_c];
	cvta.to.global.u64 	%rd4, %rd1;
	cvta.to.global.u64 	%rd5, %rd2;
	cvta.to.global.u64 	%rd6, %rd3;
	mul.wide.u32 	%rd7, %r5, 4;
	add.s64 	%rd8, %rd4, %rd7;
	add.s64 	%rd9, %rd5, %rd7;
	add.s64 	%rd10, %rd6, %rd7;
	ld.global.f32 	%f1, [%rd8];
	ld.global.f32 	%f2, [%rd9];
	add.f32 	%f3, %f1, %f2;
	st.global.f32 	[%rd10], %f3;
VADD_DONE:
	ret;
}

.visible .entry scale(
	.param .u64 scale_x,
	.param .u64 scale_y,
	.param .f32 scale_s,
	.param .u32 scale_n
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<8>;

	ld.param.u32 	%r1, [scale_n];
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r5, %r2, %r3, %r4;
	setp.ge.u32 	%p1, %r5, %r1;
	@%p1 bra 	SCALE_DONE;
	ld.param.f32 	%f1, [scale_s];
	ld.param.u64 	%rd1, [scale_x];
	ld.param.u64 	%rd2, [scale_y];
	cvta.to.global.u64 	%rd3, %rd1;
	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.u32 	%rd5, %r5, 4;
	add.s64 	%rd6, %rd3, %rd5;
	add.s64 	%rd7, %rd4, %rd5;
	ld.global.f32 	%f2, [%rd6];
	mul.rn.f32 	%f3, %f2, %f1;
	st.global.f32 	[%rd7], %f3;
SCALE_DONE:
	ret;
}

.visible .entry iota64(
	.param .u64 iota64_out,
	.param .u64 iota64_base,
	.param .u32 iota64_step,
	.param .u32 iota64_n
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<10>;

	ld.param.u32 	%r1, [iota64_n];
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r5, %r2, %r3, %r4;
	setp.ge.u32 	%p1, %r5, %r1;
	@%p1 bra 	IOTA64_DONE;
	ld.param.u64 	%rd1, [iota64_out];
	ld.param.u64 	%rd2, [iota64_base];
	ld.param.s32 	%rd3, [iota64_step];
	cvta.to.global.u64 	%rd4, %rd1;
	cvt.u64.u32 	%rd5, %r5;
	mul.lo.s64 	%rd6, %rd5, %rd3;
	add.s64 	%rd7, %rd2, %rd6;
	mul.wide.u32 	%rd8, %r5, 8;
	add.s64 	%rd9, %rd4, %rd8;
	st.global.u64 	[%rd9], %rd7;
IOTA64_DONE:
	ret;
}

.visible .entry revblock(
	.param .u64 revblock_x,
	.param .u64 revblock_y
)
{
	.reg .b32 	%r<7>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<13>;

	ld.param.u64 	%rd1, [revblock_x];
	ld.param.u64 	%rd2, [revblock_y];
	cvta.to.global.u64 	%rd3, %rd2;
	cvta.to.global.u64 	%rd4, %rd1;
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %ctaid.x;
	mad.lo.s32 	%r4, %r3, %r2, %r1;
	mul.wide.u32 	%rd5, %r4, 4;
	add.s64 	%rd6, %rd4, %rd5;
	ld.global.f32 	%f1, [%rd6];
	mul.wide.u32 	%rd7, %r1, 4;
	mov.u64 	%rd8, smem;
	add.s64 	%rd9, %rd8, %rd7;
	st.shared.f32 	[%rd9], %f1;
	bar.sync 	0;
	not.b32 	%r5, %r1;
	add.s32 	%r6, %r2, %r5;
	mul.wide.u32 	%rd10, %r6, 4;
	add.s64 	%rd11, %rd8, %rd10;
	ld.shared.f32 	%f2, [%rd11];
	add.s64 	%rd12, %rd3, %rd5;
	st.global.f32 	[%rd12], %f2;
	ret;
}
`

// asBytes views a slice of numbers as its bytes.
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// module loads testPTX and unloads it when the test ends.
func module(t *testing.T, c *Context) *Module {
	t.Helper()
	m, err := c.LoadPTX([]byte(testPTX))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Unload(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// devBuf allocates bytes and frees them when the test ends.
func devBuf(t *testing.T, c *Context, bytes int64) DevicePtr {
	t.Helper()
	p, err := c.Alloc(bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Free(p); err != nil {
			t.Error(err)
		}
	})
	return p
}

func upload[T any](t *testing.T, c *Context, s []T) DevicePtr {
	t.Helper()
	b := asBytes(s)
	p := devBuf(t, c, int64(len(b)))
	if err := c.CopyToDevice(p, b); err != nil {
		t.Fatal(err)
	}
	return p
}

func download[T any](t *testing.T, c *Context, dst []T, src DevicePtr) {
	t.Helper()
	if err := c.CopyFromDevice(asBytes(dst), src); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	c := needGPU(t)
	major, minor := c.ComputeCapability()
	free, total, err := c.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device %d: %s, compute capability %d.%d, %d MiB (%d MiB free), %s",
		c.Device(), c.Name(), major, minor, c.TotalMem()>>20, free>>20, c.ArchOption())
	if c.Name() == "" || major < 3 || total == 0 || free > total {
		t.Fatalf("implausible device: %q %d.%d free %d total %d", c.Name(), major, minor, free, total)
	}

	// A second Context on the same device shares the primary context;
	// closing it leaves the first working, and Close is idempotent.
	c2, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	if c2.Name() != c.Name() {
		t.Errorf("second Open: %q vs %q", c2.Name(), c.Name())
	}
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c2.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c2.Alloc(16); !errors.Is(err, ErrClosed) {
		t.Fatalf("Alloc after Close: %v, want ErrClosed", err)
	}
	if err := c2.Synchronize(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Synchronize after Close: %v, want ErrClosed", err)
	}
	p, err := c.Alloc(16)
	if err != nil {
		t.Fatalf("first Context after closing the second: %v", err)
	}
	if err := c.Free(p); err != nil {
		t.Fatal(err)
	}
}

func TestOpenVAdd(t *testing.T) {
	c := needGPU(t)
	f, err := module(t, c).Function("vadd")
	if err != nil {
		t.Fatal(err)
	}
	const n, pad = 1000, 24 // 1024 elements of c, the last 24 past n
	a := make([]float32, n)
	b := make([]float32, n)
	for i := range a {
		a[i] = float32(i) * 0.37
		b[i] = 1 / float32(i+1)
	}
	sentinel := make([]float32, n+pad)
	for i := range sentinel {
		sentinel[i] = -42
	}
	da, db, dc := upload(t, c, a), upload(t, c, b), upload(t, c, sentinel)
	grid := [3]uint32{(n + 127) / 128, 1, 1}
	if err := c.Launch(f, grid, [3]uint32{128, 1, 1}, 0, da, db, dc, uint32(n)); err != nil {
		t.Fatal(err)
	}
	if err := c.Synchronize(); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n+pad)
	download(t, c, got, dc)
	for i := range n {
		if want := a[i] + b[i]; got[i] != want {
			t.Fatalf("c[%d] = %v, want %v", i, got[i], want)
		}
	}
	for i := n; i < n+pad; i++ {
		if got[i] != -42 {
			t.Fatalf("c[%d] = %v past n: the bounds check (or n) is wrong", i, got[i])
		}
	}
}

func TestOpenScalarParams(t *testing.T) {
	c := needGPU(t)
	m := module(t, c)

	scale, err := m.Function("scale")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i) - 500.25
	}
	dx, dy := upload(t, c, x), devBuf(t, c, 4*n)
	s := float32(-2.75)
	if err := c.Launch(scale, [3]uint32{(n + 127) / 128, 1, 1}, [3]uint32{128, 1, 1}, 0, dx, dy, s, uint32(n)); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, n)
	download(t, c, y, dy)
	for i := range n {
		if want := x[i] * s; y[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], want)
		}
	}

	iota64, err := m.Function("iota64")
	if err != nil {
		t.Fatal(err)
	}
	const k = 300
	base, step := int64(1)<<40+3, int32(-7)
	dout := devBuf(t, c, 8*k)
	if err := c.Launch(iota64, [3]uint32{3, 1, 1}, [3]uint32{128, 1, 1}, 0, dout, base, step, uint32(k)); err != nil {
		t.Fatal(err)
	}
	out := make([]int64, k)
	download(t, c, out, dout)
	for i := range k {
		if want := base + int64(i)*int64(step); out[i] != want {
			t.Fatalf("out[%d] = %d, want %d", i, out[i], want)
		}
	}
}

func TestOpenSharedMemory(t *testing.T) {
	c := needGPU(t)
	f, err := module(t, c).Function("revblock")
	if err != nil {
		t.Fatal(err)
	}
	const blocks, threads = 5, 64
	x := make([]float32, blocks*threads)
	for i := range x {
		x[i] = float32(i)
	}
	dx, dy := upload(t, c, x), devBuf(t, c, 4*blocks*threads)
	if err := c.Launch(f, [3]uint32{blocks, 1, 1}, [3]uint32{threads, 1, 1}, 4*threads, dx, dy); err != nil {
		t.Fatal(err)
	}
	if err := c.Synchronize(); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	download(t, c, y, dy)
	for b := range blocks {
		for i := range threads {
			if got, want := y[b*threads+i], x[b*threads+threads-1-i]; got != want {
				t.Fatalf("block %d: y[%d] = %v, want %v", b, i, got, want)
			}
		}
	}
}

func TestOpenBadPTX(t *testing.T) {
	c := needGPU(t)
	_, err := c.LoadPTX([]byte("this is not PTX"))
	if err == nil {
		t.Fatal("garbage PTX loaded")
	}
	t.Logf("garbage PTX: %v", err)
	var e *Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Name, "CUDA_ERROR_") {
		t.Fatalf("error does not name the CUresult: %v", err)
	}
	// PTX that parses but is wrong: the JIT log says where.
	bad := strings.Replace(testPTX, "add.f32 \t%f3, %f1, %f2;", "add.f32 \t%f3, %f1, %nosuchreg;", 1)
	if bad == testPTX {
		t.Fatal("test bug: replacement did not apply")
	}
	_, err = c.LoadPTX([]byte(bad))
	if err == nil {
		t.Fatal("PTX with an undefined register loaded")
	}
	t.Logf("bad PTX: %v", err)
	if !errors.As(err, &e) || e.Code != ErrorInvalidPTX || !strings.Contains(e.Log, "nosuchreg") {
		t.Errorf("want CUDA_ERROR_INVALID_PTX with a JIT log naming %%nosuchreg, got %v", err)
	}
	// The context is fine afterwards.
	if _, err := c.LoadPTX(nil); err == nil {
		t.Error("empty image loaded")
	}
	p, err := c.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Free(p); err != nil {
		t.Fatal(err)
	}
}

func TestOpenFunctionErrors(t *testing.T) {
	c := needGPU(t)
	m, err := c.LoadPTX([]byte(testPTX))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Function("nope"); err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_NOT_FOUND") {
		t.Fatalf("Function(nope): %v", err)
	}
	f, err := m.Function("vadd")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "vadd" {
		t.Errorf("Name %q", f.Name())
	}
	d := devBuf(t, c, 16)
	one := [3]uint32{1, 1, 1}
	if err := c.Launch(f, one, one, 0, d, d, d, 1); err == nil || !strings.Contains(err.Error(), "int32") {
		t.Errorf("an untyped int argument: %v", err)
	}
	if err := c.Launch(f, [3]uint32{0, 1, 1}, one, 0, d, d, d, uint32(1)); err == nil {
		t.Error("zero grid launched")
	}
	if err := c.Launch(nil, one, one, 0); err == nil {
		t.Error("nil function launched")
	}
	if err := m.Unload(); err != nil {
		t.Fatal(err)
	}
	if err := m.Unload(); err != nil {
		t.Fatalf("second Unload: %v", err)
	}
	if err := c.Launch(f, one, one, 0, d, d, d, uint32(1)); err == nil {
		t.Error("function of an unloaded module launched")
	}
	if _, err := m.Function("vadd"); err == nil {
		t.Error("Function on an unloaded module")
	}
}

func TestOpenCopyRoundTrip(t *testing.T) {
	c := needGPU(t)
	z, err := c.Alloc(0)
	if err != nil || z == 0 {
		t.Fatalf("Alloc(0) = %#x, %v", z, err)
	}
	if err := c.Free(z); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Alloc(-1); err == nil {
		t.Error("Alloc(-1) succeeded")
	}
	const n = 1<<20 + 3
	src := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	p := devBuf(t, c, n)
	if err := c.CopyToDevice(p, src); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, n)
	if err := c.CopyFromDevice(dst, p); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, dst) {
		t.Fatal("round trip changed the bytes")
	}
	// A copy at an offset.
	part := make([]byte, 1000)
	if err := c.CopyFromDevice(part, p.Add(12345)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(part, src[12345:13345]) {
		t.Fatal("copy at an offset")
	}
}

func TestOpenMemset(t *testing.T) {
	c := needGPU(t)
	const n = 4096
	ones := bytes.Repeat([]byte{0xff}, n)
	p := devBuf(t, c, n)
	if err := c.CopyToDevice(p, ones); err != nil {
		t.Fatal(err)
	}
	if err := c.Memset(p.Add(100), 1000); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := c.CopyFromDevice(got, p); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		want := byte(0xff)
		if i >= 100 && i < 1100 {
			want = 0
		}
		if v != want {
			t.Fatalf("byte %d = %#x, want %#x", i, v, want)
		}
	}
}

// TestOpenConcurrent uses one Context from many goroutines: each call must
// find the context current on whatever thread it lands on.
func TestOpenConcurrent(t *testing.T) {
	c := needGPU(t)
	f, err := module(t, c).Function("vadd")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			a := make([]float32, n)
			for i := range a {
				a[i] = float32(g*n + i)
			}
			bytesA := asBytes(a)
			pa, err := c.Alloc(4 * n)
			if err != nil {
				errs <- err
				return
			}
			defer c.Free(pa)
			pc, err := c.Alloc(4 * n)
			if err != nil {
				errs <- err
				return
			}
			defer c.Free(pc)
			got := make([]float32, n)
			for it := range 20 {
				if err := c.CopyToDevice(pa, bytesA); err != nil {
					errs <- err
					return
				}
				if err := c.Launch(f, [3]uint32{(n + 127) / 128, 1, 1}, [3]uint32{128, 1, 1}, 0, pa, pa, pc, uint32(n)); err != nil {
					errs <- err
					return
				}
				if err := c.CopyFromDevice(asBytes(got), pc); err != nil {
					errs <- err
					return
				}
				for i := range n {
					if got[i] != 2*a[i] {
						errs <- fmt.Errorf("goroutine %d iteration %d: c[%d] = %v, want %v", g, it, i, got[i], 2*a[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

const testCUDA = `
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}
`

func TestOpenCompileCUDA(t *testing.T) {
	c := needGPU(t)
	ptx, err := CompileCUDA(testCUDA, "saxpy.cu", []string{c.ArchOption(), "--fmad=false"})
	if errors.Is(err, ErrNoNVRTC) {
		t.Skipf("no NVRTC on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ptx, []byte(".entry saxpy")) {
		t.Fatalf("PTX has no saxpy entry:\n%s", ptx)
	}
	m, err := c.LoadPTX(ptx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unload()
	f, err := m.Function("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	const n = 777
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i)*0.5, float32(n-i)
	}
	dx, dy := upload(t, c, x), upload(t, c, y)
	if err := c.Launch(f, [3]uint32{(n + 255) / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, float32(3), dx, dy, uint32(n)); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	download(t, c, got, dy)
	for i := range n {
		if want := float32(3*x[i]) + y[i]; got[i] != want { // float32(): no FMA, like --fmad=false
			t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
		}
	}

	_, err = CompileCUDA("this is not CUDA", "bad.cu", nil)
	if err == nil {
		t.Fatal("garbage compiled")
	}
	t.Logf("garbage CUDA: %v", err)
	if !strings.Contains(err.Error(), "NVRTC_ERROR_COMPILATION") || !strings.Contains(err.Error(), "bad.cu") {
		t.Errorf("want NVRTC_ERROR_COMPILATION with the log: %v", err)
	}
}
