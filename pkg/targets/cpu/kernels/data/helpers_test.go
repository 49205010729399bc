package data

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/internal/kerneltest"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// Test helpers: the shared ones are kerneltest's, under the names the
// tests use.

func checkEqual[T comparable](t testing.TB, name string, got, want []T) {
	t.Helper()
	kerneltest.CheckEqual(t, name, got, want)
}

func pools(t testing.TB) []*parallel.Pool { return kerneltest.Pools(t) }
