package mir

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps MIR off the front end: every rlx package pkg/mir depends on
// (transitively, tests excluded) must be in this allow-list. A new one needs a
// reason to be here, not just a reason to be absent from a deny-list.
func TestDeps(t *testing.T) {
	const module = "github.com/rlx-project/rlx/"
	allowed := map[string]bool{
		"pkg/mir":    true,
		"pkg/irtype": true,
		"pkg/dim":    true,
		"pkg/tensor": true,
		"pkg/lir":    true,
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -deps: %v\n%s", err, msg)
	}
	seen := false
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		if rel == "pkg/mir" {
			seen = true
		}
		if !allowed[rel] {
			t.Errorf("pkg/mir depends on %s, which is not in the allow-list (pkg/mir must not depend on the front end or later stages)", pkg)
		}
	}
	if !seen {
		t.Fatalf("go list -deps did not list pkg/mir itself; output:\n%s", out)
	}
}
