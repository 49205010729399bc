//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package safetensors

import (
	"errors"
	"os"
	"syscall"
)

// mmapFile maps size bytes of f read-only.
func mmapFile(f *os.File, size int64) ([]byte, func([]byte) error, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, errors.New("cannot map a file of this size")
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, syscall.Munmap, nil
}
