//go:build !(linux && (amd64 || arm64))

package native

import (
	"runtime"
	"unsafe"
)

// Call calls native code on linux/amd64 and linux/arm64. No [Module]
// loads elsewhere, so no function address reaches it here: a call is a
// bug of the caller's.
func Call(fn uintptr, args, bytes unsafe.Pointer, lo, hi int64) int64 {
	panic("native.Call on " + runtime.GOOS + "/" + runtime.GOARCH + ": native code runs on linux/amd64 and linux/arm64")
}
