package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func feed(t *testing.T, lines ...event) (*summary, *strings.Builder) {
	t.Helper()
	var out strings.Builder
	s := &summary{out: &out, held: map[string][]string{}}
	for _, e := range lines {
		b, _ := json.Marshal(e)
		var back event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		s.add(back)
	}
	return s, &out
}

func TestSummary(t *testing.T) {
	p := "github.com/rlx-project/rlx/pkg/x"
	s, out := feed(t,
		event{Action: "output", Package: p, Test: "TestGPU", Output: "=== RUN   TestGPU\n"},
		event{Action: "output", Package: p, Test: "TestGPU", Output: "    gpu_test.go:12: needs hardware: no CUDA device\n"},
		event{Action: "skip", Package: p, Test: "TestGPU"},
		event{Action: "output", Package: p, Test: "TestTool", Output: "    tool_test.go:9: glslangValidator not found\n"},
		event{Action: "skip", Package: p, Test: "TestTool"},
		event{Action: "output", Package: p, Test: "TestOK", Output: "noise of a passing test\n"},
		event{Action: "pass", Package: p, Test: "TestOK"},
		event{Action: "output", Package: p, Output: "ok  \tgithub.com/rlx-project/rlx/pkg/x\t0.1s\n"},
	)
	if code := s.report(false); code != 0 {
		t.Errorf("lenient: exit %d", code)
	}
	if code := s.report(true); code != 1 {
		t.Errorf("strict with a tool skip: exit %d", code)
	}
	got := out.String()
	for _, want := range []string{"ok  \tgithub.com/rlx-project/rlx/pkg/x", "skipped tests (2):", "  pkg/x TestGPU: needs hardware: no CUDA device",
		"! pkg/x TestTool: glslangValidator not found", "marked !"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "noise of a passing test") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}

	s, out = feed(t,
		event{Action: "output", Package: p, Test: "TestBad", Output: "    bad_test.go:3: wrong answer\n"},
		event{Action: "fail", Package: p, Test: "TestBad"},
	)
	if code := s.report(false); code != 1 || !strings.Contains(out.String(), "wrong answer") {
		t.Errorf("failure: exit %d\n%s", code, out)
	}
}
