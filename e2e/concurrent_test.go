package e2e

import (
	"bytes"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestConcurrentRuns: one opened model, many goroutines running both
// variants at once, each result equal to a lone run's.
func TestConcurrentRuns(t *testing.T) {
	path := buildGPT(t, t.TempDir())
	m, err := loader.Open(path, loader.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var inputs []map[string]*tensor.Tensor
	var want [][]byte
	for i, v := range m.Variants() {
		in := modelInputs(t, m, v.Binding, uint64(i))
		out, err := m.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, in)
		want = append(want, out[0].Tensor.Data)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 5; r++ {
				v := (g + r) % len(inputs)
				out, err := m.Run(inputs[v])
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(out[0].Tensor.Data, want[v]) {
					t.Errorf("goroutine %d run %d: result differs from a lone run", g, r)
				}
			}
		}()
	}
	wg.Wait()
}
