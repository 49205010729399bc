//go:build linux && amd64

package native

// syncICache does nothing on amd64: its instruction fetch sees stores
// to memory (the caches are coherent for self-modifying code).
func syncICache([]byte) {}
