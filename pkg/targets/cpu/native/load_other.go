//go:build !(linux && (amd64 || arm64))

package native

import (
	"fmt"
	"runtime"
)

// Load maps native code on linux/amd64 and linux/arm64; here it returns
// an error saying so (the object is not read).
func Load(obj []byte) (*Module, error) {
	return nil, fmt.Errorf("native code runs on linux/amd64 and linux/arm64, and this is %s/%s", runtime.GOOS, runtime.GOARCH)
}

// Close does nothing: no module loads on this platform.
func (m *Module) Close() error {
	m.mem, m.funcs = nil, nil
	return nil
}
