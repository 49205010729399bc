//go:build !linux

package loader

// physicalMemory is unknown here: no default limit.
func physicalMemory() int64 { return 0 }
