// Package testenv holds what tests need to decide whether they can run
// here: a test that lacks a tool or a device skips, except under CI=true,
// where CI installs them and a skip would hide a regression.
package testenv

import (
	"os"
	"testing"
)

// SkipOrFail skips t with the message, or fails it under CI=true.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}
