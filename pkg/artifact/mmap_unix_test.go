//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package artifact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mapped file truncated in place faults when its lost pages are read;
// reads through the package become errors instead of a crash.
func TestTruncatedWhileMapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.rlx")
	sections := []Section{
		{Name: "weights", Align: WeightsAlign, Data: make([]byte, 3*WeightsAlign)},
		{Name: "program", Codec: CodecZstd, Align: WeightsAlign, Data: []byte(strings.Repeat("a program ", 9000))},
	}
	if err := WriteFile(path, sections); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(path, 2*WeightsAlign); err != nil {
		t.Fatal(err)
	}
	_, err = f.Section("program")
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "shrank while it was being read") {
		t.Fatalf("got %v", err)
	}
}
