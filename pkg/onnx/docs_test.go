package onnx

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsListEveryOperator keeps docs/onnx.md's operator table and the
// converters one set: every operator that imports has a row, and every
// row names only operators that import.
func TestDocsListEveryOperator(t *testing.T) {
	src, err := os.ReadFile("../../docs/onnx.md")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	documented := map[string]bool{}
	for _, line := range strings.Split(string(src), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| ") {
			continue
		}
		for _, f := range strings.Fields(cells[1]) {
			if name.MatchString(f) {
				documented[f] = true
			}
		}
	}
	// Shape and Size have no converter: symbolic resolves them at import;
	// If imports its branch's nodes itself (importNode calls convIf).
	importers := map[string]bool{"Shape": true, "Size": true, "If": true}
	for op := range converters {
		importers[op] = true
	}
	for op := range importers {
		if !documented[op] {
			t.Errorf("%s imports but docs/onnx.md has no row for it", op)
		}
	}
	var extra []string
	for op := range documented {
		if !importers[op] {
			extra = append(extra, op)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		t.Errorf("docs/onnx.md has rows for operators that do not import: %v", extra)
	}
}
