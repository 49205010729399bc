package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
)

// sharedModels is where the conformance models live: ../shared/models from
// the repository root.
const sharedModels = "../../shared/models"

type manifest struct {
	Models map[string]struct {
		File  string `json:"file"`
		Cases map[string]struct {
			Binding map[string]int64 `json:"binding"`
			Inputs  map[string]struct {
				File string `json:"file"`
			} `json:"inputs"`
			Outputs map[string]struct {
				File string `json:"file"`
			} `json:"outputs"`
		} `json:"cases"`
	} `json:"models"`
}

// readManifest reads dir/manifest.json (dir is sharedModels or one of its
// subdirectories): a missing one skips, or fails under CI=true.
func readManifest(t *testing.T, dir string) *manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must have ../shared/models: %v", err)
		}
		t.Skipf("no conformance models: %v", err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// TestONNXConformance imports every model in ../shared/models, builds it for
// each case's binding, runs the case's inputs and compares with PyTorch's
// outputs: max|diff| <= 1e-4 * max(1, max|ref|).
// It does so for each of the cpu target's builds (cpuConfigs).
func TestONNXConformance(t *testing.T) {
	for _, cpu := range cpuConfigs(t) {
		t.Run(strings.Join(cpu, "+"), func(t *testing.T) { conformance(t, sharedModels, "cpu", cpu) })
	}
}

// TestONNXConformanceVulkan does the same with vulkan artifacts on the
// machine's Vulkan device (llvmpipe in CI), and also compares each output
// with the cpu target's within 1e-4.
func TestONNXConformanceVulkan(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	needTool(t, "glslangValidator")
	needVulkan(t)
	conformance(t, sharedModels, "vulkan", nil)
}

// conformance runs every case of dir/manifest.json on target; file names
// in the manifest are relative to dir.
func conformance(t *testing.T, dir, target string, cpuLevels []string) {
	conformanceOf(t, dir, target, cpuLevels, "", func(string) bool { return true })
}

// conformanceOf is conformance over the models of the manifest that keep
// takes, the target's artifacts built at precision ("" for fp32; tf32 and
// bf16 are held to precisionTol instead of 1e-4).
func conformanceOf(t *testing.T, dir, target string, cpuLevels []string, precision string, keep func(name string) bool) {
	bar, cpuBar := 1e-4, gpuTol
	if precision != "" {
		bar, cpuBar = precisionTol[precision], precisionTol[precision]
	}
	man := readManifest(t, dir)
	tmp := t.TempDir()
	for name, model := range man.Models {
		if !keep(name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if want, ok := notImportable(dir, name); ok {
				importFails(t, dir, model.File, want)
				return
			}
			imp := importShared(t, dir, name, model.File)
			var bindings []specialize.Binding
			var cases []string
			for cname := range model.Cases {
				cases = append(cases, cname)
			}
			sort.Strings(cases) // one order: the same build as another test's, a hit in build's cache
			for _, cname := range cases {
				bindings = append(bindings, model.Cases[cname].Binding)
			}
			open := func(target string) *loader.Model {
				out := filepath.Join(tmp, name+"."+target+".rlx")
				var levels []string
				prec := precision
				if target == "cpu" {
					levels, prec = cpuLevels, ""
				}
				if _, err := build(t, name+".hir", imp.HIR, out, driver.Options{Target: target, CPU: levels, Precision: prec, Bindings: bindings, Params: imp.Weights, Compiler: "test"}); err != nil {
					t.Fatalf("build %s: %v", target, err)
				}
				m, err := loader.Open(out, loader.Options{Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			m := open(target)
			defer m.Close()
			var cpu *loader.Model
			if target != "cpu" {
				cpu = open("cpu")
				defer cpu.Close()
			}
			for _, cname := range cases {
				c := model.Cases[cname]
				inputs := map[string]*tensor.Tensor{}
				for in, f := range c.Inputs {
					var err error
					if inputs[in], err = npy.ReadFile(filepath.Join(dir, f.File)); err != nil {
						t.Fatal(err)
					}
				}
				got, err := m.Run(inputs)
				if err != nil {
					t.Fatalf("case %s: %v", cname, err)
				}
				var want []loader.Named
				if cpu != nil {
					if want, err = cpu.Run(inputs); err != nil {
						t.Fatalf("case %s: cpu: %v", cname, err)
					}
				}
				for i, o := range got {
					f, ok := c.Outputs[o.Name]
					if !ok {
						t.Fatalf("case %s: no reference for output %s", cname, o.Name)
					}
					ref, err := npy.ReadFile(filepath.Join(dir, f.File))
					if err != nil {
						t.Fatal(err)
					}
					diff, msg := conformTol(o.Tensor, ref, bar)
					if msg != "" {
						t.Errorf("case %s, output %s: %s", cname, o.Name, msg)
					}
					t.Logf("case %s, output %s: max|diff| %.3g against PyTorch", cname, o.Name, diff)
					if want != nil {
						if msg := compareTol(o.Tensor, want[i].Tensor, cpuBar); msg != "" {
							t.Errorf("case %s, output %s against the cpu target: %s", cname, o.Name, msg)
						}
					}
				}
			}
		})
	}
}

// importShared imports one model of ../shared/models (dir is sharedModels
// or one of its subdirectories).
func importShared(t *testing.T, dir, name, file string) *onnx.Result {
	t.Helper()
	pb, err := onnxpb.DecodeFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	imp, err := onnx.Import(pb, onnx.Options{Module: name, Source: file})
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

// conformTol applies a conformance bar, max|diff| <= bar·max(1,
// max|ref|) (the project's is 1e-4); it returns max|diff| and what fails
// ("" when the output conforms).
func conformTol(got, ref *tensor.Tensor, bar float64) (float64, string) {
	if fmt.Sprint(got.Shape) != fmt.Sprint(ref.Shape) {
		return math.Inf(1), fmt.Sprintf("shape %v, reference %v", got.Shape, ref.Shape)
	}
	g, r := asFloat(got), asFloat(ref)
	maxRef, maxDiff, at := 0.0, 0.0, 0
	for i := range r {
		maxRef = math.Max(maxRef, math.Abs(r[i]))
		if d := math.Abs(g[i] - r[i]); d > maxDiff || math.IsNaN(d) {
			maxDiff, at = d, i
		}
	}
	if tol := bar * math.Max(1, maxRef); !(maxDiff <= tol) {
		return maxDiff, fmt.Sprintf("max|diff| %.3g at element %d (got %.7g, want %.7g) > %.3g", maxDiff, at, g[at], r[at], tol)
	}
	return maxDiff, ""
}
