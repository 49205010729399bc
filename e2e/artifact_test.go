package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/loader"
)

func buildGPT(t *testing.T, dir string) string {
	t.Helper()
	file := "../testdata/models/gpt.hir"
	src, _ := os.ReadFile(file)
	seed := uint64(9)
	out := filepath.Join(dir, "m.rlx")
	m := load(t, file)
	if _, err := driver.Build(file, src, out, driver.Options{Target: "cpu", Bindings: twoBindings(t, m), RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorruptArtifact flips a byte in the middle, start and end of every
// section, and truncates the file: loading fails with an error naming the
// section (or header/table), and never panics.
func TestCorruptArtifact(t *testing.T) {
	dir := t.TempDir()
	path := buildGPT(t, dir)
	good, _ := os.ReadFile(path)
	f, err := artifact.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sections := f.Sections()
	f.Close()
	if len(sections) < 3 {
		t.Fatalf("only %d sections", len(sections))
	}
	bad := filepath.Join(dir, "bad.rlx")
	for _, s := range sections {
		if s.Stored == 0 {
			continue
		}
		for _, at := range []int64{s.Offset, s.Offset + s.Stored/2, s.Offset + s.Stored - 1} {
			b := append([]byte(nil), good...)
			b[at] ^= 0x40
			os.WriteFile(bad, b, 0o644)
			_, err := loader.Open(bad, loader.Options{Threads: 1})
			if err == nil || !strings.Contains(err.Error(), `section "`+s.Name+`"`) {
				t.Errorf("flip at %d in section %s: err = %v", at, s.Name, err)
			}
		}
	}
	for _, n := range []int{0, 7, 63, 64, 100, len(good) / 2, len(good) - 1} {
		os.WriteFile(bad, good[:n], 0o644)
		if _, err := loader.Open(bad, loader.Options{Threads: 1}); err == nil {
			t.Errorf("truncated to %d bytes: opened", n)
		}
	}
}

// TestRuntimeLinksNoCompiler keeps rlxrun thin: no compiler package in its
// dependencies.
func TestRuntimeLinksNoCompiler(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../cmd/rlxrun").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"/pkg/hir", "/pkg/lower", "/pkg/fusion", "/pkg/specialize", "/pkg/mir", "/pkg/driver", "/codegen"} {
			if strings.Contains(pkg, "rlx-project/rlx"+banned) {
				t.Errorf("rlxrun depends on compiler package %s", pkg)
			}
		}
	}
}
