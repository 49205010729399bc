package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
)

// The tests build with the compiler (a test-only dependency: the rlxrun
// binary itself links none of it) and take expected values from the
// reference interpreter.

const encoder = "../../testdata/models/encoder.hir"

func rlxrun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func buildModel(t *testing.T, dir, file string, bindings ...specialize.Binding) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(4)
	out := filepath.Join(dir, "m.rlx")
	if _, err := driver.Build(file, src, out, driver.Options{Target: "cpu", Bindings: bindings, RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	return out
}

// reference runs the unfused graph on inputs with the reference interpreter.
func reference(t *testing.T, file string, b specialize.Binding, inputs ...*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	src, _ := os.ReadFile(file)
	m, err := hir.ParseFile(file, src)
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	ws := &lower.Weights{Random: true, Seed: 4}
	g, err := lower.ToMIR(m, "main", ws)
	if err != nil {
		t.Fatal(err)
	}
	out, err := eval.Run(g, b, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRunExpectAndOutputs(t *testing.T) {
	dir := t.TempDir()
	art := buildModel(t, dir, encoder, specialize.Binding{"batch": 1, "seq": 5}, specialize.Binding{"batch": 2, "seq": 3})
	x := tensor.New(tensor.F32, 2, 3, 256)
	for i := range x.F32() {
		x.F32()[i] = float32(i%17)/8 - 1
	}
	xPath := filepath.Join(dir, "x.npy")
	npy.WriteFile(xPath, x)
	ref := reference(t, encoder, specialize.Binding{"batch": 2, "seq": 3}, x)[0]
	refPath := filepath.Join(dir, "y.npy")
	npy.WriteFile(refPath, ref)

	outPath := filepath.Join(dir, "out.npy")
	code, out, errs := rlxrun(t, art, "--input", "x=@"+xPath, "--expect", "y=@"+refPath, "--output", "y=@"+outPath, "--atol", "1e-5", "--rtol", "1e-5")
	if code != exitOK || !strings.Contains(out, "y: f32[2, 3, 256]") || !strings.Contains(out, ": ok") {
		t.Fatalf("run: code %d\n%s%s", code, out, errs)
	}
	if got, err := npy.ReadFile(outPath); err != nil || got.Len() != ref.Len() {
		t.Errorf("--output: %v", err)
	}

	// A reference that is off in one place: exit 1, and the line says where.
	bad := tensor.New(tensor.F32, ref.Shape...)
	copy(bad.Data, ref.Data)
	bad.F32()[300] += 0.5
	npy.WriteFile(refPath, bad)
	code, _, errs = rlxrun(t, art, "--input", "x=@"+xPath, "--expect", "y=@"+refPath)
	if code != exitMismatch || !strings.Contains(errs, "output y differs") || !strings.Contains(errs, "worst at [0 1 44]") {
		t.Errorf("mismatch: code %d\n%s", code, errs)
	}

	// npz input, --json, --output-dir.
	npz := filepath.Join(dir, "in.npz")
	if err := npy.WriteNPZ(npz, []string{"x"}, map[string]*tensor.Tensor{"x": x}); err != nil {
		t.Fatal(err)
	}
	code, out, errs = rlxrun(t, art, "--input", "@"+npz, "--json", "--output-dir", filepath.Join(dir, "outs"))
	var res struct {
		OK      bool `json:"ok"`
		Outputs []struct {
			Name  string  `json:"name"`
			Shape []int64 `json:"shape"`
		} `json:"outputs"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || !res.OK || len(res.Outputs) != 1 || res.Outputs[0].Name != "y" {
		t.Errorf("--json: code %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "outs", "y.npy")); err != nil {
		t.Errorf("--output-dir: %v", err)
	}
}

func TestRunInputErrors(t *testing.T) {
	dir := t.TempDir()
	art := buildModel(t, dir, encoder, specialize.Binding{"batch": 1, "seq": 5})
	write := func(name string, tn *tensor.Tensor) string {
		p := filepath.Join(dir, name)
		npy.WriteFile(p, tn)
		return p
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--input", "x=@" + write("a.npy", tensor.New(tensor.F32, 1, 7, 256))}, exitInputs, "input x: dim 1 (seq) is 7, but the artifact was built for batch=1,seq=5"},
		{[]string{"--input", "x=@" + write("b.npy", tensor.New(tensor.I64, 1, 5, 256))}, exitInputs, "input x is i64, the model takes f32"},
		{[]string{"--input", "x=@" + write("c.npy", tensor.New(tensor.F32, 5, 256))}, exitInputs, "input x has rank 2"},
		{[]string{"--input", "z=@" + write("d.npy", tensor.New(tensor.F32, 1, 5, 256))}, exitInputs, "missing input x"},
		{nil, exitInputs, "missing input x"},
		{[]string{"--input", "x=@" + filepath.Join(dir, "nope.npy")}, exitIO, "no such file"},
		{[]string{"--input", "x"}, exitUsage, "want NAME=@file.npy"},
		{[]string{"--fill", "ones"}, exitUsage, "want random or zeros"},
		{[]string{"--fill", "random", "--threads", "-2"}, exitUsage, "--threads -2: want a count of worker threads"},
	} {
		code, _, errs := rlxrun(t, append([]string{art}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: code %d (want %d)\n%s\nwant one line containing %q", c.args, code, c.code, errs, c.want)
		}
	}
	if code, _, errs := rlxrun(t, filepath.Join(dir, "missing.rlx")); code != exitIO || !strings.Contains(errs, "no such file") {
		t.Errorf("missing artifact: %d %s", code, errs)
	}
	// A model given where an artifact goes: the error says to build one.
	if code, _, errs := rlxrun(t, "../../testdata/onnx/encoder13.onnx"); code != exitIO || !strings.Contains(errs, "not an rlx artifact") || !strings.Contains(errs, "build one first: rlxc build ../../testdata/onnx/encoder13.onnx") {
		t.Errorf("an ONNX model: %d %s", code, errs)
	}
	if code, out, _ := rlxrun(t, art, "--fill", "random"); code != exitOK || !strings.Contains(out, "y: f32[1, 5, 256]") {
		t.Errorf("--fill random: %d %s", code, out)
	}
	two := buildModel(t, dir, encoder, specialize.Binding{"batch": 1, "seq": 5}, specialize.Binding{"batch": 2, "seq": 3})
	if code, out, _ := rlxrun(t, two, "--fill", "random", "--bind", "batch=2,seq=3"); code != exitOK || !strings.Contains(out, "y: f32[2, 3, 256]") {
		t.Errorf("--fill random --bind batch=2,seq=3: %d %s", code, out)
	}
	if code, _, errs := rlxrun(t, two, "--fill", "random", "--bind", "batch=4,seq=3"); code != exitInputs || !strings.Contains(errs, "no variant for batch=4,seq=3") {
		t.Errorf("--bind of a missing variant: %d %s", code, errs)
	}
	if code, _, errs := rlxrun(t, two, "--fill", "random", "--bind", "batch"); code != exitUsage || !strings.Contains(errs, "want NAME=V") {
		t.Errorf("bad --bind: %d %s", code, errs)
	}
	if code, out, _ := rlxrun(t, "bench", art, "--runs", "3", "--warmup", "1", "--profile"); code != exitOK || !strings.Contains(out, "p50") || !strings.Contains(out, "matmul") {
		t.Errorf("bench: %d %s", code, out)
	}
	if code, out, _ := rlxrun(t, "inspect", art); code != exitOK || !strings.Contains(out, "variant batch=1,seq=5") {
		t.Errorf("inspect: %d %s", code, out)
	}
	if code, out, _ := rlxrun(t, "check", art); code != exitOK || !strings.Contains(out, "ok") {
		t.Errorf("check: %d %s", code, out)
	}
}

// TestVulkanArtifact runs a vulkan artifact as a user would, where this
// machine can build and run one (CI installs glslangValidator and llvmpipe).
func TestVulkanArtifact(t *testing.T) {
	if _, err := exec.LookPath("glslangValidator"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("glslangValidator is not installed; CI installs it")
		}
		t.Skip("glslangValidator is not installed")
	}
	file := "../../testdata/models/cnn.hir"
	src, _ := os.ReadFile(file)
	seed := uint64(4)
	art := filepath.Join(t.TempDir(), "cnn.rlx")
	if _, err := driver.Build(file, src, art, driver.Options{Target: "vulkan", Bindings: []specialize.Binding{{"batch": 2}}, RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := rlxrun(t, art, "--fill", "random")
	if code == exitDevice && os.Getenv("CI") != "true" {
		t.Skipf("no Vulkan device: %s", errs)
	}
	if code != exitOK || !strings.Contains(out, "logits: f32[2, 10]") {
		t.Fatalf("run: %d %s %s", code, out, errs)
	}
	if code, out, _ := rlxrun(t, "bench", art, "--runs", "2", "--warmup", "1"); code != exitOK || !strings.Contains(out, "p50") {
		t.Errorf("bench: %d %s", code, out)
	}
	if code, _, errs := rlxrun(t, "bench", art, "--runs", "2", "--profile"); code != exitUsage || !strings.Contains(errs, "--profile times the steps of cpu and cuda artifacts") {
		t.Errorf("bench --profile: %d %s", code, errs)
	}
}

// TestMetalArtifact: no Metal runtime here, so running one is exit 6 with
// the reason.
func TestMetalArtifact(t *testing.T) {
	file := "../../testdata/models/cnn.hir"
	src, _ := os.ReadFile(file)
	seed := uint64(4)
	art := filepath.Join(t.TempDir(), "cnn.rlx")
	if _, err := driver.Build(file, src, art, driver.Options{Target: "metal", Bindings: []specialize.Binding{{"batch": 1}}, RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := rlxrun(t, art, "--fill", "random"); code != exitDevice || !strings.Contains(errs, "no Metal runtime") {
		t.Errorf("metal artifact: exit %d, %s", code, errs)
	}
}

// TestMemoryLimit: a variant whose run needs more host memory than
// --max-memory is refused before anything is allocated, with exit 7 and
// a line saying how much it needs; a bad limit is a usage error.
func TestMemoryLimit(t *testing.T) {
	art := buildModel(t, t.TempDir(), "../../testdata/models/mlp.hir", specialize.Binding{"batch": 64})
	code, _, errs := rlxrun(t, art, "--fill", "random", "--max-memory", "64KiB")
	if code != exitMemory || !strings.Contains(errs, "variant batch=64 needs") || !strings.Contains(errs, "more than the limit of 64 KiB") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if code, _, errs := rlxrun(t, art, "--fill", "random", "--max-memory", "1GiB"); code != exitOK {
		t.Errorf("1GiB: exit %d: %s", code, errs)
	}
	if code, _, errs := rlxrun(t, art, "--fill", "random", "--max-memory", "lots"); code != exitUsage || !strings.Contains(errs, "not a byte size") {
		t.Errorf("bad limit: exit %d: %s", code, errs)
	}
}

// TestOutputFilesStayInTheDirectory: output names come from the artifact;
// none may name a path outside --output-dir, and no two share a file.
func TestOutputFilesStayInTheDirectory(t *testing.T) {
	names := []string{"y", "../../x", "/etc/passwd", "a/b", "a_b", "..", "", "logits.v2", `c:\win`}
	var outs []loader.Named
	for _, n := range names {
		outs = append(outs, loader.Named{Name: n})
	}
	files := outputFiles(outs)
	seen := map[string]bool{}
	for _, n := range names {
		f := files[n]
		if f != filepath.Base(f) || strings.HasPrefix(f, ".") || strings.ContainsAny(f, `/\`) || !strings.HasSuffix(f, ".npy") {
			t.Errorf("%q -> %q: not a plain file name in the directory", n, f)
		}
		if seen[f] {
			t.Errorf("%q -> %q: taken by another output", n, f)
		}
		seen[f] = true
	}
	if files["y"] != "y.npy" || files["logits.v2"] != "logits.v2.npy" {
		t.Errorf("plain names changed: %v", files)
	}
}

// TestVersion: "rlxrun version" is the version, not a file named version.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errs := rlxrun(t, args...)
		if code != exitOK || !strings.HasPrefix(out, "rlxrun version "+version+" (") {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errs)
		}
	}
}

// TestBindSelectsByTheDimsNamed: --bind names as many dims as it takes to
// pick one variant, in rlxc's syntax; a list of values (which builds
// several variants) is a usage error here.
func TestBindSelectsByTheDimsNamed(t *testing.T) {
	art := buildModel(t, t.TempDir(), encoder, specialize.Binding{"batch": 1, "seq": 3}, specialize.Binding{"batch": 2, "seq": 3}, specialize.Binding{"batch": 1, "seq": 5})
	for _, c := range []struct {
		bind []string
		code int
		want string
	}{
		{[]string{"--bind", "seq=5"}, exitOK, "y: f32[1, 5, 256]"},
		{[]string{"--bind", "batch=2"}, exitOK, "y: f32[2, 3, 256]"},
		{[]string{"--bind", "batch=1,seq=3"}, exitOK, "y: f32[1, 3, 256]"},
		{[]string{"--bind", "batch=1", "--bind", "seq=3"}, exitOK, "y: f32[1, 3, 256]"},
		{[]string{"--bind", "batch=1"}, exitInputs, "batch=1 matches 2 variants (batch=1,seq=3; batch=1,seq=5): name more dims"},
		{[]string{"--bind", "seq=7"}, exitInputs, "no variant for seq=7"},
		{[]string{"--bind", "seq=3,5"}, exitUsage, "a run uses one variant"},
	} {
		code, out, errs := rlxrun(t, append([]string{art, "--fill", "random"}, c.bind...)...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s%s", c.bind, code, c.code, c.want, out, errs)
		}
	}
}

// TestJSONSchemas: run --json and bench --json say, under a versioned
// schema, which variant ran on which device with how many threads and
// what code; bench adds per-run times and the profile when asked.
func TestJSONSchemas(t *testing.T) {
	dir := t.TempDir()
	art := buildModel(t, dir, "../../testdata/models/gpt.hir", specialize.Binding{"batch": 1, "seq": 4}, specialize.Binding{"batch": 1, "seq": 8})
	code, out, errs := rlxrun(t, art, "--fill", "random", "--bind", "seq=8", "--threads", "2", "--json")
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	var r struct {
		runHeader
		OK      bool              `json:"ok"`
		Outputs []json.RawMessage `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Schema != "rlxrun.run/1" || r.Variant != "batch=1,seq=8" || r.Device != "cpu" || r.Threads != 2 || r.Code == "" || !r.OK || len(r.Outputs) != 1 {
		t.Errorf("run --json: %+v", r)
	}
	code, out, errs = rlxrun(t, "bench", art, "--runs", "4", "--warmup", "1", "--threads", "1", "--json", "--profile", "--run-times")
	if code != exitOK {
		t.Fatalf("bench: exit %d\n%s", code, errs)
	}
	var b benchJSON
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Schema != "rlxrun.bench/1" || b.Variant != "batch=1,seq=4" || b.Threads != 1 || b.Runs != 4 || len(b.RunMS) != 4 || b.Warmup != 1 ||
		len(b.Profile) == 0 || b.P50 <= 0 || b.P99 < b.P50 {
		t.Errorf("bench --json: %+v", b)
	}
	sum, busy := 0.0, 0
	for _, p := range b.Profile {
		sum += p.Percent
		// One thread keeps at most one thread busy.
		if p.Kind == "" || !strings.Contains(p.Src, "gpt.hir:") || p.Threads < 0 || p.Threads > 1.05 {
			t.Errorf("profile row %+v", p)
		}
		if p.Threads > 0 {
			busy++
		}
		// Generated code is named by the step it replaced.
		if p.Kind == "native" || strings.HasPrefix(p.Kind, "native ") && len(p.Kind) == len("native ") {
			t.Errorf("profile row %+v: native code without the kind it computes", p)
		}
	}
	if busy == 0 {
		t.Errorf("no profile row has its threads' busy time: %+v", b.Profile)
	}
	if math.Abs(sum-100) > 0.01 {
		t.Errorf("profile shares sum to %v", sum)
	}
}
