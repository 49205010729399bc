//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package safetensors

import (
	"errors"
	"os"
)

// mmapFile is not available here: Open reads the file instead.
func mmapFile(f *os.File, size int64) ([]byte, func([]byte) error, error) {
	return nil, nil, errors.New("memory mapping is not supported on this platform")
}
