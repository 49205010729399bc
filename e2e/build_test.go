package e2e

import (
	"os"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/pkg/artifact/cache"
	"github.com/rlx-project/rlx/pkg/driver"
)

var (
	cacheOnce sync.Once
	cacheDir  string
	cacheErr  error
)

// build is driver.Build through one AOT cache for the whole test binary:
// several tests build the same model with the same weights, bindings and
// target (the bundled and shared models at a CPU level, the cpu side of
// the GPU comparisons), and native objects recur across builds. A hit is
// the stored artifact, checked against its key as rlxc's cache checks it;
// the test still opens and runs what it gets. TestReproducible builds
// without it, since it compares two real builds.
func build(t *testing.T, file string, src []byte, out string, opts driver.Options) (*driver.Result, error) {
	t.Helper()
	opts.Cache = &cache.Cache{Dir: sharedCacheDir(t)}
	return driver.Build(file, src, out, opts)
}

// sharedCacheDir is the directory of build's cache, which TestCLIConformance
// also gives rlxc (--cache-dir): its native objects are the in-process
// builds' objects.
func sharedCacheDir(t *testing.T) string {
	t.Helper()
	cacheOnce.Do(func() { cacheDir, cacheErr = os.MkdirTemp("", "rlx-e2e-cache") })
	if cacheErr != nil {
		t.Fatal(cacheErr)
	}
	return cacheDir
}

// TestMain removes the shared cache (build) and the CLI tools (tools)
// after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []string{cacheDir, binDir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}
