package targets

import (
	"strings"
	"testing"
)

// TestPrecision: tf32 configures the cuda target only, and shows in its
// tag (the cache key's and the artifact's features); anything else is
// refused by name.
func TestPrecision(t *testing.T) {
	for _, c := range []struct{ target, precision, err string }{
		{"cpu", "tf32", "target cpu computes in fp32 only"},
		{"vulkan", "tf32", "target vulkan computes in fp32 only"},
		{"metal", "tf32", "target metal computes in fp32 only"},
		{"cuda", "fp16", `unknown precision "fp16" (want one of fp32, tf32)`},
	} {
		if _, err := Lookup(c.target, Options{Precision: c.precision}); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %s: %v, want %q", c.target, c.precision, err, c.err)
		}
	}
	for p, suffix := range map[string]bool{"": false, "fp32": false, "tf32": true} {
		b, err := Lookup("cuda", Options{Precision: p})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(b.Tag(), "+tf32") != suffix {
			t.Errorf("precision %q: tag %s", p, b.Tag())
		}
	}
	// Each Lookup configures its own backend: a tf32 one leaves the next
	// default one fp32.
	if b, _ := Lookup("cuda", Options{}); strings.Contains(b.Tag(), "tf32") {
		t.Errorf("a default cuda backend after a tf32 one: tag %s", b.Tag())
	}
}
