package loader_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Example serves one model from many goroutines: open the artifact once
// (every section's digest and every program are checked here, before
// anything runs), run it concurrently, and let each worker reuse its
// outputs from one request to the next (RunInto) so that a steady loop
// allocates nothing per run. docs/embedding.md says more.
func Example() {
	// A deployment gets the artifact from rlxc build in CI; the example
	// builds the bundled MLP for batches of 1 and 4 itself.
	dir, err := os.MkdirTemp("", "rlx-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	artifact := filepath.Join(dir, "mlp.rlx")
	src, err := os.ReadFile("../../testdata/models/mlp.hir")
	if err != nil {
		log.Fatal(err)
	}
	seed := uint64(1)
	if _, err := driver.Build("mlp.hir", src, artifact, driver.Options{Target: "cpu",
		Bindings: []specialize.Binding{{"batch": 1}, {"batch": 4}}, RandomSeed: &seed, Compiler: "example"}); err != nil {
		log.Fatal(err)
	}

	// Open once per process; Close when the service stops.
	m, err := loader.Open(artifact, loader.Options{Threads: 2})
	if err != nil {
		log.Fatal(err) // a corrupt artifact, a CPU or device it cannot run on, ...
	}
	defer m.Close()

	// Each request's inputs pick the variant built for their shapes.
	var wg sync.WaitGroup
	shapes := make([][]int64, 4)
	for w := range 4 {
		wg.Go(func() {
			batch := int64(1 + 3*(w%2))
			x := tensor.New(tensor.F32, batch, 512)
			var outs []loader.Named // reused from run to run
			for range 10 {
				var err error
				if outs, err = m.RunInto(outs, map[string]*tensor.Tensor{"x": x}); err != nil {
					log.Print(err) // an *InputsError when no variant fits
					return
				}
			}
			shapes[w] = outs[0].Tensor.Shape
		})
	}
	wg.Wait()
	fmt.Println(shapes)
	// Output: [[1 512] [4 512] [1 512] [4 512]]
}
