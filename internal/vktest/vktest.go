// Package vktest shares one Vulkan device among a test binary's tests:
// llvmpipe takes a moment to start, so the device is opened at the first
// test that asks and closed when the binary's tests are done.
package vktest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/internal/testenv"
	"github.com/rlx-project/rlx/pkg/targets/gpu/vk"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// Shared is a test binary's Vulkan device, opened once.
type Shared struct {
	once sync.Once
	dev  *vk.Device
	err  error
}

// Device returns the device, or skips t (fails it under CI=true) where
// glslangValidator or a Vulkan device is missing.
func (s *Shared) Device(t testing.TB) *vk.Device {
	t.Helper()
	if _, err := toolchain.Glslang.Path(); err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
	s.once.Do(func() { s.dev, s.err = vk.Open() })
	if s.err != nil {
		testenv.SkipOrFail(t, "no Vulkan device: %v", s.err)
	}
	return s.dev
}

// Main runs the tests and then closes the device; a TestMain calls it.
func (s *Shared) Main(m *testing.M) {
	code := m.Run()
	if s.dev != nil {
		if err := s.dev.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "vk.Device.Close:", err)
			code = 1
		}
	}
	os.Exit(code)
}
