package hir

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testdataFiles lists the .hir files under testdata/ (models and errors).
func testdataFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"models", "errors"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", dir, "*.hir"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no testdata .hir files found")
	}
	return files
}

// syntaxOnly compares parsed modules: positions and checker annotations are
// not part of the syntax.
var syntaxOnly = cmp.Options{
	cmpopts.IgnoreTypes(Pos{}),
	cmpopts.IgnoreFields(Module{}, "File", "Bounds", "Constraints"),
	cmpopts.IgnoreFields(Stmt{}, "Types", "Attr", "Defs"),
	cmpopts.IgnoreFields(ReturnStmt{}, "Defs"),
	cmpopts.IgnoreFields(Field{}, "Checked"),
	cmpopts.IgnoreFields(ParamDecl{}, "Checked"),
	cmpopts.EquateNaNs(),
	cmpopts.EquateEmpty(),
}

// TestRoundTrip checks parse(print(m)) == m for every testdata file but
// the syntax error cases (testdata/errors/syntax_*.hir, which must not
// parse; their messages are checked against their .err files), and that
// printing is a fixed point.
func TestRoundTrip(t *testing.T) {
	for _, file := range testdataFiles(t) {
		syntaxCase := strings.HasPrefix(filepath.Base(file), "syntax_")
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseFile(file, src)
			switch {
			case syntaxCase && err == nil:
				t.Fatal("a syntax error case parses")
			case syntaxCase:
				return
			case err != nil:
				t.Fatal(err)
			}
			checkRoundTrip(t, m)
		})
	}
}

func checkRoundTrip(t *testing.T, m *Module) {
	t.Helper()
	out := Format(m)
	m2, err := ParseFile("formatted", out)
	if err != nil {
		t.Fatalf("formatted output does not parse: %v\n%s", err, out)
	}
	if diff := cmp.Diff(m, m2, syntaxOnly); diff != "" {
		t.Fatalf("parse(print(m)) != m (-m +reparsed):\n%s\nformatted:\n%s", diff, out)
	}
	if out2 := Format(m2); !bytes.Equal(out, out2) {
		t.Fatalf("fmt is not idempotent:\nfirst:\n%s\nsecond:\n%s", out, out2)
	}
}

// TestModelsAreFormatted keeps the bundled models in canonical form, so
// they double as examples of it.
func TestModelsAreFormatted(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "models", "*.hir"))
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseFile(file, src)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if out := Format(m); !bytes.Equal(out, src) {
			t.Errorf("%s is not in canonical form; run: rlxc fmt -w %s", file, file)
		}
	}
}

// TestModelsCheck: every bundled model is valid.
func TestModelsCheck(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "models", "*.hir"))
	if len(files) < 4 {
		t.Fatalf("found %d models, want the bundled set", len(files))
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseFile(file, src)
		if err == nil {
			err = Check(m)
		}
		if err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestFormatCanonical pins the canonical spelling of tricky syntax.
func TestFormatCanonical(t *testing.T) {
	src := `# header
hir 1
module   "m x"   # trailing

dim a
dim bb in [ 1 ,8 ]   # bounded
param w:f32[2,2]=[[1,2],[3,-4.5]]
param "onnx::W_1" : f32[a_literal_free_shape_is_not_checked_here]
param f : f32[4] = @"w.safetensors"
func main(x:f32[((a)), bb*2]) -> (y: f32[a, (bb*2)]) {
  # doc
  t = add(x, x)   # sum
  "in" = slice(t, starts=[-(1)], ends=[a-(-1)], axes=[0])
  y : f32[a, 2*bb] = reshape("in", shape=[a-1+1, (bb+1)*2-2, 1e-5, inf, -inf, true, "s", f16])


  return y
}
# end
`
	want := `# header
hir 1
module "m x" # trailing

dim a
dim bb in [1, 8] # bounded
param w           : f32[2, 2] = [[1, 2], [3, -4.5]]
param "onnx::W_1" : f32[a_literal_free_shape_is_not_checked_here]
param f           : f32[4] = @"w.safetensors"

func main(x: f32[a, bb*2]) -> (y: f32[a, bb*2]) {
  # doc
  t = add(x, x) # sum
  "in" = slice(t, starts=[-1], ends=[a-(-1)], axes=[0])
  y : f32[a, 2*bb] = reshape("in", shape=[a-1+1, (bb+1)*2-2, 1e-5, inf, -inf, true, "s", f16])

  return y
}

# end
`
	m, err := ParseFile("t.hir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := string(Format(m))
	if got != want {
		t.Errorf("Format:\n%s\nwant:\n%s", got, want)
	}
	checkRoundTrip(t, m)
}
