//go:build linux && (amd64 || arm64)

package cu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CUdevice_attribute and CUjit_option values used here (cuda.h).
const (
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76

	jitErrorLogBuffer          = 5 // char*
	jitErrorLogBufferSizeBytes = 6 // unsigned int, in and out
)

// jitLogBytes is the size of the buffer the PTX JIT writes its error log to.
const jitLogBytes = 16 << 10

// driver holds the addresses of the libcuda functions the package calls.
// Each is called through purego.SyscallN with every argument as a uintptr;
// none of them takes a float, so the integer-register convention SyscallN
// uses is right for all of them. The comments give the C signatures.
type driver struct {
	cuInit                    uintptr // (unsigned int Flags)
	cuDeviceGetCount          uintptr // (int* count)
	cuDeviceGet               uintptr // (CUdevice* device, int ordinal)
	cuDeviceGetName           uintptr // (char* name, int len, CUdevice dev)
	cuDeviceGetAttribute      uintptr // (int* pi, CUdevice_attribute attrib, CUdevice dev)
	cuDeviceTotalMem          uintptr // _v2 (size_t* bytes, CUdevice dev)
	cuDevicePrimaryCtxRetain  uintptr // (CUcontext* pctx, CUdevice dev)
	cuDevicePrimaryCtxRelease uintptr // _v2 (CUdevice dev)
	cuCtxSetCurrent           uintptr // (CUcontext ctx)
	cuCtxSynchronize          uintptr // (void)
	cuModuleLoadDataEx        uintptr // (CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options, void** optionValues)
	cuModuleGetFunction       uintptr // (CUfunction* hfunc, CUmodule hmod, const char* name)
	cuModuleUnload            uintptr // (CUmodule hmod)
	cuMemAlloc                uintptr // _v2 (CUdeviceptr* dptr, size_t bytesize)
	cuMemFree                 uintptr // _v2 (CUdeviceptr dptr)
	cuMemcpyHtoD              uintptr // _v2 (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount)
	cuMemcpyDtoH              uintptr // _v2 (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount)
	cuMemcpyHtoDAsync         uintptr // _v2 (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream)
	cuMemcpyDtoHAsync         uintptr // _v2 (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
	cuMemsetD8                uintptr // _v2 (CUdeviceptr dstDevice, unsigned char uc, size_t N)
	cuMemGetInfo              uintptr // _v2 (size_t* free, size_t* total)
	cuLaunchKernel            uintptr // (CUfunction f, unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, CUstream hStream, void** kernelParams, void** extra)
	cuGetErrorName            uintptr // (CUresult error, const char** pStr)

	// Streams, events and graphs. A driver without them (older than CUDA
	// 11.4) leaves them 0: Graph and Profile then say so, and Run falls
	// back to launches on the default stream.
	streams                     bool
	cuStreamCreate              uintptr // (CUstream* phStream, unsigned int Flags)
	cuStreamDestroy             uintptr // _v2 (CUstream hStream)
	cuStreamSynchronize         uintptr // (CUstream hStream)
	cuEventCreate               uintptr // (CUevent* phEvent, unsigned int Flags)
	cuEventDestroy              uintptr // _v2 (CUevent hEvent)
	cuEventRecord               uintptr // (CUevent hEvent, CUstream hStream)
	cuEventRecordWithFlags      uintptr // (CUevent hEvent, CUstream hStream, unsigned int flags)
	cuEventElapsedTime          uintptr // (float* pMilliseconds, CUevent hStart, CUevent hEnd)
	cuStreamBeginCapture        uintptr // _v2 (CUstream hStream, CUstreamCaptureMode mode)
	cuStreamEndCapture          uintptr // (CUstream hStream, CUgraph* phGraph)
	cuGraphInstantiateWithFlags uintptr // (CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags)
	cuGraphLaunch               uintptr // (CUgraphExec hGraphExec, CUstream hStream)
	cuGraphExecDestroy          uintptr // (CUgraphExec hGraphExec)
	cuGraphDestroy              uintptr // (CUgraph hGraph)
}

// dlopenFirst opens the first of names that loads. Missing files are
// reported as missing; any other failure (a broken or foreign library)
// comes back with the loader's message.
func dlopenFirst(names []string) (lib uintptr, missing bool, err error) {
	var msgs []string
	missing = true
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			return h, false, nil
		}
		msgs = append(msgs, err.Error())
		if !strings.Contains(err.Error(), "No such file") {
			missing = false
		}
	}
	return 0, missing, errors.New(strings.Join(msgs, "; "))
}

// loadDriver opens libcuda and looks up the functions. dlopen counts
// references, so every Open may call it; the library is never closed
// (unloading a GPU driver under live threads is asking for trouble).
func loadDriver() (*driver, error) {
	lib, missing, err := dlopenFirst([]string{"libcuda.so.1", "libcuda.so"})
	if err != nil {
		if missing {
			return nil, ErrNoDriver
		}
		return nil, fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	d := new(driver)
	for _, s := range []struct {
		p    *uintptr
		name string
	}{
		{&d.cuInit, "cuInit"},
		{&d.cuDeviceGetCount, "cuDeviceGetCount"},
		{&d.cuDeviceGet, "cuDeviceGet"},
		{&d.cuDeviceGetName, "cuDeviceGetName"},
		{&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
		{&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
		{&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
		{&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
		{&d.cuCtxSynchronize, "cuCtxSynchronize"},
		{&d.cuModuleLoadDataEx, "cuModuleLoadDataEx"},
		{&d.cuModuleGetFunction, "cuModuleGetFunction"},
		{&d.cuModuleUnload, "cuModuleUnload"},
		{&d.cuMemAlloc, "cuMemAlloc_v2"},
		{&d.cuMemFree, "cuMemFree_v2"},
		{&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
		{&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
		{&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"},
		{&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
		{&d.cuMemsetD8, "cuMemsetD8_v2"},
		{&d.cuMemGetInfo, "cuMemGetInfo_v2"},
		{&d.cuLaunchKernel, "cuLaunchKernel"},
		{&d.cuGetErrorName, "cuGetErrorName"},
	} {
		a, err := purego.Dlsym(lib, s.name)
		if err != nil || a == 0 {
			return nil, fmt.Errorf("cuda: libcuda has no %s (driver older than CUDA 11?)", s.name)
		}
		*s.p = a
	}
	d.streams = true
	for _, s := range []struct {
		p     *uintptr
		names []string
	}{
		{&d.cuStreamCreate, []string{"cuStreamCreate"}},
		{&d.cuStreamDestroy, []string{"cuStreamDestroy_v2"}},
		{&d.cuStreamSynchronize, []string{"cuStreamSynchronize"}},
		{&d.cuEventCreate, []string{"cuEventCreate"}},
		{&d.cuEventDestroy, []string{"cuEventDestroy_v2"}},
		{&d.cuEventRecord, []string{"cuEventRecord"}},
		{&d.cuEventRecordWithFlags, []string{"cuEventRecordWithFlags"}},
		{&d.cuEventElapsedTime, []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}},
		{&d.cuStreamBeginCapture, []string{"cuStreamBeginCapture_v2"}},
		{&d.cuStreamEndCapture, []string{"cuStreamEndCapture"}},
		{&d.cuGraphInstantiateWithFlags, []string{"cuGraphInstantiateWithFlags"}},
		{&d.cuGraphLaunch, []string{"cuGraphLaunch"}},
		{&d.cuGraphExecDestroy, []string{"cuGraphExecDestroy"}},
		{&d.cuGraphDestroy, []string{"cuGraphDestroy"}},
	} {
		for _, name := range s.names {
			if a, err := purego.Dlsym(lib, name); err == nil && a != 0 {
				*s.p = a
				break
			}
		}
		if *s.p == 0 {
			d.streams = false
		}
	}
	return d, nil
}

// check turns a CUresult into nil or an *Error for op.
func (d *driver) check(op string, r uintptr) error {
	code := Result(int32(r))
	if code == Success {
		return nil
	}
	return &Error{Op: op, Code: code, Name: d.errorName(code)}
}

// errorName is cuGetErrorName: "CUDA_ERROR_INVALID_PTX", or "" for a code
// the driver does not know.
func (d *driver) errorName(code Result) string {
	var p *byte // the driver points it at a static C string
	r, _, _ := purego.SyscallN(d.cuGetErrorName, uintptr(uint32(code)), uintptr(unsafe.Pointer(&p)))
	if r != 0 {
		return ""
	}
	return cStringAt(p)
}

// Context is one device's primary CUDA context. Its methods may be called
// from any goroutine; they are serialised by a mutex, and each makes the
// context current on the OS thread it runs on (see the package doc).
type Context struct {
	d *driver

	// Set by Open, never written again: read without the lock.
	ctx          uintptr // CUcontext
	dev          int32   // CUdevice
	ordinal      int
	name         string
	major, minor int
	totalMem     uint64

	mu     sync.Mutex
	closed bool
}

// Open loads the driver, initialises it and retains the primary context of
// device 0, or of device n when the environment has RLX_CUDA_DEVICE=n. It
// returns ErrNoDriver without libcuda, ErrNoDevice without a device; test
// for them with errors.Is. Close the Context when done.
func Open() (*Context, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	r, _, _ := purego.SyscallN(d.cuInit, 0)
	switch Result(int32(r)) {
	case Success:
	case ErrorNoDevice:
		return nil, ErrNoDevice
	case ErrorStubLibrary:
		return nil, fmt.Errorf("%w (the libcuda found is the CUDA toolkit's stub)", ErrNoDriver)
	default:
		return nil, d.check("cuInit", r)
	}
	var count int32
	r, _, _ = purego.SyscallN(d.cuDeviceGetCount, uintptr(unsafe.Pointer(&count)))
	if err := d.check("cuDeviceGetCount", r); err != nil {
		return nil, err
	}
	if count <= 0 {
		return nil, ErrNoDevice
	}
	ordinal := 0
	if s := os.Getenv("RLX_CUDA_DEVICE"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("cuda: RLX_CUDA_DEVICE=%q is not a device number", s)
		}
		if n >= int(count) {
			return nil, fmt.Errorf("cuda: RLX_CUDA_DEVICE=%d, but there are %d devices", n, count)
		}
		ordinal = n
	}
	c := &Context{d: d, ordinal: ordinal}
	r, _, _ = purego.SyscallN(d.cuDeviceGet, uintptr(unsafe.Pointer(&c.dev)), uintptr(ordinal))
	if err := d.check("cuDeviceGet", r); err != nil {
		return nil, err
	}
	var name [256]byte
	r, _, _ = purego.SyscallN(d.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(c.dev))
	if err := d.check("cuDeviceGetName", r); err != nil {
		return nil, err
	}
	c.name = logText(name[:], 0)
	var major, minor int32
	r, _, _ = purego.SyscallN(d.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&major)), attrComputeCapabilityMajor, uintptr(c.dev))
	if err := d.check("cuDeviceGetAttribute", r); err != nil {
		return nil, err
	}
	r, _, _ = purego.SyscallN(d.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&minor)), attrComputeCapabilityMinor, uintptr(c.dev))
	if err := d.check("cuDeviceGetAttribute", r); err != nil {
		return nil, err
	}
	c.major, c.minor = int(major), int(minor)
	var total uintptr // size_t
	r, _, _ = purego.SyscallN(d.cuDeviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(c.dev))
	if err := d.check("cuDeviceTotalMem_v2", r); err != nil {
		return nil, err
	}
	c.totalMem = uint64(total)
	r, _, _ = purego.SyscallN(d.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&c.ctx)), uintptr(c.dev))
	if err := d.check("cuDevicePrimaryCtxRetain", r); err != nil {
		return nil, err
	}
	return c, nil
}

// enter takes c's lock, wires the calling goroutine to its OS thread and
// makes c's context current on that thread; exit undoes the first two.
// Every method that calls the driver with a context in effect runs between
// the two: the context is current per thread and the goroutine could
// otherwise move to a thread where it is not (or another is) between any
// two calls. Setting it again each time is cheap (a thread-local store)
// and leaves nothing for a later call to rely on.
func (c *Context) enter() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	runtime.LockOSThread()
	r, _, _ := purego.SyscallN(c.d.cuCtxSetCurrent, c.ctx)
	if err := c.d.check("cuCtxSetCurrent", r); err != nil {
		c.exit()
		return err
	}
	return nil
}

func (c *Context) exit() {
	runtime.UnlockOSThread()
	c.mu.Unlock()
}

// Name is the device's name, e.g. "NVIDIA H100 80GB HBM3".
func (c *Context) Name() string { return c.name }

// ComputeCapability is the device's compute capability, e.g. 9, 0.
func (c *Context) ComputeCapability() (major, minor int) { return c.major, c.minor }

// Device is the device's ordinal (0 unless RLX_CUDA_DEVICE said otherwise).
func (c *Context) Device() int { return c.ordinal }

// TotalMem is the device's memory in bytes.
func (c *Context) TotalMem() uint64 { return c.totalMem }

// ArchOption is the NVRTC option that compiles for this device, e.g.
// "--gpu-architecture=compute_90", for CompileCUDA.
func (c *Context) ArchOption() string {
	return fmt.Sprintf("--gpu-architecture=compute_%d%d", c.major, c.minor)
}

// Close releases the primary context. When no one else holds it the driver
// destroys it, and with it every module and allocation made through c, so
// unload and free first if the process goes on using the device. Closing
// twice is a no-op; every other method returns ErrClosed afterwards.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	r, _, _ := purego.SyscallN(c.d.cuDevicePrimaryCtxRelease, uintptr(c.dev))
	return c.d.check("cuDevicePrimaryCtxRelease_v2", r)
}

// MemInfo is the device memory free and in all, in bytes (cuMemGetInfo).
func (c *Context) MemInfo() (free, total uint64, err error) {
	if err := c.enter(); err != nil {
		return 0, 0, err
	}
	defer c.exit()
	var f, t uintptr // size_t
	r, _, _ := purego.SyscallN(c.d.cuMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t)))
	if err := c.d.check("cuMemGetInfo_v2", r); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

// Module is a loaded CUDA module (CUmodule).
type Module struct {
	ctx *Context
	h   uintptr // CUmodule; 0 once unloaded (guarded by ctx.mu)
}

// Function is a kernel in a Module (CUfunction).
type Function struct {
	mod  *Module
	h    uintptr // CUfunction
	name string
}

// Name is the kernel's name.
func (f *Function) Name() string { return f.name }

// LoadPTX loads a module from PTX text, which the driver compiles for the
// device (a cubin or fatbin image loads too). The image is copied with a
// NUL terminator added, so ptx need not have one. When the JIT fails the
// error carries its log: "cuda: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX:
// ptxas ... error ...".
func (c *Context) LoadPTX(ptx []byte) (*Module, error) {
	if len(ptx) == 0 {
		return nil, errors.New("cuda: LoadPTX: empty image")
	}
	img := make([]byte, len(ptx)+1)
	copy(img, ptx)
	log := make([]byte, jitLogBytes)
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&log[0]) // its address sits in optionValues, Go memory C reads
	// CUjit_option is a C enum (int); each option value is a void* that
	// holds either a pointer or, for a size, the number itself.
	opts := [2]int32{jitErrorLogBuffer, jitErrorLogBufferSizeBytes}
	vals := [2]uintptr{uintptr(unsafe.Pointer(&log[0])), uintptr(len(log))}

	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	var h uintptr
	r, _, _ := purego.SyscallN(c.d.cuModuleLoadDataEx,
		uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	if err := c.d.check("cuModuleLoadDataEx", r); err != nil {
		// The driver writes the log's length back into vals[1].
		err.(*Error).Log = logText(log, int(vals[1]))
		return nil, err
	}
	return &Module{ctx: c, h: h}, nil
}

// Function looks up the kernel called name (its .entry name: extern "C"
// kernels keep theirs, C++ ones are mangled).
func (m *Module) Function(name string) (*Function, error) {
	c := m.ctx
	cname := cString(name)
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if m.h == 0 {
		return nil, fmt.Errorf("cuda: Function(%q): module is unloaded", name)
	}
	var h uintptr
	r, _, _ := purego.SyscallN(c.d.cuModuleGetFunction, uintptr(unsafe.Pointer(&h)), m.h, uintptr(unsafe.Pointer(&cname[0])))
	if r != 0 {
		return nil, c.d.check(fmt.Sprintf("cuModuleGetFunction(%q)", name), r)
	}
	return &Function{mod: m, h: h, name: name}, nil
}

// Unload unloads the module; its Functions are dead afterwards. Unloading
// twice is a no-op.
func (m *Module) Unload() error {
	c := m.ctx
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if m.h == 0 {
		return nil
	}
	r, _, _ := purego.SyscallN(c.d.cuModuleUnload, m.h)
	m.h = 0
	return c.d.check("cuModuleUnload", r)
}

// Alloc allocates bytes of device memory (cuMemAlloc). A request for 0
// bytes allocates 4, so a successful call never returns the null pointer.
func (c *Context) Alloc(bytes int64) (DevicePtr, error) {
	if bytes < 0 {
		return 0, fmt.Errorf("cuda: Alloc(%d): negative size", bytes)
	}
	if bytes == 0 {
		bytes = 4
	}
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.exit()
	var p uint64 // CUdeviceptr is unsigned long long
	r, _, _ := purego.SyscallN(c.d.cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes))
	if r != 0 {
		return 0, c.d.check(fmt.Sprintf("cuMemAlloc_v2(%d)", bytes), r)
	}
	return DevicePtr(p), nil
}

// Free frees memory from Alloc. Freeing 0 is a no-op.
func (c *Context) Free(p DevicePtr) error {
	if p == 0 {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	r, _, _ := purego.SyscallN(c.d.cuMemFree, uintptr(p))
	return c.d.check("cuMemFree_v2", r)
}

// CopyToDevice copies src to device memory at dst. It returns when src has
// been read and may be reused, and is ordered after earlier launches.
func (c *Context) CopyToDevice(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	r, _, _ := purego.SyscallN(c.d.cuMemcpyHtoD, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)))
	return c.d.check("cuMemcpyHtoD_v2", r)
}

// CopyFromDevice copies len(dst) bytes from device memory at src to dst. It
// waits for earlier launches to finish, and for the copy.
func (c *Context) CopyFromDevice(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	r, _, _ := purego.SyscallN(c.d.cuMemcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)))
	return c.d.check("cuMemcpyDtoH_v2", r)
}

// Memset sets bytes of device memory at dst to zero (cuMemsetD8).
func (c *Context) Memset(dst DevicePtr, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("cuda: Memset(%d): negative size", bytes)
	}
	if bytes == 0 {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	r, _, _ := purego.SyscallN(c.d.cuMemsetD8, uintptr(dst), 0, uintptr(bytes))
	return c.d.check("cuMemsetD8_v2", r)
}

// Launch queues f on the default stream with the given grid and block (in
// blocks and threads) and sharedBytes of dynamic shared memory. Each of
// args is one kernel parameter, in order: a DevicePtr for a pointer
// parameter, or an int32, uint32, int64, uint64, float32 or float64 scalar
// whose width matches the parameter's. Launch does not wait for the kernel:
// an error the kernel hits shows up at the next Synchronize or copy.
func (c *Context) Launch(f *Function, grid, block [3]uint32, sharedBytes uint32, args ...any) error {
	st := Step{F: f, Grid: grid, Block: block, SharedBytes: sharedBytes, Args: args}
	var pin runtime.Pinner
	defer pin.Unpin()
	params, err := c.packSteps(&pin, []Step{st})
	if err != nil {
		return err
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	return c.launch(&st, params[0], 0) // the default stream
}

// checkLaunch checks what a launch of f can check before the driver.
func (c *Context) checkLaunch(f *Function, grid, block [3]uint32) error {
	if f == nil || f.mod == nil {
		return errors.New("cuda: Launch: nil function")
	}
	if f.mod.ctx != c {
		return fmt.Errorf("cuda: Launch(%s): the function belongs to another Context", f.name)
	}
	for i := range 3 {
		if grid[i] == 0 || block[i] == 0 {
			return fmt.Errorf("cuda: Launch(%s): grid %v and block %v must not have a zero dimension", f.name, grid, block)
		}
	}
	return nil
}

// Synchronize waits for all queued work on the context to finish and
// returns the first error a kernel hit (cuCtxSynchronize). Errors such as
// CUDA_ERROR_ILLEGAL_ADDRESS are sticky: the context is unusable after them.
func (c *Context) Synchronize() error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	r, _, _ := purego.SyscallN(c.d.cuCtxSynchronize)
	return c.d.check("cuCtxSynchronize", r)
}
