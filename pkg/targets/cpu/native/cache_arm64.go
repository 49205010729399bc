//go:build linux && arm64

package native

import "unsafe"

// clearCache makes instructions written to [start, end) as data visible
// to instruction fetch: DC CVAU and IC IVAU over each cache line, with
// the barriers between (cache_arm64.s), what __builtin___clear_cache
// does. arm64's caches are not coherent for instructions written as
// data, and Load writes the code it then maps executable.
func clearCache(start, end uintptr)

func syncICache(b []byte) {
	if len(b) > 0 {
		p := uintptr(unsafe.Pointer(&b[0]))
		clearCache(p, p+uintptr(len(b)))
	}
}
