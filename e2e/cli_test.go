package e2e

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// tools builds rlxc and rlxrun once for the CLI tests, with this test
// binary's build tags.
func tools(t *testing.T) (rlxc, rlxrun string) {
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "rlx-e2e-bin")
		if binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-tags", buildTags, "-o", binDir+"/", "../cmd/rlxc", "../cmd/rlxrun").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "rlxc"), filepath.Join(binDir, "rlxrun")
}

func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestCLIConformance is the conformance check as a user runs it: for every
// model and case in ../shared/models, `rlxc build model.onnx --bind ...`,
// then `rlxrun --input ... --expect ...` with the bar
// max|diff| <= 1e-4 * max(1, max|ref|) given as --atol.
func TestCLIConformance(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	man := readManifest(t, sharedModels)
	rlxc, rlxrun := tools(t)
	dir := t.TempDir()
	var names []string
	for n := range man.Models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		model := man.Models[name]
		for cname, c := range model.Cases {
			var bind []string
			for d, v := range c.Binding {
				bind = append(bind, "--bind", fmt.Sprintf("%s=%d", d, v))
			}
			out := filepath.Join(dir, name+"_"+cname+".rlx")
			sh(t, rlxc, append([]string{"build", filepath.Join(sharedModels, model.File), "-o", out, "-q", "--cache-dir", sharedCacheDir(t)}, bind...)...)
			args := []string{out}
			for in, f := range c.Inputs {
				args = append(args, "--input", in+"=@"+filepath.Join(sharedModels, f.File))
			}
			for o, f := range c.Outputs {
				ref, err := npy.ReadFile(filepath.Join(sharedModels, f.File))
				if err != nil {
					t.Fatal(err)
				}
				maxRef := 0.0
				for _, v := range asFloat(ref) {
					maxRef = math.Max(maxRef, math.Abs(v))
				}
				args = append(args, "--expect", o+"=@"+filepath.Join(sharedModels, f.File), "--rtol", "0", "--atol", fmt.Sprint(1e-4*math.Max(1, maxRef)))
			}
			res := sh(t, rlxrun, args...)
			if !strings.Contains(res, ": ok") {
				t.Errorf("%s/%s: %s", name, cname, res)
			}
		}
	}
}

// TestCLIImport: rlxc import writes HIR that checks, is in canonical form,
// and builds with the safetensors file written beside it.
func TestCLIImport(t *testing.T) {
	man := readManifest(t, sharedModels)
	rlxc, rlxrun := tools(t)
	dir := t.TempDir()
	for name, model := range man.Models {
		hir := filepath.Join(dir, name+".hir")
		sh(t, rlxc, "import", filepath.Join(sharedModels, model.File), "-o", hir)
		if _, err := os.Stat(filepath.Join(dir, name+".safetensors")); err != nil {
			t.Fatalf("%s: no weights file: %v", name, err)
		}
		sh(t, rlxc, "check", hir)
		sh(t, rlxc, "fmt", "--check", hir)
		for cname, c := range model.Cases {
			var bind []string
			for d, v := range c.Binding {
				bind = append(bind, "--bind", fmt.Sprintf("%s=%d", d, v))
			}
			out := filepath.Join(dir, name+".rlx")
			sh(t, rlxc, append([]string{"build", hir, "-o", out, "-q", "--cache-dir", sharedCacheDir(t)}, bind...)...)
			args := []string{out}
			for in, f := range c.Inputs {
				args = append(args, "--input", in+"=@"+filepath.Join(sharedModels, f.File))
			}
			for o, f := range c.Outputs {
				args = append(args, "--expect", o+"=@"+filepath.Join(sharedModels, f.File), "--atol", "1e-3", "--rtol", "1e-3")
			}
			if res := sh(t, rlxrun, args...); !strings.Contains(res, ": ok") {
				t.Errorf("%s/%s via rlxc import: %s", name, cname, res)
			}
			break
		}
	}
	// An unsupported model writes nothing.
	bad := filepath.Join(dir, "bad.onnx")
	os.WriteFile(bad, []byte("not a model"), 0o644)
	cmd := exec.Command(rlxc, "import", bad, "-o", filepath.Join(dir, "bad.hir"))
	if out, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("import of garbage: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.hir")); err == nil {
		t.Error("a failed import left bad.hir")
	}
	// -o names where the HIR goes and the weights go beside it: a
	// directory (or a device, a pipe) is a usage error that writes nothing.
	sub := filepath.Join(dir, "out.d")
	os.Mkdir(sub, 0o755)
	cmd = exec.Command(rlxc, "import", filepath.Join(sharedModels, "mlp.onnx"), "-o", sub)
	if out, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 64 || !strings.Contains(string(out), "is not a regular file") {
		t.Errorf("import -o a directory: %v\n%s", err, out)
	}
	if _, err := os.Stat(sub + ".safetensors"); err == nil {
		t.Error("import -o a directory wrote weights beside it")
	}
}

// TestUsageExitCode: a wrong command line is exit 64 in both tools, never
// 2, which is what the Go runtime exits with when it dies (docs/cli.md).
func TestUsageExitCode(t *testing.T) {
	rlxc, rlxrun := tools(t)
	for _, tool := range []string{rlxc, rlxrun} {
		out, err := exec.Command(tool, "--no-such-flag").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 64 {
			t.Errorf("%s --no-such-flag: %v (want exit 64)\n%s", filepath.Base(tool), err, out)
		}
	}
	doc, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| 2 | the Go runtime stopped the process", "| 64 | the command line is wrong"} {
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/cli.md has no exit code row %q", row)
		}
	}
}

// TestCLIExternalData: a shared model saved with its weights in an
// external data file (as onnx.save_model(save_as_external_data=True)
// and PyTorch's exporter write large models: offsets aligned in one file
// beside the model) builds with rlxc and matches PyTorch's outputs, and
// the same model whose data file is gone fails as an I/O error naming it.
func TestCLIExternalData(t *testing.T) {
	man := readManifest(t, sharedModels)
	model, ok := man.Models["mlp"]
	if !ok {
		t.Fatal("the shared manifest has no mlp")
	}
	m, err := onnxpb.DecodeFile(filepath.Join(sharedModels, model.File))
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	moved := 0
	for i, x := range m.Graph.Initializers {
		v, err := x.ToTensor()
		if err != nil || len(v.Data) < 64 {
			continue // small tensors stay inline, as the writers keep them
		}
		off := (len(data) + 63) &^ 63
		data = append(data, make([]byte, off-len(data))...)
		data = append(data, v.Data...)
		m.Graph.Initializers[i] = &onnxpb.Tensor{Name: x.Name, DataType: x.DataType, Dims: x.Dims, External: true,
			ExternalData: map[string]string{"location": "mlp.onnx.data", "offset": strconv.Itoa(off), "length": strconv.Itoa(len(v.Data))}}
		moved++
	}
	if moved == 0 {
		t.Fatal("no initializer moved to the data file")
	}
	enc, err := onnxpb.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mlp.onnx")
	if err := os.WriteFile(file, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file+".data", data, 0o644); err != nil {
		t.Fatal(err)
	}
	rlxc, rlxrun := tools(t)
	c, ok := model.Cases["b1"]
	if !ok {
		t.Fatal("mlp has no case b1")
	}
	var bind []string
	for d, v := range c.Binding {
		bind = append(bind, "--bind", fmt.Sprintf("%s=%d", d, v))
	}
	out := filepath.Join(dir, "mlp.rlx")
	sh(t, rlxc, append([]string{"build", file, "-o", out, "-q", "--cache-dir", sharedCacheDir(t)}, bind...)...)
	args := []string{out}
	for in, f := range c.Inputs {
		args = append(args, "--input", in+"=@"+filepath.Join(sharedModels, f.File))
	}
	for o, f := range c.Outputs {
		args = append(args, "--expect", o+"=@"+filepath.Join(sharedModels, f.File))
	}
	if res := sh(t, rlxrun, args...); !strings.Contains(res, ": ok") {
		t.Errorf("mlp with external data: %s", res)
	}
	if err := os.Remove(file + ".data"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rlxc, append([]string{"build", file, "-o", filepath.Join(dir, "gone.rlx"), "-q"}, bind...)...)
	msg, err := cmd.CombinedOutput()
	if err == nil || cmd.ProcessState.ExitCode() != 3 || !strings.Contains(string(msg), "mlp.onnx.data") {
		t.Errorf("build without the data file: exit %d, %v\n%s", cmd.ProcessState.ExitCode(), err, msg)
	}
}
