package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// torch2Models are PyTorch 2's exports of the shared encoder and GPT, by
// the TorchScript exporter (*_legacy, opset 17, dynamic axes) and by the
// torch.export-based one (*_dynamo, opset 20): ../shared/models/torch2,
// with a manifest like the main one.
var torch2Models = filepath.Join(sharedModels, "torch2")

// TestTorch2Conformance builds every torch2 model at each case's binding
// and checks every output against PyTorch's within
// max|diff| <= 1e-4 * max(1, max|ref|), for each of the cpu target's builds.
func TestTorch2Conformance(t *testing.T) {
	for _, cpu := range cpuConfigs(t) {
		t.Run(strings.Join(cpu, "+"), func(t *testing.T) { conformance(t, torch2Models, "cpu", cpu) })
	}
}

// TestTorch2ConformanceVulkan does the same on the machine's Vulkan device
// (llvmpipe in CI), and compares each output with the cpu target's.
func TestTorch2ConformanceVulkan(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	needTool(t, "glslangValidator")
	needVulkan(t)
	conformance(t, torch2Models, "vulkan", nil)
}
