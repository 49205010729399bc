package loader_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// fuzzWork bounds the work of a program the fuzz target runs (small: go
// test -fuzz instruments every package, kernels included): the largest
// product of one step's numbers, a crude upper bound on its loop trips, so
// that a verified but enormous program (a copy of 2^40 elements through
// stride 0) is opened and checked but not run.
const fuzzWork = 1 << 16

// FuzzProgram mutates the decoded program of a real artifact (the bytes of
// its program section, re-encoded into an artifact with valid digests, so
// that only the program is wrong) and opens it; a program the loader
// accepts is run on zero inputs. Nothing may panic, crash or hang: a bad
// program is an error at Open (or, for what only a run can see, at Run).
func FuzzProgram(f *testing.F) {
	dir := f.TempDir()
	var sections []artifact.Section
	for _, m := range []struct {
		file string
		b    specialize.Binding
	}{ // small models: go test -fuzz instruments the compiler too, and every worker builds them
		{"ops_norm.hir", specialize.Binding{"batch": 1, "seq": 2}}, {"ops_attention.hir", specialize.Binding{"batch": 1, "seq": 3, "past": 2}},
		{"ops_unary.hir", specialize.Binding{"batch": 1, "n": 5}}, {"ops_shape.hir", specialize.Binding{"batch": 1, "seq": 2, "past": 1, "m": 3}}} {
		path := filepath.Join("..", "..", "testdata", "models", m.file)
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		seed := uint64(3)
		out := filepath.Join(dir, m.file+".rlx")
		// Portable: native code is machine code, which no loader can
		// prove safe once its bytes are changed (a mutated instruction
		// passes every structural check); FuzzLoad covers the objects'
		// structure, and docs/native.md says what trusting an artifact
		// with native code means.
		if _, err := driver.Build(path, src, out, driver.Options{Target: "cpu", CPU: []string{"portable"}, Bindings: []specialize.Binding{m.b}, RandomSeed: &seed, Compiler: "fuzz"}); err != nil {
			f.Fatal(err)
		}
		a, err := artifact.Open(out)
		if err != nil {
			f.Fatal(err)
		}
		if sections == nil {
			// The template: ops_norm's manifest and weights; each input
			// replaces its program (a program of another model meets
			// ops_norm's signature and weights, one more way to be wrong).
			for _, s := range a.Sections() {
				data, _ := a.Section(s.Name)
				sections = append(sections, artifact.Section{Name: s.Name, Codec: s.Codec, Align: s.Align, Data: append([]byte(nil), data...)})
			}
		}
		prog, err := a.Section("program/0")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte(nil), prog...))
		a.Close()
	}
	f.Fuzz(func(t *testing.T, prog []byte) {
		secs := append([]artifact.Section(nil), sections...)
		for i := range secs {
			if secs[i].Name == "program/0" {
				secs[i].Data = prog
			}
		}
		path := filepath.Join(t.TempDir(), "f.rlx")
		if err := artifact.WriteFile(path, secs); err != nil {
			t.Fatal(err)
		}
		m, err := loader.Open(path, loader.Options{Threads: 1, MaxMemory: 64 << 20})
		if err != nil {
			return
		}
		defer m.Close()
		var p lir.Program
		if err := artifact.UnmarshalManifest(prog, &p); err != nil {
			t.Fatalf("the loader accepted a program that does not decode: %v", err)
		}
		for _, s := range p.Steps {
			if work(reflect.ValueOf(s.Op).Elem()) > fuzzWork {
				return
			}
		}
		// Inputs checks the memory a run and its inputs need against the
		// limit before anything is allocated.
		slots, err := m.Inputs(nil)
		if err != nil {
			return
		}
		inputs := map[string]*tensor.Tensor{}
		for _, s := range slots {
			dt, _ := tensor.ParseDType(s.DType)
			inputs[s.Name] = tensor.New(dt, s.Shape...)
		}
		m.Run(inputs) // an error is fine; a panic or a crash is not
	})
}

// work multiplies every positive integer in v (a step's fields, nested).
func work(v reflect.Value) int64 {
	w := int64(1)
	mul := func(x int64) {
		if x > 1 {
			if w > fuzzWork*4/x {
				w = fuzzWork * 4
				return
			}
			w *= x
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			mul(work(v.Field(i)))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			mul(work(v.Index(i)))
		}
	case reflect.Int, reflect.Int64:
		if v.Type() != reflect.TypeOf(lir.Buf(0)) {
			mul(v.Int())
		}
	}
	return w
}
