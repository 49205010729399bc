package targets_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets"
	"github.com/rlx-project/rlx/pkg/targets/cpu/cgen"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

var update = flag.Bool("update", false, "rewrite testdata/lir from the current output")

// TestGoldenLIR prints the LIR program of every bundled model for every
// target at one binding and compares it with testdata/lir/MODEL.TARGET.lir,
// so that a change in scheduling (a kernel chosen, a buffer moved, a
// relayout added) shows up in review. After an intended change, run
//
//	go test ./pkg/targets -run TestGoldenLIR -update
//
// and review every changed line before committing.
func TestGoldenLIR(t *testing.T) {
	files, err := filepath.Glob("../../testdata/models/*.hir")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled models: %v", err)
	}
	dir := filepath.Join("..", "..", "testdata", "lir")
	for _, file := range files {
		model := strings.TrimSuffix(filepath.Base(file), ".hir")
		for _, g := range goldenBackends(t) {
			t.Run(model+"/"+g.name, func(t *testing.T) {
				// Parallel: the GPU backends run glslang and clang per kernel.
				t.Parallel()
				got := printLIR(t, file, g.b, g.native)
				path := filepath.Join(dir, model+"."+g.name+".lir")
				if *update {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./pkg/targets -run TestGoldenLIR -update, then review the file)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("the LIR of %s for %s changed; if that is intended, run go test ./pkg/targets -run TestGoldenLIR -update and review the diff\n%s",
						model, g.name, firstDiff(string(want), string(got)))
				}
			})
		}
	}
}

// goldenBackend is one golden file per model: a target's program, or
// with native set the portable cpu program as cgen rewrites it (its
// functions named by their source's digest, so a change in the C shows;
// nothing is compiled, so the file is the same on every machine).
type goldenBackend struct {
	name   string
	b      targets.Backend
	native bool
}

func goldenBackends(t *testing.T) []goldenBackend {
	var out []goldenBackend
	for _, b := range targets.All() {
		if b.Name() == "cpu" {
			// Integer products on, as on a CPU with the kernels, so
			// that the files are the same on every machine.
			on := true
			portable, err := targets.Lookup("cpu", targets.Options{CPU: []string{"portable"}, Int8Products: &on})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, goldenBackend{"cpu", portable, false}, goldenBackend{"cpu-native", portable, true})
			continue
		}
		out = append(out, goldenBackend{b.Name(), b, false})
	}
	return out
}

// printLIR compiles the main function of a bundled model for one target
// at a small binding (random weights: the LIR does not depend on them)
// and prints its program.
func printLIR(t *testing.T, file string, b targets.Backend, native bool) []byte {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := hir.ParseFile(filepath.Base(file), src)
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	ws := &lower.Weights{Dir: filepath.Dir(file), Random: true, Seed: 1}
	defer ws.Close()
	g, err := lower.ToMIR(m, "main", ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fusion.Run(g); err != nil {
		t.Fatal(err)
	}
	binding := specialize.Binding{}
	for i, n := range m.DimNames() {
		iv := m.Bounds[n]
		binding[n] = min(max(int64(3+i), iv.Lo), iv.Hi)
	}
	if err := m.CheckBinding(binding); err != nil {
		t.Fatalf("binding %v: %v", binding, err)
	}
	plan, err := specialize.SpecializeWith(g, binding, b.Caps())
	if err != nil {
		t.Fatal(err)
	}
	weights := b.NewWeights()
	prog, err := b.Generate(plan, weights)
	if err != nil {
		t.Fatal(err)
	}
	name := b.Name()
	if native {
		if prog, err = cgen.Generate(prog, cgen.Options{EwGrain: tuning.NativeEwGrain, Weights: weights.Data}); err != nil {
			t.Fatal(err)
		}
		if prog.Native != nil {
			// The verifier wants an object for the functions.
			prog.Native.Objects = []lir.NativeObject{{Level: "none"}}
		}
		name += " (native functions, not compiled)"
	}
	// What the compiler emits passes the verifier the runtimes apply.
	if err := prog.Verify(); err != nil {
		t.Fatalf("%s for %s: %v", filepath.Base(file), name, err)
	}
	var out bytes.Buffer
	out.WriteString("# " + filepath.Base(file) + " for " + name + " at " + bindingText(binding) + "\n")
	if err := lir.Fprint(&out, prog); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func bindingText(b specialize.Binding) string {
	var parts []string
	for n, v := range b {
		parts = append(parts, n+"="+strconv.FormatInt(v, 10))
	}
	if len(parts) == 0 {
		return "(static)"
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// firstDiff shows the first line that differs, with its number.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n- " + w + "\n+ " + g
		}
	}
	return ""
}
