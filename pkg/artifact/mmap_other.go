//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package artifact

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// Open reads the file at path and verifies it (see OpenBytes). This platform
// has no mmap here, so the file is read whole, into a buffer that starts on a
// WeightsAlign boundary so that aligned sections stay aligned in memory.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if size < 0 || size > int64(maxInt-WeightsAlign) {
		return nil, fmt.Errorf("%s: %d bytes is too large to load here", path, size)
	}
	buf := make([]byte, int(size)+WeightsAlign)
	skip := 0
	if len(buf) > 0 {
		if r := int(uintptr(unsafe.Pointer(&buf[0])) % WeightsAlign); r != 0 {
			skip = WeightsAlign - r
		}
	}
	data := buf[skip : skip+int(size) : skip+int(size)]
	if _, err := io.ReadFull(fd, data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return openBytes(path, data, nil)
}
