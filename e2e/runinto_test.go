package e2e

import (
	"bytes"
	"testing"

	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestRunInto: outputs written into an earlier run's tensors are the same
// as fresh ones, whatever those tensors held (every output byte is
// written), and tensors of another variant's shapes are left alone.
func TestRunInto(t *testing.T) {
	path := buildGPT(t, t.TempDir())
	m, err := loader.Open(path, loader.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	vs := m.Variants()
	if len(vs) < 2 {
		t.Fatalf("the test model has %d variants, want 2", len(vs))
	}
	var inputs []map[string]*tensor.Tensor
	var fresh [][]loader.Named
	for i, v := range vs {
		in := modelInputs(t, m, v.Binding, uint64(i))
		out, err := m.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		inputs, fresh = append(inputs, in), append(fresh, out)
	}
	for v := range vs {
		dst, err := m.Run(inputs[v])
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dst {
			for i := range d.Tensor.Data {
				d.Tensor.Data[i] = 0xff // NaN as float32: any byte left unwritten shows
			}
		}
		got, err := m.RunInto(dst, inputs[v])
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i].Tensor != dst[i].Tensor {
				t.Errorf("variant %d output %s: RunInto allocated a new tensor instead of reusing dst's", v, got[i].Name)
			}
			if !bytes.Equal(got[i].Tensor.Data, fresh[v][i].Tensor.Data) {
				t.Errorf("variant %d output %s: RunInto's result differs from Run's", v, got[i].Name)
			}
		}
		// The other variant's outputs do not fit: they must come back
		// untouched, and the result freshly allocated.
		other := fresh[(v+1)%len(vs)]
		keep := make([][]byte, len(other))
		for i, o := range other {
			keep[i] = bytes.Clone(o.Tensor.Data)
		}
		got, err = m.RunInto(other, inputs[v])
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i].Tensor == other[i].Tensor {
				t.Errorf("variant %d: RunInto wrote into tensors of another variant's shapes", v)
			}
			if !bytes.Equal(got[i].Tensor.Data, fresh[v][i].Tensor.Data) {
				t.Errorf("variant %d output %s: result differs from Run's", v, got[i].Name)
			}
		}
		for i, o := range other {
			if !bytes.Equal(o.Tensor.Data, keep[i]) {
				t.Errorf("variant %d: RunInto changed a tensor it did not use", v)
			}
		}
	}
}
