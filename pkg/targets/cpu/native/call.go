//go:build linux && (amd64 || arm64)

package native

import (
	"unsafe"

	"github.com/ebitengine/purego"
)

// Call calls the native function at fn (from [Module.Func]), whose C
// signature is
//
//	int64_t fn(void *const *args, const int64_t *bytes, int64_t lo, int64_t hi);
//
// on the calling goroutine, and returns what it returns. args points at
// the kernel's array of pointers and bytes at the sizes of the buffers
// they point to (a kernel refuses, with a non-zero result, buffers
// smaller than it was compiled for, so a program inconsistent with its
// code cannot make it write out of bounds); lo and hi are the range of
// the work it does in this call, so goroutines may call one kernel at
// once on disjoint ranges.
//
// # Why this is safe with Go's garbage collector
//
// purego.SyscallN runs fn through the runtime's cgo call path
// (runtime.cgocall) on the thread's system stack, as a cgo call does;
// the goroutine counts as in a system call meanwhile, so the scheduler
// and the GC go on without it and never scan or move its stack. Heap
// objects never move in Go. args and bytes must point at memory outside the Go
// stack: Go heap memory (SyscallN is //go:uintptrescapes, so the
// compiler moves what args points at to the heap, and keeps it alive
// for the call) or mapped memory, holding the addresses of heap or
// mapped buffers. The collector does not follow those addresses through
// a uintptr, so the caller keeps the buffers reachable until Call
// returns (in Go variables, or with runtime.KeepAlive). The kernels are
// freestanding: they call nothing, so nothing calls back into Go, and
// they touch no thread state of the C library.
//
// The rlxrun binary imports purego, which without cgo brings its
// fakecgo runtime: the threads Go starts are then created the C way,
// with a C-sized system stack for the kernel to run on.
//
// # What a call costs
//
// One call is the cgo transition (entersyscall and exitsyscall, a
// switch to the system stack), purego's argument block from a
// sync.Pool, one 24-byte allocation (the variadic argument slice, which
// //go:uintptrescapes moves to the heap) and the kernel's own prologue:
// BenchmarkCall measures about 0.1 to 0.125 µs for an empty kernel on
// the development VM (Zen 4, with and without cgo). Kernels take a range
// so that this is paid once per chunk of work, not per element.
func Call(fn uintptr, args, bytes unsafe.Pointer, lo, hi int64) int64 {
	r, _, _ := purego.SyscallN(fn, uintptr(args), uintptr(bytes), uintptr(lo), uintptr(hi))
	return int64(r)
}
