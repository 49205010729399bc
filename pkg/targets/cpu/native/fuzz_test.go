package native

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
)

// FuzzLoad feeds Validate (as code for both architectures) and Load
// arbitrary bytes: they must refuse or accept without panicking, and
// what Load maps must be what Validate accepts. It never calls into
// what it loads. The seeds are good objects of every level, built here
// where clang runs, and hand-made headers.
func FuzzLoad(f *testing.F) {
	for _, l := range Levels() {
		if obj, err := compile(f, "scale-"+l.Name, scaleSrc, levelFlags(l), nil); err == nil {
			f.Add(obj)
			f.Add(obj[:len(obj)/2])
		}
	}
	for _, machine := range []uint16{62, 183} { // EM_X86_64, EM_AARCH64
		h := make([]byte, 64)
		copy(h, "\x7fELF\x02\x01\x01")
		binary.LittleEndian.PutUint16(h[16:], 3) // ET_DYN
		binary.LittleEndian.PutUint16(h[18:], machine)
		binary.LittleEndian.PutUint32(h[20:], 1)
		binary.LittleEndian.PutUint64(h[32:], 64) // e_phoff
		binary.LittleEndian.PutUint16(h[52:], 64)
		binary.LittleEndian.PutUint16(h[54:], 56)
		binary.LittleEndian.PutUint16(h[56:], 1) // one phdr, cut off
		f.Add(h)
		f.Add(append(h, make([]byte, 56)...))
	}
	f.Add([]byte("\x7fELF"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var hostErr error
		for _, goarch := range []string{"amd64", "arm64"} {
			err := Validate(data, goarch)
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate(%s): %v does not wrap ErrInvalid", goarch, err)
			}
			if goarch == runtime.GOARCH {
				hostErr = err
			}
		}
		m, err := Load(data)
		if err != nil {
			if hostErr == nil && runtime.GOOS == "linux" && errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate accepts, Load refuses: %v", err)
			}
			return
		}
		if hostErr != nil {
			t.Fatalf("Load accepts, Validate refuses: %v", hostErr)
		}
		for name, p := range m.funcs {
			if q, err := m.Func(name); err != nil || q != p {
				t.Fatalf("Func(%q) = %#x, %v", name, q, err)
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
