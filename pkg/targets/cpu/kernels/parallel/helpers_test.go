package parallel

import (
	"testing"
)

// Test helpers: seeded inputs, float64 references and explicit tolerances.

// pools returns a 1-thread and a 2-thread pool, closed when the test ends.
func pools(t testing.TB) []*Pool {
	p1, p2 := NewPool(1), NewPool(2)
	t.Cleanup(func() { p1.Close(); p2.Close() })
	return []*Pool{p1, p2}
}
