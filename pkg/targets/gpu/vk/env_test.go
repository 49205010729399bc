//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import (
	"errors"
	"strings"
	"testing"
)

// TestNoDriver points the loader at a driver manifest that does not exist:
// Open must fail with ErrNoDevice and say what to install.
func TestNoDriver(t *testing.T) {
	if _, err := loadLibrary(); err != nil {
		skipOrFail(t, "no Vulkan loader: %v", err)
	}
	t.Setenv("VK_ICD_FILENAMES", "/nonexistent/rlx_icd.json")
	t.Setenv("VK_DRIVER_FILES", "/nonexistent/rlx_icd.json")
	d, err := Open()
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded without a driver")
	}
	if !errors.Is(err, ErrNoDevice) {
		t.Errorf("Open without a driver = %v, want ErrNoDevice", err)
	}
	t.Logf("Open: %v", err)
}

// TestDeviceIndex checks RLX_VULKAN_DEVICE: index 0 opens the first device,
// an index past the last one or a non-number is an error that names the
// variable.
func TestDeviceIndex(t *testing.T) {
	openDevice(t) // skip (or fail under CI) without a device
	t.Setenv("RLX_VULKAN_DEVICE", "0")
	d, err := Open()
	if err != nil {
		t.Fatalf("RLX_VULKAN_DEVICE=0: %v", err)
	}
	d.Close()
	for _, v := range []string{"999", "-1", "gpu"} {
		t.Setenv("RLX_VULKAN_DEVICE", v)
		d, err := Open()
		if err == nil {
			d.Close()
			t.Errorf("RLX_VULKAN_DEVICE=%s: Open succeeded", v)
			continue
		}
		if !strings.Contains(err.Error(), "RLX_VULKAN_DEVICE") {
			t.Errorf("RLX_VULKAN_DEVICE=%s: error %q does not name the variable", v, err)
		}
	}
}
