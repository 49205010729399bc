package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	got := Describe("1.2.3")
	if !strings.HasPrefix(got, "1.2.3 (") || !strings.Contains(got, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")") {
		t.Errorf("Describe = %q", got)
	}
}
