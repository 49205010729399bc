package cu

import (
	"bytes"
	"fmt"
	"runtime"
	"unsafe"
)

// DevicePtr is an address in device memory (a CUdeviceptr).
type DevicePtr uint64

// Add returns p advanced by off bytes.
func (p DevicePtr) Add(off int64) DevicePtr { return p + DevicePtr(off) }

// packArgs builds the kernelParams block cuLaunchKernel takes: one void*
// per kernel parameter, each pointing at a copy of that parameter's value.
// The driver reads the values through the pointers during the launch call
// (it copies them into the launch, so they need not outlive the call); the
// copies live in one Go slice, which pin pins together with the pointer
// array itself, so both stay put and alive while C reads them and the
// caller must keep pin until the launch has returned. A kernel parameter's
// width must be exact, so each argument is one of DevicePtr (a pointer
// parameter, 8 bytes), int32 and uint32 (4), int64 and uint64 (8), float32
// (4) or float64 (8); anything else, int and uint included, is an error.
// No arguments give a nil block (a NULL kernelParams).
func packArgs(pin *runtime.Pinner, args []any) ([]unsafe.Pointer, error) {
	if len(args) == 0 {
		return nil, nil
	}
	vals := make([]uint64, len(args)) // one 8-byte, 8-aligned slot per value
	params := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		slot := unsafe.Pointer(&vals[i])
		// Writing through a typed pointer puts a 4-byte value in the slot's
		// first 4 bytes, which is where the driver reads it, whatever the
		// byte order.
		switch v := a.(type) {
		case DevicePtr:
			*(*uint64)(slot) = uint64(v)
		case int32:
			*(*int32)(slot) = v
		case uint32:
			*(*uint32)(slot) = v
		case int64:
			*(*int64)(slot) = v
		case uint64:
			*(*uint64)(slot) = v
		case float32:
			*(*float32)(slot) = v
		case float64:
			*(*float64)(slot) = v
		case int, uint:
			return nil, fmt.Errorf("cuda: kernel argument %d is %T: say int32 or int64 (uint32 or uint64), a parameter's width must be explicit", i, a)
		default:
			return nil, fmt.Errorf("cuda: kernel argument %d has unsupported type %T (want DevicePtr, int32, uint32, int64, uint64, float32 or float64)", i, a)
		}
		params[i] = slot
	}
	pin.Pin(&vals[0])
	pin.Pin(&params[0])
	return params, nil
}

// cString returns s as a NUL-terminated byte slice.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// cStringAt reads the NUL-terminated C string at p (nil gives "").
func cStringAt(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// logText is a log buffer a C function wrote: its text up to the first NUL
// (at most n bytes when n > 0), with surrounding white space trimmed.
func logText(buf []byte, n int) string {
	if n > 0 && n < len(buf) {
		buf = buf[:n]
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(bytes.TrimSpace(buf))
}
