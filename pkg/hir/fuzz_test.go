package hir

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseCheck feeds arbitrary bytes through the scanner, parser, checker
// and printer. Nothing may panic or hang; whatever parses must print to text
// that parses back to the same module, and printing must be a fixed point.
func FuzzParseCheck(f *testing.F) {
	for _, file := range testdataFiles(f) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		fuzzOne(t, src)
	})
}

func fuzzOne(t *testing.T, src []byte) {
	m, err := ParseFile("fuzz.hir", src)
	if err != nil {
		if _, ok := err.(ErrorList); !ok {
			t.Errorf("ParseFile returned %T, want ErrorList", err)
		}
		return
	}
	_ = Check(m)
	_ = m.CheckBinding(map[string]int64{"batch": 2, "seq": 3, "n": 1})
	out := Format(m)
	m2, err := ParseFile("formatted.hir", out)
	if err != nil {
		t.Fatalf("formatted output does not parse: %v\ninput:\n%q\nformatted:\n%s", err, src, out)
	}
	if !cmp.Equal(m, m2, syntaxOnly) {
		t.Fatalf("parse(print(m)) != m:\n%s\ninput:\n%q\nformatted:\n%s", cmp.Diff(m, m2, syntaxOnly), src, out)
	}
	if out2 := Format(m2); !bytes.Equal(out, out2) {
		t.Fatalf("fmt is not idempotent on input %q:\nfirst:\n%s\nsecond:\n%s", src, out, out2)
	}
}
