package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

func TestCacheStoreWarning(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("cache: %w", &fs.PathError{Op: "mkdir", Path: "/c/ab", Err: syscall.EROFS}), "the cache /c is read-only"},
		{fmt.Errorf("cache: %w", &fs.PathError{Op: "open", Path: "/c/ab/x.json", Err: fs.ErrPermission}), "the cache /c is read-only"},
		{fmt.Errorf("cache: %w", errors.New("disk full")), "could not store the build in the cache: cache: disk full"},
	} {
		if got := cacheStoreWarning("/c", c.err); !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}
