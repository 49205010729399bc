package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	artifactcache "github.com/rlx-project/rlx/pkg/artifact/cache"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// TestMain lets a test re-run this binary as rlxc itself, to build from
// several processes at once.
func TestMain(m *testing.M) {
	if os.Getenv("RLX_TEST_RUN_AS_RLXC") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const mlp = "../../testdata/models/mlp.hir"

func TestBuildCacheHitAndMiss(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	out1, out2 := filepath.Join(dir, "a.rlx"), filepath.Join(dir, "b.rlx")
	args := func(out string, extra ...string) []string {
		return append([]string{"build", mlp, "--cache-dir", cache, "--random-weights", "1", "-o", out, "--bind", "batch=1"}, extra...)
	}
	code, _, errs := rlxc(t, "", args(out1)...)
	if code != exitOK || !strings.Contains(errs, "cache miss") {
		t.Fatalf("first build: code %d\n%s", code, errs)
	}
	code, _, errs = rlxc(t, "", args(out2)...)
	if code != exitOK || !strings.Contains(errs, "cache hit") {
		t.Fatalf("second build: code %d\n%s", code, errs)
	}
	a, _ := os.ReadFile(out1)
	b, _ := os.ReadFile(out2)
	if !bytes.Equal(a, b) {
		t.Fatal("a cache hit gave different bytes")
	}
	// Each change of input is a miss, and --explain-cache says what changed.
	for _, c := range []struct {
		what string
		args []string
		why  string
	}{
		{"binding", []string{"build", mlp, "--cache-dir", cache, "--random-weights", "1", "-o", out2, "--bind", "batch=2", "--explain-cache"}, "binding"},
		{"weights", []string{"build", mlp, "--cache-dir", cache, "--random-weights", "2", "-o", out2, "--bind", "batch=1", "--explain-cache"}, "weights"},
		{"options", []string{"build", "../../testdata/models/ops_attention.hir", "--func", "decode", "--cache-dir", cache, "--random-weights", "1", "-o", out2, "--bind", "batch=1,seq=1,past=3", "--explain-cache"}, ""},
	} {
		code, _, errs := rlxc(t, "", c.args...)
		if code != exitOK || !strings.Contains(errs, "cache miss") || !strings.Contains(errs, c.why) {
			t.Errorf("%s changed: code %d\n%s", c.what, code, errs)
		}
	}
	// A corrupt entry is rebuilt, never trusted.
	entries, _ := filepath.Glob(filepath.Join(cache, "*", "*.rlx"))
	if len(entries) == 0 {
		t.Fatal("no cache entries")
	}
	for _, e := range entries {
		b, _ := os.ReadFile(e)
		b[len(b)/2] ^= 1
		os.WriteFile(e, b, 0o644)
	}
	code, _, errs = rlxc(t, "", args(out2)...)
	if code != exitOK || !strings.Contains(errs, "cache miss") {
		t.Errorf("corrupt entry: code %d\n%s", code, errs)
	}
	if b, _ := os.ReadFile(out2); !bytes.Equal(a, b) {
		t.Error("rebuild after a corrupt entry gave different bytes")
	}
	if code, out, _ := rlxc(t, "", "cache", "stats", "--cache-dir", cache); code != exitOK || !strings.Contains(out, "entries") {
		t.Errorf("cache stats: %d %s", code, out)
	}
	if code, out, _ := rlxc(t, "", "cache", "ls", "--cache-dir", cache); code != exitOK || !strings.Contains(out, "mlp") {
		t.Errorf("cache ls: %d %s", code, out)
	}
	if code, out, _ := rlxc(t, "", "cache", "clear", "--cache-dir", cache); code != exitOK || !strings.Contains(out, "removed") {
		t.Errorf("cache clear: %d %s", code, out)
	}
}

// TestConcurrentBuilds: two processes building into one cache at once both
// succeed with identical output.
func TestConcurrentBuilds(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	logs := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(dir, []string{"p0.rlx", "p1.rlx"}[i])
			cmd := exec.Command(os.Args[0], "build", "../../testdata/models/gpt.hir", "--bind", "batch=1,2", "--bind", "seq=8", "--random-weights", "3", "--cache-dir", cache, "-o", out)
			cmd.Env = append(os.Environ(), "RLX_TEST_RUN_AS_RLXC=1")
			b, err := cmd.CombinedOutput()
			logs[i], errs[i] = string(b), err
			outs[i], _ = os.ReadFile(out)
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("process %d: %v\n%s", i, errs[i], logs[i])
		}
	}
	if len(outs[0]) == 0 || !bytes.Equal(outs[0], outs[1]) {
		t.Fatalf("outputs differ (%d and %d bytes)", len(outs[0]), len(outs[1]))
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.rlx")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"build", mlp, "--random-weights", "1", "--no-cache", "-o", out}, exitInput, "missing binding for dim batch (used by input x): pass --bind batch=N"},
		{[]string{"build", "../../testdata/models/encoder.hir", "--random-weights", "1", "--no-cache", "-o", out, "--bind", "batch=1,seq=5000"}, exitInput, "dim seq = 5000 is outside its bounds [1, 4096]"},
		{[]string{"build", mlp, "--no-cache", "-o", out, "--bind", "batch=1"}, exitInput, "param fc1.weight has no data"},
		{[]string{"build", mlp, "--target", "tpu", "--no-cache", "-o", out, "--bind", "batch=1"}, exitInput, `unknown target "tpu"`},
		{[]string{"build", mlp, "--no-cache", "-o", out, "--bind", "batch"}, exitUsage, "want NAME=V"},
		// A misspelt dim: the dim it leaves unbound and the name the
		// module lacks, both.
		{[]string{"build", mlp, "--random-weights", "1", "--no-cache", "-o", out, "--bind", "bach=1"}, exitInput,
			"missing binding for dim batch (used by input x): pass --bind batch=N\n" + mlp + ": --bind bach=1: module mlp has no dim bach (its dims: batch)"},
		{[]string{"build", "../../testdata/errors/shape_mismatch.hir", "--no-cache", "-o", out}, exitInput, "shape_mismatch.hir:9:7: linear"},
		{[]string{"build", "no/such.hir", "-o", out}, exitIO, "no such file"},
		{[]string{"build", mlp, "--random-weights", "1", "--no-cache", "-o", out, "--bind", "batch=1", "--cpu", "portable", "--emit-kernels", dir}, exitUsage, "--cpu portable generates none"},
		// tf32 is the cuda target's (tensor cores): elsewhere, and any
		// other precision, is a usage error.
		{[]string{"build", mlp, "--random-weights", "1", "--no-cache", "-o", out, "--bind", "batch=1", "--precision", "tf32"}, exitUsage, "--precision tf32 is for --target cuda"},
		{[]string{"build", mlp, "--random-weights", "1", "--no-cache", "-o", out, "--bind", "batch=1", "--target", "vulkan", "--precision", "tf32"}, exitUsage, "target vulkan computes in fp32"},
		{[]string{"build", mlp, "--random-weights", "1", "--no-cache", "-o", out, "--bind", "batch=1", "--target", "metal", "--precision", "bf16"}, exitUsage, "--precision bf16 is for --target cuda"},
		{[]string{"build", mlp, "--random-weights", "1", "--no-cache", "-o", out, "--bind", "batch=1", "--target", "cuda", "--precision", "fp16"}, exitUsage, `--precision "fp16": want one of fp32, tf32, bf16`},
		// An operation a target has no kernel for fails the build, naming
		// the operation (with its place) and the target.
		{[]string{"build", "../../testdata/models/ops_misc.hir", "--func", "casts", "--target", "metal", "--random-weights", "1", "--no-cache", "-o", out, "--bind", "batch=1"},
			exitInput, "ops_misc.hir:50:7 cast: target metal has no kernel for this operation (f64 tensors are not supported on GPU targets)"},
	} {
		code, _, errs := rlxc(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: code %d (want %d)\n%s\nwant %q", c.args, code, c.code, errs, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a failed build left %s", c.args, out)
			os.Remove(out)
		}
	}
}

func TestInspectAndTargets(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.rlx")
	// Portable code: the GELU stays in the product's epilogue (native
	// builds run it as a region of its own).
	if code, _, errs := rlxc(t, "", "build", mlp, "--bind", "batch=1,8", "--random-weights", "1", "--no-cache", "--cpu", "portable", "-o", out, "-q"); code != exitOK || errs != "" {
		t.Fatalf("build: %d %s", code, errs)
	}
	code, text, _ := rlxc(t, "", "inspect", out)
	for _, want := range []string{"module      mlp", "batch=1", "batch=8", "program/0", "weights", "zstd", "arena", "in  x : f32[batch, 512]"} {
		if code != exitOK || !strings.Contains(text, want) {
			t.Errorf("inspect lacks %q:\n%s", want, text)
		}
	}
	// --lir prints each variant's launches, with their geometry.
	code, text, _ = rlxc(t, "", "inspect", out, "--lir")
	for _, want := range []string{"variant batch=1 (section program/0)", "variant batch=8 (section program/1)",
		"0: matmul_packed a=b0 b=b2 out=b4 m=1 n=2048 k=512", "m=8 n=512 k=2048", "epilogue.act=gelu", "mlp.hir:13:26 linear"} {
		if code != exitOK || !strings.Contains(text, want) {
			t.Errorf("inspect --lir lacks %q:\n%s", want, text)
		}
	}
	if code, text, _ := rlxc(t, "", "targets"); code != exitOK || !strings.Contains(text, "cpu") || !strings.Contains(text, "vulkan") || !strings.Contains(text, "libcuda.so.1") || !strings.Contains(text, "metal") {
		t.Errorf("targets: %s", text)
	}
}

// TestEmitKernels builds the cnn model for metal (no external tools) and,
// where glslangValidator is installed, for vulkan, and checks that
// --emit-kernels writes one file per kernel with its language's extension
// and inspect lists the same kernels.
func TestEmitKernels(t *testing.T) {
	dir := t.TempDir()
	cnn := "../../testdata/models/cnn.hir"
	targets := map[string][]string{"metal": {".metal"}}
	if _, err := exec.LookPath("glslangValidator"); err == nil {
		targets["vulkan"] = []string{".comp", ".spv"}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("glslangValidator is not installed; CI installs it")
	}
	for target, exts := range targets {
		out := filepath.Join(dir, target+".rlx")
		kdir := filepath.Join(dir, target)
		code, _, errs := rlxc(t, "", "build", cnn, "--target", target, "--bind", "batch=1,2", "--random-weights", "1", "--no-cache", "-o", out, "--emit-kernels", kdir)
		if code != exitOK || !strings.Contains(errs, "kernel files under") {
			t.Fatalf("%s build: %d %s", target, code, errs)
		}
		_, text, _ := rlxc(t, "", "inspect", out)
		for _, b := range []string{"batch=1", "batch=2"} {
			files, err := os.ReadDir(filepath.Join(kdir, b))
			if err != nil {
				t.Fatal(err)
			}
			byExt := map[string]int{}
			for _, f := range files {
				ext := filepath.Ext(f.Name())
				byExt[ext]++
				name := strings.TrimSuffix(f.Name(), ext)
				if !strings.Contains(text, name) {
					t.Errorf("%s: inspect does not list kernel %s", target, name)
				}
			}
			for _, ext := range exts {
				if byExt[ext] == 0 || byExt[ext] != byExt[exts[0]] {
					t.Errorf("%s %s: files by extension %v, want the same number of each of %v", target, b, byExt, exts)
				}
			}
			if len(byExt) != len(exts) {
				t.Errorf("%s %s: files by extension %v, want only %v", target, b, byExt, exts)
			}
		}
	}
}

// TestEmitNativeKernels: a cpu build with native code writes, per
// variant, the C clang compiled and the shared object of each CPU level.
func TestEmitNativeKernels(t *testing.T) {
	if err := toolchain.NativeTools(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI installs clang and lld", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	out, kdir := filepath.Join(dir, "mlp.rlx"), filepath.Join(dir, "kernels")
	code, _, errs := rlxc(t, "", "build", mlp, "--cpu", "x86-64-v3,x86-64-v4", "--bind", "batch=1,2", "--random-weights", "1", "--no-cache", "-o", out, "--emit-kernels", kdir)
	if code != exitOK || !strings.Contains(errs, "wrote 6 kernel files under") {
		t.Fatalf("build: %d %s", code, errs)
	}
	for _, b := range []string{"batch=1", "batch=2"} {
		files, err := os.ReadDir(filepath.Join(kdir, b))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range files {
			names = append(names, f.Name())
		}
		if want := []string{"kernels.c", "kernels.x86-64-v3.so", "kernels.x86-64-v4.so"}; !slices.Equal(names, want) {
			t.Fatalf("%s: files %v, want %v", b, names, want)
		}
		src, _ := os.ReadFile(filepath.Join(kdir, b, "kernels.c"))
		if !strings.Contains(string(src), "RLX_EXPORT int64_t rlx_") {
			t.Errorf("%s: kernels.c holds no exported kernel", b)
		}
		// It stands alone: clang builds it for a level as the build does.
		level, err := native.LookupLevel("x86-64-v4")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := toolchain.CToELF("kernels", string(src), level.Clang); err != nil {
			t.Errorf("%s: kernels.c does not compile: %v", b, err)
		}
		for _, so := range names[1:] {
			obj, _ := os.ReadFile(filepath.Join(kdir, b, so))
			if !bytes.HasPrefix(obj, []byte("\x7fELF")) {
				t.Errorf("%s/%s: not an ELF object", b, so)
			}
		}
	}
}

// TestBytesIndependentOfPathSpelling: the same model reached through two
// spellings of its path gives the same artifact bytes (steps name their
// source by the file's base name).
func TestBytesIndependentOfPathSpelling(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs(mlp)
	if err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for i, path := range []string{mlp, abs, filepath.Join(filepath.Dir(mlp), "..", "models", filepath.Base(mlp))} {
		out := filepath.Join(dir, fmt.Sprintf("m%d.rlx", i))
		if code, _, errs := rlxc(t, "", "build", path, "--bind", "batch=2", "--random-weights", "1", "--no-cache", "-o", out, "-q"); code != exitOK {
			t.Fatalf("build %s: %d %s", path, code, errs)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[0], outs[i]) {
			t.Errorf("spelling %d gives other bytes than spelling 0", i)
		}
	}
}

// TestCachePruneSizes: --max-size takes sizes with units; a bad one is a
// usage error that shows the form.
func TestCachePruneSizes(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	if code, _, errs := rlxc(t, "", "build", mlp, "--bind", "batch=1", "--random-weights", "1", "--cache-dir", cache, "-o", filepath.Join(dir, "m.rlx"), "-q"); code != exitOK {
		t.Fatalf("build: %d %s", code, errs)
	}
	if code, out, errs := rlxc(t, "", "cache", "prune", "--cache-dir", cache, "--max-size", "30MB"); code != exitOK || !strings.Contains(out, "removed 0 entries") {
		t.Errorf("prune 30MB: %d %s %s", code, out, errs)
	}
	// The artifact's entry, and with native code its objects' (the
	// GELU's region): everything.
	if code, out, errs := rlxc(t, "", "cache", "prune", "--cache-dir", cache, "--max-size", "1KiB"); code != exitOK || !regexp.MustCompile(`removed [1-9][0-9]* entries, freed`).MatchString(out) {
		t.Errorf("prune 1KiB: %d %s %s", code, out, errs)
	}
	if code, out, errs := rlxc(t, "", "cache", "prune", "--cache-dir", cache, "--max-size", "1KiB"); code != exitOK || !strings.Contains(out, "removed 0 entries") {
		t.Errorf("prune 1KiB again: %d %s %s", code, out, errs)
	}
	if code, _, errs := rlxc(t, "", "cache", "prune", "--cache-dir", cache, "--max-size", "lots"); code != exitUsage || !strings.Contains(errs, "512MiB") {
		t.Errorf("prune lots: %d %s", code, errs)
	}
}

// TestMissingBuildTool: a vulkan build on a machine without
// glslangValidator is exit 5 saying what to install (not 4, "a bug in
// rlx"); a cuda build without clang says once that it builds CUDA C only.
func TestMissingBuildTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no tools at all
	out := filepath.Join(t.TempDir(), "m.rlx")
	code, _, errs := rlxc(t, "", "build", mlp, "--target", "vulkan", "--bind", "batch=1", "--random-weights", "1", "--no-cache", "-o", out)
	if code != exitTool || !strings.Contains(errs, "glslangValidator") || !strings.Contains(errs, "glslang-tools") {
		t.Errorf("vulkan: exit %d: %s", code, errs)
	}
	code, _, errs = rlxc(t, "", "build", mlp, "--target", "cuda", "--bind", "batch=1", "--random-weights", "1", "--no-cache", "-o", out)
	if code != exitOK || strings.Count(errs, "builds CUDA C only here") != 1 || !strings.Contains(errs, "NVRTC") {
		t.Errorf("cuda: exit %d: %s", code, errs)
	}
	// A cpu build degrades to portable; asked for its generated code, it
	// has none to write, which is the missing tool's exit too.
	code, _, errs = rlxc(t, "", "build", mlp, "--bind", "batch=1", "--random-weights", "1", "--no-cache", "-o", out, "--emit-kernels", t.TempDir())
	if code != exitTool || !strings.Contains(errs, "no generated code") || !strings.Contains(errs, "apt-get install clang lld") {
		t.Errorf("cpu --emit-kernels: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("cpu --emit-kernels: the artifact is written all the same: %v", err)
	}
}

// TestSettingsTypos: a key of rlxc.yaml or an RLXC_* variable that names
// no flag is a usage error naming it and the nearest known setting, not
// a build that ignores it.
func TestSettingsTypos(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/models/mlp.hir")
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("rlxc.yaml", []byte("targt: vulkan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := rlxc(t, "", "build", model, "--bind", "batch=1", "--random-weights", "1", "--no-cache", "-o", "m.rlx")
	if code != exitUsage || !strings.Contains(errs, `unknown setting "targt"`) || !strings.Contains(errs, "did you mean target?") {
		t.Errorf("rlxc.yaml typo: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat("m.rlx"); err == nil {
		t.Error("the build ran despite the typo")
	}
	if err := os.WriteFile("rlxc.yaml", []byte("target: cpu\nno-cache: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RLXC_CACHE_DRI", "/tmp/x")
	code, _, errs = rlxc(t, "", "build", model, "--bind", "batch=1", "--random-weights", "1", "-o", "m.rlx")
	if code != exitUsage || !strings.Contains(errs, "RLXC_CACHE_DRI") || !strings.Contains(errs, "did you mean RLXC_CACHE_DIR?") {
		t.Errorf("environment typo: exit %d\n%s", code, errs)
	}
	os.Unsetenv("RLXC_CACHE_DRI")
	code, _, errs = rlxc(t, "", "build", model, "--bind", "batch=1", "--random-weights", "1", "-q", "-o", "m.rlx")
	if code != exitOK {
		t.Errorf("valid settings: exit %d\n%s", code, errs)
	}
}

// TestCacheMaxSize: each build leaves the cache within --cache-max-size,
// which takes human units; a malformed size is a usage error.
func TestCacheMaxSize(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	for seed := range 3 {
		code, _, errs := rlxc(t, "", "build", "../../testdata/models/gpt.hir", "--bind", "batch=1", "--bind", "seq=8", "--random-weights", fmt.Sprint(seed),
			"--cache-dir", cache, "--cache-max-size", "2MB", "-o", filepath.Join(dir, "m.rlx"))
		if code != exitOK {
			t.Fatalf("build %d: exit %d\n%s", seed, code, errs)
		}
		if _, bytes, err := (&artifactcache.Cache{Dir: cache}).Stats(); err != nil || bytes > 2_000_000 {
			t.Fatalf("after build %d the cache holds %d bytes (%v), over 2MB", seed, bytes, err)
		}
	}
	code, _, errs := rlxc(t, "", "build", "../../testdata/models/gpt.hir", "--bind", "batch=1", "--bind", "seq=8", "--random-weights", "1",
		"--cache-dir", cache, "--cache-max-size", "30XB", "-o", filepath.Join(dir, "m.rlx"))
	if code != exitUsage || !strings.Contains(errs, "--cache-max-size") {
		t.Errorf("malformed size: exit %d\n%s", code, errs)
	}
}

// TestBuildVerbose: -v prints every stage with its time and every
// variant; without it, off a terminal, only the final lines.
func TestBuildVerbose(t *testing.T) {
	dir := t.TempDir()
	args := []string{"build", "../../testdata/models/gpt.hir", "--bind", "batch=1", "--bind", "seq=4,8", "--random-weights", "1", "--no-cache", "-o", filepath.Join(dir, "m.rlx")}
	code, _, errs := rlxc(t, "", append(args, "-v")...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{"rlxc: parse and check", "rlxc: weights", "rlxc: lower", "rlxc: fuse", "rlxc: generate", "rlxc: compile native code", "rlxc: write",
		"variant 1/2 generated (batch=1,seq=4)", "variant 2/2 generated (batch=1,seq=8)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("-v output lacks %q:\n%s", want, errs)
		}
	}
	code, _, errs = rlxc(t, "", args...)
	if code != exitOK || strings.Contains(errs, "parse and check") || strings.Contains(errs, "\r") || !strings.Contains(errs, "rlxc: wrote") {
		t.Errorf("default off a terminal: exit %d\n%q", code, errs)
	}
}

// TestRequirePTX: a cuda build without clang writes CUDA C with a note;
// --require-ptx makes that the missing-tool exit instead.
func TestRequirePTX(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir) // no clang
	args := []string{"build", "../../testdata/models/mlp.hir", "--target", "cuda", "--bind", "batch=1", "--random-weights", "1", "--no-cache", "-o", filepath.Join(dir, "m.rlx")}
	code, _, errs := rlxc(t, "", args...)
	if code != exitOK || !strings.Contains(errs, "builds CUDA C only here") {
		t.Errorf("cuda without clang: exit %d\n%s", code, errs)
	}
	code, _, errs = rlxc(t, "", append(args, "--require-ptx")...)
	if code != exitTool || !strings.Contains(errs, "--require-ptx") || !strings.Contains(errs, "apt-get install clang") {
		t.Errorf("--require-ptx without clang: exit %d\n%s", code, errs)
	}
}

// TestBuildONNXNamesTheFile: errors about a model imported in memory name
// the .onnx file the user gave (there is no .hir), and say where the
// line:col of a checker message is.
func TestBuildONNXNamesTheFile(t *testing.T) {
	const torch2 = "../../../shared/models/torch2"
	if _, err := os.Stat(torch2); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must have ../shared/models: %v", err)
		}
		t.Skipf("no torch2 models: %v", err)
	}
	out := filepath.Join(t.TempDir(), "x.rlx")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"build", torch2 + "/gpt_legacy.onnx", "--no-cache", "-o", out},
			[]string{"gpt_legacy.onnx: missing binding for dim batch (used by input tokens)"}},
		// PyTorch baked seq = 128 into encoder_legacy's Reshape.
		{[]string{"build", torch2 + "/encoder_legacy.onnx", "--no-cache", "-o", out, "--bind", "batch=2,seq=64"},
			[]string{"encoder_legacy.onnx:40:34: reshape", "note: line:col is in the HIR that rlxc import " + torch2 + "/encoder_legacy.onnx writes"}},
	} {
		code, _, errs := rlxc(t, "", c.args...)
		if code != exitInput {
			t.Errorf("%v: code %d, want %d\n%s", c.args, code, exitInput, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, errs)
			}
		}
		if strings.Contains(errs, ".hir") {
			t.Errorf("%v: stderr names a .hir file:\n%s", c.args, errs)
		}
	}
}

// TestPrecisionTF32: a cuda build with --precision tf32 or bf16 says so
// in its target (and so in its cache key), and its products, only they,
// carry that kind of tensor-core product; the default build carries
// none.
func TestPrecisionTF32(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	for _, c := range []struct{ precision, inst string }{
		{"fp32", ""},
		{"tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32"},
		{"bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16"},
	} {
		out, kdir := filepath.Join(dir, c.precision+".rlx"), filepath.Join(dir, c.precision)
		args := []string{"build", mlp, "--target", "cuda", "--bind", "batch=64", "--random-weights", "1", "--cache-dir", cache,
			"-q", "-o", out, "--emit-kernels", kdir, "--precision", c.precision}
		if code, _, errs := rlxc(t, "", args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		files, _ := filepath.Glob(filepath.Join(kdir, "*", "*.cu"))
		products, others := 0, 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "mma.sync") {
				continue
			}
			// One kind of product per build: the other's instruction is
			// not even in the prelude.
			if c.inst == "" || !strings.HasPrefix(filepath.Base(f), "matmul_") || strings.Count(string(b), "mma.sync") != 1 || !strings.Contains(string(b), c.inst) {
				others++
			} else {
				products++
			}
		}
		if (products > 0) != (c.inst != "") || others != 0 {
			t.Errorf("%s build: %d products with %q, %d other kernels with tensor-core products", c.precision, products, c.inst, others)
		}
		_, text, _ := rlxc(t, "", "inspect", out)
		if want := "+" + c.precision; strings.Contains(text, want) != (c.inst != "") {
			t.Errorf("%s: target line:\n%s", c.precision, text)
		}
	}
}
