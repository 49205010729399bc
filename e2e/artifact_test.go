package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/targets"
)

// buildGPT builds the bundled GPT portable, so it has the interpreter's
// steps to forge; native code has its own forged cases
// (TestForgedNativeCode).
func buildGPT(t *testing.T, dir string) string {
	t.Helper()
	return buildNative(t, dir, "m", "portable")
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

// TestRuntimeLinksNoCompiler keeps rlxrun thin: every package of this
// module it depends on is on the runtime's allow-list, and it builds
// without cgo.
func TestRuntimeLinksNoCompiler(t *testing.T) {
	const module = "github.com/rlx-project/rlx/"
	// runtimePackages are the only packages of this module rlxrun may link:
	// the artifact format, the loader and the targets' runtimes. A package
	// that is not here (pkg/hir, pkg/mir, pkg/lower, pkg/fusion,
	// pkg/specialize, pkg/driver, pkg/targets, a codegen, kernelgen, kir or
	// toolchain, pkg/onnx) is compiler-side; adding one here is a decision
	// about what the runtime carries.
	runtimePackages := map[string]bool{
		"cmd/rlxrun":                        true,
		"pkg/loader":                        true,
		"pkg/lir":                           true,
		"pkg/artifact":                      true,
		"pkg/tensor":                        true,
		"pkg/tensor/npy":                    true,
		"pkg/targets/cpu/runtime":           true,
		"pkg/targets/cpu/kernels/gemm":      true,
		"pkg/targets/cpu/kernels/qgemm":     true,
		"pkg/targets/cpu/kernels/conv":      true,
		"pkg/targets/cpu/kernels/attention": true,
		"pkg/targets/cpu/kernels/vec":       true,
		"pkg/targets/cpu/kernels/parallel":  true,
		"pkg/targets/cpu/kernels/data":      true,
		"pkg/targets/cpu/kernels/norm":      true,
		"pkg/targets/cpu/kernels/reduce":    true,
		"pkg/targets/cpu/kernels/winograd":  true,
		"pkg/targets/cpu/tuning":            true, // the kernels' constants: must import no compiler package
		"pkg/targets/cpu/native":            true, // maps and calls compiled CPU code: no compiler, no cgo
		"pkg/targets/gpu/runtime":           true,
		"pkg/targets/gpu/vk":                true,
		"pkg/targets/gpu/cu":                true,
		"internal/atomicfile":               true,
		"internal/bytesize":                 true,
		"internal/buildinfo":                true,
	}
	out, err := exec.Command("go", "list", "-deps", "../cmd/rlxrun").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		seen++
		if !runtimePackages[rel] {
			t.Errorf("rlxrun depends on %s, which is not on the runtime's allow-list: rlxrun must not link compiler packages (if %s is runtime-side, add it to runtimePackages)", pkg, rel)
		}
	}
	if seen == 0 {
		t.Fatalf("go list named no package of %s:\n%s", module, out)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "rlxrun"), "../cmd/rlxrun")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("CGO_ENABLED=0 go build ./cmd/rlxrun: %v\n%s", err, out)
	}
}

// TestRuntimeTable: the runtime's table of targets (pkg/loader) and the
// compiler's (pkg/targets) name the same targets, so every target rlxc
// builds for is one rlxrun either runs or says it cannot.
func TestRuntimeTable(t *testing.T) {
	built := map[string]bool{}
	for _, b := range targets.All() {
		built[b.Name()] = true
	}
	run := map[string]bool{}
	for _, tg := range loader.Targets() {
		run[tg.Name] = true
		if !built[tg.Name] {
			t.Errorf("rlxrun has a runtime entry for %s, which rlxc does not build", tg.Name)
		}
	}
	for name := range built {
		if !run[name] {
			t.Errorf("rlxc builds for %s, which has no entry in loader.Targets", name)
		}
	}
}
