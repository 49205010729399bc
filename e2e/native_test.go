package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// cpuConfigs are the cpu target's builds the model tests run: the
// portable one, and native code for each CPU level this machine runs
// (x86-64-v3, and x86-64-v4 on a CPU with AVX-512). Without clang and lld
// only the portable one, except under CI=true, where CI has them. With
// -tags purego only the portable one (nativeLevels).
func cpuConfigs(t *testing.T) [][]string {
	t.Helper()
	configs := [][]string{{"portable"}}
	if !nativeLevels || raceDetector {
		return configs
	}
	if err := toolchain.NativeTools(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and native code cannot be built: %v", err)
		}
		t.Logf("native code not tested: %v", err)
		return configs
	}
	for _, l := range native.Levels() {
		if l.Runs() == nil {
			configs = append(configs, []string{l.Name})
		}
	}
	return configs
}

// buildNative builds the bundled GPT at two bindings for the given CPU
// levels (rlxc build --cpu), into dir/name.rlx.
func buildNative(t *testing.T, dir, name string, levels ...string) string {
	t.Helper()
	file := "../testdata/models/gpt.hir"
	src, _ := os.ReadFile(file)
	seed := uint64(9)
	out := filepath.Join(dir, name+".rlx")
	if _, err := build(t, file, src, out, driver.Options{Target: "cpu", CPU: levels, Bindings: twoBindings(t, load(t, file)), RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestForgedNativeCode runs rlxrun on artifacts whose digests check out
// but whose native code is corrupt, foreign or does not match its
// tables: each is refused with exit 3 and one line naming the native
// code, before anything is mapped executable (the loader validates every
// object when it verifies the program, before the runtime opens). Code
// for a CPU level this machine lacks is exit 6, as a missing device is.
func TestForgedNativeCode(t *testing.T) {
	if len(cpuConfigs(t)) < 2 {
		t.Skip("needs hardware: no native level runs here")
	}
	dir := t.TempDir()
	best, _ := native.Best()
	good := buildNative(t, dir, "good", best.Name)
	arm := buildNative(t, dir, "arm", "armv8.2-a")
	var armELF []byte
	forge(t, arm, filepath.Join(dir, "unused.rlx"), func(p *lir.Program) { armELF = p.Native.Objects[0].ELF })
	_, rlxrun := tools(t)

	for _, c := range []struct {
		name   string
		change func(p *lir.Program)
		code   int
		want   string
	}{
		{"flipped machine", func(p *lir.Program) { p.Native.Objects[0].ELF[18] ^= 0xff }, 3, "corrupt or foreign object"},
		{"truncated", func(p *lir.Program) { p.Native.Objects[0].ELF = p.Native.Objects[0].ELF[:200] }, 3, "corrupt or foreign object"},
		{"not ELF", func(p *lir.Program) { copy(p.Native.Objects[0].ELF, "MZ") }, 3, "corrupt or foreign object"},
		{"foreign code under this level", func(p *lir.Program) { p.Native.Objects[0].ELF = armELF }, 3, "corrupt or foreign object"},
		{"unknown level", func(p *lir.Program) { p.Native.Objects[0].Level = "x86-64-v9" }, 3, "x86-64-v9"},
		{"missing function", func(p *lir.Program) { p.Native.Funcs[0].Name = "rlx_nothing" }, 3, "rlx_nothing"},
		{"function bigger than its buffers", func(p *lir.Program) { p.Native.Funcs[0].Out[0] += 4 }, 3, "native"},
		{"no objects", func(p *lir.Program) { p.Native.Objects = nil }, 3, "no compiled object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".rlx")
			forge(t, good, path, c.change)
			out, err := exec.Command(rlxrun, path, "--fill", "random").CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != c.code || !strings.Contains(string(out), c.want) ||
				strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
				t.Errorf("exit %v, want %d and one line with %q:\n%s", err, c.code, c.want, out)
			}
		})
	}
	// Code for another architecture, labeled as such: the CPU lacks it.
	out, err := exec.Command(rlxrun, arm, "--fill", "random").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 6 || !strings.Contains(string(out), "armv8.2-a runs on arm64") {
		t.Errorf("arm64 code on %s: %v\n%s", best.GOARCH, err, out)
	}
	// And the good one runs.
	if out, err := exec.Command(rlxrun, good, "--fill", "random").CombinedOutput(); err != nil {
		t.Errorf("good artifact: %v\n%s", err, out)
	}
}

// TestWithoutClang: a machine without clang builds the portable artifact
// and says so once; asking for a CPU level there is the missing-tool exit
// (5) with the package to install.
func TestWithoutClang(t *testing.T) {
	rlxc, rlxrun := tools(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "bin") // a PATH with no compiler on it
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.rlx")
	args := []string{"build", "../testdata/models/gpt.hir", "--bind", "batch=1", "--bind", "seq=4", "--random-weights", "1", "--no-cache", "-o", out}
	cmd := exec.Command(rlxc, args...)
	cmd.Env = append(os.Environ(), "PATH="+empty)
	msg, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(msg), "builds portable code only here") != 1 || !strings.Contains(string(msg), "apt-get install clang") {
		t.Fatalf("default build without clang: %v\n%s", err, msg)
	}
	if info := sh(t, rlxrun, out, "--fill", "random", "--json"); !strings.Contains(info, `"code": "portable"`) {
		t.Errorf("the artifact is not portable:\n%s", info)
	}
	cmd = exec.Command(rlxc, append(args, "--cpu", "x86-64-v3")...)
	cmd.Env = append(os.Environ(), "PATH="+empty)
	msg, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 || !strings.Contains(string(msg), "needs clang and lld") {
		t.Errorf("--cpu x86-64-v3 without clang: %v\n%s", err, msg)
	}
}

// gpuRun is whether this test binary runs GPU targets: the race and
// purego runs check Go code (the detector, the portable kernels) and
// leave the Vulkan device to the default run, as make test's RACE_SKIP
// does for the GPU tests by name.
const gpuRun = !raceDetector && nativeLevels
