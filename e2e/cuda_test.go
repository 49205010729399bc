package e2e

// The cuda target on an NVIDIA GPU. CI has none, so these skip there (and
// wherever there is no driver or device) unless RLX_CUDA_REQUIRE=1 says a
// GPU must be found; scripts/gpu-check.sh runs them on a GPU machine.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/targets/gpu/cu"
	gpurt "github.com/rlx-project/rlx/pkg/targets/gpu/runtime"
)

// needCUDA skips without an NVIDIA GPU, unless RLX_CUDA_REQUIRE is set.
func needCUDA(t *testing.T) {
	t.Helper()
	d, err := gpurt.OpenCUDA()
	if err != nil {
		absent := errors.Is(err, cu.ErrNoDriver) || errors.Is(err, cu.ErrNoDevice) || errors.Is(err, cu.ErrUnsupported)
		if !absent || os.Getenv("RLX_CUDA_REQUIRE") != "" {
			t.Fatalf("no CUDA device: %v", err)
		}
		t.Skipf("needs hardware: no CUDA device: %v", err)
	}
	t.Logf("%s", d.Name())
	d.Close()
}

// TestCUDAMatchesCPU runs every bundled model's cuda artifact at two
// bindings against the cpu target, with the launches replayed as a CUDA
// graph (the default).
func TestCUDAMatchesCPU(t *testing.T) {
	needCUDA(t)
	cudaModelsMatchCPU(t, "", gpuTol)
}

// cudaModelsMatchCPU builds every bundled model for cuda at precision
// ("" for fp32) and for cpu, at two bindings, and compares them at tol.
func cudaModelsMatchCPU(t *testing.T, precision string, tol float64) {
	dir := t.TempDir()
	seed := uint64(5)
	for _, file := range models(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".hir")
		t.Run(name, func(t *testing.T) {
			m := load(t, file)
			src, _ := os.ReadFile(file)
			runBoth(t, dir, file, src, driver.Options{Bindings: twoBindings(t, m), RandomSeed: &seed, Precision: precision}, "cuda", tol)
		})
	}
}

// precisionTol is the bar for cuda artifacts built with --precision tf32
// or bf16, against the cpu target (|cuda - cpu| <= tol·max(1, |cpu|) for
// every element) and against PyTorch (max|diff| <= tol·max(1, max|ref|)).
// Rounding a product's operands to tf32 (10 fraction bits) or bf16 (7)
// moves each term by up to 2^-11 or 2^-8 of its size. The kernels with
// each warp's product emulated (the same rounding, on llvmpipe) were off
// PyTorch by at most 4.3e-3 (tf32) and 3.0e-2 (bf16), both on
// MobileNetV2's logits (ResNet-18 3.5e-4 and 2.7e-3, GPT 2.9e-4 and
// 2.3e-3, the encoder 1.2e-4 and 1.0e-3; docs/gpu.md); the bars leave
// room for the tensor cores' own summation.
var precisionTol = map[string]float64{"tf32": 1e-2, "bf16": 6e-2}

// TestCUDAPrecisionMatchesCPU is TestCUDAMatchesCPU for artifacts built
// with --precision tf32 and bf16: products on tensor cores, within
// precisionTol.
func TestCUDAPrecisionMatchesCPU(t *testing.T) {
	needCUDA(t)
	for _, precision := range []string{"tf32", "bf16"} {
		t.Run(precision, func(t *testing.T) { cudaModelsMatchCPU(t, precision, precisionTol[precision]) })
	}
}

// TestONNXConformanceCUDAPrecision is TestONNXConformanceCUDA for tf32
// and bf16 artifacts, at precisionTol against PyTorch and the cpu target.
func TestONNXConformanceCUDAPrecision(t *testing.T) {
	needCUDA(t)
	dir := sharedModels
	if d := os.Getenv("RLX_SHARED_MODELS"); d != "" {
		dir = d
	}
	for _, precision := range []string{"tf32", "bf16"} {
		t.Run(precision, func(t *testing.T) {
			conformanceOf(t, dir, "cuda", nil, precision, func(string) bool { return true })
		})
	}
}

// TestCUDALaunchModes runs one model three ways, which must agree
// exactly (the same kernels on the same data): replayed as a graph,
// launched one by one (RLX_CUDA_GRAPH=0), and profiled, where each step
// must get a time.
func TestCUDALaunchModes(t *testing.T) {
	needCUDA(t)
	file := "../testdata/models/cnn.hir"
	m := load(t, file)
	src, _ := os.ReadFile(file)
	seed := uint64(3)
	b := twoBindings(t, m)[:1]
	out := filepath.Join(t.TempDir(), "cnn.cuda.rlx")
	if _, err := driver.Build(file, src, out, driver.Options{Target: "cuda", Bindings: b, RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	run := func(graphs string, profile bool) []loader.Named {
		t.Setenv("RLX_CUDA_GRAPH", graphs)
		lm, err := loader.Open(out, loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer lm.Close()
		inputs := modelInputs(t, lm, b[0], 17)
		if !profile {
			got, err := lm.Run(inputs)
			if err != nil {
				t.Fatalf("RLX_CUDA_GRAPH=%s: %v", graphs, err)
			}
			return got
		}
		if !lm.ProfilesSteps() {
			t.Fatal("a cuda model does not time its steps")
		}
		steps := map[int]bool{}
		got, err := lm.Profile(nil, inputs, func(i int, s *lir.Step, d loader.StepTime) {
			if steps[i] || d.Wall < 0 || d.Busy != 0 || s == nil {
				t.Errorf("step %d: timed twice, or %+v", i, d)
			}
			steps[i] = true
		})
		if err != nil {
			t.Fatalf("profile: %v", err)
		}
		_, progs := artifactPrograms(t, out)
		if len(steps) != len(progs[0].Steps) {
			t.Errorf("profile timed %d of %d steps", len(steps), len(progs[0].Steps))
		}
		return got
	}
	graph, launches, profiled := run("1", false), run("0", false), run("1", true)
	for i := range graph {
		if msg := compareTol(launches[i].Tensor, graph[i].Tensor, 0); msg != "" {
			t.Errorf("output %s, launches against the graph: %s", graph[i].Name, msg)
		}
		if msg := compareTol(profiled[i].Tensor, graph[i].Tensor, 0); msg != "" {
			t.Errorf("output %s, profiled against the graph: %s", graph[i].Name, msg)
		}
	}
}

// TestONNXConformanceCUDA runs the shared models' cases on cuda against
// PyTorch's outputs and the cpu target's. RLX_SHARED_MODELS names another
// directory in the same layout (on a GPU machine without ../shared, one
// that the shared models' export script wrote there).
func TestONNXConformanceCUDA(t *testing.T) {
	needCUDA(t)
	dir := sharedModels
	if d := os.Getenv("RLX_SHARED_MODELS"); d != "" {
		dir = d
	}
	conformance(t, dir, "cuda", nil)
}
