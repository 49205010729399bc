package targets

import (
	"strings"
	"testing"
)

// TestPrecision: tf32 and bf16 configure the cuda target only, and shows in its
// tag (the cache key's and the artifact's features); anything else is
// refused by name.
func TestPrecision(t *testing.T) {
	for _, c := range []struct{ target, precision, err string }{
		{"cpu", "tf32", "target cpu computes in fp32 only"},
		{"vulkan", "tf32", "target vulkan computes in fp32 only"},
		{"metal", "tf32", "target metal computes in fp32 only"},
		{"vulkan", "bf16", "--precision bf16 is for the cuda target's tensor cores"},
		{"cuda", "fp16", `unknown precision "fp16" (want one of fp32, tf32, bf16)`},
	} {
		if _, err := Lookup(c.target, Options{Precision: c.precision}); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %s: %v, want %q", c.target, c.precision, err, c.err)
		}
	}
	for p, suffix := range map[string]string{"": "", "fp32": "", "tf32": "+tf32", "bf16": "+bf16"} {
		b, err := Lookup("cuda", Options{Precision: p})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.Tag(), "+") != (suffix != "") || !strings.HasSuffix(b.Tag(), suffix) {
			t.Errorf("precision %q: tag %s", p, b.Tag())
		}
	}
	// Each Lookup configures its own backend: a tf32 one leaves the next
	// default one fp32.
	if b, _ := Lookup("cuda", Options{}); strings.Contains(b.Tag(), "tf32") {
		t.Errorf("a default cuda backend after a tf32 one: tag %s", b.Tag())
	}
}
