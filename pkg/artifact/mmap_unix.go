//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package artifact

import (
	"fmt"
	"os"
	"syscall"
)

// Open maps the file at path read-only and verifies it (see OpenBytes). Raw
// sections are then slices of the mapping: the weights are paged in from the
// file as they are used, never copied. Replace an artifact with WriteFile
// (a rename), never by writing into it, while anything may have it open.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close() // the mapping outlives the descriptor
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if size == 0 {
		return openBytes(path, nil, nil) // mmap refuses length 0; report it as empty
	}
	if size < 0 || size > int64(maxInt) {
		return nil, fmt.Errorf("%s: %d bytes is too large to map here", path, size)
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	f, err := openBytes(path, data, func() error { return syscall.Munmap(data) })
	if err != nil {
		syscall.Munmap(data)
		return nil, err
	}
	return f, nil
}
