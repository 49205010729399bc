package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
)

// forge rewrites every program of the artifact at path through the
// artifact package's writer, so every digest is valid: only the program
// is wrong.
func forge(t *testing.T, path, out string, change func(p *lir.Program)) {
	t.Helper()
	forgeWith(t, path, out, nil, change)
}

// forgeWith is forge that may also change the manifest.
func forgeWith(t *testing.T, path, out string, changeManifest func(m *artifact.Manifest), change func(p *lir.Program)) {
	t.Helper()
	f, err := artifact.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sections []artifact.Section
	for _, s := range f.Sections() {
		data, err := f.Section(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name == "manifest" && changeManifest != nil {
			var m artifact.Manifest
			if err := artifact.UnmarshalManifest(data, &m); err != nil {
				t.Fatal(err)
			}
			changeManifest(&m)
			if data, err = artifact.MarshalManifest(m); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasPrefix(s.Name, "program/") && change != nil {
			var p lir.Program
			if err := artifact.UnmarshalManifest(data, &p); err != nil {
				t.Fatal(err)
			}
			change(&p)
			if data, err = artifact.MarshalManifest(&p); err != nil {
				t.Fatal(err)
			}
		}
		sections = append(sections, artifact.Section{Name: s.Name, Codec: s.Codec, Align: s.Align, Data: append([]byte(nil), data...)})
	}
	if err := artifact.WriteFile(out, sections); err != nil {
		t.Fatal(err)
	}
}

// TestForgedProgramsAreRefused: an artifact whose digests check out but
// whose program reads or writes outside its buffers, or does not match
// its signature, is refused when it is opened, before anything runs, with
// an error naming the variant, the step and the field; rlxrun exits 3
// with that one line.
func TestForgedProgramsAreRefused(t *testing.T) {
	dir := t.TempDir()
	good := buildGPT(t, dir)
	if m, err := loader.Open(good, loader.Options{Threads: 1}); err != nil {
		t.Fatalf("the unforged artifact: %v", err)
	} else {
		m.Close()
	}
	first := func(p *lir.Program, kind lir.Kind) lir.Op {
		for _, s := range p.Steps {
			if s.Op.Kind() == kind {
				return s.Op
			}
		}
		t.Fatalf("no %s step", kind)
		return nil
	}
	cases := []struct {
		name   string
		change func(p *lir.Program)
		want   string
	}{
		{"a result in the weights", func(p *lir.Program) {
			mm := first(p, "matmul_packed").(*lir.PackedMatMul)
			mm.Out = mm.B
		}, "which is a read-only weight"},
		{"a product wider than its output", func(p *lir.Program) { first(p, "matmul_packed").(*lir.PackedMatMul).N *= 4 }, "matmul_packed"},
		{"a huge shape", func(p *lir.Program) { first(p, "matmul_packed").(*lir.PackedMatMul).M = 1 << 62 }, "too many elements"},
		{"an arena of 2^60 bytes", func(p *lir.Program) { p.ArenaBytes = 1 << 60 }, ""},
		{"a register index of 7M", func(p *lir.Program) {
			ew := first(p, "ew").(*lir.Elementwise)
			ew.Code[len(ew.Code)-1].Dst = 7 << 20
		}, "register 7340032"},
		{"an offset that overflows", func(p *lir.Program) { p.Buffers[len(p.Buffers)-1].Offset = 1<<63 - 8 }, "overflows"},
		{"an input slot of another shape", func(p *lir.Program) { p.Inputs[0].Shape = append(p.Inputs[0].Shape, 2) }, "input 0"},
		{"outputs out of order", func(p *lir.Program) { p.Outputs = append(p.Outputs, p.Outputs[0]) }, "output 1"},
	}
	_, rlxrun := tools(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(dir, "bad.rlx")
			forge(t, good, bad, tc.change)
			m, err := loader.Open(bad, loader.Options{Threads: 1})
			if err == nil {
				m.Close()
				if tc.want != "" {
					t.Fatalf("opened; want an error containing %q", tc.want)
				}
				return // a big arena opens; a run of it is refused (TestForgedArtifactsThroughRlxrun)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `section "program/0"`) {
				t.Fatalf("got %v, want an error about program/0 containing %q", err, tc.want)
			}
			cmd := exec.Command(rlxrun, "check", bad)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Fatalf("rlxrun check: %v, want exit 3\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("rlxrun check: %s, want it to say %q", out, tc.want)
			}
			if lines := strings.Count(strings.TrimSpace(string(out)), "\n") + 1; lines != 1 || strings.Contains(string(out), "panic") {
				t.Errorf("rlxrun check printed %d lines, want one:\n%s", lines, out)
			}
		})
	}
	os.Remove(filepath.Join(dir, "bad.rlx"))
}

// TestTooManyVariants: a manifest claiming more variants than a model may
// have is refused at Open, before any program is decoded.
func TestTooManyVariants(t *testing.T) {
	dir := t.TempDir()
	good := buildGPT(t, dir)
	f, err := artifact.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	var sections []artifact.Section
	for _, s := range f.Sections() {
		data, _ := f.Section(s.Name)
		if s.Name == "manifest" {
			var m artifact.Manifest
			if err := artifact.UnmarshalManifest(data, &m); err != nil {
				t.Fatal(err)
			}
			for len(m.Variants) <= loader.MaxVariants {
				m.Variants = append(m.Variants, m.Variants[0])
			}
			if data, err = artifact.MarshalManifest(m); err != nil {
				t.Fatal(err)
			}
		}
		sections = append(sections, artifact.Section{Name: s.Name, Codec: s.Codec, Align: s.Align, Data: append([]byte(nil), data...)})
	}
	f.Close()
	bad := filepath.Join(dir, "many.rlx")
	if err := artifact.WriteFile(bad, sections); err != nil {
		t.Fatal(err)
	}
	if _, err := loader.Open(bad, loader.Options{Threads: 1}); err == nil || !strings.Contains(err.Error(), "more than the 4096 a model may have") {
		t.Fatalf("got %v", err)
	}
}

// TestForgedArtifactsThroughRlxrun runs rlxrun on forged artifacts whose
// digests check out: an output named to climb out of --output-dir is
// written inside it, and an arena of 2^36 bytes is refused before it is
// allocated (exit 7, one line) instead of a fatal out-of-memory.
func TestForgedArtifactsThroughRlxrun(t *testing.T) {
	dir := t.TempDir()
	good := buildGPT(t, dir)
	_, rlxrun := tools(t)

	climb := filepath.Join(dir, "climb.rlx")
	forgeWith(t, good, climb, func(m *artifact.Manifest) { m.Signature.Outputs[0].Name = "../../x" },
		func(p *lir.Program) { p.Outputs[0].Name = "../../x" })
	outDir := filepath.Join(dir, "a", "b", "out")
	out, err := exec.Command(rlxrun, climb, "--fill", "random", "--output-dir", outDir).CombinedOutput()
	if err != nil {
		t.Fatalf("rlxrun: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "x.npy")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an output was written outside --output-dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outDir, "_.._.._x.npy")); err != nil {
		t.Errorf("the output is not in --output-dir under its escaped name: %v", err)
	}

	arena := filepath.Join(dir, "arena.rlx")
	forge(t, good, arena, func(p *lir.Program) { p.ArenaBytes = 1 << 36 })
	refusedRun(t, "an arena of 2^36 bytes", 7, "needs 64 GiB per run", rlxrun, arena, "--fill", "random")
}

// maxRefusedRSS bounds the peak memory of an rlxrun that refuses a forged
// artifact: it maps the file and decodes small sections, no more.
const maxRefusedRSS = 64 << 20

// refusedRun runs rlxrun with args under GNU time (make deps installs it)
// and checks that it exits with code, printing one line that contains
// want, and peaks under maxRefusedRSS. The peak is measured by time,
// which forks: a child started by this (large) test process would
// inherit its high-water mark across exec.
func refusedRun(t *testing.T, what string, code int, want string, args ...string) {
	t.Helper()
	timeBin, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and GNU time is missing (make deps installs it)")
		}
		t.Logf("%s: peak memory not measured: no /usr/bin/time (apt-get install time)", what)
	}
	rss := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(args[0], args[1:]...)
	if timeBin != "" {
		cmd = exec.Command(timeBin, append([]string{"-f", "%M", "-o", rss}, args...)...)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != code || !strings.Contains(string(out), want) ||
		strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Errorf("%s: %v (want exit %d and one line saying %q)\n%s", what, err, code, want, out)
	}
	if timeBin == "" {
		return
	}
	b, err := os.ReadFile(rss)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b)) // time adds a line when the command fails
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		t.Fatalf("%s: GNU time wrote %q", what, b)
	}
	if kib<<10 > maxRefusedRSS {
		t.Errorf("%s: rlxrun peaked at %d MiB resident, want under %d MiB", what, kib>>10, maxRefusedRSS>>20)
	}
}

// TestForgedCompressedSection: a zstd section whose digests check out
// but which decodes to more than --max-memory is refused at open, before
// it is decoded (exit 7, one line), where the same limit runs the model.
func TestForgedCompressedSection(t *testing.T) {
	dir := t.TempDir()
	good := buildGPT(t, dir)
	_, rlxrun := tools(t)
	f, err := artifact.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	var sections []artifact.Section
	for _, s := range f.Sections() {
		data, err := f.Section(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		sections = append(sections, artifact.Section{Name: s.Name, Codec: s.Codec, Align: s.Align, Data: append([]byte(nil), data...)})
	}
	f.Close()
	// 64 MiB that compress ~100x (all zeros would pass the writer's ratio
	// bound and be stored raw, mapped rather than decoded).
	junk := make([]byte, 64<<20)
	for i := 0; i < len(junk); i += 251 {
		junk[i] = byte(i * 7919 >> 8)
	}
	sections = append(sections, artifact.Section{Name: "junk", Codec: artifact.CodecZstd, Data: junk})
	bomb := filepath.Join(dir, "bomb.rlx")
	if err := artifact.WriteFile(bomb, sections); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(bomb); err != nil || st.Size() > 8<<20 {
		t.Fatalf("the forged section is not compressed: %v", err)
	}
	if out, err := exec.Command(rlxrun, good, "--fill", "random", "--max-memory", "32MiB").CombinedOutput(); err != nil {
		t.Fatalf("the unforged artifact under --max-memory 32MiB: %v\n%s", err, out)
	}
	refusedRun(t, "a 64 MiB zstd section under --max-memory 32MiB", 7, "compressed sections decode to 64 MiB", rlxrun, bomb, "--fill", "random", "--max-memory", "32MiB")
}

// TestForgedDerivedWeight: a native build of cnn (3x3 convolutions run
// as Winograd) stores its convolutions' weights and derives the
// transformed ones at load; a derivation whose source, kind or arguments
// do not fit the table is refused at open (exit 3, one line naming the
// weight), where the unforged artifact runs.
func TestForgedDerivedWeight(t *testing.T) {
	if len(cpuConfigs(t)) < 2 {
		t.Skip("needs hardware: no native level runs here")
	}
	best, _ := native.Best()
	dir := t.TempDir()
	file := "../testdata/models/cnn.hir"
	src, _ := os.ReadFile(file)
	seed := uint64(3)
	good := filepath.Join(dir, "cnn.rlx")
	if _, err := build(t, file, src, good, driver.Options{Target: "cpu", CPU: []string{best.Name}, Bindings: twoBindings(t, load(t, file)), RandomSeed: &seed, Compiler: "test"}); err != nil {
		t.Fatal(err)
	}
	f, err := artifact.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Section("manifest")
	if err != nil {
		t.Fatal(err)
	}
	var m artifact.Manifest
	if err := artifact.UnmarshalManifest(raw, &m); err != nil {
		t.Fatal(err)
	}
	wsec, err := f.Section("weights")
	if err != nil {
		t.Fatal(err)
	}
	section, stored, derived := int64(len(wsec)), int64(0), int64(0)
	derivedAt := -1
	for i, w := range m.Weights {
		if w.Derive != nil {
			derived += w.Bytes
			derivedAt = i
		} else {
			stored += w.Bytes
		}
	}
	f.Close()
	if derivedAt < 0 {
		t.Fatal("no weight is derived: cnn's 3x3 convolutions did not run as Winograd")
	}
	if section >= stored+derived {
		t.Errorf("the weights section holds %d bytes: the stored weights take %d, the derived %d, which it should not hold", section, stored, derived)
	}
	_, rlxrun := tools(t)
	if out, err := exec.Command(rlxrun, good, "--fill", "random").CombinedOutput(); err != nil {
		t.Fatalf("the unforged artifact: %v\n%s", err, out)
	}
	name := m.Weights[derivedAt].Name
	for _, tc := range []struct {
		what  string
		forge func(d *artifact.Derivation)
	}{
		{"derived from itself", func(d *artifact.Derivation) { d.From = derivedAt }},
		{"unknown kind", func(d *artifact.Derivation) { d.Kind = "fft" }},
		{"tile 3", func(d *artifact.Derivation) { d.Args[2] = 3 }},
		{"other channels", func(d *artifact.Derivation) { d.Args[1]++ }},
	} {
		out := filepath.Join(dir, "forged.rlx")
		forgeWith(t, good, out, func(m *artifact.Manifest) { tc.forge(m.Weights[derivedAt].Derive) }, nil)
		refusedRun(t, tc.what, 3, name+": ", rlxrun, out, "--fill", "random")
	}
}
