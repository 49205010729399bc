//go:build !((linux || (freebsd && cgo)) && (amd64 || arm64))

package vk

// This build has no Vulkan runtime: Open returns ErrUnsupported, and the
// types exist so that code using the package compiles everywhere.

// Device is a Vulkan device; on this platform Open never returns one.
type Device struct{}

// Buffer is a storage buffer.
type Buffer struct{}

// Pipeline is a compute pipeline.
type Pipeline struct{}

// Commands is a recorded sequence of dispatches.
type Commands struct{}

// Open returns ErrUnsupported: the Vulkan runtime is wired up only on Linux
// and FreeBSD, amd64 and arm64.
func Open() (*Device, error) { return nil, ErrUnsupported }

// Name is the device's name.
func (d *Device) Name() string { return "" }

// Type is the kind of device.
func (d *Device) Type() string { return "" }

// APIVersion is the Vulkan version the device reports.
func (d *Device) APIVersion() string { return "" }

// Features lists the optional features Open enabled.
func (d *Device) Features() []string { return nil }

// HasFeature reports whether an optional feature is enabled.
func (d *Device) HasFeature(string) bool { return false }

// Limits are the device's compute limits.
func (d *Device) Limits() Limits { return Limits{} }

// Close releases the device.
func (d *Device) Close() error { return nil }

// NewBuffer makes a storage buffer.
func (d *Device) NewBuffer(int64) (*Buffer, error) { return nil, ErrUnsupported }

// NewPipeline makes a compute pipeline.
// The module is still checked, so a bad one gives the same error everywhere.
func (d *Device) NewPipeline(spirv []byte, entry string, numBindings, pushBytes int) (*Pipeline, error) {
	if _, err := checkSPIRV(spirv, entry, numBindings, pushBytes); err != nil {
		return nil, err
	}
	return nil, ErrUnsupported
}

// Record records a sequence of dispatches.
func (d *Device) Record([]Dispatch) (*Commands, error) { return nil, ErrUnsupported }

// Size is the buffer's size in bytes.
func (b *Buffer) Size() int64 { return 0 }

// Write copies bytes into the buffer.
func (b *Buffer) Write(int64, []byte) error { return ErrUnsupported }

// Read copies bytes out of the buffer.
func (b *Buffer) Read(int64, []byte) error { return ErrUnsupported }

// Free releases the buffer.
func (b *Buffer) Free() {}

// Free releases the pipeline.
func (p *Pipeline) Free() {}

// Run submits the commands and waits for them.
func (c *Commands) Run() error { return ErrUnsupported }

// Free releases the commands.
func (c *Commands) Free() {}
