package e2e

import (
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
)

// arm64Sysroot is where Debian's libc6-arm64-cross puts the arm64 libc
// that qemu-aarch64 -L gives rlxrun (purego's runtime links libc).
const arm64Sysroot = "/usr/aarch64-linux-gnu"

// qemuRlxrun builds rlxrun for linux/arm64 without cgo and returns a
// command line prefix that runs it under qemu-aarch64. Without qemu,
// the arm64 libc or the native toolchain the test skips, except under
// CI=true (make deps installs them).
func qemuRlxrun(t *testing.T) []string {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("qemu-aarch64"); err != nil {
		missing = "qemu-aarch64 (apt-get install qemu-user)"
	} else if _, err := os.Stat(filepath.Join(arm64Sysroot, "lib", "libc.so.6")); err != nil {
		missing = "the arm64 libc (apt-get install libc6-arm64-cross)"
	} else if err := toolchain.NativeTools(); err != nil {
		missing = err.Error()
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s is missing", missing)
		}
		t.Skipf("arm64 artifacts not tested: %s is missing", missing)
	}
	bin := filepath.Join(t.TempDir(), "rlxrun-arm64")
	build := exec.Command("go", "build", "-o", bin, "../cmd/rlxrun")
	build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=arm64 CGO_ENABLED=0 go build ./cmd/rlxrun: %v\n%s", err, out)
	}
	return []string{"qemu-aarch64", "-L", arm64Sysroot, bin}
}

// runQemu runs the arm64 rlxrun on an artifact with inputs and expected
// outputs (|got - ref| <= atol + rtol·|ref|).
func runQemu(t *testing.T, rlxrun []string, artifact string, inputs, expect map[string]string, atol, rtol float64) {
	t.Helper()
	args := append(append([]string(nil), rlxrun[1:]...), artifact, "--threads", "2",
		"--atol", fmt.Sprint(atol), "--rtol", fmt.Sprint(rtol))
	for name, f := range inputs {
		args = append(args, "--input", name+"=@"+f)
	}
	for name, f := range expect {
		args = append(args, "--expect", name+"=@"+f)
	}
	start := time.Now()
	out, err := exec.Command(rlxrun[0], args...).CombinedOutput()
	if err != nil {
		t.Errorf("qemu-aarch64 rlxrun %s: %v\n%s", filepath.Base(artifact), err, out)
	}
	t.Logf("%s under qemu in %s", filepath.Base(artifact), time.Since(start).Round(time.Millisecond))
}

// TestArm64UnderQemu cross-builds armv8.2-a artifacts (native code from
// clang for aarch64, weights unpacked) on this machine and runs them
// with an arm64 rlxrun under qemu-aarch64: every bundled model at two
// bindings against the reference interpreter, and every case of
// ../shared/models against PyTorch's outputs.
// qemuLeavesOut names the shared models TestArm64UnderQemu does not
// emulate, each with why: emulation runs far slower than the host, and
// make test has a time budget.
var qemuLeavesOut = map[string]string{
	"resnet18": "1.8 GFLOP per image, 20 s of emulation; its kernels (native 3x3 conv, max pool, packed GEMM) run under qemu in the bundled cnn and ops_conv models",
}

func TestArm64UnderQemu(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	if testing.Short() {
		t.Skip("-short")
	}
	rlxrun := qemuRlxrun(t)
	dir := t.TempDir()
	seed := uint64(1)
	t.Run("bundled", func(t *testing.T) {
		for _, file := range models(t) {
			name := strings.TrimSuffix(filepath.Base(file), ".hir")
			t.Run(name, func(t *testing.T) {
				m := load(t, file)
				// One binding: qemu emulates far slower than the host runs, and the
				// host runs both bindings of the same code.
				bindings := twoBindings(t, m)[:1]
				src, _ := os.ReadFile(file)
				arm := filepath.Join(dir, name+".arm64.rlx")
				host := filepath.Join(dir, name+".host.rlx")
				for _, b := range []struct {
					out string
					cpu string
				}{{arm, "armv8.2-a"}, {host, "portable"}} {
					if _, err := build(t, file, src, b.out, driver.Options{Target: "cpu", CPU: []string{b.cpu}, Bindings: bindings, RandomSeed: &seed, Compiler: "test"}); err != nil {
						t.Fatalf("build --cpu %s: %v", b.cpu, err)
					}
				}
				// The host's artifact says the inputs' shapes.
				model, err := loader.Open(host, loader.Options{Threads: 1})
				if err != nil {
					t.Fatal(err)
				}
				defer model.Close()
				ref := newReference(t, file, m, seed)
				for bi, b := range bindings {
					inputs := modelInputs(t, model, b, uint64(bi+1))
					want := ref.run(t, b, inputs)
					ins, exp := map[string]string{}, map[string]string{}
					for n, x := range inputs {
						ins[n] = writeNPY(t, dir, fmt.Sprintf("%s.%d.in.%s", name, bi, n), x)
					}
					for i, v := range ref.g.Outputs {
						exp[v.Name] = writeNPY(t, dir, fmt.Sprintf("%s.%d.out.%d", name, bi, i), want[i])
					}
					// relTol·max(1, |ref|) is within atol + rtol·|ref| at atol = rtol = relTol.
					runQemu(t, rlxrun, arm, ins, exp, relTol, relTol)
				}
			})
		}
	})
	t.Run("shared", func(t *testing.T) {
		man := readManifest(t, sharedModels)
		for name, model := range man.Models {
			if reason, ok := qemuLeavesOut[name]; ok {
				t.Logf("%s not run under qemu: %s", name, reason)
				continue
			}
			t.Run(name, func(t *testing.T) {
				imp := importShared(t, sharedModels, name, model.File)
				// One case per model: qemu emulates far slower than the host runs,
				// and the host run checks every case of the same code.
				c := model.Cases[slices.Sorted(maps.Keys(model.Cases))[0]]
				bindings := []specialize.Binding{c.Binding}
				arm := filepath.Join(dir, name+".shared.arm64.rlx")
				if _, err := build(t, name+".hir", imp.HIR, arm, driver.Options{Target: "cpu", CPU: []string{"armv8.2-a"}, Bindings: bindings, Params: imp.Weights, Compiler: "test"}); err != nil {
					t.Fatalf("build: %v", err)
				}
				{
					ins, exp := map[string]string{}, map[string]string{}
					for n, f := range c.Inputs {
						ins[n] = filepath.Join(sharedModels, f.File)
					}
					maxRef := 0.0
					for n, f := range c.Outputs {
						exp[n] = filepath.Join(sharedModels, f.File)
						ref, err := npy.ReadFile(exp[n])
						if err != nil {
							t.Fatal(err)
						}
						for _, v := range ref.Float64s() {
							maxRef = math.Max(maxRef, math.Abs(v))
						}
					}
					// The conformance bar: max|diff| <= 1e-4·max(1, max|ref|).
					runQemu(t, rlxrun, arm, ins, exp, 1e-4*math.Max(1, maxRef), 0)
				}
			})
		}
	})
}

func writeNPY(t *testing.T, dir, name string, x *tensor.Tensor) string {
	t.Helper()
	path := filepath.Join(dir, name+".npy")
	if err := npy.WriteFile(path, x); err != nil {
		t.Fatal(err)
	}
	return path
}
