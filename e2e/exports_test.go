package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
)

// exportModels are tiny models PyTorch 1.13 exported (testdata/onnx, made
// by scripts/export_onnx_tests.py): the operators and spellings real
// exports use (ConvTranspose, Resize, Trilu, InstanceNormalization, 1-D
// convolutions, decomposed LayerNorm and GELU, bool masks), each with two
// cases at two bindings and PyTorch's outputs.
const exportModels = "../testdata/onnx"

// TestExportsConformance builds every model of testdata/onnx at both
// bindings into one artifact and checks every output against PyTorch's
// within max|diff| <= 1e-4 * max(1, max|ref|), for each cpu build.
func TestExportsConformance(t *testing.T) {
	for _, cpu := range cpuConfigs(t) {
		t.Run(strings.Join(cpu, "+"), func(t *testing.T) { conformance(t, exportModels, "cpu", cpu) })
	}
}

// TestExportsConformanceVulkan does the same on the machine's Vulkan
// device (llvmpipe in CI), and compares each output with the cpu target's,
// for every model but those slowOnVulkan names.
func TestExportsConformanceVulkan(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	needTool(t, "glslangValidator")
	needVulkan(t)
	conformanceOf(t, exportModels, "vulkan", nil, func(name string) bool { return slowOnVulkan[name] == "" })
}

// slowOnVulkan names the exports whose vulkan build takes minutes, with
// why: TestExportsSlowVulkan checks them, in make test-slow rather than
// make test (which has a 10-minute budget).
var slowOnVulkan = map[string]string{
	"audio": "its LSTM and GRU unroll to ~1000 launches at the two bindings, and GPU kernels have their offsets compiled in, so each is a kernel for glslang (minutes)",
}

// TestExportsSlowVulkan is TestExportsConformanceVulkan for the models
// slowOnVulkan names (make test-slow).
func TestExportsSlowVulkan(t *testing.T) {
	needTool(t, "glslangValidator")
	needVulkan(t)
	conformanceOf(t, exportModels, "vulkan", nil, func(name string) bool { return slowOnVulkan[name] != "" })
}

// notImportable names the models of a manifest directory that rlx cannot
// import yet, each with the error import must give (node, operator,
// opset): conformance checks that error instead of the outputs, so a
// model that starts importing fails here until it moves to the checked
// ones.
func notImportable(dir, name string) (string, bool) {
	if dir != exportModels {
		return "", false
	}
	want, ok := map[string]string{}[name]
	return want, ok
}

// importFails checks that importing file fails with want, at import.
func importFails(t *testing.T, dir, file, want string) {
	t.Helper()
	pb, err := onnxpb.DecodeFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	_, err = onnx.Import(pb, onnx.Options{Module: "m", Source: file})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("import of %s: got %v, want an error containing %q (if it imports now, take it out of notImportable)", file, err, want)
	}
}
