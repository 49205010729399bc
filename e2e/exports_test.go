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
// device (llvmpipe in CI), and compares each output with the cpu target's.
// The audio model's unrolled LSTM and GRU are ~1000 launches at its two
// bindings; their kernels differ only in offsets, which are launch data,
// so they compile as a few dozen kernels (minutes when each compiled).
func TestExportsConformanceVulkan(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	needTool(t, "glslangValidator")
	needVulkan(t)
	conformance(t, exportModels, "vulkan", nil)
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
