package loader

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTargetsTable: one entry per target, cpu first, and a target without
// a runtime says why.
func TestTargetsTable(t *testing.T) {
	ts := Targets()
	if len(ts) == 0 || ts[0].Name != "cpu" || ts[0].Open == nil {
		t.Fatalf("the first target is %+v, want cpu with a runtime", ts[0])
	}
	seen := map[string]bool{}
	for _, tg := range ts {
		if seen[tg.Name] {
			t.Errorf("target %s listed twice", tg.Name)
		}
		seen[tg.Name] = true
		if (tg.Open == nil) == (tg.NoRuntime == "") {
			t.Errorf("target %s: want exactly one of Open and NoRuntime", tg.Name)
		}
	}
}

func TestOpenRuntimeErrors(t *testing.T) {
	for target, want := range map[string]string{
		"metal": "artifact is for target metal; rlxrun has no Metal runtime yet (it needs macOS)",
		"tpu":   `artifact is for target "tpu"; this rlxrun runs cpu, vulkan and cuda artifacts`,
	} {
		if _, err := openRuntime(target, nil, Options{}); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", target, err, want)
		}
	}
}

func TestCPURuntime(t *testing.T) {
	rt, err := openRuntime("cpu", nil, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.Device() != "cpu" || !rt.ProfilesSteps() {
		t.Errorf("cpu runtime: device %q, profiles %v", rt.Device(), rt.ProfilesSteps())
	}
}

// TestOpenNotArtifact: a file that is no artifact fails to open, and is
// not a DeviceError.
func TestOpenNotArtifact(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.rlx")
	if err := os.WriteFile(p, []byte("not an artifact"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(p, Options{Threads: 1})
	var de *DeviceError
	if err == nil || errors.As(err, &de) {
		t.Errorf("err = %v", err)
	}
}
