// Package cu is rlx's CUDA runtime: a small binding to the CUDA driver API
// that loads device code (PTX, or CUDA C through NVRTC), moves bytes between
// host and device memory and launches kernels. It is all rlxrun needs to run
// a CUDA artifact, and nothing more.
//
// # No cgo
//
// libcuda.so.1 is opened at run time with github.com/ebitengine/purego
// (dlopen and a hand-rolled C call), so the package builds with
// CGO_ENABLED=0, needs no CUDA headers or toolkit to build, and a binary that
// uses it still starts on a machine without the NVIDIA driver: [Open] then
// returns [ErrNoDriver]. The calls are made with the symbol names the CUDA
// header maps its public names to (cuMemAlloc_v2 for cuMemAlloc, and so on).
// Only Linux on amd64 and arm64 is wired up; elsewhere [Open] returns
// [ErrUnsupported].
//
// # Threads
//
// A CUDA context is current per OS thread, and the Go scheduler moves a
// goroutine from thread to thread between any two statements. Every method
// that talks to the driver therefore takes the [Context]'s mutex, wires the
// goroutine to its thread (runtime.LockOSThread) and makes the context
// current there before its driver calls, and undoes the first two afterwards.
// The mutex also means one Context is used by one goroutine at a time; it may
// be shared, the calls are serialised.
//
// # NVRTC
//
// Artifacts normally carry PTX, which the driver compiles for the device it
// finds ([Context.LoadPTX]). For an artifact that carries CUDA C source but
// no PTX, [CompileCUDA] compiles it to PTX with NVRTC, which is likewise
// opened at run time (libnvrtc.so.13, .so.12, .so.11.2, .so.11, .so) and is
// optional: without it CompileCUDA returns [ErrNoNVRTC].
package cu
