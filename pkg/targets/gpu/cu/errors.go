package cu

import (
	"errors"
	"runtime"
	"strconv"
)

// Errors that say the machine cannot run CUDA at all, as opposed to a call
// that failed. Test with errors.Is.
var (
	// ErrNoDriver: libcuda could not be loaded (no NVIDIA driver), or the
	// one found is the toolkit's link-time stub.
	ErrNoDriver = errors.New("cuda: libcuda.so.1 not found (needs the NVIDIA driver)")
	// ErrNoDevice: the driver is there but sees no CUDA device.
	ErrNoDevice = errors.New("cuda: no device")
	// ErrNoNVRTC: none of the NVRTC libraries could be loaded.
	ErrNoNVRTC = errors.New("cuda: libnvrtc not found (needs the CUDA toolkit's NVRTC, e.g. libnvrtc.so.12)")
	// ErrUnsupported: this build of the package has no CUDA runtime.
	ErrUnsupported = errors.New("cuda runtime not supported on " + runtime.GOOS + "/" + runtime.GOARCH)
	// ErrNoStreams: the driver lacks the stream, event and graph
	// functions (CUDA older than 11.4).
	ErrNoStreams = errors.New("cuda: the driver has no stream capture or graphs (CUDA 11.4 or later needed)")
	// ErrClosed: the Context was closed.
	ErrClosed = errors.New("cuda: context is closed")
)

// Result is a CUresult, the status every driver API call returns.
type Result int32

// A few CUresult values callers may want to test for (Error.Code).
const (
	Success              Result = 0
	ErrorInvalidValue    Result = 1
	ErrorOutOfMemory     Result = 2
	ErrorNotInitialized  Result = 3
	ErrorStubLibrary     Result = 34
	ErrorNoDevice        Result = 100
	ErrorInvalidDevice   Result = 101
	ErrorInvalidImage    Result = 200
	ErrorInvalidContext  Result = 201
	ErrorInvalidPTX      Result = 218
	ErrorUnsupportedPTX  Result = 222
	ErrorNotFound        Result = 500
	ErrorIllegalAddress  Result = 700
	ErrorLaunchResources Result = 701
	ErrorLaunchFailed    Result = 719
)

// Error is a failed driver (or NVRTC) call: "cuda: <Op>: <Name>[: <Log>]".
type Error struct {
	Op   string // the C function, e.g. "cuModuleLoadDataEx"
	Code Result // the CUresult (or nvrtcResult for an nvrtc* Op)
	Name string // the result's name, e.g. "CUDA_ERROR_INVALID_PTX"
	Log  string // the JIT or NVRTC log, when the call produces one
}

func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = "CUresult(" + strconv.Itoa(int(e.Code)) + ")"
	}
	s := "cuda: " + e.Op + ": " + name
	if e.Log != "" {
		s += ": " + e.Log
	}
	return s
}
