// Package buildinfo describes the running executable's build for --version:
// the source revision it was built from and the Go toolchain and platform.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Describe is version followed by what the binary records of its build:
// "0.1.0-dev (commit 4fa2086, 2026-11-27, modified; go1.26.8 linux/amd64)".
func Describe(version string) string {
	var parts []string
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, at string
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at, _, _ = strings.Cut(s.Value, "T")
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			c := "commit " + rev[:min(len(rev), 7)]
			if at != "" {
				c += ", " + at
			}
			if modified {
				c += ", modified"
			}
			parts = append(parts, c)
		}
	}
	parts = append(parts, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return version + " (" + strings.Join(parts, "; ") + ")"
}
