package hir

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .err files of testdata/errors from the current output")

// diagnose runs what `rlxc check` runs and returns its stderr lines. A
// `# bind: a=3, b=4` comment line also checks that binding.
func diagnose(file string, src []byte) string {
	m, err := ParseFile(filepath.Base(file), src)
	if err == nil {
		err = Check(m)
	}
	if err == nil {
		if b := bindDirective(src); b != nil {
			err = m.CheckBinding(b)
		}
	}
	if err == nil {
		return ""
	}
	return err.Error() + "\n"
}

func bindDirective(src []byte) map[string]int64 {
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "# bind:")
		if !ok {
			continue
		}
		b := map[string]int64{}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				panic("bad bind directive: " + line)
			}
			b[strings.TrimSpace(k)] = n
		}
		return b
	}
	return nil
}

// TestErrors runs every testdata/errors/*.hir and compares the diagnostics,
// with their positions, to the .err file beside it.
func TestErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "errors", "*.hir"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no error cases found: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := diagnose(file, src)
			if got == "" {
				t.Fatalf("no error reported; every file in testdata/errors must fail")
			}
			golden := strings.TrimSuffix(file, ".hir") + ".err"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("missing expected messages: %v (run go test ./pkg/hir -run TestErrors -update, then review the file)", err)
			}
			if got != string(want) {
				t.Errorf("diagnostics differ\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
