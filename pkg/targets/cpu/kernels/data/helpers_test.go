package data

import (
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// Test helpers: seeded inputs, float64 references and explicit tolerances.

func checkEqual[T comparable](t testing.TB, name string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d elements, want %d", name, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] && !(isNaN(got[i]) && isNaN(want[i])) {
			if bad < 5 {
				t.Errorf("%s: [%d] = %v, want %v", name, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d mismatches in all", name, bad)
	}
}

func isNaN[T comparable](v T) bool {
	switch x := any(v).(type) {
	case float32:
		return x != x
	case float64:
		return x != x
	}
	return false
}

// pools returns a 1-thread and a 2-thread pool, closed when the test ends.
func pools(t testing.TB) []*parallel.Pool {
	p1, p2 := parallel.NewPool(1), parallel.NewPool(2)
	t.Cleanup(func() { p1.Close(); p2.Close() })
	return []*parallel.Pool{p1, p2}
}
