// Command testsummary reads `go test -json` on stdin and prints what a
// plain `go test` prints (each package's ok/FAIL line, the output of
// failing tests), then every skipped test with its reason. It exits 1
// when a test or package failed, and, with -strict (CI), when a test
// skipped for anything but missing hardware: a skip whose reason does not
// start with "needs hardware:" means the machine lacks something `make
// deps` should have installed.
//
//	go test -json ./... | go run ./internal/tools/testsummary -strict
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// HardwarePrefix starts the reason of a skip for hardware this machine
// lacks (a GPU, an instruction set): the only skips -strict allows.
const HardwarePrefix = "needs hardware:"

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type skip struct{ pkg, test, reason string }

// summary follows the stream: per-test output is held until the test
// ends, and printed only if it failed.
type summary struct {
	out    io.Writer
	held   map[string][]string // package + "\x00" + test → output lines
	skips  []skip
	failed bool
}

func (s *summary) add(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "output":
		if e.Test == "" {
			// Package-level lines: ok, FAIL, build errors, coverage.
			line := e.Output
			if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "?") || strings.HasPrefix(line, "---") ||
				!strings.HasPrefix(line, "=== ") && !strings.HasPrefix(line, "PASS") && strings.TrimSpace(line) != "" {
				fmt.Fprint(s.out, line)
			}
			return
		}
		s.held[key] = append(s.held[key], e.Output)
	case "fail":
		if e.Test != "" {
			for _, l := range s.held[key] {
				fmt.Fprint(s.out, l)
			}
		}
		s.failed = true
		delete(s.held, key)
	case "skip":
		if e.Test != "" {
			s.skips = append(s.skips, skip{e.Package, e.Test, reason(s.held[key])})
		}
		delete(s.held, key)
	case "pass":
		delete(s.held, key)
	}
}

// reason is what a skipped test logged: its lines but the framework's.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		// "file_test.go:12: why" → "why"
		if i := strings.Index(t, ".go:"); i >= 0 {
			if j := strings.Index(t[i+4:], ": "); j >= 0 {
				t = t[i+4+j+2:]
			}
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, "; ")
}

func main() {
	strict := flag.Bool("strict", false, "fail when a test skipped for anything but missing hardware (CI)")
	flag.Parse()
	s := &summary{out: os.Stdout, held: map[string][]string{}}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// go test prints build failures as plain text.
			fmt.Println(sc.Text())
			s.failed = true
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	os.Exit(s.report(*strict))
}

// report prints the skipped tests and returns the exit code.
func (s *summary) report(strict bool) int {
	sort.Slice(s.skips, func(i, j int) bool {
		a, b := s.skips[i], s.skips[j]
		return a.pkg < b.pkg || a.pkg == b.pkg && a.test < b.test
	})
	bad := 0
	if len(s.skips) > 0 {
		fmt.Fprintf(s.out, "\nskipped tests (%d):\n", len(s.skips))
		for _, k := range s.skips {
			mark := " "
			if !strings.HasPrefix(k.reason, HardwarePrefix) {
				mark = "!"
				bad++
			}
			fmt.Fprintf(s.out, "%s %s %s: %s\n", mark, strings.TrimPrefix(k.pkg, "github.com/rlx-project/rlx/"), k.test, k.reason)
		}
	}
	switch {
	case s.failed:
		return 1
	case strict && bad > 0:
		fmt.Fprintf(s.out, "\n%d test(s) skipped for something other than missing hardware (marked !): with CI=true every tool must be installed (make deps)\n", bad)
		return 1
	}
	return 0
}
