//go:build linux && (amd64 || arm64)

package cu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// nvrtc holds the NVRTC functions CompileCUDA calls (nvrtc.h); all return
// an nvrtcResult (a C enum, 0 for success).
type nvrtc struct {
	create      uintptr // nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name, int numHeaders, const char* const* headers, const char* const* includeNames)
	compile     uintptr // nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char* const* options)
	ptxSize     uintptr // nvrtcGetPTXSize(nvrtcProgram prog, size_t* ptxSizeRet)
	ptx         uintptr // nvrtcGetPTX(nvrtcProgram prog, char* ptx)
	logSize     uintptr // nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* logSizeRet)
	log         uintptr // nvrtcGetProgramLog(nvrtcProgram prog, char* log)
	destroy     uintptr // nvrtcDestroyProgram(nvrtcProgram* prog)
	errorString func(code int32) string
}

// nvrtcLibraries are the NVRTC sonames tried, newest first.
func nvrtcLibraries() []string {
	names := []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so.11", "libnvrtc.so"}
	// The loader's search path first, then where the toolkit usually is.
	var dirs []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if d := os.Getenv(env); d != "" {
			dirs = append(dirs, filepath.Join(d, "lib64"))
		}
	}
	dirs = append(dirs, "/usr/local/cuda/lib64")
	all := append([]string(nil), names...)
	for _, d := range dirs {
		for _, n := range names {
			all = append(all, filepath.Join(d, n))
		}
	}
	return all
}

func loadNVRTC() (*nvrtc, error) {
	lib, missing, err := dlopenFirst(nvrtcLibraries())
	if err != nil {
		if missing {
			return nil, ErrNoNVRTC
		}
		return nil, fmt.Errorf("%w: %v", ErrNoNVRTC, err)
	}
	n := new(nvrtc)
	for _, s := range []struct {
		p    *uintptr
		name string
	}{
		{&n.create, "nvrtcCreateProgram"},
		{&n.compile, "nvrtcCompileProgram"},
		{&n.ptxSize, "nvrtcGetPTXSize"},
		{&n.ptx, "nvrtcGetPTX"},
		{&n.logSize, "nvrtcGetProgramLogSize"},
		{&n.log, "nvrtcGetProgramLog"},
		{&n.destroy, "nvrtcDestroyProgram"},
	} {
		a, err := purego.Dlsym(lib, s.name)
		if err != nil || a == 0 {
			return nil, fmt.Errorf("cuda: libnvrtc has no %s", s.name)
		}
		*s.p = a
	}
	a, err := purego.Dlsym(lib, "nvrtcGetErrorString") // const char* nvrtcGetErrorString(nvrtcResult result)
	if err != nil || a == 0 {
		return nil, errors.New("cuda: libnvrtc has no nvrtcGetErrorString")
	}
	purego.RegisterFunc(&n.errorString, a)
	return n, nil
}

func (n *nvrtc) check(op string, r uintptr, log string) error {
	if int32(r) == 0 {
		return nil
	}
	return &Error{Op: op, Code: Result(int32(r)), Name: n.errorString(int32(r)), Log: log}
}

// programLog is the compiler's log for prog ("" if none or on failure).
func (n *nvrtc) programLog(prog uintptr) string {
	var size uintptr // size_t, counting the terminating NUL
	r, _, _ := purego.SyscallN(n.logSize, prog, uintptr(unsafe.Pointer(&size)))
	if r != 0 || size <= 1 {
		return ""
	}
	buf := make([]byte, size)
	r, _, _ = purego.SyscallN(n.log, prog, uintptr(unsafe.Pointer(&buf[0])))
	if r != 0 {
		return ""
	}
	return logText(buf, 0)
}

// CompileCUDA compiles CUDA C source to PTX with NVRTC, which it loads at
// run time (ErrNoNVRTC when absent). name is the source's name in
// messages; options are NVRTC's, e.g. "--gpu-architecture=compute_80"
// (Context.ArchOption gives the one for a device) or "-default-device".
// Kernels to be found by name should be extern "C". The PTX comes back
// without a NUL terminator, ready for Context.LoadPTX. A failed compile's
// error carries the compiler log. Note the PTX's ISA version is NVRTC's:
// a driver older than the NVRTC refuses it (CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
func CompileCUDA(src, name string, options []string) ([]byte, error) {
	n, err := loadNVRTC()
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = "kernel.cu"
	}
	csrc, cname := cString(src), cString(name)
	var prog uintptr // nvrtcProgram
	r, _, _ := purego.SyscallN(n.create, uintptr(unsafe.Pointer(&prog)),
		uintptr(unsafe.Pointer(&csrc[0])), uintptr(unsafe.Pointer(&cname[0])), 0, 0, 0)
	if err := n.check("nvrtcCreateProgram", r, ""); err != nil {
		return nil, err
	}
	defer func() {
		purego.SyscallN(n.destroy, uintptr(unsafe.Pointer(&prog)))
	}()

	// options is a C array of C strings: Go memory holding pointers to Go
	// memory, so the strings and the array are pinned while NVRTC reads.
	var pin runtime.Pinner
	defer pin.Unpin()
	opts := make([]unsafe.Pointer, len(options))
	for i, o := range options {
		b := cString(o)
		pin.Pin(&b[0])
		opts[i] = unsafe.Pointer(&b[0])
	}
	if len(opts) > 0 {
		pin.Pin(&opts[0])
	}
	r, _, _ = purego.SyscallN(n.compile, prog, uintptr(len(opts)), uintptr(unsafe.Pointer(unsafe.SliceData(opts))))
	if r != 0 {
		return nil, n.check("nvrtcCompileProgram("+name+")", r, n.programLog(prog))
	}

	var size uintptr // size_t, counting the terminating NUL
	r, _, _ = purego.SyscallN(n.ptxSize, prog, uintptr(unsafe.Pointer(&size)))
	if err := n.check("nvrtcGetPTXSize", r, ""); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, errors.New("cuda: nvrtcGetPTXSize: empty PTX")
	}
	ptx := make([]byte, size)
	r, _, _ = purego.SyscallN(n.ptx, prog, uintptr(unsafe.Pointer(&ptx[0])))
	if err := n.check("nvrtcGetPTX", r, ""); err != nil {
		return nil, err
	}
	for len(ptx) > 0 && ptx[len(ptx)-1] == 0 {
		ptx = ptx[:len(ptx)-1]
	}
	return ptx, nil
}
