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
	dir := t.TempDir()
	seed := uint64(5)
	for _, file := range models(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".hir")
		t.Run(name, func(t *testing.T) {
			m := load(t, file)
			src, _ := os.ReadFile(file)
			runBoth(t, dir, file, src, driver.Options{Bindings: twoBindings(t, m), RandomSeed: &seed}, "cuda", gpuTol)
		})
	}
}

// tf32Tol is the bar for a cuda artifact built with --precision tf32
// against the cpu target (fp32): |cuda - cpu| <= tf32Tol * max(1, |cpu|).
// Rounding a product's operands to tf32 (10 fraction bits) moves each
// term by up to 2^-10 of its size; the emulated kernels (kernelgen's
// tests, every bundled model at two bindings on llvmpipe) stayed within
// 3.4e-4 of the cpu target, and this bar leaves room for the tensor
// cores' own summation.
const tf32Tol = 5e-3

// TestCUDATF32MatchesCPU is TestCUDAMatchesCPU for artifacts built with
// --precision tf32: products on tensor cores, within tf32Tol.
func TestCUDATF32MatchesCPU(t *testing.T) {
	needCUDA(t)
	dir := t.TempDir()
	seed := uint64(5)
	for _, file := range models(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".hir")
		t.Run(name, func(t *testing.T) {
			m := load(t, file)
			src, _ := os.ReadFile(file)
			runBoth(t, dir, file, src, driver.Options{Bindings: twoBindings(t, m), RandomSeed: &seed, Precision: "tf32"}, "cuda", tf32Tol)
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
