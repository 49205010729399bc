package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func writeString(s string) func(f *os.File) error {
	return func(f *os.File) error {
		_, err := io.WriteString(f, s)
		return err
	}
}

// TestWriteReplaces: a new file and a replaced one get the whole content
// and the mode asked for, and no temporary file is left behind.
func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.rlx")
	for _, s := range []string{"first", "second, longer"} {
		if err := Write(p, 0o640, writeString(s)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != s {
			t.Fatalf("read %q, %v; want %q", got, err, s)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", fi.Mode().Perm())
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d entries left in the directory, want 1", len(ents))
	}
}

// TestWriteFailureLeavesPath: a failing fill leaves the old file and no
// temporary one.
func TestWriteFailureLeavesPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.rlx")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(p, 0o644, func(f *os.File) error { return io.ErrUnexpectedEOF })
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("err %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("path now holds %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries left, want 1", len(ents))
	}
}

// TestPerm: a regular file's own mode, else the default.
func TestPerm(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	if got := Perm(p, 0o644); got != 0o644 {
		t.Errorf("new file: %v", got)
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o600)
	if got := Perm(p, 0o644); got != 0o600 {
		t.Errorf("existing file: %v", got)
	}
	if got := Perm(dir, 0o644); got != 0o644 {
		t.Errorf("directory: %v", got)
	}
}
