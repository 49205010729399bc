package cu

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestPackArgs checks the kernelParams block Launch hands cuLaunchKernel:
// one pointer per argument, each at a value of the argument's exact width.
func TestPackArgs(t *testing.T) {
	var pin runtime.Pinner
	defer pin.Unpin()
	args := []any{
		DevicePtr(0x7f0012345678),
		int32(-7),
		uint32(0xdeadbeef),
		int64(-1 << 40),
		uint64(1<<63 + 5),
		float32(1.5),
		float64(math.Pi),
	}
	p, err := packArgs(&pin, args)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != len(args) {
		t.Fatalf("%d params for %d args", len(p), len(args))
	}
	for i, q := range p {
		if q == nil {
			t.Fatalf("param %d is nil", i)
		}
		if uintptr(q)%8 != 0 {
			t.Errorf("param %d at %p is not 8-aligned", i, q)
		}
	}
	if got := *(*uint64)(p[0]); got != 0x7f0012345678 {
		t.Errorf("DevicePtr: %#x", got)
	}
	if got := *(*int32)(p[1]); got != -7 {
		t.Errorf("int32: %d", got)
	}
	if got := *(*uint32)(p[2]); got != 0xdeadbeef {
		t.Errorf("uint32: %#x", got)
	}
	if got := *(*int64)(p[3]); got != -1<<40 {
		t.Errorf("int64: %d", got)
	}
	if got := *(*uint64)(p[4]); got != 1<<63+5 {
		t.Errorf("uint64: %d", got)
	}
	if got := *(*float32)(p[5]); got != 1.5 {
		t.Errorf("float32: %v", got)
	}
	if got := *(*float64)(p[6]); got != math.Pi {
		t.Errorf("float64: %v", got)
	}
	// A 4-byte value is the first 4 bytes the driver reads, as the bytes
	// of the value itself: the driver copies exactly the parameter's size.
	want := math.Float32bits(1.5)
	if got := *(*[4]byte)(p[5]); got != *(*[4]byte)(unsafe.Pointer(&want)) {
		t.Errorf("float32 bytes % x", got)
	}
	// Distinct slots: writing one value must not show through another.
	seen := map[unsafe.Pointer]bool{}
	for _, q := range p {
		if seen[q] {
			t.Fatalf("two params share %p", q)
		}
		seen[q] = true
	}
}

func TestPackArgsEmpty(t *testing.T) {
	var pin runtime.Pinner
	defer pin.Unpin()
	p, err := packArgs(&pin, nil)
	if err != nil || p != nil {
		t.Fatalf("no args: %v, %v (want nil block: NULL kernelParams)", p, err)
	}
}

func TestPackArgsRejects(t *testing.T) {
	for _, a := range []any{7, uint(7), "x", nil, []byte{1}, uintptr(1), int16(1), &struct{}{}} {
		var pin runtime.Pinner
		_, err := packArgs(&pin, []any{DevicePtr(1), a})
		pin.Unpin()
		if err == nil {
			t.Errorf("%T accepted", a)
			continue
		}
		if !strings.Contains(err.Error(), "argument 1") {
			t.Errorf("%T: error does not say which argument: %v", a, err)
		}
	}
}

func TestCStrings(t *testing.T) {
	b := cString("vadd")
	if string(b) != "vadd\x00" {
		t.Fatalf("cString: %q", b)
	}
	if got := cStringAt(&b[0]); got != "vadd" {
		t.Fatalf("cStringAt: %q", got)
	}
	if got := cStringAt(nil); got != "" {
		t.Fatalf("cStringAt(nil): %q", got)
	}
	log := make([]byte, 64)
	copy(log, " line 1; error : bad\n\x00junk")
	if got := logText(log, 0); got != "line 1; error : bad" {
		t.Fatalf("logText: %q", got)
	}
	if got := logText(log, 5); got != "line" {
		t.Fatalf("logText(5): %q", got)
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Op: "cuModuleLoadDataEx", Code: ErrorInvalidPTX, Name: "CUDA_ERROR_INVALID_PTX", Log: "ptxas fatal"}
	if got, want := e.Error(), "cuda: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX: ptxas fatal"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	e = &Error{Op: "cuInit", Code: 12345}
	if got, want := e.Error(), "cuda: cuInit: CUresult(12345)"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}
