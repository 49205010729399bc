// Package e2e holds the tests that build and run: they sit above both the
// compiler and the runtime, so neither has to import the other.
package e2e

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/mir/eval"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// relTol is the bar for the CPU target against the reference interpreter:
// |got - ref| <= relTol * max(1, |ref|). The reference computes in float64,
// the kernels in float32 with float32 accumulation in places, so this is
// about 100 float32 ulps of headroom.
const relTol = 1e-5

func models(t *testing.T) []string {
	files, err := filepath.Glob("../testdata/models/*.hir")
	if err != nil || len(files) == 0 {
		t.Fatalf("no models: %v", err)
	}
	return files
}

func load(t *testing.T, file string) *hir.Module {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := hir.ParseFile(file, src)
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// twoBindings finds two different bindings of the dims main uses that pass
// the model's bounds and deferred relations.
func twoBindings(t *testing.T, m *hir.Module) []specialize.Binding {
	t.Helper()
	f := m.Func("main")
	dims := map[string]bool{}
	for _, a := range f.Params {
		for _, d := range a.Checked.Shape {
			for _, s := range d.Syms() {
				dims[s] = true
			}
		}
	}
	for _, s := range f.Body {
		for _, ty := range s.Types {
			for _, d := range ty.Shape {
				for _, sym := range d.Syms() {
					dims[sym] = true
				}
			}
		}
	}
	if len(dims) == 0 {
		return []specialize.Binding{{}}
	}
	var names []string
	for d := range dims {
		names = append(names, d)
	}
	sort.Strings(names)
	var out []specialize.Binding
	for _, k := range []int64{2, 3, 4, 5, 6, 8, 12, 16, 32, 64} {
		b := specialize.Binding{}
		for i, n := range names {
			iv := m.Bounds[n]
			v := k + int64(i) // different dims get different values, to catch mixed-up dims
			b[n] = min(max(v, iv.Lo), iv.Hi)
		}
		if m.CheckBinding(b) != nil {
			continue
		}
		out = append(out, b)
		if len(out) == 2 {
			return out
		}
	}
	t.Fatalf("found %d valid bindings for dims %v", len(out), names)
	return nil
}

// randomInputs makes inputs for a program: normal floats, small
// non-negative integers (valid indices), random bools.
func randomInputs(slotsNames []string, dtypes []tensor.DType, shapes [][]int64, seed uint64) map[string]*tensor.Tensor {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := map[string]*tensor.Tensor{}
	for i, name := range slotsNames {
		t := tensor.New(dtypes[i], shapes[i]...)
		switch dtypes[i] {
		case tensor.F32:
			for j := range t.F32() {
				t.F32()[j] = float32(rng.NormFloat64())
			}
		case tensor.I64:
			for j := range t.I64() {
				t.I64()[j] = int64(rng.IntN(3))
			}
		case tensor.I32:
			for j := range t.I32() {
				t.I32()[j] = int32(rng.IntN(3))
			}
		default:
			for j := range t.Data {
				t.Data[j] = byte(rng.IntN(2))
			}
		}
		out[name] = t
	}
	return out
}

// modelInputs makes random inputs (see randomInputs) in the shapes of the
// model's variant for binding b.
func modelInputs(t *testing.T, m *loader.Model, b specialize.Binding, seed uint64) map[string]*tensor.Tensor {
	t.Helper()
	slots, err := m.Inputs(b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var dts []tensor.DType
	var shapes [][]int64
	for _, s := range slots {
		dt, _ := tensor.ParseDType(s.DType)
		names, dts, shapes = append(names, s.Name), append(dts, dt), append(shapes, s.Shape)
	}
	return randomInputs(names, dts, shapes, seed)
}

// TestModelsMatchReference builds every bundled model at two bindings and
// checks rlxrun's runtime against the reference interpreter on the
// unfused graph.
//
// It does so for each of the cpu target's builds (cpuConfigs).
func TestModelsMatchReference(t *testing.T) {
	for _, cpu := range cpuConfigs(t) {
		t.Run(strings.Join(cpu, "+"), func(t *testing.T) { modelsMatchReference(t, cpu) })
	}
}

func modelsMatchReference(t *testing.T, cpu []string) {
	dir := t.TempDir()
	seed := uint64(1)
	for _, file := range models(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".hir")
		t.Run(name, func(t *testing.T) {
			m := load(t, file)
			bindings := twoBindings(t, m)
			src, _ := os.ReadFile(file)
			out := filepath.Join(dir, name+".rlx")
			if _, err := build(t, file, src, out, driver.Options{Target: "cpu", CPU: cpu, Bindings: bindings, RandomSeed: &seed, Compiler: "test"}); err != nil {
				t.Fatalf("build: %v", err)
			}
			matchReference(t, out, newReference(t, file, m, seed), bindings)
		})
	}
}

// matchReference opens an artifact built at bindings and runs each
// variant on inputs seeded by its index against the reference.
func matchReference(t *testing.T, artifact string, ref *reference, bindings []specialize.Binding) {
	t.Helper()
	model, err := loader.Open(artifact, loader.Options{Threads: 2})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer model.Close()
	for bi, b := range bindings {
		inputs := modelInputs(t, model, b, uint64(bi+1))
		got, err := model.Run(inputs)
		if err != nil {
			t.Fatalf("binding %s: run: %v", b, err)
		}
		want := ref.run(t, b, inputs)
		for i := range want {
			if msg := compare(got[i].Tensor, want[i]); msg != "" {
				t.Errorf("binding %s, output %s: %s", b, got[i].Name, msg)
			}
		}
	}
}

// checkHIR builds a HIR module written for a test (random weights from
// seed) for the cpu target, portable and at each native level this
// machine runs, and matches every binding against the reference.
func checkHIR(t *testing.T, name, src string, bindings []specialize.Binding, seed uint64) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, name+".hir")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m := load(t, file)
	for _, cpu := range cpuConfigs(t) {
		t.Run(strings.Join(cpu, "+"), func(t *testing.T) {
			out := filepath.Join(dir, cpu[0]+".rlx")
			if _, err := build(t, file, []byte(src), out, driver.Options{Target: "cpu", CPU: cpu, Bindings: bindings, RandomSeed: &seed, Compiler: "test"}); err != nil {
				t.Fatalf("build: %v", err)
			}
			matchReference(t, out, newReference(t, file, m, seed), bindings)
		})
	}
}

// reference is a bundled model's graph as lowered, before any fusion,
// with the random weights of a seed: what the reference interpreter runs.
type reference struct{ g *mir.Graph }

func newReference(t *testing.T, file string, m *hir.Module, seed uint64) *reference {
	t.Helper()
	ws := &lower.Weights{Dir: filepath.Dir(file), Random: true, Seed: seed}
	t.Cleanup(func() { ws.Close() })
	g, err := lower.ToMIR(m, "main", ws)
	if err != nil {
		t.Fatal(err)
	}
	return &reference{g: g}
}

// run runs the reference interpreter on named inputs at binding b.
func (r *reference) run(t *testing.T, b specialize.Binding, inputs map[string]*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	ordered := make([]*tensor.Tensor, len(r.g.Inputs))
	for i, v := range r.g.Inputs {
		ordered[i] = inputs[v.Name]
	}
	want, err := eval.Run(r.g, b, ordered)
	if err != nil {
		t.Fatalf("binding %s: reference: %v", b, err)
	}
	return want
}

// compare checks shapes, dtypes and values within relTol.
func compare(got, want *tensor.Tensor) string { return compareTol(got, want, relTol) }

// compareTol checks shapes, dtypes and values: |got - want| <= tol *
// max(1, |want|) for every element.
func compareTol(got, want *tensor.Tensor, relTol float64) string {
	if got.DType != want.DType || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		return fmt.Sprintf("got %s%v, want %s%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	g, w := asFloat(got), asFloat(want)
	worst, at := 0.0, -1
	for i := range g {
		if g[i] == w[i] || math.IsNaN(g[i]) && math.IsNaN(w[i]) {
			continue
		}
		err := math.Abs(g[i]-w[i]) / math.Max(1, math.Abs(w[i]))
		if math.IsNaN(err) || err > worst {
			worst, at = err, i
			if math.IsNaN(err) {
				worst = math.Inf(1)
			}
		}
	}
	if worst > relTol {
		return fmt.Sprintf("element %d: got %.8g, want %.8g (relative error %.3g > %g)", at, g[at], w[at], worst, relTol)
	}
	return ""
}

func asFloat(t *tensor.Tensor) []float64 { return t.Float64s() }

// TestReproducible: the same build twice gives the same bytes.
func TestReproducible(t *testing.T) {
	t.Parallel() // minutes of external tools (glslang, clang, qemu) or builds: uses the second core
	dir := t.TempDir()
	seed := uint64(3)
	targets := []string{"cpu", "metal"}
	if _, err := exec.LookPath("glslangValidator"); err == nil {
		targets = append(targets, "vulkan")
	}
	if _, err := exec.LookPath("clang"); err == nil {
		targets = append(targets, "cuda")
	}
	for _, target := range targets {
		for _, file := range []string{"../testdata/models/gpt.hir", "../testdata/models/cnn.hir"} {
			src, _ := os.ReadFile(file)
			m := load(t, file)
			bs := twoBindings(t, m)
			var outs [][]byte
			for i := 0; i < 2; i++ {
				out := filepath.Join(dir, fmt.Sprintf("%s.%d.rlx", target, i))
				if _, err := driver.Build(file, src, out, driver.Options{Target: target, Bindings: bs, RandomSeed: &seed, Compiler: "test"}); err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(out)
				outs = append(outs, b)
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Errorf("%s, target %s: two builds differ", file, target)
			}
		}
	}
}
