package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/loader"
	gpurt "github.com/rlx-project/rlx/pkg/targets/gpu/runtime"
)

// needTool skips when a build tool is absent, except in CI, which installs
// it (.ci/run): there a missing tool is a failure.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed; CI installs it (.ci/run)", name)
		}
		t.Skipf("%s is not installed", name)
	}
}

// artifactPrograms reads an artifact's manifest and every variant program.
func artifactPrograms(t *testing.T, path string) (artifact.Manifest, []lir.Program) {
	t.Helper()
	f, err := artifact.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := f.Section("manifest")
	if err != nil {
		t.Fatal(err)
	}
	var man artifact.Manifest
	if err := artifact.UnmarshalManifest(raw, &man); err != nil {
		t.Fatal(err)
	}
	var progs []lir.Program
	for _, v := range man.Variants {
		raw, err := f.Section(v.Section)
		if err != nil {
			t.Fatal(err)
		}
		var p lir.Program
		if err := artifact.UnmarshalManifest(raw, &p); err != nil {
			t.Fatal(err)
		}
		progs = append(progs, p)
	}
	return man, progs
}

// TestGPUBuilds builds every bundled model for each GPU target and checks
// that every kernel was compiled where the target compiles (SPIR-V for
// vulkan, PTX for cuda) and that every launch names a kernel.
func TestGPUBuilds(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	dir := t.TempDir()
	seed := uint64(1)
	for _, target := range []string{"vulkan", "cuda", "metal"} {
		t.Run(target, func(t *testing.T) {
			switch target {
			case "vulkan":
				needTool(t, "glslangValidator")
				if d, err := gpurt.OpenVulkan(); err == nil {
					// TestVulkanMatchesCPU builds the same models for vulkan
					// and checks its artifacts the same way (and runs them);
					// building them twice cost make test half a minute.
					d.Close()
					t.Log("a Vulkan device is present: TestVulkanMatchesCPU checks the vulkan builds")
					return
				}
			case "cuda":
				needTool(t, "clang")
			}
			for _, file := range models(t) {
				name := strings.TrimSuffix(filepath.Base(file), ".hir")
				t.Run(name, func(t *testing.T) {
					m := load(t, file)
					src, _ := os.ReadFile(file)
					out := filepath.Join(dir, name+"."+target+".rlx")
					if _, err := build(t, file, src, out, driver.Options{Target: target, Bindings: twoBindings(t, m), RandomSeed: &seed, Compiler: "test"}); err != nil {
						t.Fatalf("build: %v", err)
					}
					checkGPUArtifact(t, out, target)
				})
			}
		})
	}
}

// checkGPUArtifact checks a GPU artifact's programs: its provenance names
// target, every kernel was compiled where the target compiles (SPIR-V for
// vulkan, PTX for cuda), and every step is a dispatch of one of them.
func checkGPUArtifact(t *testing.T, out, target string) {
	t.Helper()
	man, progs := artifactPrograms(t, out)
	if man.Provenance.Target != target {
		t.Errorf("provenance target %q", man.Provenance.Target)
	}
	for _, p := range progs {
		if len(p.Kernels) == 0 {
			t.Fatalf("no kernels")
		}
		for _, k := range p.Kernels {
			want := map[string]string{"vulkan": "spirv", "cuda": "ptx", "metal": ""}[target]
			if _, err := exec.LookPath("clang"); err != nil && target == "cuda" && os.Getenv("CI") != "true" {
				want = "" // CUDA C, for NVRTC at load (a GPU machine without clang)
			}
			if k.BinaryKind != want || (want != "" && len(k.Binary) == 0) {
				t.Errorf("kernel %s: binary %q of %d bytes, want %q", k.Name, k.BinaryKind, len(k.Binary), want)
			}
		}
		for _, s := range p.Steps {
			if d, ok := s.Op.(*lir.Dispatch); !ok || d.Kernel < 0 || d.Kernel >= len(p.Kernels) {
				t.Errorf("step %s: %s, want a dispatch of one of %d kernels", s.Src, lir.FormatOp(s.Op), len(p.Kernels))
			}
		}
	}
}

// gpuTol is the bar for a GPU target against the cpu target:
// |gpu - cpu| <= gpuTol * max(1, |cpu|) for every element. GPU kernels
// compute in f32 with their own summation order and math functions.
const gpuTol = 1e-4

// openVulkan skips when this machine has no Vulkan device, except in CI,
// which installs llvmpipe (.ci/run).
func needVulkan(t *testing.T) {
	t.Helper()
	d, err := gpurt.OpenVulkan()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Vulkan device: %v (CI installs libvulkan1 and mesa-vulkan-drivers)", err)
		}
		t.Skipf("needs hardware: no Vulkan device: %v", err)
	}
	d.Close()
}

// runBoth builds file for cpu and target with the same weights and
// bindings and compares the target's outputs with the cpu's on random
// inputs.
func runBoth(t *testing.T, dir, file string, src []byte, opts driver.Options, target string, tol float64) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	cpuOut := filepath.Join(dir, name+".cpu.rlx")
	gpuOut := filepath.Join(dir, name+"."+target+".rlx")
	opts.Compiler = "test"
	cpuOpts := opts
	cpuOpts.Target = "cpu"
	cpuOpts.Precision = "" // the reference computes in fp32 whatever the target's precision
	if _, err := build(t, file, src, cpuOut, cpuOpts); err != nil {
		t.Fatalf("cpu build: %v", err)
	}
	opts.Target = target
	if _, err := build(t, file, src, gpuOut, opts); err != nil {
		t.Fatalf("%s build: %v", target, err)
	}
	checkGPUArtifact(t, gpuOut, target)
	cm, err := loader.Open(cpuOut, loader.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	gm, err := loader.Open(gpuOut, loader.Options{})
	if err != nil {
		t.Fatalf("open %s artifact: %v", target, err)
	}
	defer gm.Close()
	for bi, b := range opts.Bindings {
		inputs := modelInputs(t, cm, b, uint64(bi+11))
		want, err := cm.Run(inputs)
		if err != nil {
			t.Fatalf("binding %s: cpu run: %v", b, err)
		}
		got, err := gm.Run(inputs)
		if err != nil {
			t.Fatalf("binding %s: %s run: %v", b, target, err)
		}
		for i := range want {
			if msg := compareTol(got[i].Tensor, want[i].Tensor, tol); msg != "" {
				t.Errorf("binding %s, output %s: %s", b, got[i].Name, msg)
			}
		}
	}
}

// TestVulkanMatchesCPU runs every bundled model's vulkan artifact on the
// machine's Vulkan device (llvmpipe in CI) at two bindings against the cpu
// target.
func TestVulkanMatchesCPU(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	needTool(t, "glslangValidator")
	needVulkan(t)
	dir := t.TempDir()
	seed := uint64(1) // TestModelsMatchReference's weights: its build at the default level is this cpu build
	for _, file := range models(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".hir")
		t.Run(name, func(t *testing.T) {
			m := load(t, file)
			src, _ := os.ReadFile(file)
			runBoth(t, dir, file, src, driver.Options{Bindings: twoBindings(t, m), RandomSeed: &seed}, "vulkan", gpuTol)
		})
	}
}

var updateGolden = flag.Bool("update", false, "rewrite the golden files of TestMetalGolden")

// TestMetalGolden prints every metal kernel of every bundled model (at its
// first test binding) and compares the sources with testdata/golden/metal:
// metal has no runtime here, so its printed kernels are pinned, and any
// change to them is reviewed in the diff. `go test ./e2e -run
// TestMetalGolden -update` rewrites them. Where clang++ is installed, each
// kernel is also syntax-checked as C++ against a stub of the Metal library.
func TestMetalGolden(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	dir := t.TempDir()
	seed := uint64(1)
	var clang string
	if p, err := exec.LookPath("clang++"); err == nil {
		clang = p
	} else if os.Getenv("CI") == "true" {
		t.Fatal("clang++ is not installed; CI installs it")
	}
	for _, file := range models(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".hir")
		t.Run(name, func(t *testing.T) {
			m := load(t, file)
			src, _ := os.ReadFile(file)
			out := filepath.Join(dir, name+".metal.rlx")
			b := twoBindings(t, m)[:1]
			if _, err := build(t, file, src, out, driver.Options{Target: "metal", Bindings: b, RandomSeed: &seed, Compiler: "test"}); err != nil {
				t.Fatalf("build: %v", err)
			}
			_, progs := artifactPrograms(t, out)
			var text strings.Builder
			fmt.Fprintf(&text, "// %s at %s: %d kernels (generated by TestMetalGolden; do not edit)\n", name, b[0], len(progs[0].Kernels))
			for _, k := range progs[0].Kernels {
				if k.Lang != "msl" || k.Entry != k.Name || !strings.Contains(k.Source, "kernel void "+k.Name+"(") {
					t.Errorf("kernel %s: lang %q, entry %q", k.Name, k.Lang, k.Entry)
				}
				text.WriteString("\n" + k.Source)
				if clang != "" {
					checkMSLSyntax(t, clang, k.Name, k.Source)
				}
			}
			golden := filepath.Join("..", "testdata", "golden", "metal", name+".metal")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(text.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := text.String(); got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := 0; i < len(gl) || i < len(wl); i++ {
					if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
						g, w := "(end)", "(end)"
						if i < len(gl) {
							g = gl[i]
						}
						if i < len(wl) {
							w = wl[i]
						}
						t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run with -update if the change is intended)", golden, i+1, g, w)
					}
				}
			}
		})
	}
}

// checkMSLSyntax compiles one kernel as C++17 against the Metal stub
// header (pkg/targets/gpu/kir/testdata/metal_stub.h): this checks syntax
// and names, not Metal's semantics.
func checkMSLSyntax(t *testing.T, clang, name, src string) {
	t.Helper()
	stub, err := filepath.Abs("../pkg/targets/gpu/kir/testdata/metal_stub.h")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stub); err != nil {
		t.Fatalf("metal stub: %v", err)
	}
	src = strings.Replace(src, "#include <metal_stdlib>", "", 1)
	cmd := exec.Command(clang, "-std=c++17", "-fsyntax-only", "-Werror", "-Wno-unknown-attributes", "-x", "c++", "-include", stub, "-")
	cmd.Stdin = strings.NewReader(src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("kernel %s: MSL syntax check: %v\n%s", name, err, out)
	}
}
