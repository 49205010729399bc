package lower

import (
	"strings"
	"testing"
)

// TestFileReferencesStayInTheModelDir: a model's @"file" references
// resolve inside its directory; an absolute one or one that climbs out is
// refused unless AllowOutside.
func TestFileReferencesStayInTheModelDir(t *testing.T) {
	w := &Weights{Dir: "/models/m"}
	for _, ref := range []string{"w.safetensors", "sub/w.safetensors", "./a/../w.safetensors"} {
		if p, err := w.refPath(ref); err != nil || !strings.HasPrefix(p, "/models/m/") {
			t.Errorf("%q: %q, %v", ref, p, err)
		}
	}
	for _, ref := range []string{"/etc/passwd", "../w.safetensors", "a/../../w.safetensors", ".."} {
		if p, err := w.refPath(ref); err == nil || !strings.Contains(err.Error(), "leaves the model's directory") {
			t.Errorf("%q: %q, %v; want refused", ref, p, err)
		}
	}
	w.AllowOutside = true
	if p, err := w.refPath("/etc/x"); err != nil || p != "/etc/x" {
		t.Errorf("AllowOutside: %q, %v", p, err)
	}
	if p, err := w.refPath("../x"); err != nil || p != "/models/x" {
		t.Errorf("AllowOutside: %q, %v", p, err)
	}
}
