//go:build !linux || !(amd64 || arm64)

package cu

import "time"

// This build has no CUDA runtime: Open and CompileCUDA return
// ErrUnsupported, and there is no way to get a Context, Module or Function
// to call the methods on (they return ErrUnsupported too).

// Context is a CUDA context; see the Linux build.
type Context struct{}

// Module is a loaded CUDA module; see the Linux build.
type Module struct{}

// Function is a kernel in a Module; see the Linux build.
type Function struct{}

// Open returns ErrUnsupported.
func Open() (*Context, error) { return nil, ErrUnsupported }

// CompileCUDA returns ErrUnsupported.
func CompileCUDA(src, name string, options []string) ([]byte, error) {
	return nil, ErrUnsupported
}

func (c *Context) Name() string                                   { return "" }
func (c *Context) ComputeCapability() (major, minor int)          { return 0, 0 }
func (c *Context) Device() int                                    { return 0 }
func (c *Context) TotalMem() uint64                               { return 0 }
func (c *Context) ArchOption() string                             { return "" }
func (c *Context) Close() error                                   { return nil }
func (c *Context) MemInfo() (free, total uint64, err error)       { return 0, 0, ErrUnsupported }
func (c *Context) LoadPTX(ptx []byte) (*Module, error)            { return nil, ErrUnsupported }
func (c *Context) Alloc(bytes int64) (DevicePtr, error)           { return 0, ErrUnsupported }
func (c *Context) Free(p DevicePtr) error                         { return ErrUnsupported }
func (c *Context) CopyToDevice(dst DevicePtr, src []byte) error   { return ErrUnsupported }
func (c *Context) CopyFromDevice(dst []byte, src DevicePtr) error { return ErrUnsupported }
func (c *Context) Memset(dst DevicePtr, bytes int64) error        { return ErrUnsupported }
func (c *Context) Synchronize() error                             { return ErrUnsupported }
func (c *Context) Launch(f *Function, grid, block [3]uint32, sharedBytes uint32, args ...any) error {
	return ErrUnsupported
}
func (m *Module) Function(name string) (*Function, error) { return nil, ErrUnsupported }
func (m *Module) Unload() error                           { return ErrUnsupported }
func (f *Function) Name() string                          { return "" }

// Step is one kernel launch; see the Linux build.
type Step struct {
	F           *Function
	Grid, Block [3]uint32
	SharedBytes uint32
	Args        []any
}

// Stream is a CUDA stream; see the Linux build.
type Stream struct{}

// Graph is a captured CUDA graph; see the Linux build.
type Graph struct{}

func (c *Context) NewStream() (*Stream, error)                   { return nil, ErrUnsupported }
func (s *Stream) Destroy() error                                 { return ErrUnsupported }
func (s *Stream) CopyToDevice(dst DevicePtr, src []byte) error   { return ErrUnsupported }
func (s *Stream) CopyFromDevice(dst []byte, src DevicePtr) error { return ErrUnsupported }
func (s *Stream) Synchronize() error                             { return ErrUnsupported }
func (s *Stream) LaunchOn(steps []Step) error                    { return ErrUnsupported }
func (s *Stream) NewGraph(steps []Step) (*Graph, error)          { return nil, ErrUnsupported }
func (s *Stream) Profile(steps []Step) ([]time.Duration, error)  { return nil, ErrUnsupported }
func (g *Graph) Len() int                                        { return 0 }
func (g *Graph) Launch(s *Stream) error                          { return ErrUnsupported }
func (g *Graph) Destroy() error                                  { return ErrUnsupported }

// StepProfile is a graph of timed launches; see the Linux build.
type StepProfile struct{}

func (s *Stream) NewProfile(steps []Step) (*StepProfile, error) { return nil, ErrUnsupported }
func (p *StepProfile) Run(s *Stream) ([]time.Duration, error)   { return nil, ErrUnsupported }
func (p *StepProfile) Destroy() error                           { return ErrUnsupported }
