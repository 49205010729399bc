package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rlxc runs the CLI in-process and returns its exit code and output.
func rlxc(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func models(t *testing.T) []string {
	files, err := filepath.Glob("../../testdata/models/*.hir")
	if err != nil || len(files) == 0 {
		t.Fatalf("no models: %v", err)
	}
	return files
}

func TestCheckModels(t *testing.T) {
	code, out, errs := rlxc(t, "", append([]string{"check"}, models(t)...)...)
	if code != exitOK || out != "" || errs != "" {
		t.Fatalf("check models: code %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

func TestCheckReportsErrorsWithPositions(t *testing.T) {
	code, _, errs := rlxc(t, "", "check", "../../testdata/errors/shape_mismatch.hir", "../../testdata/errors/unknown_op.hir")
	if code != exitInput {
		t.Fatalf("code %d, want %d", code, exitInput)
	}
	for _, want := range []string{
		"../../testdata/errors/shape_mismatch.hir:9:7: linear: x has 256 features but fc1.weight expects 512",
		"../../testdata/errors/unknown_op.hir:5:7: unknown operation \"rellu\" (did you mean relu?)",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

// TestCheckONNX: check imports an ONNX model in memory, as build does,
// binds its dims (a bound's error carries the note that its line is the
// imported HIR's), and refuses bytes that are not ONNX as one error;
// fmt refuses an ONNX model, naming the import.
func TestCheckONNX(t *testing.T) {
	model := "../../testdata/onnx/encoder13.onnx"
	if code, out, errs := rlxc(t, "", "check", "-v", model); code != exitOK || !strings.Contains(out, "func main") {
		t.Fatalf("check %s: code %d\n%s%s", model, code, out, errs)
	}
	code, _, errs := rlxc(t, "", "check", "--bind", "batch=0", model)
	if code != exitInput || !strings.Contains(errs, "dim batch = 0 is outside its bounds") || !strings.Contains(errs, "in the HIR that rlxc import") {
		t.Errorf("check --bind batch=0: code %d: %s", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.onnx")
	if err := os.WriteFile(bad, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = rlxc(t, "", "check", bad)
	if code != exitInput || strings.Count(strings.TrimSpace(errs), "\n") != 0 || strings.Count(errs, bad) != 1 {
		t.Errorf("check of bytes that are not ONNX: code %d, want one line naming the file once: %s", code, errs)
	}
	if code, out, errs := rlxc(t, "", "inspect", model); code != exitOK || !strings.Contains(out, "func main") {
		t.Errorf("inspect %s: code %d\n%s%s", model, code, out, errs)
	}
	code, _, errs = rlxc(t, "", "fmt", model)
	if code != exitInput || !strings.Contains(errs, "is an ONNX model; fmt formats HIR text (rlxc import") {
		t.Errorf("fmt of an ONNX model: code %d: %s", code, errs)
	}
}

func TestCheckVerbose(t *testing.T) {
	code, out, _ := rlxc(t, "", "check", "-v", "../../testdata/models/encoder.hir")
	if code != exitOK || !strings.Contains(out, "q1 : f32[batch, seq, 4, 64] = reshape") {
		t.Fatalf("code %d, output:\n%s", code, out)
	}
}

func TestCheckBind(t *testing.T) {
	enc := "../../testdata/models/encoder.hir"
	if code, _, errs := rlxc(t, "", "check", "--bind", "batch=1", "--bind", "seq=1,4096", enc); code != exitOK {
		t.Fatalf("in-bounds binding: code %d: %s", code, errs)
	}
	code, _, errs := rlxc(t, "", "check", "--bind", "seq=5000", enc)
	if code != exitInput || !strings.Contains(errs, "dim seq = 5000 is outside its bounds [1, 4096]") {
		t.Fatalf("out of bounds: code %d: %s", code, errs)
	}
	code, _, errs = rlxc(t, "", "check", "--bind", "seq", enc)
	if code != exitUsage || !strings.Contains(errs, "want NAME=V") {
		t.Fatalf("malformed --bind: code %d: %s", code, errs)
	}
}

func TestExitCodes(t *testing.T) {
	if code, _, errs := rlxc(t, "", "check", "no/such/file.hir"); code != exitIO || !strings.Contains(errs, "no such file") {
		t.Errorf("missing file: code %d: %s", code, errs)
	}
	if code, _, _ := rlxc(t, "", "check", "--no-such-flag", "x.hir"); code != exitUsage {
		t.Errorf("unknown flag: code %d, want %d", code, exitUsage)
	}
	if code, _, _ := rlxc(t, "", "check"); code != exitUsage {
		t.Errorf("no files: code %d, want %d", code, exitUsage)
	}
	if code, _, _ := rlxc(t, "", "frobnicate"); code != exitUsage {
		t.Errorf("unknown command: code %d, want %d", code, exitUsage)
	}
	if code, out, _ := rlxc(t, "", "--help"); code != exitOK || !strings.Contains(out, "Exit codes") {
		t.Errorf("--help: code %d:\n%s", code, out)
	}
}

const messy = "hir 1\nmodule   m\nfunc main(x:f32[4])->(y:f32[4]){\ny=relu(x)   # r\nreturn y\n}\n"
const tidy = "hir 1\nmodule m\n\nfunc main(x: f32[4]) -> (y: f32[4]) {\n  y = relu(x) # r\n  return y\n}\n"

func TestFmt(t *testing.T) {
	code, out, errs := rlxc(t, messy, "fmt", "-")
	if code != exitOK || out != tidy {
		t.Fatalf("fmt -: code %d, stderr %q\ngot:\n%s\nwant:\n%s", code, errs, out, tidy)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "m.hir")
	if err := os.WriteFile(file, []byte(messy), 0o640); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := rlxc(t, "", "fmt", "--check", file); code != exitInput || !strings.Contains(out, file) {
		t.Errorf("--check on a messy file: code %d, out %q", code, out)
	}
	if code, _, errs := rlxc(t, "", "fmt", "-w", file); code != exitOK {
		t.Fatalf("fmt -w: code %d: %s", code, errs)
	}
	got, _ := os.ReadFile(file)
	if string(got) != tidy {
		t.Errorf("fmt -w wrote:\n%s", got)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Errorf("fmt -w changed the mode to %v", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("fmt -w left %d files in the directory, want 1", len(entries))
	}
	if code, out, _ := rlxc(t, "", "fmt", "--check", file); code != exitOK || out != "" {
		t.Errorf("--check on a formatted file: code %d, out %q", code, out)
	}
	// A file that does not parse is left alone and reported.
	bad := filepath.Join(dir, "bad.hir")
	os.WriteFile(bad, []byte("hir 1\nmodule m\nfunc (\n"), 0o644)
	if code, _, errs := rlxc(t, "", "fmt", "-w", bad); code != exitInput || !strings.Contains(errs, "bad.hir:3:6") {
		t.Errorf("fmt -w on a broken file: code %d: %s", code, errs)
	}
	if got, _ := os.ReadFile(bad); string(got) != "hir 1\nmodule m\nfunc (\n" {
		t.Errorf("fmt -w modified a file that does not parse")
	}
}

func TestFmtModelsIdempotent(t *testing.T) {
	for _, f := range models(t) {
		code, out, errs := rlxc(t, "", "fmt", f)
		if code != exitOK {
			t.Fatalf("%s: %s", f, errs)
		}
		code, out2, _ := rlxc(t, out, "fmt", "-")
		if code != exitOK || out2 != out {
			t.Errorf("%s: fmt of formatted output changed it", f)
		}
	}
}
